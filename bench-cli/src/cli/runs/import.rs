//! `bench runs import FILE [--format csv|mat|parquet] [--columns t=COL,...] [--scale
//! NAME=FACTOR ...] [--geometry rotary|linear] [--name NAME] [--bench ID] [--db PATH] [--json]`:
//! a recording made elsewhere stored as a run of kind `imported` (see [`recording_import`]).

use super::super::InputError;
use super::super::db::{DbArgs, store_error};
use recording_import::{ImportError, ImportOptions, ImportReport, Source};
use run_store::Store;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `bench runs import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The recording: CSV (comma, semicolon or tab; header row; optional units row), MATLAB
    /// level 5 MAT-file, or Parquet.
    file: PathBuf,
    /// The file's format (default: from its extension, else its first bytes).
    #[arg(long, value_name = "csv|mat|parquet")]
    format: Option<String>,
    /// Which file column (MAT: variable, or VAR:K for column K of a matrix) is which sample
    /// column; t is required. Default: the columns named t, x, v, u, friction.
    #[arg(long, value_name = "t=COL,x=COL,v=COL,u=COL,friction=COL")]
    columns: Option<String>,
    /// Multiply a column's values as read (e.g. u=35.1507 to turn volts into newtons); may be
    /// repeated or comma-separated.
    #[arg(long, value_name = "NAME=FACTOR")]
    scale: Vec<String>,
    /// rotary (rad, rad/s, N m) or linear (m, m/s, N). Default: what the file's units say,
    /// else rotary.
    #[arg(long, value_name = "rotary|linear")]
    geometry: Option<String>,
    /// The run's name (default: the file's name).
    #[arg(long)]
    name: Option<String>,
    /// The bench the recording was made on (its bench_id; default: none).
    #[arg(long, value_name = "ID")]
    bench: Option<String>,
    #[command(flatten)]
    db: DbArgs,
    /// Print the import report as JSON (`run_id`, `source` with `sha256`, `columns`, `units`,
    /// `stats`, `mb_per_s`).
    #[arg(long)]
    json: bool,
}

/// An import error as the CLI reports it: bad input exits with code 2.
pub fn import_error(e: ImportError) -> anyhow::Error {
    match e {
        ImportError::Option { option, message } => {
            InputError(format!("--{option}: {message}")).into()
        }
        e @ ImportError::Data { .. } => InputError(e.to_string()).into(),
        ImportError::Store(e) => store_error(e),
        e => anyhow::Error::new(e),
    }
}

/// Runs `bench runs import`.
pub fn run(args: &ImportArgs) -> anyhow::Result<()> {
    let opts = ImportOptions::parse(
        args.format.as_deref(),
        args.columns.as_deref(),
        &args.scale,
        args.geometry.as_deref(),
        args.name.as_deref(),
        args.bench.as_deref(),
    )
    .map_err(import_error)?;
    if !args.file.is_file() {
        return Err(InputError(format!("FILE: no file at {}", args.file.display())).into());
    }
    let file_name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| args.file.display().to_string());
    let source = Source {
        path: args.file.clone(),
        file_name,
        digest: None,
    };
    let db = args.db.path();
    bench_daemon::db::check_dir(&db, false)?;
    // Two workers: the recorder's writer beside the reading thread.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = rt.block_on(async {
        let store = Store::open(&db).await.map_err(store_error)?;
        let report = recording_import::import(&store, source, opts).await;
        store.close().await;
        report.map_err(import_error)
    })?;
    let mut w = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut w, &report)?;
        writeln!(w)?;
    } else {
        write_report(&mut w, &report)?;
    }
    Ok(())
}

/// The report as `bench runs import` prints it.
fn write_report(w: &mut impl Write, r: &ImportReport) -> std::io::Result<()> {
    let src = &r.source;
    writeln!(w, "run {}", r.run_id)?;
    writeln!(
        w,
        "imported {} ({}, {} bytes, sha256 {}) as run {} '{}': {} samples",
        src["file"].as_str().unwrap_or_default(),
        src["format"].as_str().unwrap_or_default(),
        src["bytes"],
        src["sha256"].as_str().unwrap_or_default(),
        r.run_id,
        r.name,
        r.stats.samples
    )?;
    // In sample order (t, x, v, u, friction), not the maps' alphabetical one.
    let pairs = |m: &serde_json::Map<String, serde_json::Value>, sep: &str| -> String {
        recording_import::Role::ALL
            .iter()
            .filter_map(|r| m.get(r.name()).map(|v| (r.name(), v)))
            .map(|(k, v)| {
                format!(
                    "{k}{sep}{}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let scaled = if r.scales.is_empty() {
        String::new()
    } else {
        format!(" (scaled: {})", pairs(&r.scales, " × "))
    };
    writeln!(w, "  columns: {}{scaled}", pairs(&r.columns, "="))?;
    let stated = if r.stated_units.is_empty() {
        String::new()
    } else {
        format!("; the file said {}", pairs(&r.stated_units, " "))
    };
    writeln!(
        w,
        "  units: {} ({} bench, geometry from {}){stated}",
        pairs(&r.units, " "),
        r.geometry,
        r.geometry_source
    )?;
    let s = &r.stats;
    let num = |x: Option<f64>| x.map_or_else(|| "-".into(), |x| format!("{x}"));
    let step = if s.uniform {
        format!("step {} s (uniform)", num(s.dt_mean))
    } else {
        format!(
            "step {} .. {} s (mean {}; largest gap at t = {} s)",
            num(s.dt_min),
            num(s.dt_max),
            num(s.dt_mean),
            num(s.largest_gap_at)
        )
    };
    writeln!(
        w,
        "  time: {} .. {} s, {step}",
        num(s.t_first),
        num(s.t_last)
    )?;
    writeln!(w, "  {:.3} s, {:.1} MB/s", r.seconds, r.mb_per_s)
}
