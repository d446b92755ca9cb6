//! `bench run SPEC.json|SPEC.toml (--sim [--virtual-time] | --config bench.toml) [--db PATH]
//! [--json]`: one experiment from the terminal, with a progress bar and ETA.
//!
//! Prints `run ID` as soon as the run exists, then its outcome. Exit codes: 0 completed,
//! 2 bad input (nothing created, nothing moved), 3 aborted (SIGINT/SIGTERM/SIGHUP, limit breach), 1 failed
//! (fault) or any other error.

use super::InputError;
use super::db::DbArgs;
use bench_daemon::bench_lock::BenchLock;
use bench_daemon::config::Loaded;
use bench_daemon::control::{Control, Devices, Outcome, SimIo, Status, StopReason};
use bench_daemon::session::{self, Watchers};
use bench_daemon::simulated::InProcessSim;
use experiments::Format;
use run_store::Store;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{oneshot, watch};

/// Arguments of `bench run`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("bench").required(true).multiple(true).args(["sim", "config"])))]
pub struct RunArgs {
    /// Experiment spec (JSON or TOML), e.g. experiments/specs/torque_ramp.json.
    spec: PathBuf,
    #[command(flatten)]
    target: Target,
    #[command(flatten)]
    db: DbArgs,
    /// Print the outcome as JSON on stdout (after the `run ID` line).
    #[arg(long)]
    json: bool,
    /// Create the database's directory if it does not exist (else a mistyped --db is refused).
    #[arg(long)]
    create: bool,
}

/// Largest spec file the CLI reads \[bytes\]: a plan within the caps fits many times over.
pub const MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// Reads a spec file, refusing one over [`MAX_SPEC_BYTES`] before reading it.
pub fn read_spec(path: &Path) -> Result<String, InputError> {
    let cannot = |e: std::io::Error| InputError(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let len = file.metadata().map_err(cannot)?.len();
    let mut text = String::new();
    // `take` also holds for files whose size the metadata does not tell (pipes).
    std::io::Read::read_to_string(
        &mut std::io::Read::take(file, MAX_SPEC_BYTES + 1),
        &mut text,
    )
    .map_err(cannot)?;
    if len > MAX_SPEC_BYTES || text.len() as u64 > MAX_SPEC_BYTES {
        return Err(InputError(format!(
            "{}: {} bytes, over the cap of {MAX_SPEC_BYTES} bytes (1 MiB) for a spec file",
            path.display(),
            len.max(text.len() as u64)
        )));
    }
    Ok(text)
}

/// A run that ended, but not completed.
#[derive(Debug, thiserror::Error)]
#[error("run {run_id} {status}: {reason}")]
pub struct RunNotCompleted {
    /// Run id.
    pub run_id: i64,
    /// `aborted` or `failed`.
    pub status: run_store::RunStatus,
    /// Why.
    pub reason: String,
}

/// The database path: `--db`, else the configuration's `database`, else the default.
pub fn db_path(db: &DbArgs, loaded: &Loaded) -> PathBuf {
    bench_daemon::db::for_bench(db.db.as_deref(), loaded)
}

/// Runs the experiment.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let text = read_spec(&args.spec)?;
    let format = Format::from_path(&args.spec);
    // Check the spec against the limits before anything starts (the sim's limits are the
    // shipped ones; the address does not matter for the check).
    let t = &args.target;
    let probe = Loaded::for_command(t.config.as_deref(), t.sim.then_some("127.0.0.1:0"))?;
    let checked = session::check(&text, format, &probe)
        .map_err(|e| InputError(format!("{}: {e}", args.spec.display())))?;
    bench_daemon::db::check_dir(&db_path(&args.db, &probe), args.create)?;
    execute(t, &args.db, args.json, async |_, _| Ok(checked))
}

/// The bench a command runs on: `--sim [--virtual-time]` or `--config FILE` (or both).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct Target {
    /// Run against the simulated bench, started in-process (with --config: that file's
    /// limits, gains and models, the simulated devices in place of its own).
    #[arg(long)]
    pub sim: bool,
    /// Bench configuration file (bench.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// With --sim: step the simulated plant in simulated time inside this process, as fast as
    /// the CPU goes (no Modbus, no real-time loop): a spec's run and analysis in seconds.
    #[arg(long, requires = "sim")]
    pub virtual_time: bool,
}

/// Runs what `make` checks (given the store and the bench) on `target`, recording into the
/// database of `db`, with a progress bar; prints the outcome (`json`: as JSON). A continuation
/// ([`bench_daemon::resume`]) is recorded as resumed from the command line.
pub fn execute(
    target: &Target,
    db: &DbArgs,
    json: bool,
    make: impl AsyncFnOnce(&Store, &Loaded) -> anyhow::Result<session::Checked>,
) -> anyhow::Result<()> {
    let args = target;
    let probe = Loaded::for_command(args.config.as_deref(), args.sim.then_some("127.0.0.1:0"))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let mut sim = if args.sim && !args.virtual_time {
            let priority = probe.config.realtime_priority.saturating_sub(1);
            Some(InProcessSim::start(bench_daemon::simulated::sim_config(&probe), priority).await?)
        } else {
            None
        };
        if let Some(note) = sim.as_ref().and_then(|s| s.priority_note.as_ref()) {
            eprintln!("bench: simulated bench at {note}");
        }
        let tcp = match &sim {
            Some(s) => Some(s.tcp().to_string()),
            // No bus: the address is never dialled.
            None => args.virtual_time.then(|| "127.0.0.1:0".to_string()),
        };
        let mut loaded = Loaded::for_command(args.config.as_deref(), tcp.as_deref())?;
        if let Some(s) = &mut sim {
            loaded = s.with_daq(loaded).await?;
        }
        // A plant in simulated time is this process's own: there is no bench to share.
        let _bench = if args.virtual_time {
            None
        } else {
            Some(BenchLock::acquire(
                &loaded,
                &bench_daemon::bench_lock::this_command(),
            )?)
        };
        let store = Store::open(db_path(db, &loaded)).await?;
        let checked = match make(&store, &loaded).await {
            Ok(c) => c,
            Err(e) => {
                store.close().await;
                if let Some(sim) = sim {
                    sim.shutdown().await;
                }
                return Err(e);
            }
        };
        let run_id = session::create(&store, &loaded, &checked).await?;
        let by = bench_daemon::resume::cli_user();
        match &checked.resume {
            Some(c) => bench_daemon::resume::record_resumed(&store, c.of, &checked, run_id, &by).await?,
            None => store.append_note(run_id, None, &format!("started by {by}")).await?,
        }
        let control = Arc::new(Control::new());
        let (status_tx, status_rx) = watch::channel(Status::default());
        let (created_tx, created_rx) = oneshot::channel();
        let watchers = Watchers {
            control: control.clone(),
            status: status_tx,
            live: None,
            created: Some(created_tx),
        };
        let estimate = checked.plan.estimate_duration();
        let progress = tokio::spawn(progress(created_rx, status_rx, estimate));
        let ctrl_c = {
            let control = control.clone();
            let stop = bench_daemon::signals::stop_signal();
            tokio::spawn(async move {
                let signal = stop.await;
                control.abort(StopReason::DaemonSignal(signal));
            })
        };
        let devices = if args.virtual_time {
            let config = bench_daemon::simulated::sim_config(&probe);
            let sim = bench_sim::Sim::new(config.params, &config.truth)?;
            Devices::Simulated(Box::new(SimIo::new(sim)))
        } else {
            Devices::Modbus
        };
        let finished =
            session::execute_run_on(&store, &loaded, &checked, run_id, watchers, devices).await;
        ctrl_c.abort();
        let _ = progress.await;
        store.close().await;
        if let Some(sim) = sim {
            sim.shutdown().await;
        }
        let f = finished?;
        let r = &f.report;
        if json {
            println!(
                "{}",
                serde_json::json!({
                    "run_id": f.run_id,
                    "continues": checked.resume.as_ref().map(|c| c.of),
                    "status": f.status,
                    "outcome": r.outcome,
                    "ticks": r.ticks,
                    "elapsed_s": r.elapsed_s,
                    "timing": r.stats,
                    "safe_state_s": r.safe_state_s,
                    "dropped_batches": r.dropped_batches,
                    "results": f.results,
                    "analysis_error": f.analysis_error,
                })
            );
        } else {
            let st = &r.stats;
            eprintln!(
                "run {}: {} in {:.1} s, {} samples; period error p50 {} µs, p99 {} µs, max {} µs; {} overruns",
                f.run_id,
                f.status,
                r.elapsed_s,
                r.ticks,
                fmt_us(st.period_error_p50_us),
                fmt_us(st.period_error_p99_us),
                fmt_us(st.period_error_max_us),
                st.overruns
            );
            if let Some(e) = &f.analysis_error
                && f.status == run_store::RunStatus::Completed
            {
                eprintln!("run {}: {e}", f.run_id);
            }
        }
        match &r.outcome {
            Outcome::Completed => Ok(()),
            Outcome::Stopped(reason) => Err(RunNotCompleted {
                run_id: f.run_id,
                status: f.status,
                reason: reason.to_string(),
            }
            .into()),
        }
    })
}

fn fmt_us(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.0}"))
}

/// Prints `run ID`, then draws a progress bar with ETA on stderr (when it is a terminal).
async fn progress(
    created: oneshot::Receiver<i64>,
    mut status: watch::Receiver<Status>,
    estimate_s: f64,
) {
    let Ok(id) = created.await else { return };
    println!("run {id}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let bar = indicatif::ProgressBar::new((estimate_s * 1000.0).ceil() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% ETA {eta} {msg}",
        )
        .expect("BUG: progress template"),
    );
    while status.changed().await.is_ok() {
        let s = status.borrow_and_update().clone();
        bar.set_position(((s.t * 1000.0) as u64).min(bar.length().unwrap_or(0)));
        bar.set_message(format!(
            "{}/{} {}{}",
            (s.segment + 1).min(s.segments),
            s.segments,
            s.label,
            if s.overruns > 0 {
                format!(" ({} overruns)", s.overruns)
            } else {
                String::new()
            }
        ));
        if s.phase == "done" {
            break;
        }
    }
    bar.finish_and_clear();
}
