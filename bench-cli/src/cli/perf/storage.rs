//! `bench perf storage`: samples per second into the run store (a SQLite file, or PostgreSQL
//! with `--db postgres://...`) through the real recorder path
//! (`Store::open` → `Recorder::start` → batches over the bounded channel → the writer task's
//! multi-row INSERTs and commits → `Recorder::close`).

use super::super::InputError;
use super::super::db::store_error;
use run_store::{Batch, Finish, Location, NewRun, Recorder, RecorderConfig, Sample, Store};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `bench perf storage`.
#[derive(Debug, clap::Args)]
pub struct PerfStorageArgs {
    /// Print JSON: `samples_per_s`, `outputs_per_s`, `samples`, `models`, `seconds`, `commits`,
    /// `db_bytes`.
    #[arg(long)]
    json: bool,
    /// Samples to record.
    #[arg(long, default_value_t = 2_000_000)]
    samples: u64,
    /// Lockstep model outputs per sample (0 = samples only).
    #[arg(long, default_value_t = 0)]
    models: usize,
    /// Samples per batch sent to the recorder.
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
    /// Database file to write (must not exist; kept), or a postgres:// URL (the run is added
    /// to that database). Default: a temporary file, removed.
    #[arg(long, value_name = "PATH|URL")]
    db: Option<PathBuf>,
}

/// The database a perf command fills: `--db` (a file that must not exist yet, or a
/// postgres:// URL), else a temporary file, removed with the directory returned beside it.
pub(super) fn scratch_db(
    db: Option<&PathBuf>,
) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    match db {
        Some(p) if p.exists() && Location::from(p).file().is_some() => {
            Err(InputError(format!("--db: {} already exists", p.display())).into())
        }
        Some(p) => Ok((p.clone(), None)),
        None => {
            let dir = tempfile::tempdir()?;
            Ok((dir.path().join("perf.db"), Some(dir)))
        }
    }
}

/// Two workers: the producer and the store's writer task run side by side, as with the loop.
pub(super) fn two_workers() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// One sample of a 1 kHz bench trajectory.
fn sample(k: u64) -> Sample {
    let t = k as f64 * 1e-3;
    let w = std::f64::consts::TAU * 0.5;
    Sample {
        t,
        x: -0.1 / w * (w * t).cos(),
        v: 0.1 * (w * t).sin(),
        u_cmd: 1.2 * (w * t + 0.3).sin(),
        torque_motor: 1.19 * (w * t + 0.3).sin(),
        torque_sensor: 1.18 * (w * t + 0.31).sin(),
        segment: (k / 10_000) as u32,
        flags: 0,
    }
}

/// Runs `bench perf storage`.
pub fn run(args: &PerfStorageArgs) -> anyhow::Result<()> {
    if args.samples == 0 || args.batch == 0 {
        return Err(InputError("--samples and --batch must be >= 1".into()).into());
    }
    let (path, _tmp) = scratch_db(args.db.as_ref())?;
    let rt = two_workers()?;
    let (seconds, summary) = rt.block_on(async {
        let store = Store::open(&path).await.map_err(store_error)?;
        let models: Vec<String> = (0..args.models).map(|m| format!("model{m}")).collect();
        let id = store
            .create_run(&NewRun {
                kind: "perf_storage".into(),
                name: "bench perf storage".into(),
                software_version: env!("CARGO_PKG_VERSION").into(),
                models,
                period_s: Some(1e-3),
                ..NewRun::default()
            })
            .await
            .map_err(store_error)?;
        // One template batch, re-indexed per send: the producer costs a memcpy.
        let mut template = Batch::with_capacity(0, args.batch, args.models);
        let outs: Vec<f64> = (0..args.models).map(|m| 0.1 * m as f64 + 0.05).collect();
        for k in 0..args.batch as u64 {
            template.push(sample(k), &outs);
        }
        let t0 = Instant::now();
        let recorder = Recorder::start(&store, id, RecorderConfig::default())
            .await
            .map_err(store_error)?;
        let tx = recorder.sender();
        let mut first = 0;
        while first < args.samples {
            let n = (args.samples - first).min(args.batch as u64) as usize;
            let mut b = template.clone();
            b.first_idx = first;
            b.samples.truncate(n);
            b.outputs.truncate(n * args.models);
            tx.send(b).await?;
            first += n as u64;
        }
        let summary = recorder
            .close(Finish::completed(None))
            .await
            .map_err(store_error)?;
        let seconds = t0.elapsed().as_secs_f64();
        store.close().await;
        anyhow::Ok((seconds, summary))
    })?;
    let db_bytes: u64 = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", path.display())).ok())
        .map(|m| m.len())
        .sum();
    let samples_per_s = summary.samples as f64 / seconds;
    let outputs_per_s = summary.outputs as f64 / seconds;
    let mut w = std::io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({
            "samples_per_s": samples_per_s, "outputs_per_s": outputs_per_s,
            "samples": summary.samples, "models": args.models, "batch": args.batch,
            "seconds": seconds, "commits": summary.commits, "db_bytes": db_bytes,
            "database": Location::from(&path).to_string(),
        });
        serde_json::to_writer_pretty(&mut w, &doc)?;
        writeln!(w)?;
    } else {
        writeln!(
            w,
            "{} samples ({} model outputs each) in {seconds:.3} s through the recorder, {} commits",
            summary.samples, args.models, summary.commits
        )?;
        writeln!(
            w,
            "{samples_per_s:.0} samples/s (goal 1000000), {outputs_per_s:.0} model outputs/s, {:.1} MB on disk ({})",
            db_bytes as f64 / 1e6,
            Location::from(&path)
        )?;
    }
    Ok(())
}
