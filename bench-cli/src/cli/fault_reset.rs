//! `bench fault-reset (--sim | --config bench.toml) [--json]`: an operator clears a latched
//! drive fault after checking the bench. No run ever clears one by itself. Refused while
//! another process controls the bench (use that daemon's `POST /api/faults/reset`).

use bench_daemon::bench_lock::{BenchLock, this_command};
use bench_daemon::config::Loaded;
use bench_daemon::control::Interlock;
use bench_daemon::simulated::InProcessSim;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `bench fault-reset`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("bench").required(true).multiple(true).args(["sim", "config"])))]
pub struct FaultResetArgs {
    /// The simulated bench, started in-process (it starts without a fault).
    #[arg(long)]
    sim: bool,
    /// Bench configuration file (bench.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Resets the fault; exit 1 when the drive still reads a fault afterwards.
pub fn run(args: &FaultResetArgs) -> anyhow::Result<()> {
    super::block_on(async {
        let sim = if args.sim {
            Some(InProcessSim::start(bench_sim::SimConfig::default(), 0).await?)
        } else {
            None
        };
        let tcp = sim.as_ref().map(|s| s.tcp().to_string());
        let loaded = Arc::new(Loaded::for_command(args.config.as_deref(), tcp.as_deref())?);
        let _bench = BenchLock::acquire(&loaded, &this_command())?;
        let result = Interlock::new(loaded, false).fault_reset().await;
        if let Some(sim) = sim {
            sim.shutdown().await;
        }
        let r = result.map_err(|e| anyhow::anyhow!(e))?;
        if args.json {
            println!("{}", serde_json::json!(r));
        } else {
            println!(
                "{}; status {}",
                match (r.was_faulted, r.cleared) {
                    (false, _) => "no fault was latched".to_string(),
                    (true, true) => format!("fault {:#06x} cleared", r.fault_code.unwrap_or(0)),
                    (true, false) => "the fault is still latched".to_string(),
                },
                r.status.map_or("-".into(), |s| format!("{s:#06x}"))
            );
        }
        anyhow::ensure!(r.cleared, "the drive still reads a fault after the reset");
        Ok(())
    })
}
