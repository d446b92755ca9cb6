//! The simulated bench started in-process for `--sim`, on a runtime of its own whose threads
//! (Modbus server workers and, by inheritance, the physics thread) run at real-time priority
//! just below the control loop's: it stands in for hardware, which does not slow down when
//! the PC is busy.

use crate::config::{DaqConfig, Loaded};
use crate::control::realtime_runtime;
use bench_sim::daq::{AnalogCommand, DaqSim, DaqSimOptions};
use bench_sim::{SimBench, SimConfig};
use tokio::runtime::Runtime;

/// A running in-process simulated bench.
#[derive(Debug)]
pub struct InProcessSim {
    rt: Option<Runtime>,
    sim: Option<SimBench>,
    daq: Option<DaqSim>,
    tcp: String,
    /// Why real-time priority was not obtained, if it was not.
    pub priority_note: Option<String>,
}

/// The simulated bench a `--sim` command starts for the bench `loaded`: the shipped one,
/// carrying the bench's `[plant]` load (docs/src/known-load.md), so that a pendulum bench's
/// bench.toml serves a pendulum.
pub fn sim_config(loaded: &Loaded) -> SimConfig {
    let mut config = SimConfig::default();
    config.params.load = loaded.config.plant.load;
    config
}

impl InProcessSim {
    /// Starts the shipped simulated bench on loopback TCP (any free port). `priority` is the
    /// SCHED_FIFO priority of its threads (0 = normal scheduling).
    pub async fn start(config: SimConfig, priority: u8) -> anyhow::Result<InProcessSim> {
        let (rt, refused) = realtime_runtime(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("bench-sim")
                .enable_all(),
            priority,
        )?;
        let sim = rt.spawn(SimBench::start(config)).await??;
        let tcp = sim
            .endpoints()
            .tcp
            .map(|a| a.to_string())
            .ok_or_else(|| anyhow::anyhow!("the simulated bench serves no TCP endpoint"))?;
        let priority_note = refused();
        Ok(InProcessSim {
            rt: Some(rt),
            sim: Some(sim),
            daq: None,
            tcp,
            priority_note,
        })
    }

    /// Its Modbus TCP address.
    pub fn tcp(&self) -> &str {
        &self.tcp
    }

    /// Serves an emulated T7 in front of the bench, wired as `[daq]` says (the amplifier's
    /// input and scale); returns `loaded` pointed at it. Without a `[daq]`, `loaded` as is.
    pub async fn with_daq(&mut self, loaded: Loaded) -> anyhow::Result<Loaded> {
        let (Some(cfg), Some(rt), Some(sim)) = (&loaded.config.daq, &self.rt, &self.sim) else {
            return Ok(loaded);
        };
        let options = wiring(cfg);
        let profile = bench_sim::daq::shipped_t7()?;
        let bench = sim.bench().clone();
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let daq = rt
            .spawn(DaqSim::start(bench, profile, options, any, any))
            .await??;
        let ep = daq.endpoints();
        self.daq = Some(daq);
        Ok(loaded.retarget_daq(&ep.modbus.to_string(), &ep.stream.to_string()))
    }

    /// Stops serving and the physics thread.
    pub async fn shutdown(mut self) {
        if let (Some(rt), Some(daq)) = (&self.rt, self.daq.take()) {
            let _ = rt.spawn(daq.shutdown()).await;
        }
        if let (Some(rt), Some(sim)) = (&self.rt, self.sim.take()) {
            let _ = rt.spawn(sim.shutdown()).await;
        }
    }
}

impl Drop for InProcessSim {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The emulated T7 wired as `cfg` says: the amplifier on its input with its scale and zero
/// offset, the emulation's default noise; with `[daq.drive_command]`, DAC0 on the drive's
/// analog torque or speed input and the enable line on its enable.
fn wiring(cfg: &DaqConfig) -> DaqSimOptions {
    let t = &cfg.measured_torque;
    DaqSimOptions {
        torque_ain: t.ain,
        nm_per_v: t.nm_per_v,
        offset_v: t.offset_v,
        analog_command: cfg.drive_command.as_ref().map(|c| AnalogCommand {
            center_v: c.center_v,
            mode: c.mode,
            nm_per_v: c.nm_per_v,
            rad_s_per_v: c.rad_s_per_v,
            enable_dio: c.enable_dio,
        }),
        ..DaqSimOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BenchConfig, SIM_TOML};

    /// `[plant] load` reaches the simulated axis: released, the arm swings to the pendulum's
    /// lowest point; the shipped bench (no `[plant]`) stays where friction holds it.
    #[test]
    fn the_bench_toml_load_reaches_the_simulated_plant() {
        let text = format!(
            "{SIM_TOML}\n[plant]\nload = {{ kind = \"pendulum\", mass = 5.0, length = 0.5, bottom = 0.5 }}\n"
        );
        let settle = |config: BenchConfig| {
            let mut loaded = Loaded::sim("127.0.0.1:0");
            loaded.config = config;
            let mut p = sim_config(&loaded).params;
            p.watchdog_s = 0.0;
            let mut sim = bench_sim::Sim::new(p, &bench_sim::default_truth()).unwrap();
            sim.advance(3.0);
            sim.state.plant.x
        };
        let x = settle(BenchConfig::parse(&text, "b.toml").unwrap());
        // Friction (fs = 1.5 N m) holds the arm within asin(fs / (m g l)) = 0.061 rad of it.
        assert!((x - 0.5).abs() < 0.062, "{x}");
        assert_eq!(settle(BenchConfig::sim()), 0.0);
    }
}
