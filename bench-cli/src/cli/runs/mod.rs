//! `bench runs list|show|export`: the stored runs.

pub mod annotate;
pub mod diff;
pub mod import;
pub mod push;
pub mod resume;

use super::InputError;
use super::db::{DbArgs, open, runtime, store_error};
use run_store::{Comparison, Format, Run, RunFilter, RunStatus};
use std::io::Write;
use std::path::PathBuf;

/// `bench runs` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RunsCommand {
    /// List runs, newest first, with filters and paging.
    List(ListArgs),
    /// Show one run: status, timing statistics, interruption log, run log (checks and
    /// read-backs), results and comparisons.
    Show(ShowArgs),
    /// Export a run's samples and model outputs (one column per model) as CSV or JSON.
    Export(ExportArgs),
    /// Store a recording made elsewhere (CSV, MATLAB MAT-file or Parquet) as a run of kind
    /// `imported`: listed, shown, exported, fitted and compared like a recorded run.
    Import(self::import::ImportArgs),
    /// Copy finished runs (samples, model outputs, results), parameter sets and comparisons
    /// into the lab's store; runs already there (same UUID) are skipped, each copy is verified
    /// by the checksum of its samples.
    Push(self::push::PushArgs),
    /// Add (+TAG) or remove (-TAG) a run's tags; recorded in the audit log with the old value.
    Tag(self::annotate::TagArgs),
    /// Replace a run's notes ("" clears them); recorded in the audit log with the old value.
    Note(self::annotate::NoteArgs),
    /// What changed between two runs: spec, bench configuration, device profiles (checksums),
    /// lockstep parameter sets, software version and bench id.
    Diff(self::diff::DiffArgs),
    /// Continue an interrupted, failed or aborted run from its last completed segment: a new
    /// run (`continues: ID`) of the segments its chain did not measure whole, after the same
    /// checks as any run; analyses read the chain as one run.
    Resume(self::resume::ResumeArgs),
}

/// Arguments of `bench runs list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    db: DbArgs,
    /// Print JSON: `{"total": N, "runs": [{id, kind, name, status, created_at, ...}]}`.
    #[arg(long)]
    json: bool,
    /// Only runs of this experiment kind (or `imported`: recordings from `bench runs import`).
    #[arg(long)]
    kind: Option<String>,
    /// Only runs of this bench (its `bench_id`; `sim` for the simulated bench).
    #[arg(long)]
    bench: Option<String>,
    /// Only runs with this status (queued, running, completed, aborted, failed, interrupted).
    #[arg(long)]
    status: Option<String>,
    /// Only runs created at or after this UTC date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long)]
    since: Option<String>,
    /// Only runs created before this UTC date.
    #[arg(long)]
    until: Option<String>,
    /// Only runs with this tag (`bench runs tag`).
    #[arg(long)]
    tag: Option<String>,
    /// Page size (1..=10000).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Runs to skip.
    #[arg(long, default_value_t = 0)]
    offset: u64,
}

/// Arguments of `bench runs show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Run id.
    id: i64,
    #[command(flatten)]
    db: DbArgs,
    /// Print the whole run record as JSON (with `comparisons`: those that used the run).
    #[arg(long)]
    json: bool,
    /// Also compute the checksum of the run's samples (`sample_checksum`: SHA-256 as `bench runs
    /// push` verifies copies with; equal in every store holding the run). Reads every sample.
    #[arg(long)]
    checksum: bool,
}

/// Export format.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ExportFormat {
    Csv,
    Json,
    Parquet,
}

/// Arguments of `bench runs export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Run id.
    id: i64,
    /// `csv`: header `idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags,<model ids>`;
    /// `json`: `{"run": {...}, "columns": [...], "rows": [[...], ...]}`; `parquet`: the CSV's
    /// columns with units as field metadata and the run, spec and software version as file
    /// metadata.
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// Add the units: a first CSV line `# units: 1,s,rad,...` (one per column), a `"units"`
    /// array in JSON. Parquet always carries them.
    #[arg(long)]
    units: bool,
    /// Output file (default: standard output).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    #[command(flatten)]
    db: DbArgs,
}

/// Runs a `bench runs` subcommand.
pub fn run(cmd: &RunsCommand) -> anyhow::Result<()> {
    if let RunsCommand::Push(args) = cmd {
        // Two workers: reading and checking one run overlaps sending another.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        return rt.block_on(self::push::push(args));
    }
    if let RunsCommand::Import(args) = cmd {
        return self::import::run(args);
    }
    if let RunsCommand::Resume(args) = cmd {
        return self::resume::run(args);
    }
    runtime()?.block_on(async {
        match cmd {
            RunsCommand::List(args) => list(args).await,
            RunsCommand::Show(args) => show(args).await,
            RunsCommand::Export(args) => export(args).await,
            RunsCommand::Tag(args) => self::annotate::tag(args).await,
            RunsCommand::Note(args) => self::annotate::note(args).await,
            RunsCommand::Diff(args) => self::diff::diff(args).await,
            RunsCommand::Push(_) | RunsCommand::Import(_) | RunsCommand::Resume(_) => {
                unreachable!("push, import and resume run on their own runtimes")
            }
        }
    })
}

async fn list(args: &ListArgs) -> anyhow::Result<()> {
    let status = match &args.status {
        Some(s) => Some(
            s.parse::<RunStatus>()
                .map_err(|e| InputError(format!("--status: {e}")))?,
        ),
        None => None,
    };
    let filter = RunFilter {
        kind: bench_daemon::db::kind_filter(args.kind.as_deref())
            .map_err(|e| InputError(format!("--kind: {e}")))?,
        bench: bench_daemon::db::bench_filter(args.bench.as_deref())
            .map_err(|e| InputError(format!("--bench: {e}")))?,
        status,
        since: args.since.clone(),
        until: args.until.clone(),
        tag: args.tag.clone(),
        q: None,
        limit: args.limit,
        offset: args.offset,
    };
    let store = open(&args.db).await?;
    let page = store.list_runs(&filter).await.map_err(store_error)?;
    let mut w = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut w, &page)?;
        writeln!(w)?;
        return Ok(());
    }
    writeln!(
        w,
        "{:>6}  {:<12}  {:<24}  {:<11}  {:<24}  {:>9}  name",
        "id", "bench", "kind", "status", "created", "samples"
    )?;
    for r in &page.runs {
        writeln!(
            w,
            "{:>6}  {:<12}  {:<24}  {:<11}  {:<24}  {:>9}  {}",
            r.id, r.bench_id, r.kind, r.status, r.created_at, r.sample_count, r.name
        )?;
    }
    let shown = page.runs.len() as u64;
    if shown < page.total {
        writeln!(
            w,
            "({shown} of {} runs from offset {}; use --limit/--offset)",
            page.total, args.offset
        )?;
    }
    Ok(())
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn write_run(w: &mut impl Write, r: &Run) -> std::io::Result<()> {
    writeln!(w, "run {}: {} ({})", r.id, r.name, r.kind)?;
    writeln!(w, "  uuid:             {}", r.uuid)?;
    writeln!(w, "  bench:            {}", r.bench_id)?;
    writeln!(w, "  status:           {}", r.status)?;
    if let Some(reason) = &r.status_reason {
        writeln!(w, "  reason:           {reason}")?;
    }
    writeln!(w, "  created:          {}", r.created_at)?;
    writeln!(w, "  started:          {}", opt(&r.started_at))?;
    writeln!(w, "  finished:         {}", opt(&r.finished_at))?;
    writeln!(w, "  software:         {}", r.software_version)?;
    if let Some(note) = &r.notes {
        writeln!(w, "  note:             {note}")?;
    }
    writeln!(w, "  models:           {}", r.models.join(", "))?;
    if r.kind == run_store::IMPORTED_KIND {
        write_import(w, &r.spec)?;
    }
    writeln!(
        w,
        "  samples:          {} (dropped: {} batches, {} samples)",
        r.sample_count, r.dropped_batches, r.dropped_samples
    )?;
    writeln!(
        w,
        "  period:           {} s",
        opt(&r.period_s.map(|p| format!("{p}")))
    )?;
    writeln!(
        w,
        "  period error:     p50 {} us, p99 {} us, p99.9 {} us, max {} us; overruns {}; tick work p50 {} us",
        opt(&r.timing.period_error_p50_us),
        opt(&r.timing.period_error_p99_us),
        opt(&r.timing.period_error_p999_us),
        opt(&r.timing.period_error_max_us),
        r.timing.overruns,
        opt(&r.timing.tick_work_p50_us)
    )?;
    log_lines(w, "interruption log", &r.interruption_log)?;
    log_lines(w, "run log", &r.run_log)?;
    match &r.results {
        Some(res) => {
            let text = serde_json::to_string_pretty(res).unwrap_or_default();
            writeln!(w, "  results:")?;
            for line in text.lines() {
                writeln!(w, "    {line}")?;
            }
        }
        None => writeln!(w, "  results:          (none)")?,
    }
    Ok(())
}

/// An imported run's provenance (its spec): the source file, column mapping, scales, units.
fn write_import(w: &mut impl Write, spec: &serde_json::Value) -> std::io::Result<()> {
    let src = &spec["source"];
    let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let pairs = |key: &str, sep: &str| -> String {
        let m = spec[key].as_object();
        let list: Vec<String> = bench_daemon::fitting::run_data::TimeSeries::NAMES
            .iter()
            .filter_map(|n| {
                m.and_then(|m| m.get(*n))
                    .map(|v| format!("{n}{sep}{}", text(v)))
            })
            .collect();
        if list.is_empty() {
            "-".into()
        } else {
            list.join(", ")
        }
    };
    writeln!(
        w,
        "  source:           {} ({}, {} bytes, sha256 {})",
        text(&src["file"]),
        text(&src["format"]),
        src["bytes"],
        text(&src["sha256"])
    )?;
    writeln!(w, "  columns:          {}", pairs("columns", "="))?;
    writeln!(w, "  scales:           {}", pairs("scales", " × "))?;
    writeln!(
        w,
        "  units:            {} ({} bench)",
        pairs("units", " "),
        text(&spec["geometry"])
    )
}

async fn show(args: &ShowArgs) -> anyhow::Result<()> {
    let store = open(&args.db).await?;
    let run = store.run(args.id).await.map_err(store_error)?;
    let comparisons = store
        .comparisons_for_run(args.id)
        .await
        .map_err(store_error)?;
    let checksum = match args.checksum {
        true => Some(store.sample_checksum(args.id).await.map_err(store_error)?),
        false => None,
    };
    let chain = store.chain(args.id).await.map_err(store_error)?;
    let mut w = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::to_value(&run)?;
        v["comparisons"] = serde_json::to_value(&comparisons)?;
        v["chain"] = serde_json::to_value(&chain)?;
        if let Some(sum) = &checksum {
            v["sample_checksum"] = sum.as_str().into();
        }
        serde_json::to_writer_pretty(&mut w, &v)?;
        writeln!(w)?;
    } else {
        write_run(&mut w, &run)?;
        if chain.len() > 1 {
            writeln!(
                w,
                "  chain:            {} (resumed; analysed as one run)",
                chain_text(&chain, run.id)
            )?;
        }
        if let Some(sum) = &checksum {
            writeln!(w, "  sample checksum:  sha256 {sum}")?;
        }
        write_comparisons(&mut w, &comparisons)?;
    }
    Ok(())
}

/// A chain as `12 → 15 → [17]` (this run in brackets).
fn chain_text(chain: &[i64], this: i64) -> String {
    let v: Vec<String> = chain
        .iter()
        .map(|&id| {
            if id == this {
                format!("[{id}]")
            } else {
                id.to_string()
            }
        })
        .collect();
    v.join(" → ")
}

fn ids(ids: &[i64]) -> String {
    let v: Vec<String> = ids.iter().map(i64::to_string).collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

/// The comparisons a run took part in, one line each (the `comparisons` section).
fn write_comparisons(w: &mut impl Write, list: &[Comparison]) -> std::io::Result<()> {
    if list.is_empty() {
        return writeln!(w, "  comparisons:      (none)");
    }
    writeln!(w, "  comparisons:")?;
    for c in list {
        let ranked: Vec<String> = c.table["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| r["model"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        writeln!(
            w,
            "    {} ({}): estimate runs {}, validate runs {}; ranked: {}",
            c.id,
            c.created_at,
            ids(&c.estimate_runs),
            ids(&c.validate_runs),
            if ranked.is_empty() {
                c.models.join(", ")
            } else {
                ranked.join(" > ")
            }
        )?;
    }
    Ok(())
}

async fn export(args: &ExportArgs) -> anyhow::Result<()> {
    let store = open(&args.db).await?;
    // Check the run before creating the output file.
    let run = store.run(args.id).await.map_err(store_error)?;
    let out: Box<dyn std::io::Write + Send> = match &args.out {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .map_err(|e| InputError(format!("--out: cannot create {}: {e}", path.display())))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    let mut w = std::io::BufWriter::new(out);
    let format = match args.format {
        ExportFormat::Csv => Format::Csv,
        ExportFormat::Json => Format::Json,
        ExportFormat::Parquet => {
            // A page of samples at a time: an hour at 1 kHz is not held whole.
            let mut pages = store
                .sample_pages(args.id, &run_store::SampleQuery::default())
                .await
                .map_err(store_error)?;
            let mut file = bench_service::parquet::PageWriter::new(&mut w, &run, pages.models())?;
            while let Some(set) = pages.next_page().await.map_err(store_error)? {
                file.page(&set)?;
            }
            file.finish()?;
            std::io::Write::flush(&mut w)?;
            return Ok(());
        }
    };
    let opts = run_store::ExportOptions { units: args.units };
    store
        .export_with(args.id, format, opts, &mut w)
        .await
        .map_err(store_error)?;
    Ok(())
}

/// A run's log under its title, one entry a line ("(empty)" when there is none).
fn log_lines(w: &mut impl Write, title: &str, log: &[run_store::LogEntry]) -> std::io::Result<()> {
    if log.is_empty() {
        return writeln!(w, "  {title}: (empty)");
    }
    writeln!(w, "  {title}:")?;
    for e in log {
        let t = e.t.map_or_else(String::new, |t| format!(" t={t} s"));
        writeln!(w, "    {}{t}: {}", e.at, e.reason)?;
    }
    Ok(())
}
