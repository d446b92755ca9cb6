//! `bench perf loop (--sim | --config bench.toml) --rate HZ --seconds S [--floor] [--json]`:
//! the control loop's timing over Modbus with every model in lockstep and every sample
//! recorded.
//!
//! The workload is a real experiment (a PRBS on the position reference, in the drive's
//! position mode) recorded into a temporary SQLite file, so the figure is what a run gets:
//! achieved rate, wake-up error against the absolute deadlines (p50, p99, max) and overruns.
//! With `--floor`, cyclictest measures the machine's own floor first, in the same process
//! placement, and both rows are printed side by side ([`super::floor`]).

use super::super::InputError;
use super::floor::{FloorRun, measure, side_by_side};
use bench_daemon::config::Loaded;
use bench_daemon::control::cpus::{LastCpu, LoopCpu, choose};
use bench_daemon::control::{Control, Status};
use bench_daemon::session::{self, Watchers};
use bench_daemon::simulated::InProcessSim;
use run_store::Store;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;

/// Arguments of `bench perf loop`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("bench").required(true).multiple(true).args(["sim", "config"])))]
pub struct PerfLoopArgs {
    /// Against the simulated bench, started in-process.
    #[arg(long)]
    sim: bool,
    /// Bench configuration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Control rate \[Hz\].
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// Duration \[s\].
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Lockstep models (comma separated ids, or `all`).
    #[arg(long, value_delimiter = ',', default_value = "all")]
    models: Vec<String>,
    /// Measure the machine's floor first: cyclictest (Debian's rt-tests) at the loop's
    /// period and priority, on the same CPUs, for as long, with the simulated bench alive; prints
    /// both side by side (JSON keys `floor`, `loop`, `late_ratio`, `budget_us`).
    #[arg(long)]
    floor: bool,
    /// A CPU for the loop and the in-process simulated bench, the rest of the process kept off
    /// it (bench.toml's `loop_cpu`): a number, `last`, or `none` to pin nothing; the floor is
    /// then measured there too. Default: `last` with `--sim` alone, else bench.toml's setting.
    #[arg(long, value_name = "N|last|none", value_parser = parse_loop_cpu)]
    loop_cpu: Option<Placement>,
    /// Print JSON: `rate_hz`, `achieved_hz`, `period_error_us` {`p50`, `p99`, `max`},
    /// `overruns`, `tick_work_p50_us` (a tick's median time from wake-up to its end: the
    /// drive's and sensor's round trips are most of it), and on a bench read through a DAQ
    /// `daq_stream` {`scans`, `skipped_scans`, `recoveries`, `max_backlog_bytes`}.
    #[arg(long)]
    json: bool,
}

/// Runs the benchmark.
pub fn run(args: &PerfLoopArgs) -> anyhow::Result<()> {
    if !(args.rate.is_finite() && (10.0..=20_000.0).contains(&args.rate)) {
        return Err(
            InputError(format!("--rate {} must be within 10..=20000 Hz", args.rate)).into(),
        );
    }
    if !(args.seconds.is_finite() && args.seconds >= 1.0) {
        return Err(InputError(format!("--seconds {} must be >= 1", args.seconds)).into());
    }
    let cyclictest = args.floor.then(super::floor::find).transpose()?;
    // A position PRBS (bounded travel at any length): 10 ms bits, the shortest register
    // whose period covers the duration or divides it into whole periods.
    let bit_s = 0.01;
    let bits = (args.seconds / bit_s + 1.0).log2().ceil().clamp(4.0, 12.0) as u32;
    let period_s = f64::from((1u32 << bits) - 1) * bit_s;
    let spec = serde_json::json!({
        "kind": "prbs",
        "name": format!("perf loop {} Hz", args.rate),
        "params": {
            "signal": "position",
            "position_amplitude_rad": 0.05,
            "bit_s": bit_s,
            "register_bits": bits,
            "periods": (args.seconds / period_s).ceil().max(1.0) as u32,
            "seed": 1,
        }
    });
    let probe = Loaded::for_command(args.config.as_deref(), args.sim.then_some("127.0.0.1:0"))?;
    let dir = tempfile::tempdir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let finished = rt.block_on(async {
        let mut sim = if args.sim {
            let priority = probe.config.realtime_priority.saturating_sub(1);
            Some(InProcessSim::start(bench_sim::SimConfig::default(), priority).await?)
        } else {
            None
        };
        if let Some(note) = sim.as_ref().and_then(|s| s.priority_note.as_ref()) {
            eprintln!("bench: simulated bench at {note}");
        }
        let tcp = sim.as_ref().map(|s| s.tcp().to_string());
        let mut loaded = Loaded::for_command(args.config.as_deref(), tcp.as_deref())?;
        // A `[daq]` bench: its T7 emulated in front of the simulated one, as `bench run --sim`.
        if let Some(s) = &mut sim {
            loaded = s.with_daq(loaded).await?;
        }
        loaded.config.limits.period_s = 1.0 / args.rate;
        loaded.config.lockstep.models = args.models.clone();
        loaded.config.lockstep.params.clear();
        loaded.config.loop_cpu = placement(args, loaded.config.loop_cpu);
        let cpu = loaded.config.loop_cpu.and_then(|c| choose(c).ok());
        let spec = experiments::Spec::from_value(spec).map_err(|e| InputError(e.to_string()))?;
        let checked = session::check_spec(spec, &loaded)?;
        let _bench = bench_daemon::bench_lock::BenchLock::acquire(
            &loaded,
            &bench_daemon::bench_lock::this_command(),
        )?;
        let floor = match cyclictest {
            Some(exe) => {
                // As the loop will run: its memory locked when real-time scheduling is asked
                // for, on the CPUs this process may use.
                let run = FloorRun {
                    rate_hz: args.rate,
                    seconds: checked.plan.estimate_duration(),
                    priority: loaded.config.realtime_priority,
                    mlock: loaded.config.realtime_priority > 0,
                    cpu,
                };
                let (h, note) = tokio::task::spawn_blocking(move || measure(&exe, run)).await??;
                if let Some(note) = note {
                    eprintln!("bench: {note}");
                }
                Some(h)
            }
            None => None,
        };
        let store = Store::open(dir.path().join("perf.db")).await?;
        let (status, _status_rx) = watch::channel(Status::default());
        let control = Arc::new(Control::new());
        let watchers = Watchers {
            control: control.clone(),
            status,
            live: None,
            created: None,
        };
        let stop = bench_daemon::signals::stop_signal();
        let signals = tokio::spawn(async move {
            let signal = stop.await;
            control.abort(bench_daemon::control::StopReason::DaemonSignal(signal));
        });
        let f = session::execute(&store, &loaded, &checked, watchers).await;
        signals.abort();
        store.close().await;
        if let Some(sim) = sim {
            sim.shutdown().await;
        }
        let f = f?;
        anyhow::Ok((f, floor, cpu))
    })?;
    let (f, floor, cpu) = finished;
    let r = &f.report;
    let st = &r.stats;
    let achieved = if r.elapsed_s > 0.0 {
        r.ticks as f64 / r.elapsed_s
    } else {
        0.0
    };
    let mut out = serde_json::json!({
        "rate_hz": args.rate,
        "achieved_hz": achieved,
        "period_error_us": {
            "p50": st.period_error_p50_us,
            "p99": st.period_error_p99_us,
            "max": st.period_error_max_us,
        },
        "overruns": st.overruns,
        "tick_work_p50_us": st.tick_work_p50_us,
        "ticks": r.ticks,
        "seconds": r.elapsed_s,
        "status": f.status,
        "dropped_batches": r.dropped_batches,
        "safe_state_s": r.safe_state_s,
        "loop_cpu": cpu,
    });
    // A `[daq]` bench: what its stream did (scans received, skipped, largest backlog).
    if let Some(counts) = &r.daq_stream {
        out["daq_stream"] = serde_json::to_value(counts)?;
    }
    let side_by_side = floor.map(|h| side_by_side(&h, &r.stats, r.ticks, args.rate));
    if let Some((figures, _)) = &side_by_side {
        out.as_object_mut()
            .expect("an object")
            .extend(figures.as_object().expect("an object").clone());
    }
    if args.json {
        println!("{out}");
    } else {
        println!(
            "loop {} Hz: achieved {achieved:.1} Hz over {:.1} s ({} ticks, run {}); period error p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs; {} overruns; {} batches dropped; {}",
            args.rate,
            r.elapsed_s,
            r.ticks,
            f.status,
            st.period_error_p50_us.unwrap_or(f64::NAN),
            st.period_error_p99_us.unwrap_or(f64::NAN),
            st.period_error_max_us.unwrap_or(f64::NAN),
            st.overruns,
            r.dropped_batches,
            cpu.map_or("no CPU of its own".to_string(), |c| format!(
                "loop on CPU {c}"
            ))
        );
        if let Some(d) = &r.daq_stream {
            println!(
                "DAQ stream: {} scans, {} skipped, {} recoveries, largest backlog {} bytes",
                d.scans, d.skipped_scans, d.recoveries, d.max_backlog_bytes
            );
        }
        if let Some((_, table)) = side_by_side {
            println!("{table}");
        }
    }
    Ok(())
}

/// `--loop-cpu`: a CPU, or none.
#[derive(Clone, Copy, Debug)]
enum Placement {
    Pin(LoopCpu),
    Unpinned,
}

/// The run's `loop_cpu`: `--loop-cpu` when given; else the last CPU against the simulated bench
/// alone (sharing two CPUs across a Modbus round trip made 4 kHz ticks overrun 3 to 16 times
/// as often as pinned in 60 s runs: docs/src/performance.md#a-cpu-of-its-own); else
/// bench.toml's.
fn placement(args: &PerfLoopArgs, configured: Option<LoopCpu>) -> Option<LoopCpu> {
    match args.loop_cpu {
        Some(Placement::Pin(cpu)) => Some(cpu),
        Some(Placement::Unpinned) => None,
        None if args.config.is_none() => Some(LoopCpu::Named(LastCpu::Last)),
        None => configured,
    }
}

/// `--loop-cpu`: a CPU number, `last` or `none`.
fn parse_loop_cpu(s: &str) -> Result<Placement, String> {
    match s {
        "last" => Ok(Placement::Pin(LoopCpu::Named(LastCpu::Last))),
        "none" => Ok(Placement::Unpinned),
        _ => s
            .parse()
            .map(|i| Placement::Pin(LoopCpu::Index(i)))
            .map_err(|_| format!("{s:?} is neither a CPU number nor `last` nor `none`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: PerfLoopArgs,
    }

    fn placed(argv: &[&str], configured: Option<LoopCpu>) -> Option<LoopCpu> {
        let cli = Cli::try_parse_from(std::iter::once("perf-loop").chain(argv.iter().copied()))
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        placement(&cli.args, configured)
    }

    /// Against the simulated bench alone the loop gets the last CPU unless told otherwise; with
    /// a bench.toml, the file decides unless the flag does.
    #[test]
    fn the_loop_is_pinned_by_default_against_the_simulated_bench_only() {
        let last = Some(LoopCpu::Named(LastCpu::Last));
        assert_eq!(placed(&["--sim"], None), last);
        assert_eq!(placed(&["--sim", "--loop-cpu", "none"], None), None);
        assert_eq!(
            placed(&["--sim", "--loop-cpu", "0"], None),
            Some(LoopCpu::Index(0))
        );
        assert_eq!(placed(&["--config", "b.toml"], None), None);
        assert_eq!(placed(&["--config", "b.toml"], last), last);
        assert_eq!(
            placed(&["--config", "b.toml", "--loop-cpu", "none"], last),
            None
        );
        let e = Cli::try_parse_from(["perf-loop", "--sim", "--loop-cpu", "first"])
            .err()
            .unwrap();
        assert!(e.to_string().contains("nor `none`"), "{e}");
    }
}
