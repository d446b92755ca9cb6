//! The loop itself: connect, prepare the drive, tick until the plan ends or something stops
//! it, then the safe state.

use super::judge::{DERIVED_VELOCITY_TAU_S, Judge, Rules, TickInput};
use super::lockstep::Lockstep;
use super::realtime::{NoDeepIdle, realtime};
use super::safety::Guard;
use super::timing::PeriodStats;
use super::{Control, Request};
use crate::config::{Loaded, OuterLoopChoice, WatchdogRule};
use experiments::{
    DriveMode, Flags, Measurement, OuterLoop, Plan, Sample, Sequencer, StopReason, Tick,
};
use friction::compensation::{CompensationInput, Compensator, CompensatorSpec};
use friction::registry::ModelSpec;
use protocols::{Drive, Link, Mode, SharedLink, TorqueSensor};
use run_store::{Batch, BatchSender, Dropped, Event};
use serde::Serialize;
use std::panic::AssertUnwindSafe;
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
    /// Friction compensators of a compensation trial (segments name them by index), their
    /// parameters resolved when the run was created.
    pub compensators: Vec<CompensatorSpec>,
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
    /// What the latest sample's `u_cmd` is: `torque` \[N m\], `velocity` \[rad/s\] or
    /// `position` \[rad\] (the drive mode in force).
    pub command: &'static str,
    /// Latest sample.
    pub sample: Sample,
    /// Samples so far.
    pub samples: u64,
    /// Overruns so far.
    pub overruns: u64,
    /// Batches the recorder refused so far.
    pub dropped_batches: u64,
    /// Wake-up lateness so far, coarse (for `/metrics`).
    pub lateness: super::timing::Histogram,
    /// The drive's link counters so far.
    pub drive_link: protocols::LinkStats,
    /// The sensor's link counters so far (the drive's again when they share a line).
    pub sensor_link: protocols::LinkStats,
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
///
/// A panic anywhere in the loop (a model step, the sequencer) is caught here: the safe-state
/// sequence then runs on a fresh link and the run fails with the panic's message.
pub fn run(setup: LoopSetup) -> LoopReport {
    let wanted = setup.loaded.config.realtime_priority;
    let mut notes: Vec<String> = realtime(wanted).into_iter().collect();
    // Real-time scheduling asked for: keep the CPUs awake for the run's deadlines too.
    let idle = (wanted > 0).then(NoDeepIdle::request);
    if let Some(Err(note)) = &idle {
        notes.push(note.clone());
    }
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("cannot build the control loop's runtime")
    };
    let caught =
        std::panic::catch_unwind(AssertUnwindSafe(|| runtime().block_on(run_async(&setup))));
    let mut report = match caught {
        Ok(report) => report,
        Err(panic) => runtime().block_on(after_panic(&setup, &panic_message(&*panic))),
    };
    drop(idle);
    report.log.extend(notes.into_iter().map(|n| (None, n)));
    report
}

/// The text of a caught panic.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// The loop panicked: safe state on a fresh link, the run failed with the panic's message.
async fn after_panic(setup: &LoopSetup, message: &str) -> LoopReport {
    let reason = format!("panic in the control loop: {message}");
    let mut log = vec![(None, reason.clone())];
    let deadline = setup.loaded.confirm_deadline(setup.plan.period_s());
    let safe = match connect_drive(&setup.loaded).await {
        Ok(mut drive) => safe_state(&mut drive, None, deadline).await,
        Err(e) => SafeState::unconfirmed(0.0, format!("no fresh link to the drive: {e}")),
    };
    setup.control.safe_reached(safe.clone());
    log.push((None, safe.log_line(&setup.loaded)));
    if let Some(r) = &setup.recorder {
        let mut batch = Batch::with_capacity(r.committed_samples(), 0, 0);
        batch
            .events
            .extend(log.iter().map(|(t, reason)| Event::Log {
                t: *t,
                reason: reason.clone(),
            }));
        let _ = r.send(batch).await;
    }
    setup.status.send_modify(|s| s.phase = "done");
    LoopReport {
        outcome: Outcome::Failed(reason),
        stats: PeriodStats::default().stats(),
        ticks: 0,
        elapsed_s: 0.0,
        safe_state_s: safe.confirmed_s(),
        log,
        dropped_batches: 0,
    }
}

/// The devices of the bench, connected.
struct Bus {
    drive: Drive,
    sensor: Option<TorqueSensor>,
}

impl Bus {
    /// The drive's and the sensor's link counters (the sensor's are the drive's when it has
    /// none of its own). The loop is the links' only user, so the locks are free.
    async fn link_stats(&self) -> (protocols::LinkStats, protocols::LinkStats) {
        let drive = self.drive.io().link().lock().await.stats();
        let sensor = match &self.sensor {
            Some(s) => s.io().link().lock().await.stats(),
            None => drive,
        };
        (drive, sensor)
    }
}

/// Opens the drive's link and client.
pub(super) async fn connect_drive(loaded: &Loaded) -> Result<Drive, String> {
    let (dprof, _) = &loaded.drive;
    let dlink: SharedLink = Link::open(Loaded::link_config(&loaded.config.drive, dprof))
        .await
        .map_err(|e| format!("cannot connect to the drive: {e}"))?
        .shared();
    let mut drive = Drive::new(dprof.clone(), dlink).map_err(|e| e.to_string())?;
    if let Some(u) = loaded.config.drive.unit {
        drive = drive.with_unit(u);
    }
    Ok(drive)
}

/// Connects both devices and prepares the drive's own safety (watchdog read back, torque
/// cap). A latched drive fault is not cleared: that is an operator's decision.
async fn connect(loaded: &Loaded, log: &mut Vec<(Option<f64>, String)>) -> Result<Bus, String> {
    let cfg = &loaded.config;
    let mut drive = connect_drive(loaded).await?;
    let dlink_cfg = Loaded::link_config(&cfg.drive, &loaded.drive.0);
    let sensor = match (&cfg.sensor, &loaded.sensor) {
        (Some(sc), Some((sprof, _))) => {
            let link = if sc.tcp.is_none() && sc.serial.is_none()
                || Loaded::link_config(sc, sprof).endpoint == dlink_cfg.endpoint
            {
                drive.io().link().clone()
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
        return Err(format!(
            "the drive has a latched fault (code {:#06x}): an operator clears it after checking \
             the bench (`bench fault-reset`, POST /api/faults/reset or the dashboard); a run \
             never clears it",
            fb.fault_code.unwrap_or(0)
        ));
    }
    if drive.profile().connect_sequence().is_some() {
        drive
            .io()
            .run_sequence("connect")
            .await
            .map_err(|e| format!("drive: connect settings: {e}"))?;
        log.push((None, "drive connect settings written and read back".into()));
    }
    if let Ok(notes) = loaded.check_profile() {
        log.extend(notes.into_iter().map(|n| (None, n)));
    }
    match loaded.watchdog_rule() {
        WatchdogRule::Set(timeout_s) => {
            drive
                .set_watchdog(Duration::from_secs_f64(timeout_s))
                .await
                .map_err(|e| format!("drive: setting the watchdog: {e}"))?;
            let read = drive
                .read_watchdog()
                .await
                .map_err(|e| format!("drive: reading the watchdog back: {e}"))?;
            if (read - timeout_s).abs() > 1e-3 * timeout_s.max(1.0) {
                return Err(format!(
                    "drive: the communication watchdog reads back {read} s after writing \
                     {timeout_s} s: refusing to run without a working backstop"
                ));
            }
            log.push((
                None,
                format!("drive communication watchdog {read} s (read back)"),
            ));
        }
        WatchdogRule::Waived(why) => log.push((None, why)),
    }
    // The drive's own loops saturate inside the bench's torque limit: a velocity or position
    // loop asking for more is clamped by the drive, not aborted as a breach.
    if drive.profile().role(protocols::Role::MaxTorque).is_some() {
        drive
            .set_max_torque(cfg.limits.torque_nm)
            .await
            .map_err(|e| format!("drive: setting the maximum torque: {e}"))?;
    }
    if drive
        .profile()
        .role(protocols::Role::VelocityFeedback)
        .is_none()
    {
        log.push((
            None,
            format!(
                "the drive profile has no velocity feedback: velocity derived from position \
                 (backward difference, first-order low-pass τ = {} ms)",
                DERIVED_VELOCITY_TAU_S * 1e3
            ),
        ));
    }
    Ok(Bus { drive, sensor })
}

/// The drive mode each segment mode runs in, resolved once per run (not at every tick).
#[derive(Clone, Copy, Debug)]
struct ModeMap {
    velocity: Mode,
    position: Mode,
}

impl ModeMap {
    /// The daemon closes the outer loops itself (torque mode) when asked to, or when the
    /// drive profile has no such mode.
    fn new(choice: OuterLoopChoice, drive: &Drive) -> ModeMap {
        let native = |m: Mode| {
            let has = drive.profile().modes.contains_key(&m)
                || drive.profile().sequence(&format!("mode_{m}")).is_some();
            if choice == OuterLoopChoice::Daemon || !has {
                Mode::Torque
            } else {
                m
            }
        };
        ModeMap {
            velocity: native(Mode::Velocity),
            position: native(Mode::Position),
        }
    }

    /// A compensated segment always runs in torque mode: the compensation torque is added to
    /// the daemon's own position loop.
    fn of_segment(self, seg: &experiments::Segment) -> Mode {
        if seg.compensator.is_some() {
            Mode::Torque
        } else {
            self.of(seg.mode)
        }
    }

    fn of(self, seg: DriveMode) -> Mode {
        match seg {
            DriveMode::Torque => Mode::Torque,
            DriveMode::Velocity => self.velocity,
            DriveMode::Position => self.position,
        }
    }
}

/// The friction compensator's torque for this tick, within `±limit`; it starts from rest on a
/// segment's first tick (each trial is independent of the one before).
fn compensation(c: &mut Compensator, tick: &Tick, m: &Measurement, ts: f64, limit: f64) -> f64 {
    if tick.started {
        c.reset();
    }
    let input = CompensationInput {
        t: m.t,
        x: m.x,
        v: m.v,
        x_ref: tick.value,
        v_ref: tick.rate,
    };
    c.step(&input, ts).clamp(-limit, limit)
}

/// Switches to `mode` with `wire` already in its command register: the new command first,
/// then the mode, so the drive never follows a stale register of the new mode.
async fn switch_mode(drive: &mut Drive, mode: Mode, wire: f64) -> Result<(), String> {
    drive
        .command_in(mode, wire)
        .await
        .map_err(|e| format!("drive: {mode} command before the mode switch: {e}"))?;
    drive
        .set_mode(mode)
        .await
        .map_err(|e| format!("drive: set {mode} mode: {e}"))
}

async fn run_async(setup: &LoopSetup) -> LoopReport {
    let LoopSetup {
        loaded,
        plan,
        models,
        compensators,
        recorder,
        control,
        status,
        live,
    } = setup;
    let cfg = &loaded.config;
    let mut log: Vec<(Option<f64>, String)> = Vec::new();
    let failed_early = |e: String, mut log: Vec<(Option<f64>, String)>, safe_state_s| {
        log.insert(0, (None, e.clone()));
        LoopReport {
            outcome: Outcome::Failed(e),
            stats: PeriodStats::default().stats(),
            ticks: 0,
            elapsed_s: 0.0,
            safe_state_s,
            log,
            dropped_batches: 0,
        }
    };
    status.send_modify(|s| {
        s.phase = "connecting";
        s.segments = plan.segments.len();
    });
    let mut bus = match connect(loaded, &mut log).await {
        Ok(b) => b,
        Err(e) => return failed_early(e, log, None),
    };
    let mut lockstep = match Lockstep::new(models, cfg.lockstep.plant_inertia_kg_m2) {
        Ok(l) => l,
        Err(e) => return failed_early(format!("lockstep models: {e}"), log, None),
    };
    let built: Result<Vec<Compensator>, _> = compensators.iter().map(Compensator::build).collect();
    let mut compensators = match built {
        Ok(c) => c,
        Err(e) => return failed_early(format!("friction compensator: {e}"), log, None),
    };
    let width = lockstep.width();
    let ts = plan.period_s();
    let deadline = setup.loaded.confirm_deadline(setup.plan.period_s());
    let mut outer = OuterLoop::new(cfg.controller);
    let mut seq = Sequencer::new();

    let modes = ModeMap::new(cfg.outer_loop, &bus.drive);
    // Start position, first mode with its neutral command, power on.
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
            .map(|s| modes.of_segment(s))
            .unwrap_or(Mode::Torque);
        let hold = if first == Mode::Position { x0 } else { 0.0 };
        switch_mode(&mut bus.drive, first, hold).await?;
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
            let safe = safe_state(&mut bus.drive, None, deadline).await;
            control.safe_reached(safe.clone());
            log.push((None, safe.log_line(loaded)));
            return failed_early(e, log, safe.confirmed_s());
        }
    };
    let guard = Guard::new(plan.limits, cfg.safety.breach_margin);
    let mut judge = Judge::new(
        Rules {
            guard,
            comm_errors: cfg.safety.comm_errors,
            sensor_stall_s: cfg.safety.sensor_stall_s,
            drive_stall_s: cfg.safety.drive_stall_s,
        },
        x0,
    );

    let mut batch = Batch::with_capacity(0, BATCH_SAMPLES, width);
    let mut dropped = 0u64;
    let status_every = ((1.0 / STATUS_HZ) / ts).round().max(1.0) as u64;
    let mut stats = PeriodStats::default();
    let mut m = Measurement::default();
    let mut overran = false;
    let mut idx: u64 = 0;
    let mut wire = if mode == Mode::Position { x0 } else { 0.0 };
    let mut stop_after: Option<(usize, String)> = None;
    status.send_modify(|s| s.phase = "running");

    let start = Instant::now();
    let mut k: u64 = 0;
    let outcome: Outcome = loop {
        let deadline_k = start + Duration::from_secs_f64(k as f64 * ts);
        control.sleep_until(deadline_k);
        let woke = Instant::now();
        stats.record(woke.saturating_duration_since(deadline_k).as_secs_f64() * 1e6);
        let t = k as f64 * ts;
        m.t = t;

        match control.pending() {
            Some(Request::Abort(reason)) => break Outcome::Aborted(reason),
            Some(Request::Stop(reason)) if stop_after.is_none() => {
                stop_after = Some((seq.segment(), reason));
            }
            _ => {}
        }
        let Some(tick): Option<Tick> = seq.tick(plan, &m) else {
            break Outcome::Completed;
        };
        if let Some((seg, reason)) = &stop_after
            && tick.segment != *seg
        {
            break Outcome::Aborted(reason.clone());
        }

        // Mode and command, clamped before it leaves.
        if let Some(e) = tick.ended.filter(|e| e.reason == StopReason::TrackingError) {
            log.push((
                Some(t),
                format!(
                    "'{}' stopped: tracking error beyond its bound (unstable compensator); the next segment takes the torque away",
                    plan.segments[e.segment].label
                ),
            ));
        }
        let segment = &plan.segments[tick.segment];
        let want = modes.of_segment(segment);
        let raw = match want {
            Mode::Torque => {
                let limit = plan.limits.torque_nm;
                let feedforward = segment
                    .compensator
                    .and_then(|c| compensators.get_mut(c))
                    .map_or(0.0, |c| compensation(c, &tick, &m, ts, limit));
                outer.torque_with(&tick, &m, ts, limit, feedforward)
            }
            Mode::Velocity | Mode::Position => tick.value,
        };
        let (cmd, clamped) = guard.clamp(want, raw);
        wire = if want == Mode::Position {
            cmd + x0
        } else {
            cmd
        };
        if want != mode {
            if let Err(e) = switch_mode(&mut bus.drive, want, wire).await {
                break Outcome::Failed(format!("comms fault: {e}"));
            }
            mode = want;
        }

        // The sample is stamped when the drive latched it (between request and reply), not
        // when its tick was due: a tick that starts or waits late would otherwise put a later
        // position at the scheduled time (a false 10 % speed spread at 2 rad/s from one 9 ms
        // stall).
        let sent = start.elapsed().as_secs_f64();
        let drive = match bus.drive.command_and_read(wire).await {
            // A value the profile refuses never left: not a comms fault, a command to stop on.
            Err(e) if e.is_limit() => {
                break Outcome::Aborted(format!("command refused before the write: {e}"));
            }
            other => other.map_err(|e| e.to_string()),
        };
        let t_read = 0.5 * (sent + start.elapsed().as_secs_f64());
        let sensor = match &mut bus.sensor {
            None => None,
            Some(s) => Some(s.read().await.map_err(|e| e.to_string())),
        };
        let judged = match judge.tick(TickInput {
            t: t_read,
            drive,
            sensor,
        }) {
            Ok(j) => j,
            Err(stop) => break stop,
        };
        if let Some(note) = &judged.note {
            log.push((Some(t), note.clone()));
        }

        let mut flags = Flags::default();
        if clamped {
            flags = flags.with(Flags::CLAMPED);
        }
        if tick.started {
            flags = flags.with(Flags::SEGMENT_START);
        }
        if !judged.sensor_fresh {
            flags = flags.with(Flags::SENSOR_STALE);
        }
        if overran {
            flags = flags.with(Flags::OVERRUN);
        }
        let sample = Sample {
            t: t_read,
            x: judged.x,
            v: judged.v,
            u_cmd: cmd,
            torque_motor: judged.torque_motor,
            torque_sensor: judged.torque_sensor,
            segment: tick.segment as u32,
            flags,
        };
        let outputs = lockstep.step(&sample, tick.mode == DriveMode::Torque, tick.started, ts);
        batch.push(to_store(&sample), outputs);
        if let Some((tx, every)) = live
            && idx.is_multiple_of(u64::from(*every))
        {
            let _ = tx.send(Frame {
                idx,
                sample,
                outputs: outputs.to_vec(),
            });
        }
        idx += 1;
        if batch.samples.len() >= BATCH_SAMPLES {
            let full =
                std::mem::replace(&mut batch, Batch::with_capacity(idx, BATCH_SAMPLES, width));
            match recorder.as_ref().map(|r| r.try_send(full)) {
                None | Some(Ok(())) => {}
                Some(Err(Dropped::Full { .. })) => dropped += 1,
                Some(Err(e)) => {
                    break Outcome::Failed(format!(
                        "recording failed: the run store took no more samples ({e})"
                    ));
                }
            }
        }
        m = Measurement {
            t,
            x: judged.x,
            v: judged.v,
        };

        if let Some(stop) = judged.then_stop {
            break stop;
        }
        if idx.is_multiple_of(status_every) {
            let label = &plan.segments[tick.segment].label;
            let (drive_link, sensor_link) = bus.link_stats().await;
            let lateness = stats.histogram();
            status.send_modify(|s| {
                s.t = t;
                s.segment = tick.segment;
                if s.label != *label {
                    s.label.clone_from(label);
                }
                s.command = mode.name();
                s.sample = sample;
                s.samples = idx;
                s.overruns = stats.overruns;
                s.dropped_batches = dropped;
                s.lateness = lateness;
                s.drive_link = drive_link;
                s.sensor_link = sensor_link;
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
    let elapsed_s = start.elapsed().as_secs_f64();
    status.send_modify(|s| s.phase = "stopping");

    // Safe state first, bookkeeping after.
    // Stopped on purpose or by the plan, the drive read enabled a tick ago; after a fault it
    // may be off already.
    let maybe_off = matches!(outcome, Outcome::Failed(_));
    let safe = safe_state_from(&mut bus.drive, Some((mode, wire)), deadline, maybe_off).await;
    control.safe_reached(safe.clone());
    let t_end = Some(k as f64 * ts);
    if !matches!(outcome, Outcome::Completed) || safe.confirmed_s().is_none() {
        log.push((t_end, safe.log_line(loaded)));
    }
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
    if let Some(r) = recorder
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
    LoopReport {
        outcome,
        stats: stats.stats(),
        ticks: stats.ticks(),
        elapsed_s,
        safe_state_s: safe.confirmed_s(),
        log,
        dropped_batches: dropped,
    }
}

/// How the safe-state sequence ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SafeState {
    /// The drive read back not enabled this long after the stop decision \[s\].
    Confirmed {
        /// Seconds from the decision to the confirming read.
        after_s: f64,
        /// The status word that confirmed it.
        status: Option<u64>,
    },
    /// Not confirmed by the deadline.
    Unconfirmed {
        /// Seconds spent trying.
        after_s: f64,
        /// What was read or what failed.
        what: String,
    },
}

impl SafeState {
    fn unconfirmed(after_s: f64, what: String) -> SafeState {
        SafeState::Unconfirmed { after_s, what }
    }

    /// Seconds to the confirmation, if confirmed.
    pub fn confirmed_s(&self) -> Option<f64> {
        match self {
            SafeState::Confirmed { after_s, .. } => Some(*after_s),
            SafeState::Unconfirmed { .. } => None,
        }
    }

    /// The run log's line.
    pub fn log_line(&self, loaded: &Loaded) -> String {
        match self {
            SafeState::Confirmed { after_s, status } => format!(
                "drive disabled, confirmed by its status{} {:.0} µs after the stop decision",
                status.map_or(String::new(), |s| format!(" {s:#06x}")),
                after_s * 1e6
            ),
            SafeState::Unconfirmed { after_s, what } => {
                let backstop = match loaded.watchdog_rule() {
                    WatchdogRule::Set(s) => {
                        format!("the drive's communication watchdog ({s} s) removes torque")
                    }
                    WatchdogRule::Waived(_) => {
                        "the drive has no communication watchdog: CHECK THE BENCH".into()
                    }
                };
                format!(
                    "drive safe state UNCONFIRMED after {:.1} ms: {what}; {backstop}",
                    after_s * 1e3
                )
            }
        }
    }
}

/// The safe state: the neutral command of the mode in force (zero torque, zero velocity, or
/// hold the last position target), then disable, then the status read back until it is not
/// enabled, disabling again while it is, until `deadline` (one read is always made). On a
/// dead link the whole sequence is tried once more on a fresh one.
pub async fn safe_state(
    drive: &mut Drive,
    last: Option<(Mode, f64)>,
    deadline: Duration,
) -> SafeState {
    safe_state_from(drive, last, deadline, true).await
}

/// [`safe_state`]; `maybe_off` reads the status first, so a drive already off (tripped, or
/// stopped by its watchdog) is confirmed at once instead of waiting for a disable sequence's
/// state it will not reach. A loop that just read the drive enabled skips that read.
async fn safe_state_from(
    drive: &mut Drive,
    last: Option<(Mode, f64)>,
    deadline: Duration,
    maybe_off: bool,
) -> SafeState {
    let t0 = Instant::now();
    match try_safe_state(drive, last, t0, deadline, maybe_off).await {
        Ok(s) => s,
        // The link reopens itself before its next request after a failure: the second try
        // runs on a fresh connection.
        Err(what) => match try_safe_state(drive, last, t0, t0.elapsed() + deadline, true).await {
            Ok(s) => s,
            Err(again) if again == what => SafeState::unconfirmed(
                t0.elapsed().as_secs_f64(),
                format!("{what} (the same again on a fresh link)"),
            ),
            Err(again) => SafeState::unconfirmed(
                t0.elapsed().as_secs_f64(),
                format!("{what}; on a fresh link: {again}"),
            ),
        },
    }
}

async fn try_safe_state(
    drive: &mut Drive,
    last: Option<(Mode, f64)>,
    t0: Instant,
    deadline: Duration,
    maybe_off: bool,
) -> Result<SafeState, String> {
    let mut problems = Vec::new();
    if maybe_off
        && let Ok(fb) = drive.read_feedback().await
        && fb.enabled == Some(false)
    {
        return Ok(SafeState::Confirmed {
            after_s: t0.elapsed().as_secs_f64(),
            status: fb.status,
        });
    }
    if let Some((mode, wire)) = last {
        let neutral = if mode == Mode::Position { wire } else { 0.0 };
        if let Err(e) = drive.command_in(mode, neutral).await {
            problems.push(format!("neutral {mode} command: {e}"));
        }
    }
    loop {
        if let Err(e) = drive.disable().await {
            problems.push(format!("disable: {e}"));
        }
        let read = drive.read_feedback().await;
        match read {
            Ok(fb) if fb.enabled == Some(false) => {
                return Ok(SafeState::Confirmed {
                    after_s: t0.elapsed().as_secs_f64(),
                    status: fb.status,
                });
            }
            Ok(fb) if fb.enabled.is_none() => {
                return Err(
                    "the drive profile has no `enabled` status pattern to confirm it".into(),
                );
            }
            Ok(fb) => problems.push(format!(
                "status {:#06x} still reads enabled",
                fb.status.unwrap_or(0)
            )),
            Err(e) => problems.push(format!("status read: {e}")),
        }
        if t0.elapsed() >= deadline {
            problems.dedup();
            return Err(problems.join("; "));
        }
    }
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
