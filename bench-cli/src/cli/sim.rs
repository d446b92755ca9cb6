//! `bench sim`: the simulated bench standalone, until Ctrl-C.
//!
//! Faults are switched at run time on standard input, one JSON object per line: a fault set
//! (`{"silence": true, "unit": 2}`, `{"delay_ms": 30}`, `{"exception": 4}`, `{"disconnect": true}`,
//! `{"corrupt_crc": true}`, `{"stuck_unit": 2}`; `{}` clears every fault), `{"trip": true}`
//! (a drive fault) or `{"temperature_c": 75}` (the drive's temperature reading, register
//! `temperature` of the simulated drive's profile). Each line is answered on stdout with the fault set in force.

use super::{InputError, json_arg};
use bench_sim::physics::{SimParams, default_truth};
use bench_sim::{Clock, RtuConfig, SimBench, SimConfig};
use friction::registry::ModelSpec;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Arguments of `bench sim`.
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// Serve Modbus TCP on ADDR (port 0 = any free port). Default 127.0.0.1:5020 when neither
    /// --tcp nor --rtu is given.
    #[arg(long, value_name = "ADDR")]
    pub tcp: Option<SocketAddr>,
    /// Serve Modbus RTU on a pty (its path is printed on start).
    #[arg(long)]
    pub rtu: bool,
    /// Baud rate whose wire timing the RTU line emulates.
    #[arg(long, default_value_t = 115_200, value_name = "B")]
    pub baud: u32,
    /// Answer RTU requests as fast as the pty allows (no wire-timing emulation).
    #[arg(long)]
    pub no_wire_timing: bool,
    /// True friction model id (default: asymmetric GMS, `bench_sim::default_truth`).
    #[arg(long, value_name = "ID")]
    pub truth: Option<String>,
    /// Parameters of the true model: JSON or @file.
    #[arg(long, value_name = "JSON|@FILE", requires = "truth")]
    pub truth_params: Option<String>,
    /// Plant parameters (inertia, limits, gains, noise, ...): JSON or @file.
    #[arg(long, value_name = "JSON|@FILE")]
    pub params: Option<String>,
    /// Seed of the torque-sensor noise.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Drive profile (default: the shipped profiles/sim-drive.toml).
    #[arg(long, value_name = "FILE")]
    pub drive_profile: Option<PathBuf>,
    /// Torque-sensor profile (default: the shipped profiles/sim-torque-sensor.toml).
    #[arg(long, value_name = "FILE")]
    pub sensor_profile: Option<PathBuf>,
    /// The drive's Modbus unit id (default: its profile's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=247))]
    pub drive_unit: Option<u8>,
    /// The sensor's Modbus unit id (default: its profile's; real sensors and drives often both
    /// ship at 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=247))]
    pub sensor_unit: Option<u8>,
    /// SCHED_FIFO priority of its threads (0 = normal scheduling). By default one step below a
    /// bench.toml's default control loop (49), as `--sim` runs it in process: it stands in for
    /// hardware, which keeps its timing however busy the PC is. Needs root or CAP_SYS_NICE;
    /// without them it runs at normal priority and says so on start.
    #[arg(long, default_value_t = 48, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=98))]
    pub realtime_priority: u8,
    /// Also serve a DAQ in front of the bench (`t7`: a LabJack T7 from profiles/labjack-t7.toml,
    /// over Modbus TCP, with its hardware-timed stream); the drive and sensor stay on --tcp/--rtu.
    #[arg(long, value_enum, value_name = "KIND")]
    pub daq: Option<DaqKind>,
    /// The DAQ's Modbus TCP address (default: --tcp's host, any free port; a real T7 uses 502).
    #[arg(long, value_name = "ADDR", requires = "daq")]
    pub daq_tcp: Option<SocketAddr>,
    /// The DAQ's stream address (default: the DAQ's host, any free port; a real T7 uses 702).
    #[arg(long, value_name = "ADDR", requires = "daq")]
    pub daq_stream: Option<SocketAddr>,
    /// What is wired to the DAQ (torque amplifier input and scale, noise, analog command):
    /// JSON or @file, keys of `bench_sim::daq::DaqSimOptions`.
    #[arg(long, value_name = "JSON|@FILE", requires = "daq")]
    pub daq_options: Option<String>,
}

/// DAQs `bench sim` can emulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DaqKind {
    /// LabJack T7.
    T7,
}

/// The DAQ to serve: its profile, what is wired to it, and where it listens.
struct DaqPlan {
    options: bench_sim::daq::DaqSimOptions,
    modbus: SocketAddr,
    stream: SocketAddr,
}

fn daq_plan(args: &SimArgs, bus: Option<SocketAddr>) -> anyhow::Result<Option<DaqPlan>> {
    let Some(DaqKind::T7) = args.daq else {
        return Ok(None);
    };
    let options = match &args.daq_options {
        Some(p) => serde_json::from_value(json_arg("--daq-options", p)?)
            .map_err(|e| InputError(format!("--daq-options: {e}")))?,
        None => bench_sim::daq::DaqSimOptions::default(),
    };
    if let Some(a) = &options.analog_command {
        a.check()
            .map_err(|e| InputError(format!("--daq-options: {e}")))?;
    }
    let host = bus.map_or([127, 0, 0, 1].into(), |a| a.ip());
    let modbus = args.daq_tcp.unwrap_or(SocketAddr::new(host, 0));
    let stream = args.daq_stream.unwrap_or(SocketAddr::new(modbus.ip(), 0));
    Ok(Some(DaqPlan {
        options,
        modbus,
        stream,
    }))
}

/// Builds the simulator configuration from the arguments.
pub fn config(args: &SimArgs) -> anyhow::Result<SimConfig> {
    let truth = match &args.truth {
        None => default_truth(),
        Some(id) => ModelSpec {
            model: id.clone(),
            params: match &args.truth_params {
                Some(p) => json_arg("--truth-params", p)?,
                None => serde_json::json!({}),
            },
        },
    };
    // Fail early, naming the model and parameter.
    friction::registry::build_model(&truth).map_err(|e| InputError(format!("--truth: {e}")))?;
    let mut params = sim_params("--params", args.params.as_deref())?;
    params.seed = args.seed;
    let tcp = match (args.tcp, args.rtu) {
        (None, false) => Some(SocketAddr::from(([127, 0, 0, 1], 5020))),
        (tcp, _) => tcp,
    };
    Ok(SimConfig {
        params,
        truth,
        clock: Clock::RealTime,
        tcp,
        rtu: args.rtu.then_some(RtuConfig {
            baud: args.baud,
            wire_timing: !args.no_wire_timing,
            turnaround_s: None,
        }),
        drive_profile: args.drive_profile.clone(),
        sensor_profile: args.sensor_profile.clone(),
        drive_unit: args.drive_unit,
        sensor_unit: args.sensor_unit,
    })
}

/// The simulated plant's parameters from `flag`'s JSON or @file (unset keys take the
/// defaults), checked: an unknown key or a broken rule is refused naming the field.
pub fn sim_params(flag: &str, text: Option<&str>) -> anyhow::Result<SimParams> {
    let params: SimParams = match text {
        Some(p) => serde_json::from_value(json_arg(flag, p)?)
            .map_err(|e| InputError(format!("{flag}: {e}")))?,
        None => SimParams::default(),
    };
    params
        .validate()
        .map_err(|e| InputError(format!("{flag}: {e}")))?;
    Ok(params)
}

/// Runs the simulated bench until Ctrl-C (or SIGTERM). Prints one JSON line with the endpoints
/// on start.
pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    let config = config(args)?;
    let daq_plan = daq_plan(args, config.tcp)?;
    // Every thread of the runtime (and the physics thread, which inherits it) at that priority.
    let (rt, refused) = bench_daemon::control::realtime_runtime(
        tokio::runtime::Builder::new_multi_thread().enable_all(),
        args.realtime_priority,
    )?;
    rt.block_on(async move {
        let truth = config.truth.clone();
        // Listen before printing the endpoints: whoever reads them may stop us at once.
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        // Started on a worker, so that the physics thread it spawns inherits the priority.
        let sim = tokio::spawn(SimBench::start(config)).await??;
        if let Some(note) = refused() {
            eprintln!("bench sim: {note}");
        }
        let daq = match daq_plan {
            Some(d) => {
                let profile = bench_sim::daq::shipped_t7()?;
                let b = sim.bench().clone();
                Some(
                    bench_sim::daq::DaqSim::start(b, profile, d.options, d.modbus, d.stream)
                        .await?,
                )
            }
            None => None,
        };
        let ep = sim.endpoints();
        println!(
            "{}",
            serde_json::json!({
                "tcp": ep.tcp.map(|a| a.to_string()),
                "rtu": ep.rtu,
                "baud": ep.baud,
                "drive_unit": ep.drive_unit,
                "sensor_unit": ep.sensor_unit,
                "truth": truth,
                "daq": daq.as_ref().map(|d| serde_json::json!({
                    "kind": "t7",
                    "modbus": d.endpoints().modbus.to_string(),
                    "stream": d.endpoints().stream.to_string(),
                })),
            })
        );
        if let Some(d) = &daq {
            let e = d.endpoints();
            eprintln!(
                "bench sim: LabJack T7 on Modbus TCP {} (stream packets on {})",
                e.modbus, e.stream
            );
        }
        if let Some(a) = ep.tcp {
            eprintln!(
                "bench sim: Modbus TCP on {a} (drive unit {}, torque sensor unit {})",
                ep.drive_unit, ep.sensor_unit
            );
        }
        if let (Some(p), Some(b)) = (&ep.rtu, ep.baud) {
            eprintln!("bench sim: Modbus RTU on {p} at {b} baud (open it like a serial port)");
        }
        eprintln!("bench sim: running; Ctrl-C stops; fault sets as JSON lines on stdin");
        let faults = sim.faults().clone();
        let bench = sim.bench().clone();
        std::thread::spawn(move || fault_console(&faults, &bench));
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        if let Some(d) = daq {
            d.shutdown().await;
        }
        sim.shutdown().await;
        anyhow::Ok(())
    })
}

/// `{"temperature_c": C}`: sets the simulated drive's temperature reading.
fn temperature(bench: &bench_sim::Bench, v: &serde_json::Value) -> serde_json::Value {
    match v["temperature_c"].as_f64() {
        Some(c) if bench.apply(bench_sim::Action::SetTemperature(c)) => {
            serde_json::json!({"temperature_c": c})
        }
        _ => serde_json::json!({"error": "temperature_c: a finite number of °C expected"}),
    }
}

/// Reads fault switches from stdin until it closes (see the module doc).
fn fault_console(faults: &bench_sim::Faults, bench: &bench_sim::Bench) {
    use std::io::BufRead;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) if v.get("trip").and_then(serde_json::Value::as_bool) == Some(true) => {
                bench.apply(bench_sim::Action::Trip);
                serde_json::json!({"tripped": true})
            }
            Ok(v) if v.get("temperature_c").is_some() => temperature(bench, &v),
            Ok(v) => match serde_json::from_value::<bench_sim::FaultSet>(v) {
                Ok(set) => {
                    faults.set(set);
                    serde_json::json!({"faults": faults.get()})
                }
                Err(e) => serde_json::json!({"error": e.to_string()}),
            },
            Err(e) => serde_json::json!({"error": e.to_string()}),
        };
        println!("{reply}");
    }
}
