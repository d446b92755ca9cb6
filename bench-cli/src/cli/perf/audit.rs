//! `bench perf audit`: what accounting for a night costs. The audit append that every mutating
//! request awaits (`serve/audit.rs`), beside the tag edit it accompanies (the peer: the request's
//! own write), and `bench runs list --tag` over a store of many runs, beside the same page
//! without the tag (the peer: the plain list). SQLite by default, PostgreSQL with `--db URL`.

use super::super::InputError;
use super::super::db::store_error;
use super::estop::percentiles;
use super::storage::{scratch_db, two_workers};
use run_store::{Annotation, AuditEntry, Location, NewRun, RunFilter, Store};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `bench perf audit`.
#[derive(Debug, clap::Args)]
pub struct PerfAuditArgs {
    /// Print JSON: `runs`, `tagged`, `audit_append_ms`, `tag_edit_ms`, `list_by_tag_ms`,
    /// `list_ms` (each `{p50, p99, max}`), `database`.
    #[arg(long)]
    json: bool,
    /// Runs in the store the lists search (goal: `--tag` in <= 50 ms over 100 000).
    #[arg(long, default_value_t = 100_000)]
    runs: usize,
    /// Audit entries appended, and lists made, for the percentiles.
    #[arg(long, default_value_t = 1_000)]
    repeats: usize,
    /// Database file to fill (must not exist; kept), or a postgres:// URL of a scratch
    /// database (the runs are added to it). Default: a temporary file, removed.
    #[arg(long, value_name = "PATH|URL")]
    db: Option<PathBuf>,
}

/// One run in a hundred is tagged `good`, one in twenty `suspect`.
const GOOD_EVERY: usize = 100;
const SUSPECT_EVERY: usize = 20;

/// Runs `bench perf audit`.
pub fn run(args: &PerfAuditArgs) -> anyhow::Result<()> {
    if args.runs == 0 || args.repeats == 0 {
        return Err(InputError("--runs and --repeats must be >= 1".into()).into());
    }
    let (path, _tmp) = scratch_db(args.db.as_ref())?;
    let rt = two_workers()?;
    let doc = rt.block_on(async {
        let store = Store::open(&path).await.map_err(store_error)?;
        let (ids, fill_s) = fill(&store, args.runs).await?;
        let tagged = tag(&store, &ids).await?;
        let mut doc = json!({
            "runs": ids.len(), "tagged": tagged, "fill_s": fill_s,
            "audit_append_ms": audit_appends(&store, args.repeats).await?,
            "tag_edit_ms": tag_edits(&store, &ids, args.repeats).await?,
            "list_by_tag_ms": {
                "good": lists(&store, Some("good"), args.repeats).await?,
                "suspect": lists(&store, Some("suspect"), args.repeats).await?,
            },
            "list_ms": lists(&store, None, args.repeats).await?,
        });
        doc["database"] = Location::from(&path).to_string().into();
        store.close().await;
        anyhow::Ok(doc)
    })?;
    print(&doc, args.json)
}

/// `n` completed-looking runs, created ten thousand to a transaction; their ids and seconds.
async fn fill(store: &Store, n: usize) -> anyhow::Result<(Vec<i64>, f64)> {
    let t0 = Instant::now();
    let mut ids = Vec::with_capacity(n);
    while ids.len() < n {
        let chunk: Vec<NewRun> = (ids.len()..n.min(ids.len() + 10_000))
            .map(|k| NewRun {
                kind: "sweep".into(),
                name: format!("perf audit {k}"),
                software_version: env!("CARGO_PKG_VERSION").into(),
                ..NewRun::default()
            })
            .collect();
        ids.extend(store.create_runs(&chunk).await.map_err(store_error)?);
    }
    Ok((ids, t0.elapsed().as_secs_f64()))
}

/// Tags every `GOOD_EVERY`-th run `good` and every `SUSPECT_EVERY`-th `suspect` through the
/// product's own edit (with its audit entry); how many of each.
async fn tag(store: &Store, ids: &[i64]) -> anyhow::Result<Value> {
    let (mut good, mut suspect) = (0, 0);
    for (k, &id) in ids.iter().enumerate() {
        let mut add = Vec::new();
        if k % GOOD_EVERY == 0 {
            add.push("good".to_string());
            good += 1;
        }
        if k % SUSPECT_EVERY == 0 {
            add.push("suspect".to_string());
            suspect += 1;
        }
        if !add.is_empty() {
            let edit = Annotation {
                add,
                ..Annotation::default()
            };
            store
                .annotate(id, &edit, entry("PATCH"))
                .await
                .map_err(store_error)?;
        }
    }
    Ok(json!({"good": good, "suspect": suspect}))
}

/// An audit entry as the service writes it for an operator's request.
fn entry(method: &str) -> AuditEntry {
    AuditEntry {
        bench_id: "perf".into(),
        user: Some("operator1".into()),
        role: Some("operator".into()),
        remote: Some("127.0.0.1".into()),
        method: method.into(),
        path: "/api/runs/1".into(),
        run_id: Some(1),
        status: 200,
        allowed: true,
        ..AuditEntry::default()
    }
}

/// Milliseconds per audit append.
async fn audit_appends(store: &Store, n: usize) -> anyhow::Result<Value> {
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        store
            .append_audit(&entry("POST"))
            .await
            .map_err(store_error)?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(percentiles(&mut ms))
}

/// Milliseconds per tag edit (a note set on a run, with its audit entry in the same
/// transaction): the write a PATCH makes, to compare the append with.
async fn tag_edits(store: &Store, ids: &[i64], n: usize) -> anyhow::Result<Value> {
    let mut ms = Vec::with_capacity(n);
    for k in 0..n {
        let edit = Annotation {
            notes: Some(format!("perf note {k}")),
            ..Annotation::default()
        };
        let t0 = Instant::now();
        store
            .annotate(ids[k % ids.len()], &edit, entry("PATCH"))
            .await
            .map_err(store_error)?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(percentiles(&mut ms))
}

/// Milliseconds per first page of `bench runs list` (with `--tag` when given).
async fn lists(store: &Store, tag: Option<&str>, n: usize) -> anyhow::Result<Value> {
    let filter = RunFilter {
        tag: tag.map(str::to_string),
        ..RunFilter::default()
    };
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        let page = store.list_runs(&filter).await.map_err(store_error)?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(page);
    }
    Ok(percentiles(&mut ms))
}

fn print(doc: &Value, as_json: bool) -> anyhow::Result<()> {
    let mut w = std::io::stdout().lock();
    if as_json {
        serde_json::to_writer_pretty(&mut w, doc)?;
        return Ok(writeln!(w)?);
    }
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let p = |v: &Value| format!("p50 {:.3} ms, p99 {:.3} ms", f(&v["p50"]), f(&v["p99"]));
    writeln!(
        w,
        "{} runs in {} ({} tagged good, {} suspect)",
        doc["runs"],
        doc["database"].as_str().unwrap_or_default(),
        doc["tagged"]["good"],
        doc["tagged"]["suspect"]
    )?;
    writeln!(
        w,
        "audit append:          {} (goal p99 <= 1 ms)",
        p(&doc["audit_append_ms"])
    )?;
    writeln!(w, "tag edit (its peer):   {}", p(&doc["tag_edit_ms"]))?;
    for t in ["good", "suspect"] {
        let v = &doc["list_by_tag_ms"][t];
        writeln!(w, "runs list --tag {t:<8} {} (goal <= 50 ms)", p(v))?;
    }
    writeln!(w, "runs list (its peer):  {}", p(&doc["list_ms"]))?;
    Ok(())
}
