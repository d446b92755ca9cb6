//! `bench archive --before DATE --to DIR [--with-models] [--db PATH|URL] [--json]`: moves the
//! raw samples of runs that started before DATE out of the run database into hive-partitioned
//! Parquet files (docs/src/archive.md). The work is the run store's ([`Store::archive`]); this
//! file parses and prints.

use super::db::{DbArgs, open, runtime};
use bench_daemon::db::store_error;
use run_store::{ArchiveOptions, ArchiveReport, Store};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `bench archive`.
#[derive(Debug, clap::Args)]
pub struct ArchiveArgs {
    /// Runs that started before this UTC time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long, value_name = "DATE")]
    before: String,
    /// The archive's root: files go to DIR/bench=ID/date=YYYY-MM-DD/run=N.parquet.
    #[arg(long, value_name = "DIR")]
    to: PathBuf,
    /// Keep the lockstep model outputs too (float32). Without, they are left out: a replay of
    /// the samples recomputes them.
    #[arg(long)]
    with_models: bool,
    #[command(flatten)]
    db: DbArgs,
    /// Print JSON: `runs`, `rows`, `bytes`, `values`, `bytes_per_value`, `files` (each
    /// `run_id`, `path`, `rows`, `bytes`, `checksum`).
    #[arg(long)]
    json: bool,
}

/// Runs `bench archive`.
pub fn run(args: &ArchiveArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let store: Store = open(&args.db).await?;
        let opts = ArchiveOptions {
            before: args.before.clone(),
            to: args.to.clone(),
            with_models: args.with_models,
        };
        let report = store.archive(&opts).await.map_err(store_error)?;
        store.close().await;
        print(&mut std::io::stdout().lock(), &report, args.json)?;
        Ok(())
    })
}

fn print(w: &mut impl Write, r: &ArchiveReport, json: bool) -> std::io::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *w, r)?;
        return writeln!(w);
    }
    for f in &r.files {
        writeln!(
            w,
            "run {:>7}  {:>10} rows  {:>12} bytes  {}",
            f.run_id,
            f.rows,
            f.bytes,
            f.path.display()
        )?;
    }
    writeln!(
        w,
        "archived {} runs, {} rows, {} bytes ({:.3} bytes per value)",
        r.runs, r.rows, r.bytes, r.bytes_per_value
    )
}
