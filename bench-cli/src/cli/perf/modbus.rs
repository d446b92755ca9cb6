//! `bench perf modbus`: read+write cycles per second against the simulated bench.
//!
//! One cycle is what a control-loop tick does on the bus: read the drive's feedback
//! (`Drive::read_feedback`, one block for the shipped simulated drive) and write the torque
//! command (`Drive::command`). Over RTU the simulator emulates the wire timing of the baud rate
//! and the client keeps the inter-frame silence t3.5 after every reply, so the rate is compared
//! with the line limit computed from the same frames
//! (`(bytes out + bytes back) · 11/baud + 2 · t3.5 + turnaround` per transaction).
//! `--client raw` runs the same frames on a bare tokio-modbus context with a precise gap, which
//! isolates the simulator's timing from the client's. `--peer` runs both against the same
//! server in the same run, in alternating rounds (so a busy machine slows both alike), and
//! reports the bare client's rate as `peer_cycles_per_s` and `ratio_to_peer`.

use anyhow::Context as _;
use bench_sim::timing::{LineTiming, sleep_until_precise};
use bench_sim::{Clock, Endpoints, RtuConfig, SimBench, SimConfig};
use protocols::{Drive, Link, LinkConfig, Role};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_modbus::client::Context;
use tokio_modbus::prelude::*;

/// Arguments of `bench perf modbus`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("link").required(true).args(["tcp", "rtu"])))]
pub struct PerfModbusArgs {
    /// Over Modbus TCP on loopback.
    #[arg(long)]
    pub tcp: bool,
    /// Over Modbus RTU on a pty with the wire timing of --baud.
    #[arg(long)]
    pub rtu: bool,
    /// Baud rate of the RTU line.
    #[arg(long, default_value_t = 115_200, value_name = "B")]
    pub baud: u32,
    /// RTU without wire-timing emulation: the raw rate of the pty path (no line limit).
    #[arg(long, requires = "rtu")]
    pub no_wire_timing: bool,
    /// Which client: `drive` (the protocols crate's Drive on a Link, as the daemon uses it) or
    /// `raw` (bare tokio-modbus, gap kept with a precise sleep).
    #[arg(long, default_value = "drive", value_parser = ["drive", "raw"])]
    pub client: String,
    /// How long to measure \[s\] (with --peer: each client, in alternating rounds).
    #[arg(long, default_value_t = 3.0, value_name = "S")]
    pub seconds: f64,
    /// Also run the bare tokio-modbus client (same requests, same server) in alternating
    /// rounds with the Drive client: `peer_cycles_per_s`, `ratio_to_peer`.
    #[arg(long, conflicts_with = "client")]
    pub peer: bool,
}

/// Alternating rounds of each client under `--peer`.
const PEER_ROUNDS: u32 = 6;

/// What one client did: cycles, errors, seconds, per-cycle durations \[s\].
#[derive(Debug, Default)]
struct Tally {
    cycles: u64,
    errors: u64,
    seconds: f64,
    durations: Vec<f64>,
}

impl Tally {
    fn add(&mut self, (cycles, errors, seconds, durations): (u64, u64, f64, Vec<f64>)) {
        self.cycles += cycles;
        self.errors += errors;
        self.seconds += seconds;
        self.durations.extend(durations);
    }

    fn rate(&self) -> f64 {
        self.cycles as f64 / self.seconds
    }

    /// The `q` quantile of the cycle time \[ms\].
    fn pct(&mut self, q: f64) -> Option<f64> {
        self.durations.sort_by(f64::total_cmp);
        let d = &self.durations;
        (!d.is_empty()).then(|| d[((d.len() - 1) as f64 * q) as usize] * 1e3)
    }
}

/// Runs the benchmark and prints one JSON object: `transport`, `baud`, `cycles_per_s`,
/// `line_limit_cycles_per_s`, `ratio_to_limit` (null where not applicable), and the details.
///
/// Like a run's control loop, it holds the CPUs out of deep idle states while it measures
/// (`control::NoDeepIdle`): on a VM whose idle vCPUs halt, each request-reply hand-over
/// otherwise waits for a vCPU to wake (5.4k instead of 19.6k TCP cycles/s here).
pub fn run(args: &PerfModbusArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let idle = bench_daemon::control::NoDeepIdle::request();
    if let Err(note) = &idle {
        eprintln!("bench: {note}");
    }
    let out = rt.block_on(measure(args))?;
    drop(idle);
    println!("{out}");
    Ok(())
}

/// Measures; returns the JSON report.
pub async fn measure(args: &PerfModbusArgs) -> anyhow::Result<serde_json::Value> {
    anyhow::ensure!(
        args.seconds > 0.0 && args.seconds.is_finite(),
        super::super::InputError(format!("--seconds ({}) must be > 0", args.seconds))
    );
    let rtu = args.rtu.then_some(RtuConfig {
        baud: args.baud,
        wire_timing: !args.no_wire_timing,
        turnaround_s: None,
    });
    let sim = SimBench::start(SimConfig {
        clock: Clock::RealTime,
        tcp: args.tcp.then(|| ([127, 0, 0, 1], 0).into()),
        rtu,
        ..SimConfig::default()
    })
    .await?;
    let drive = Arc::new(bench_sim::shipped(false)?);
    let ep = sim.endpoints().clone();
    let blocks = drive
        .poll_plan("fast")
        .context("the drive profile has no 'fast' poll group")?;
    let cmd = drive.require_role(Role::TorqueCommand)?;
    let cmd_regs = cmd.encode(0.0)?;
    let line = sim.line().filter(|_| !args.no_wire_timing).map(|(t, _)| t);
    let rounds = if args.peer { PEER_ROUNDS } else { 1 };
    let round = Duration::from_secs_f64(args.seconds / f64::from(rounds));
    let (mut main, mut peer) = (Tally::default(), Tally::default());
    let mut link_stats = None;
    for _ in 0..rounds {
        if args.client == "raw" {
            let end = Instant::now() + round;
            main.add(raw_cycles(args, &ep, &blocks, cmd.address, &cmd_regs, line, end).await?);
        } else {
            let end = Instant::now() + round;
            let (c, e, t, s, d) = drive_cycles(args, &ep, drive.clone(), end).await?;
            main.add((c, e, t, d));
            link_stats = Some(s);
        }
        if args.peer {
            let end = Instant::now() + round;
            peer.add(raw_cycles(args, &ep, &blocks, cmd.address, &cmd_regs, line, end).await?);
        }
    }
    sim.shutdown().await;
    let rate = main.rate();
    let peer_rate = args.peer.then(|| peer.rate());
    let (limit, turnaround_ms) = match line {
        Some(t) => {
            // One read transaction per block plus one write, each with its own frames.
            let per_cycle: f64 = blocks
                .iter()
                .map(|b| t.transaction_s(8, 5 + 2 * b.count as usize))
                .sum::<f64>()
                + t.transaction_s(9 + 2 * cmd_regs.len(), 8);
            (Some(1.0 / per_cycle), Some(t.turnaround_s * 1e3))
        }
        None => (None, None),
    };
    Ok(serde_json::json!({
        "transport": if args.tcp { "tcp" } else { "rtu" },
        "baud": if args.rtu { Some(args.baud) } else { None },
        "cycles_per_s": rate,
        "line_limit_cycles_per_s": limit,
        "ratio_to_limit": limit.map(|l| rate / l),
        "peer_cycles_per_s": peer_rate,
        "ratio_to_peer": peer_rate.map(|p| rate / p),
        "peer_cycle_ms_median": args.peer.then(|| peer.pct(0.5)).flatten(),
        "peer_cycle_ms_p99": args.peer.then(|| peer.pct(0.99)).flatten(),
        "cycles": main.cycles,
        "errors": main.errors + peer.errors,
        "seconds": main.seconds,
        "read_registers": blocks.iter().map(|b| b.count).collect::<Vec<_>>(),
        "write_registers": cmd_regs.len(),
        "turnaround_ms": turnaround_ms,
        "t35_ms": line.map(|t: LineTiming| t.t35_s * 1e3),
        "client": args.client,
        "cycle_ms_median": main.pct(0.5),
        "cycle_ms_p99": main.pct(0.99),
        "link_stats": link_stats,
    }))
}

/// Cycles with the protocols crate's Drive client: (cycles, errors, seconds, link counters).
#[allow(clippy::type_complexity)]
async fn drive_cycles(
    args: &PerfModbusArgs,
    ep: &Endpoints,
    profile: Arc<protocols::Profile>,
    end: Instant,
) -> anyhow::Result<(u64, u64, f64, protocols::LinkStats, Vec<f64>)> {
    let cfg = match (&ep.tcp, &ep.rtu) {
        (Some(a), _) if args.tcp => LinkConfig::tcp(a.to_string(), &profile),
        (_, Some(p)) => LinkConfig::serial(p, Some(args.baud), &profile),
        _ => anyhow::bail!("BUG: no endpoint"),
    };
    let link = Link::open(cfg).await?.shared();
    let mut drive = Drive::new(profile, link.clone())?.with_unit(ep.drive_unit);
    drive.set_mode(protocols::Mode::Torque).await?;
    let (mut cycles, mut errors) = (0u64, 0u64);
    let mut durations = Vec::new();
    let t0 = Instant::now();
    while Instant::now() < end {
        let c0 = Instant::now();
        let ok = drive.read_feedback().await.is_ok() & drive.command(0.0).await.is_ok();
        durations.push(c0.elapsed().as_secs_f64());
        if ok {
            cycles += 1;
        } else {
            errors += 1;
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let stats = link.lock().await.stats();
    Ok((cycles, errors, elapsed, stats, durations))
}

/// Cycles with a bare tokio-modbus context and a precise t3.5 gap: (cycles, errors, seconds).
async fn raw_cycles(
    args: &PerfModbusArgs,
    ep: &Endpoints,
    blocks: &[protocols::ReadBlock],
    cmd_address: u16,
    cmd_regs: &[u16],
    line: Option<LineTiming>,
    end: Instant,
) -> anyhow::Result<(u64, u64, f64, Vec<f64>)> {
    let mut ctx: Context = if args.tcp {
        let addr = ep.tcp.context("BUG: no tcp endpoint")?;
        tokio_modbus::client::tcp::connect_slave(addr, Slave(ep.drive_unit)).await?
    } else {
        let path = ep.rtu.as_deref().context("BUG: no rtu endpoint")?;
        let port = tokio_serial::SerialStream::open(&tokio_serial::new(path, args.baud))?;
        tokio_modbus::client::rtu::attach_slave(port, Slave(ep.drive_unit))
    };
    let gap = line.map(|t| Duration::from_secs_f64(t.t35_s));
    let timeout = Duration::from_secs(1);
    let (mut cycles, mut errors) = (0u64, 0u64);
    let mut durations = Vec::new();
    let t0 = Instant::now();
    while Instant::now() < end {
        let c0 = Instant::now();
        let mut ok = true;
        for b in blocks {
            let r =
                tokio::time::timeout(timeout, ctx.read_holding_registers(b.start, b.count)).await;
            ok &= matches!(r, Ok(Ok(Ok(_))));
            if let Some(g) = gap {
                sleep_until_precise(Instant::now() + g).await;
            }
        }
        let r = tokio::time::timeout(timeout, ctx.write_multiple_registers(cmd_address, cmd_regs))
            .await;
        ok &= matches!(r, Ok(Ok(Ok(_))));
        if let Some(g) = gap {
            sleep_until_precise(Instant::now() + g).await;
        }
        durations.push(c0.elapsed().as_secs_f64());
        if ok {
            cycles += 1;
        } else {
            errors += 1;
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let _ = ctx.disconnect().await;
    Ok((cycles, errors, elapsed, durations))
}
