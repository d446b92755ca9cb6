//! The loop itself: connect, prepare the drive, tick until the plan ends or something stops
//! it, then the safe state.

use super::lockstep::Lockstep;
use super::realtime::{NoDeepIdle, realtime};
use super::safety::Guard;
use super::timing::PeriodStats;
use super::{Control, Request};
use crate::config::{Loaded, OuterLoopChoice};
use experiments::{DriveMode, Flags, Measurement, OuterLoop, Plan, Sample, Sequencer, Tick};
use friction::registry::ModelSpec;
use protocols::{Drive, DriveFeedback, Link, Mode, SharedLink, TorqueSensor};
use run_store::{Batch, BatchSender, Event};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, watch};

/// Samples per batch handed to the recorder (20 ms at 1 kHz).
const BATCH_SAMPLES: usize = 20;
/// Status updates per second.
const STATUS_HZ: f64 = 20.0;

/// Everything a run's loop needs.
#[derive(Debug)]
pub struct LoopSetup {
    /// Devices, limits, gains, safety settings.
    pub loaded: Loaded,
    /// The validated plan.
    pub plan: Plan,
    /// Lockstep models.
    pub models: Vec<ModelSpec>,
    /// Where samples go (None: nowhere, e.g. a dry timing run).
    pub recorder: Option<BatchSender>,
    /// Requests from outside.
    pub control: Arc<Control>,
    /// Progress and latest values.
    pub status: watch::Sender<Status>,
    /// Decimated live samples with model outputs.
    pub live: Option<(broadcast::Sender<Frame>, u32)>,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum Outcome {
    /// The plan ran to its end.
    Completed,
    /// Stopped on purpose (abort, stop, Ctrl-C) or by a limit breach.
    Aborted(String),
    /// Stopped by a fault (comms, drive fault, sensor stall or fault).
    Failed(String),
}

/// Progress of the running loop, for progress bars and the status endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Status {
    /// Phase: `connecting`, `running`, `stopping`, `done`.
    pub phase: &'static str,
    /// Run time \[s\].
    pub t: f64,
    /// Active segment index and count.
    pub segment: usize,
    /// Number of segments.
    pub segments: usize,
    /// Label of the active segment.
    pub label: String,
    /// Latest sample.
    pub sample: Sample,
    /// Samples so far.
    pub samples: u64,
    /// Overruns so far.
    pub overruns: u64,
    /// Batches the recorder refused so far.
    pub dropped_batches: u64,
}

/// One decimated live sample with every lockstep output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Frame {
    /// Sample index in the run.
    pub idx: u64,
    /// The sample.
    pub sample: Sample,
    /// Lockstep outputs, in the run's model order.
    pub outputs: Vec<f64>,
}

/// What the loop reports when it ends.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Period statistics.
    pub stats: run_store::TimingStats,
    /// Ticks run.
    pub ticks: u64,
    /// Wall time from the first deadline to the last tick \[s\].
    pub elapsed_s: f64,
    /// Time from the decision to stop to the drive confirming it is disabled \[s\]; `None` if
    /// it could not be confirmed.
    pub safe_state_s: Option<f64>,
    /// Log lines (run time, text) also sent to the recorder.
    pub log: Vec<(Option<f64>, String)>,
    /// Batches the recorder refused.
    pub dropped_batches: u64,
}

/// Runs the loop on the calling thread (give it a thread of its own); returns when the run
/// is over and the drive is in its safe state (or could not be reached).
pub fn run(setup: LoopSetup) -> LoopReport {
    let wanted = setup.loaded.config.realtime_priority;
    let mut notes: Vec<String> = realtime(wanted).into_iter().collect();
    // Real-time scheduling asked for: keep the CPUs awake for the run's deadlines too.
    let idle = (wanted > 0).then(NoDeepIdle::request);
    if let Some(Err(note)) = &idle {
        notes.push(note.clone());
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("cannot build the control loop's runtime");
    let mut report = rt.block_on(run_async(setup));
    drop(idle);
    report.log.extend(notes.into_iter().map(|n| (None, n)));
    report
}

/// The devices of the bench, connected.
struct Bus {
    drive: Drive,
    sensor: Option<TorqueSensor>,
}

async fn connect(loaded: &Loaded, safety_watchdog_s: f64) -> Result<Bus, String> {
    let cfg = &loaded.config;
    let (dprof, _) = &loaded.drive;
    let dlink_cfg = Loaded::link_config(&cfg.drive, dprof);
    let dlink: SharedLink = Link::open(dlink_cfg.clone())
        .await
        .map_err(|e| format!("cannot connect to the drive: {e}"))?
        .shared();
    let mut drive = Drive::new(dprof.clone(), dlink.clone()).map_err(|e| e.to_string())?;
    if let Some(u) = cfg.drive.unit {
        drive = drive.with_unit(u);
    }
    let sensor = match (&cfg.sensor, &loaded.sensor) {
        (Some(sc), Some((sprof, _))) => {
            let link = if sc.tcp.is_none() && sc.serial.is_none()
                || Loaded::link_config(sc, sprof).endpoint == dlink_cfg.endpoint
            {
                dlink.clone()
            } else {
                Link::open(Loaded::link_config(sc, sprof))
                    .await
                    .map_err(|e| format!("cannot connect to the torque sensor: {e}"))?
                    .shared()
            };
            let mut s = TorqueSensor::new(sprof.clone(), link).map_err(|e| e.to_string())?;
            if let Some(u) = sc.unit {
                s = s.with_unit(u);
            }
            Some(s)
        }
        _ => None,
    };
    let fb = drive
        .read_feedback()
        .await
        .map_err(|e| format!("drive: {e}"))?;
    if fb.fault == Some(true) {
        drive.clear_fault().await.map_err(|e| {
            format!(
                "drive fault (code {:?}) that cannot be reset: {e}",
                fb.fault_code
            )
        })?;
    }
    if safety_watchdog_s > 0.0
        && drive
            .profile()
            .role(protocols::Role::WatchdogTimeout)
            .is_some()
    {
        drive
            .set_watchdog(Duration::from_secs_f64(safety_watchdog_s))
            .await
            .map_err(|e| format!("drive: setting the watchdog: {e}"))?;
    }
    // The drive's own loops saturate inside the bench's torque limit: a velocity or position
    // loop asking for more is clamped by the drive, not aborted as a breach.
    if drive.profile().role(protocols::Role::MaxTorque).is_some() {
        drive
            .set_max_torque(cfg.limits.torque_nm)
            .await
            .map_err(|e| format!("drive: setting the maximum torque: {e}"))?;
    }
    Ok(Bus { drive, sensor })
}

/// The drive mode a segment runs in.
fn drive_mode(seg: DriveMode, choice: OuterLoopChoice, drive: &Drive) -> Mode {
    let wanted = match seg {
        DriveMode::Torque => Mode::Torque,
        DriveMode::Velocity => Mode::Velocity,
        DriveMode::Position => Mode::Position,
    };
    let has = |m: Mode| {
        drive.profile().modes.contains_key(&m)
            || drive.profile().sequence(&format!("mode_{m}")).is_some()
    };
    if wanted == Mode::Torque || choice == OuterLoopChoice::Daemon || !has(wanted) {
        Mode::Torque
    } else {
        wanted
    }
}

/// Sensor freshness, judged on its heartbeat (or, without one, on the reading changing).
struct StallWatch {
    last_key: Option<u64>,
    since: f64,
    limit_s: f64,
}

impl StallWatch {
    /// Returns (fresh this tick, stalled).
    fn update(&mut self, t: f64, heartbeat: Option<u64>, torque: f64) -> (bool, bool) {
        let key = heartbeat.unwrap_or(torque.to_bits());
        let fresh = self.last_key != Some(key);
        if fresh {
            self.last_key = Some(key);
            self.since = t;
        }
        (fresh, self.limit_s > 0.0 && t - self.since > self.limit_s)
    }
}

async fn run_async(setup: LoopSetup) -> LoopReport {
    let LoopSetup {
        loaded,
        plan,
        models,
        recorder,
        control,
        status,
        live,
    } = setup;
    let cfg = &loaded.config;
    let mut log: Vec<(Option<f64>, String)> = Vec::new();
    let report =
        |outcome, log, stats: &PeriodStats, ticks, elapsed_s, safe_state_s, dropped| LoopReport {
            outcome,
            stats: stats.stats(),
            ticks,
            elapsed_s,
            safe_state_s,
            log,
            dropped_batches: dropped,
        };
    let mut stats = PeriodStats::default();
    status.send_modify(|s| {
        s.phase = "connecting";
        s.segments = plan.segments.len();
    });
    let mut bus = match connect(&loaded, cfg.safety.watchdog_s).await {
        Ok(b) => b,
        Err(e) => {
            log.push((None, e.clone()));
            return report(Outcome::Failed(e), log, &stats, 0, 0.0, None, 0);
        }
    };
    let mut lockstep = match Lockstep::new(&models, cfg.lockstep.plant_inertia_kg_m2) {
        Ok(l) => l,
        Err(e) => {
            let e = format!("lockstep models: {e}");
            return report(
                Outcome::Failed(e.clone()),
                vec![(None, e)],
                &stats,
                0,
                0.0,
                None,
                0,
            );
        }
    };
    let width = lockstep.width();
    let guard = Guard::new(plan.limits, cfg.safety.breach_margin);
    let ts = plan.period_s();
    let mut outer = OuterLoop::new(cfg.controller);
    let mut seq = Sequencer::new();
    let mut stall = StallWatch {
        last_key: None,
        since: 0.0,
        limit_s: cfg.safety.sensor_stall_s,
    };

    // Start position, first mode, power on.
    let prepared: Result<(f64, Mode), String> = async {
        let fb = bus
            .drive
            .read_feedback()
            .await
            .map_err(|e| format!("drive: {e}"))?;
        let x0 = fb
            .position_rad
            .ok_or("the drive profile has no position feedback (role position_feedback)")?;
        let first = plan
            .segments
            .first()
            .map(|s| drive_mode(s.mode, cfg.outer_loop, &bus.drive))
            .unwrap_or(Mode::Torque);
        bus.drive
            .set_mode(first)
            .await
            .map_err(|e| format!("drive: {e}"))?;
        let hold = if first == Mode::Position { x0 } else { 0.0 };
        bus.drive
            .command(hold)
            .await
            .map_err(|e| format!("drive: {e}"))?;
        bus.drive
            .enable()
            .await
            .map_err(|e| format!("drive: enable: {e}"))?;
        Ok((x0, first))
    }
    .await;
    let (x0, mut mode) = match prepared {
        Ok(p) => p,
        Err(e) => {
            let safe = safe_state(&mut bus.drive).await;
            let mut log = vec![(None, e.clone())];
            if let Err(d) = &safe {
                log.push((None, d.clone()));
            }
            return report(Outcome::Failed(e), log, &stats, 0, 0.0, safe.ok(), 0);
        }
    };

    let mut batch = Batch::with_capacity(0, BATCH_SAMPLES, width);
    let send = |batch: &mut Batch, next_idx: u64| -> bool {
        let full = std::mem::replace(batch, Batch::with_capacity(next_idx, BATCH_SAMPLES, width));
        match &recorder {
            Some(r) => r.try_send(full).is_ok(),
            None => true,
        }
    };
    let mut dropped = 0u64;
    let status_every = ((1.0 / STATUS_HZ) / ts).round().max(1.0) as u64;
    let mut m = Measurement::default();
    let mut last_fb = DriveFeedback::default();
    let mut last_torque = f64::NAN;
    let mut comm_errors = 0u32;
    let mut overran = false;
    let mut idx: u64 = 0;
    let mut stop_after: Option<(usize, String)> = None;
    status.send_modify(|s| s.phase = "running");

    let start = Instant::now();
    let mut k: u64 = 0;
    let outcome: Outcome = loop {
        let deadline = start + Duration::from_secs_f64(k as f64 * ts);
        sleep_until(deadline);
        let woke = Instant::now();
        stats.record(woke.saturating_duration_since(deadline).as_secs_f64() * 1e6);
        let t = k as f64 * ts;
        m.t = t;

        match control.pending() {
            Some(Request::Abort(reason)) => break Outcome::Aborted(reason),
            Some(Request::Stop(reason)) if stop_after.is_none() => {
                stop_after = Some((seq.segment(), reason));
            }
            _ => {}
        }
        let Some(tick): Option<Tick> = seq.tick(&plan, &m) else {
            break Outcome::Completed;
        };
        if let Some((seg, reason)) = &stop_after
            && tick.segment != *seg
        {
            break Outcome::Aborted(reason.clone());
        }

        // Mode and command, clamped before it leaves.
        let want = drive_mode(tick.mode, cfg.outer_loop, &bus.drive);
        if want != mode {
            if let Err(e) = bus.drive.set_mode(want).await {
                break Outcome::Failed(format!("comms fault: drive: set {want} mode: {e}"));
            }
            mode = want;
        }
        let raw = match want {
            Mode::Torque => outer.torque(&tick, &m, ts, plan.limits.torque_nm),
            Mode::Velocity | Mode::Position => tick.value,
        };
        let (cmd, clamped) = guard.clamp(want, raw);
        let wire = if want == Mode::Position {
            cmd + x0
        } else {
            cmd
        };

        let fb = match bus.drive.command_and_read(wire).await {
            Ok(fb) => {
                comm_errors = 0;
                fb
            }
            Err(e) => {
                comm_errors += 1;
                let text = format!("comms fault: drive: {e}");
                if comm_errors > cfg.safety.comm_errors {
                    break Outcome::Failed(text);
                }
                log.push((Some(t), text));
                last_fb
            }
        };
        last_fb = fb;
        let (torque_sensor, fresh) = match &mut bus.sensor {
            None => (f64::NAN, true),
            Some(sensor) => match sensor.read().await {
                Ok(r) => {
                    if r.fault == Some(true) {
                        break Outcome::Failed(format!(
                            "torque sensor fault (status {:#06x})",
                            r.status.unwrap_or(0)
                        ));
                    }
                    let (fresh, stalled) = stall.update(t, r.heartbeat, r.torque_nm);
                    if stalled {
                        break Outcome::Failed(format!(
                            "torque sensor stall: no new sample for {:.0} ms",
                            (t - stall.since) * 1e3
                        ));
                    }
                    last_torque = r.torque_nm;
                    (r.torque_nm, fresh)
                }
                Err(e) => {
                    comm_errors += 1;
                    let text = format!("comms fault: torque sensor: {e}");
                    if comm_errors > cfg.safety.comm_errors {
                        break Outcome::Failed(text);
                    }
                    log.push((Some(t), text));
                    (last_torque, false)
                }
            },
        };

        // The drive's own view.
        if fb.fault == Some(true) {
            break Outcome::Failed(format!(
                "drive fault (code {:#06x})",
                fb.fault_code.unwrap_or(0)
            ));
        }
        if fb.enabled == Some(false) {
            break Outcome::Failed(format!(
                "the drive left operation enabled (status {:#06x})",
                fb.status.unwrap_or(0)
            ));
        }
        let x = fb.position_rad.map_or(m.x, |p| p - x0);
        let v = fb.velocity_rad_s.unwrap_or(m.v);
        let torque_motor = fb.torque_nm.unwrap_or(f64::NAN);

        let mut flags = Flags::default();
        if clamped {
            flags = flags.with(Flags::CLAMPED);
        }
        if tick.started {
            flags = flags.with(Flags::SEGMENT_START);
        }
        if !fresh {
            flags = flags.with(Flags::SENSOR_STALE);
        }
        if overran {
            flags = flags.with(Flags::OVERRUN);
        }
        let sample = Sample {
            t,
            x,
            v,
            u_cmd: cmd,
            torque_motor,
            torque_sensor,
            segment: tick.segment as u32,
            flags,
        };
        let outputs = lockstep.step(&sample, tick.mode == DriveMode::Torque, tick.started, ts);
        batch.push(to_store(&sample), outputs);
        if let Some((tx, every)) = &live
            && idx.is_multiple_of(u64::from(*every))
        {
            let _ = tx.send(Frame {
                idx,
                sample,
                outputs: outputs.to_vec(),
            });
        }
        idx += 1;
        if batch.samples.len() >= BATCH_SAMPLES && !send(&mut batch, idx) {
            dropped += 1;
        }
        m = Measurement { t, x, v };

        if let Some(b) = guard.check(x, v, torque_motor) {
            break Outcome::Aborted(b.to_string());
        }
        if idx.is_multiple_of(status_every) {
            let label = &plan.segments[tick.segment].label;
            status.send_modify(|s| {
                s.t = t;
                s.segment = tick.segment;
                if s.label != *label {
                    s.label.clone_from(label);
                }
                s.sample = sample;
                s.samples = idx;
                s.overruns = stats.overruns;
                s.dropped_batches = dropped;
            });
        }

        // Next deadline; a tick that ran into the next period skips the periods it missed.
        k += 1;
        let now = Instant::now();
        let next = start + Duration::from_secs_f64(k as f64 * ts);
        overran = now > next;
        if overran {
            stats.overruns += 1;
            k = ((now - start).as_secs_f64() / ts).floor() as u64 + 1;
        }
    };
    let stop_at = Instant::now();
    let elapsed_s = (stop_at - start).as_secs_f64();
    status.send_modify(|s| s.phase = "stopping");

    // Safe state first, bookkeeping after.
    let safe = safe_state(&mut bus.drive).await;
    let t_end = Some(k as f64 * ts);
    let safe_state_s = match safe {
        Ok(s) => {
            if !matches!(outcome, Outcome::Completed) {
                log.push((
                    t_end,
                    format!("drive disabled {:.0} µs after the stop decision", s * 1e6),
                ));
            }
            Some(s)
        }
        Err(e) => {
            log.push((t_end, e));
            None
        }
    };
    batch
        .events
        .extend(log.iter().map(|(t, reason)| Event::Log {
            t: *t,
            reason: reason.clone(),
        }));
    batch.events.push(Event::Timing(stats.stats()));
    // The outcome's reason reaches the log through the recorder's `Finish`.
    match &outcome {
        Outcome::Completed => {}
        Outcome::Aborted(r) | Outcome::Failed(r) => log.insert(0, (t_end, r.clone())),
    }
    if let Some(r) = &recorder
        && r.send(batch).await.is_err()
    {
        dropped += 1;
    }
    status.send_modify(|s| {
        s.phase = "done";
        s.samples = idx;
        s.overruns = stats.overruns;
        s.dropped_batches = dropped;
    });
    report(
        outcome,
        log,
        &stats,
        stats.ticks(),
        elapsed_s,
        safe_state_s,
        dropped,
    )
}

/// Torque off: the drive's disable (its first write removes torque). Returns the time until
/// the drive confirmed it, or why it could not be confirmed.
async fn safe_state(drive: &mut Drive) -> Result<f64, String> {
    let t0 = Instant::now();
    match drive.disable().await {
        Ok(()) => Ok(t0.elapsed().as_secs_f64()),
        Err(e) => Err(format!(
            "could not confirm the drive disabled ({e}); its communication watchdog removes torque"
        )),
    }
}

/// Sleeps to an absolute deadline with the OS timer, then yields for the last stretch.
fn sleep_until(deadline: Instant) {
    protocols::timing::sleep_until_blocking(deadline);
}

/// The store's copy of a sample.
pub fn to_store(s: &Sample) -> run_store::Sample {
    run_store::Sample {
        t: s.t,
        x: s.x,
        v: s.v,
        u_cmd: s.u_cmd,
        torque_motor: s.torque_motor,
        torque_sensor: s.torque_sensor,
        segment: s.segment,
        flags: s.flags.0,
    }
}
