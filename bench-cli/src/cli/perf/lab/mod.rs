//! `bench perf lab [--runs N] [--json]`: a lab's questions over months of runs. Fills a store
//! with N runs (default 100 000) across 50 benches over a year, each with a sweep's results
//! and a LuGre fit stored through the product's own writes (so with their summary rows) and
//! one run in ten tagged `good`; then times `trend_90d_ms` (one bench's fitted `fs` over the
//! last 90 days, with limits) and `drift_query_ms` (runs tagged `good` whose `fs` moved more
//! than 5 % from their bench's baseline, the first 30 days) and `fleet_ms` (every bench's
//! heartbeat and last stop, `GET /api/lab/benches`). SQLite by default, PostgreSQL with
//! `--db URL`.

mod archive;
mod fleet;

use super::super::InputError;
use super::estop::percentiles;
use super::storage::{scratch_db, two_workers};
use bench_daemon::db::store_error;
use chrono::{DateTime, Duration, Utc};
use futures_util::{StreamExt, TryStreamExt};
use run_store::{
    Annotation, AuditEntry, Baseline, DriftQuery, Location, NewRun, Store, TrendQuery,
};
use serde::Serialize;
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `bench perf lab`.
#[derive(Debug, clap::Args)]
pub struct PerfLabArgs {
    /// Runs in the store (goals at 100 000: `trend_90d_ms` <= 50, `drift_query_ms` <= 100).
    #[arg(long, default_value_t = 100_000)]
    runs: usize,
    /// Queries timed of each kind, for the percentiles.
    #[arg(long, default_value_t = 50)]
    repeats: usize,
    /// Database file to fill (must not exist; kept), or a postgres:// URL of a scratch
    /// database. Default: a temporary file, removed.
    #[arg(long, value_name = "PATH|URL")]
    db: Option<PathBuf>,
    /// MB of generated samples (as stored) to archive to Parquet (0: none; goals >= 100 MB/s,
    /// <= 2 bytes per value).
    #[arg(long, default_value_t = 1000, value_name = "MB")]
    archive_mb: u64,
    /// Print JSON: `runs`, `benches`, `fill_s`, `trend_90d_ms` and `drift_query_ms` (each
    /// `{p50, p99, max}`), `trend_points`, `drifted`, `fleet_ms` (`{p50, p99, max}`),
    /// `fleet_benches`, `database`, and with `--archive-mb`
    /// `archive_mb_per_s`, `bytes_per_value`, `archive_rows`, `archive_runs`,
    /// `archive_input_mb`, `archive_output_mb`, `archive_s`.
    #[arg(long)]
    json: bool,
}

/// Benches of the generated lab.
const BENCHES: usize = 50;
/// Days of history.
const DAYS: i64 = 365;
/// Runs created per transaction.
const CREATE_CHUNK: usize = 10_000;
/// One run in this many is tagged `good`.
const GOOD_EVERY: usize = 10;
/// Runs filled side by side.
const FILL_AT_ONCE: usize = 8;
/// The drift the query looks for.
const DRIFT_FRACTION: f64 = 0.05;

/// What `bench perf lab` measured.
#[derive(Debug, Serialize)]
struct Report {
    runs: usize,
    benches: usize,
    fill_s: f64,
    trend_90d_ms: Value,
    trend_points: usize,
    drift_query_ms: Value,
    drifted: usize,
    fleet_ms: Value,
    fleet_benches: usize,
    database: String,
    #[serde(flatten)]
    archive: Option<archive::ArchiveFigures>,
}

/// Runs `bench perf lab`.
pub fn run(args: &PerfLabArgs) -> anyhow::Result<()> {
    if args.runs < BENCHES || args.repeats == 0 {
        return Err(InputError(format!("--runs must be >= {BENCHES} and --repeats >= 1")).into());
    }
    let (path, _tmp) = scratch_db(args.db.as_ref())?;
    let end = Utc::now();
    let start = end - Duration::days(DAYS);
    let report = two_workers()?.block_on(async {
        let store = Store::open(&path).await.map_err(store_error)?;
        let t0 = Instant::now();
        fill(&store, args.runs, start, end).await?;
        let fill_s = t0.elapsed().as_secs_f64();
        store.settle_statistics().await.map_err(store_error)?;
        let (trend_90d_ms, trend_points) = trends(&store, end, args.repeats).await?;
        let (drift_query_ms, drifted) = drifts(&store, start, args.repeats).await?;
        let (fleet_ms, fleet_benches) = fleet::measure(&store, args.repeats).await?;
        let archive = match args.archive_mb {
            0 => None,
            mb => Some(archive::measure(&store, mb).await?),
        };
        store.close().await;
        anyhow::Ok(Report {
            runs: args.runs,
            benches: BENCHES,
            fill_s,
            trend_90d_ms,
            trend_points,
            drift_query_ms,
            drifted,
            fleet_ms,
            fleet_benches,
            database: Location::from(&path).to_string(),
            archive,
        })
    })?;
    print(&report, args.json)
}

/// The bench of run `k` (runs alternate between benches, so each bench's runs spread over the
/// whole year).
fn bench_of(k: usize) -> String {
    format!("bench-{:02}", k % BENCHES)
}

/// Run `k`'s start: the year divided evenly among the runs.
fn time_of(k: usize, n: usize, start: DateTime<Utc>) -> String {
    let offset = Duration::seconds((DAYS * 86_400) * k as i64 / n as i64);
    (start + offset).format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A deterministic number in [0, 1) from `k` (splitmix64), for the generated scatter.
pub(super) fn unit(k: u64) -> f64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as f64 / u64::MAX as f64
}

/// Run `k`'s fitted fs [N m]: its bench's level with 1 % scatter; every fifth bench drifts
/// up by 8 % over the year (a wearing bearing).
fn fs_of(k: usize, n: usize) -> f64 {
    let bench = k % BENCHES;
    let level = 1.2 + 0.01 * bench as f64;
    let wear = if bench.is_multiple_of(5) {
        0.08 * k as f64 / n as f64
    } else {
        0.0
    };
    level * (1.0 + wear + 0.01 * (unit(k as u64) - 0.5) * 2.0)
}

/// Creates the runs, then stores each one's sweep results and fit and tags the `good` ones.
async fn fill(
    store: &Store,
    n: usize,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> anyhow::Result<()> {
    debug_assert!(start < end);
    let mut ids = Vec::with_capacity(n);
    while ids.len() < n {
        let chunk: Vec<(NewRun, String)> = (ids.len()..n.min(ids.len() + CREATE_CHUNK))
            .map(|k| (new_run(k), time_of(k, n, start)))
            .collect();
        ids.extend(store.create_runs_at(&chunk).await.map_err(store_error)?);
    }
    // The runs' results, sets and tags, FILL_AT_ONCE runs at a time: PostgreSQL takes them
    // side by side (its pool has room), SQLite's one writer in turn. Only the fill's time
    // changes; the queries measured after it see the same rows.
    futures_util::stream::iter(ids.into_iter().enumerate())
        .map(|(k, id)| store_one(store, k, id, n))
        .buffer_unordered(FILL_AT_ONCE)
        .try_collect::<()>()
        .await
}

/// One run's sweep results and LuGre set, and its `good` tag for every GOOD_EVERY-th run.
async fn store_one(store: &Store, k: usize, id: i64, n: usize) -> anyhow::Result<()> {
    let fs = fs_of(k, n);
    store
        .save_results(id, &sweep(fs))
        .await
        .map_err(store_error)?;
    let (params, provenance) = lugre_fit(id, fs, k);
    store
        .add_parameter_set(&format!("lugre-run{id}"), "lugre", &params, &provenance)
        .await
        .map_err(store_error)?;
    if k.is_multiple_of(GOOD_EVERY) {
        let edit = Annotation {
            add: vec!["good".into()],
            ..Annotation::default()
        };
        store
            .annotate(id, &edit, AuditEntry::default())
            .await
            .map_err(store_error)?;
    }
    Ok(())
}

fn new_run(k: usize) -> NewRun {
    NewRun {
        kind: "constant_velocity_sweep".into(),
        name: format!("perf lab {k}"),
        bench_config: json!({"bench_id": bench_of(k)}),
        software_version: env!("CARGO_PKG_VERSION").into(),
        models: vec!["lugre".into()],
        ..NewRun::default()
    }
}

/// A sweep's results: four steady-state points per direction on a Stribeck curve from `fs`.
fn sweep(fs: f64) -> Value {
    let point = |v: f64| {
        let f = (0.8 * fs + 0.2 * fs * (-(v / 0.01).powi(2)).exp() + 0.05 * v.abs()) * v.signum();
        json!({"setpoint_rad_s": v, "velocity_rad_s": v, "mean_torque_nm": f,
               "std_torque_nm": 0.01, "n": 2000})
    };
    let speeds = [0.005, 0.02, 0.1, 0.5];
    json!({"kind": "constant_velocity_sweep",
           "positive": speeds.iter().map(|&v| point(v)).collect::<Vec<_>>(),
           "negative": speeds.iter().map(|&v| point(-v)).collect::<Vec<_>>()})
}

/// A LuGre set as `bench fit` stores it: the parameters, and the fitted ones with their
/// standard errors in the provenance.
fn lugre_fit(run: i64, fs: f64, k: usize) -> (Value, Value) {
    let fitted = json!({"fc": 0.8 * fs, "fs": fs, "vs": 0.01, "sigma0": 1.0e4 * (1.0 + 0.02 * unit(k as u64 + 7))});
    let errors = json!({"fc": 0.002, "fs": 0.004, "vs": 5e-4, "sigma0": 150.0});
    let mut params = fitted.clone();
    params["sigma1"] = json!(100.0);
    params["sigma2"] = json!(0.05);
    let provenance = json!({"runs": [run], "procedure": "static_curve", "fitted": fitted,
                            "std_errors": errors});
    (params, provenance)
}

/// Milliseconds per trend of one bench's `fs` over the last 90 days, and its points.
async fn trends(store: &Store, end: DateTime<Utc>, n: usize) -> anyhow::Result<(Value, usize)> {
    let q = TrendQuery {
        param: "fs".into(),
        model: Some("lugre".into()),
        bench: Some(bench_of(7)),
        since: Some(
            (end - Duration::days(90))
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
        ),
        until: None,
        baseline: Baseline::default(),
    };
    let (mut ms, mut points) = (Vec::with_capacity(n), 0);
    for _ in 0..n {
        let t0 = Instant::now();
        let trend = store.trend(&q).await.map_err(store_error)?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        points = trend.points.len();
    }
    Ok((percentiles(&mut ms), points))
}

/// Milliseconds per drift query (tag `good`, `fs` more than 5 % from the bench's mean over
/// the first 30 days), and the runs it found.
async fn drifts(store: &Store, start: DateTime<Utc>, n: usize) -> anyhow::Result<(Value, usize)> {
    let day = |d: i64| {
        (start + Duration::days(d))
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    };
    let q = DriftQuery {
        param: "fs".into(),
        model: "lugre".into(),
        tag: "good".into(),
        fraction: DRIFT_FRACTION,
        baseline_since: day(0),
        baseline_until: day(30),
    };
    let (mut ms, mut found) = (Vec::with_capacity(n), 0);
    for _ in 0..n {
        let t0 = Instant::now();
        let drifted = store.drift(&q).await.map_err(store_error)?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        found = drifted.len();
    }
    Ok((percentiles(&mut ms), found))
}

fn print(r: &Report, as_json: bool) -> anyhow::Result<()> {
    let mut w = std::io::stdout().lock();
    if as_json {
        serde_json::to_writer_pretty(&mut w, r)?;
        return Ok(writeln!(w)?);
    }
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let p = |v: &Value| format!("p50 {:.2} ms, p99 {:.2} ms", f(v, "p50"), f(v, "p99"));
    writeln!(
        w,
        "{} runs on {} benches in {} (filled in {:.1} s)",
        r.runs, r.benches, r.database, r.fill_s
    )?;
    writeln!(
        w,
        "trend, one bench, 90 days: {} ({} points; goal <= 50 ms)",
        p(&r.trend_90d_ms),
        r.trend_points
    )?;
    writeln!(
        w,
        "drift of runs tagged good: {} ({} runs; goal <= 100 ms)",
        p(&r.drift_query_ms),
        r.drifted
    )?;
    writeln!(
        w,
        "fleet, every bench's heartbeat and last stop: {} ({} benches)",
        p(&r.fleet_ms),
        r.fleet_benches
    )?;
    if let Some(a) = &r.archive {
        writeln!(
            w,
            "archive: {:.0} MB of samples ({} rows) in {:.1} s: {:.0} MB/s (goal >= 100), \
             {:.3} bytes per value (goal <= 2)",
            a.archive_input_mb, a.archive_rows, a.archive_s, a.archive_mb_per_s, a.bytes_per_value
        )?;
    }
    Ok(())
}
