//! `bench runs push --db BENCH_DB --to LAB_DB [--since DATE] [--json]`: copies a bench's
//! finished runs, parameter sets and comparisons into the lab's store (docs/src/lab.md).

use super::super::InputError;
use super::super::db::{DbArgs, open, store_error};
use run_store::{Location, PushOptions, PushReport, PushedRun, Store};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `bench runs push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    #[command(flatten)]
    db: DbArgs,
    /// The store to copy into: the lab's postgres:// URL (or another SQLite file).
    #[arg(long, value_name = "URL|PATH")]
    to: PathBuf,
    /// Only runs created at or after this UTC date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long)]
    since: Option<String>,
    /// Print JSON: `pushed`, `skipped` and `failed` runs (each with `uuid`, `id`, `target_id`,
    /// `bench_id`, `samples`, `checksum`, `reason`), `parameter_sets`, `comparisons` and
    /// `chains` (`pushed`, `skipped`), `samples`, `seconds`, `samples_per_s`.
    #[arg(long)]
    json: bool,
}

/// Runs `bench runs push`; exits 1 when a run failed to copy.
pub async fn push(args: &PushArgs) -> anyhow::Result<()> {
    let source = open(&args.db).await?;
    let target = open_target(&args.to).await?;
    if source.location() == target.location() {
        return Err(InputError(format!(
            "--to: {} is the --db store itself",
            target.location()
        ))
        .into());
    }
    let t0 = Instant::now();
    let options = PushOptions {
        since: args.since.clone(),
    };
    let report = source.push(&target, &options).await.map_err(store_error)?;
    let seconds = t0.elapsed().as_secs_f64();
    let mut w = std::io::stdout().lock();
    if args.json {
        let mut doc = serde_json::to_value(&report)?;
        doc["seconds"] = seconds.into();
        doc["samples_per_s"] = (report.samples as f64 / seconds).into();
        serde_json::to_writer_pretty(&mut w, &doc)?;
        writeln!(w)?;
    } else {
        print_report(&mut w, &report, seconds, target.location())?;
    }
    if report.failed.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "{} run(s) failed to push",
            report.failed.len()
        ))
    }
}

async fn open_target(to: &PathBuf) -> anyhow::Result<Store> {
    Store::open_existing(to).await.map_err(|e| match e {
        run_store::Error::NoDatabase { path } => InputError(format!(
            "--to: no run database at {} (give the lab's postgres:// URL)",
            path.display()
        ))
        .into(),
        run_store::Error::Database(e) => {
            InputError(format!("--to: {}: {e}", Location::from(to))).into()
        }
        e => store_error(e),
    })
}

fn print_report(
    w: &mut impl Write,
    report: &PushReport,
    seconds: f64,
    target: &Location,
) -> std::io::Result<()> {
    let line = |w: &mut dyn Write, what: &str, r: &PushedRun| {
        let target = r.target_id.map_or("-".into(), |id| id.to_string());
        let note = r.reason.as_deref().unwrap_or("");
        writeln!(
            w,
            "{what:<8} run {:>6} -> {target:>6}  {}  bench {:<12} {:>9} samples  {}",
            r.id,
            r.uuid,
            r.bench_id,
            r.samples,
            r.checksum
                .as_deref()
                .map_or(note.to_string(), |c| format!("sha256 {c}"))
        )
    };
    for r in &report.pushed {
        line(w, "pushed", r)?;
    }
    for r in &report.skipped {
        line(w, "skipped", r)?;
    }
    for r in &report.failed {
        line(w, "FAILED", r)?;
    }
    writeln!(
        w,
        "{} runs pushed to {target} ({} samples in {seconds:.2} s, {:.0} samples/s), {} already \
         there, {} failed; parameter sets {} pushed, {} already there; comparisons {} pushed, {} \
         already there; chain links {} set, {} already there; calibrations {} pushed, {} already \
         there; runs' sensor records {} pushed, {} already there",
        report.pushed.len(),
        report.samples,
        report.samples as f64 / seconds,
        report.skipped.len(),
        report.failed.len(),
        report.parameter_sets.pushed,
        report.parameter_sets.skipped,
        report.comparisons.pushed,
        report.comparisons.skipped,
        report.chains.pushed,
        report.chains.skipped,
        report.calibrations.pushed,
        report.calibrations.skipped,
        report.run_sensors.pushed,
        report.run_sensors.skipped,
    )
}
