//! The archive part of `bench perf lab`: records `--archive-mb` of generated bench samples
//! (56 bytes each as the run store encodes them) through the recorder, then times
//! `Store::archive` moving them to Parquet: `archive_mb_per_s` (MB of stored samples per
//! second, writing, reading back and checking included) and `bytes_per_value` (file bytes per
//! stored value; goals >= 100 MB/s and <= 2 bytes per value).

use super::unit as noise;
use bench_daemon::db::store_error;
use run_store::{ArchiveOptions, Batch, Finish, NewRun, Recorder, RecorderConfig, Sample, Store};
use serde::Serialize;
use serde_json::json;
use std::time::Instant;

/// Bytes of one sample in the run store (six f64, two u32).
const SAMPLE_BYTES: u64 = 56;
/// Samples per generated run: a 20-minute run at 1 kHz.
const RUN_SAMPLES: u64 = 1_200_000;
/// Samples per batch handed to the recorder.
const BATCH: u64 = 1_000;

/// What the archive part measured.
#[derive(Debug, Serialize)]
pub(super) struct ArchiveFigures {
    /// Runs archived.
    pub archive_runs: u64,
    /// Sample rows archived.
    pub archive_rows: u64,
    /// MB (10^6 bytes) of samples as the store holds them (56 bytes each).
    pub archive_input_mb: f64,
    /// MB of the Parquet files.
    pub archive_output_mb: f64,
    /// Seconds `Store::archive` took.
    pub archive_s: f64,
    /// `archive_input_mb / archive_s`.
    pub archive_mb_per_s: f64,
    /// File bytes per stored value (eight a sample).
    pub bytes_per_value: f64,
}

/// Sample `k` of a bench's slow sine sweep at 1 kHz, as its devices report it: a 20-bit
/// encoder's position, a velocity differentiated from it, the command, the drive's torque
/// estimate and a 16-bit torque sensor (±5 N m) with a few LSB of noise.
fn sample(k: u64) -> Sample {
    let t = k as f64 * 1e-3;
    let w = std::f64::consts::TAU * 0.2;
    let lsb_x = std::f64::consts::TAU / f64::from(1u32 << 20);
    let lsb_tau = 10.0 / 65_536.0;
    let q = |v: f64, lsb: f64| (v / lsb).round() * lsb;
    let x = q(0.5 * (w * t).sin(), lsb_x);
    let x_prev = q(0.5 * (w * (t - 1e-3)).sin(), lsb_x);
    let tau = 1.2 * (w * t + 0.3).sin();
    Sample {
        t,
        x,
        v: (x - x_prev) / 1e-3,
        u_cmd: tau,
        torque_motor: q(tau + 0.02 * (noise(2 * k) - 0.5), 1e-3),
        torque_sensor: q(tau + 4.0 * lsb_tau * (noise(2 * k + 1) - 0.5), lsb_tau),
        segment: (k / 60_000) as u32,
        flags: 0,
    }
}

/// Records about `mb` MB of samples in runs of [`RUN_SAMPLES`], then archives them to a
/// temporary directory.
pub(super) async fn measure(store: &Store, mb: u64) -> anyhow::Result<ArchiveFigures> {
    let mut left = mb * 1_000_000 / SAMPLE_BYTES;
    let mut run = 0;
    while left > 0 {
        let n = left.min(RUN_SAMPLES);
        record(store, run, n).await?;
        left -= n;
        run += 1;
    }
    let dir = tempfile::tempdir()?;
    let tomorrow = chrono::Utc::now() + chrono::Duration::days(1);
    let opts = ArchiveOptions {
        before: tomorrow.format("%Y-%m-%d").to_string(),
        to: dir.path().to_path_buf(),
        with_models: false,
    };
    let t0 = Instant::now();
    let report = store.archive(&opts).await.map_err(store_error)?;
    let archive_s = t0.elapsed().as_secs_f64();
    let input_mb = (report.rows * SAMPLE_BYTES) as f64 / 1e6;
    Ok(ArchiveFigures {
        archive_runs: report.runs,
        archive_rows: report.rows,
        archive_input_mb: input_mb,
        archive_output_mb: report.bytes as f64 / 1e6,
        archive_s,
        archive_mb_per_s: input_mb / archive_s,
        bytes_per_value: report.bytes_per_value,
    })
}

/// One run of `n` generated samples, recorded through the recorder.
async fn record(store: &Store, run: u64, n: u64) -> anyhow::Result<()> {
    let id = store
        .create_run(&NewRun {
            kind: "perf_archive".into(),
            name: format!("perf lab archive {run}"),
            bench_config: json!({"bench_id": format!("bench-{:02}", run % 50)}),
            software_version: env!("CARGO_PKG_VERSION").into(),
            period_s: Some(1e-3),
            ..NewRun::default()
        })
        .await
        .map_err(store_error)?;
    let recorder = Recorder::start(store, id, RecorderConfig::default())
        .await
        .map_err(store_error)?;
    let tx = recorder.sender();
    let mut first = 0;
    while first < n {
        let m = (n - first).min(BATCH);
        let mut b = Batch::with_capacity(first, m as usize, 0);
        for k in first..first + m {
            b.push(sample(k + run * RUN_SAMPLES), &[]);
        }
        tx.send(b).await?;
        first += m;
    }
    recorder
        .close(Finish::completed(None))
        .await
        .map_err(store_error)?;
    Ok(())
}
