//! `bench perf import [--mb N] [--db PATH|URL] [--json]`: `bench runs import` of a generated
//! CSV recording of about N MB (1 kHz, `t,x,v,u,friction` with full-precision numbers) into a
//! temporary SQLite file or a PostgreSQL store: file megabytes per second and the peak
//! resident memory above what the process held before (the recording is streamed into
//! chunks, never held whole).

use super::super::InputError;
use super::super::db::store_error;
use super::super::runs::import::import_error;
use recording_import::{ImportOptions, Source};
use run_store::{Location, Store};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Arguments of `bench perf import`.
#[derive(Debug, clap::Args)]
pub struct PerfImportArgs {
    /// Print JSON: `import_mb_per_s`, `peak_rss_mb_above_idle`, `mb`, `rows`, `seconds`.
    #[arg(long)]
    json: bool,
    /// Size of the generated CSV file \[MB\].
    #[arg(long, default_value_t = 100.0)]
    mb: f64,
    /// Store to import into: a SQLite file (must not exist; kept) or a postgres:// URL.
    /// Default: a temporary SQLite file, removed.
    #[arg(long, value_name = "PATH|URL")]
    db: Option<PathBuf>,
}

/// Writes a 1 kHz recording of about `bytes` bytes; returns its rows.
fn write_csv(path: &std::path::Path, bytes: u64) -> std::io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    writeln!(w, "t,x,v,u,friction")?;
    let (mut written, mut k) = (17u64, 0u64);
    let mut line = String::with_capacity(128);
    while written < bytes {
        let t = k as f64 * 1e-3;
        let (s, c) = (t.sin(), (3.1 * t).cos());
        line.clear();
        use std::fmt::Write as _;
        let _ = writeln!(
            line,
            "{t},{},{},{},{}",
            0.5 * s + 0.01 * c,
            0.5 * t.cos() - 0.031 * (3.1 * t).sin(),
            1.2 * s + 0.37 * c,
            0.31 * s.signum() + 0.05 * c
        );
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
        k += 1;
    }
    w.flush()?;
    Ok(k)
}

/// A `/proc/self/status` field in MiB (`VmRSS`, `VmHWM`).
fn status_mib(field: &str) -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs `bench perf import`.
pub fn run(args: &PerfImportArgs) -> anyhow::Result<()> {
    if !(args.mb > 0.0 && args.mb <= 100_000.0) {
        return Err(InputError("--mb must be > 0 and at most 100000".into()).into());
    }
    let dir = tempfile::tempdir()?;
    let csv = dir.path().join("recording.csv");
    let rows = write_csv(&csv, (args.mb * 1e6) as u64)?;
    let db = match &args.db {
        Some(p) if p.exists() && Location::from(p).file().is_some() => {
            return Err(InputError(format!("--db: {} already exists", p.display())).into());
        }
        Some(p) => p.clone(),
        None => dir.path().join("perf.db"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let store = rt.block_on(Store::open(&db)).map_err(store_error)?;
    // The peak from here on: Linux resets VmHWM to the current RSS on "5" (clear_refs).
    let idle = status_mib("VmRSS:").unwrap_or(0.0);
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let source = Source {
        path: csv.clone(),
        file_name: "recording.csv".into(),
        digest: None,
    };
    let report = rt
        .block_on(recording_import::import(
            &store,
            source,
            ImportOptions::default(),
        ))
        .map_err(import_error)?;
    let peak = status_mib("VmHWM:").filter(|_| reset);
    rt.block_on(store.close());
    let above = peak.map(|p| (p - idle).max(0.0));
    let mut w = std::io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({
            "import_mb_per_s": report.mb_per_s,
            "peak_rss_mb_above_idle": above,
            "mb": report.source["bytes"].as_f64().unwrap_or(0.0) / 1e6,
            "rows": rows,
            "seconds": report.seconds,
            "database": Location::from(&db).to_string(),
        });
        serde_json::to_writer_pretty(&mut w, &doc)?;
        writeln!(w)?;
    } else {
        writeln!(
            w,
            "{rows} rows ({:.1} MB of CSV) imported in {:.3} s: {:.1} MB/s (goal 50)",
            report.source["bytes"].as_f64().unwrap_or(0.0) / 1e6,
            report.seconds,
            report.mb_per_s
        )?;
        match above {
            Some(mb) => writeln!(w, "peak memory {mb:.1} MiB above idle (goal 64)")?,
            None => writeln!(
                w,
                "peak memory: not measurable here (/proc/self/clear_refs)"
            )?,
        }
    }
    Ok(())
}
