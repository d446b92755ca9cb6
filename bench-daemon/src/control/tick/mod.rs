//! One control period as a pure step over injected I/O and time: [`tick`] runs the named
//! stages (requests → sequence → command → exchange → judge → record → publish) on the loop's
//! [`LoopState`], against any [`BenchIo`], at the run time `now` its shell gives it. The
//! real-time shell calls it at absolute deadlines over Modbus; the simulated shell back to
//! back in simulated time. Nothing here reads a clock or sleeps.

mod scans;
pub(super) mod suspend_check;

use super::io::{BenchIo, Exchanged};
use super::judge::{Judge, Judged, Rules, TickInput};
use super::lockstep::Lockstep;
use super::request::{Control, Request};
use super::safety::Guard;
use super::setup::{Frame, LiveOutputs, Status};
use super::stop::{Device, Outcome, StopReason};
use super::suspend::Suspenders;
use super::timing::{PeriodStats, RoundTrip};
use crate::config::{Loaded, OuterLoopChoice, SuspendRule};
use experiments::{DriveMode, Flags, Measurement, OuterLoop, Plan, Sample, Sequencer, Tick};
use friction::compensation::{CompensationInput, Compensator};
use protocols::Mode;
use run_store::{Batch, BatchSender, Dropped};
use tokio::sync::{broadcast, watch};

/// Samples per batch handed to the recorder (20 ms at 1 kHz).
pub(super) const BATCH_SAMPLES: usize = 20;
/// Status updates per second of run time.
const STATUS_HZ: f64 = 20.0;

/// Where a run's samples, live frames and progress go.
#[derive(Debug)]
pub struct Sinks<'a> {
    /// The recorder (None: nowhere, e.g. a dry timing run).
    pub recorder: Option<&'a BatchSender>,
    /// Wait for the recorder when its channel is full (simulated time: no deadline to keep)
    /// instead of dropping the batch (real time: the loop never waits).
    pub wait_for_recorder: bool,
    /// Progress and latest values.
    pub status: &'a watch::Sender<Status>,
    /// Decimated live samples with model outputs (every n-th sample).
    pub live: Option<&'a (broadcast::Sender<Frame>, u32)>,
}

/// Everything one run's loop carries from tick to tick.
#[derive(Debug)]
pub struct LoopState<'a> {
    pub(super) plan: &'a Plan,
    pub(super) control: &'a Control,
    pub(super) sinks: Sinks<'a>,
    ts: f64,
    seq: Sequencer,
    outer: OuterLoop,
    pub(super) guard: Guard,
    judge: Judge,
    pub(super) lockstep: Lockstep,
    compensators: Vec<Compensator>,
    pub(super) modes: ModeMap,
    /// The drive mode in force and the last value written in it.
    pub(super) mode: Mode,
    pub(super) wire: f64,
    pub(super) x0: f64,
    m: Measurement,
    stop_after: Option<(usize, StopReason)>,
    /// The bench clock at the first deadline \[s\] (samples are stamped relative to it); the
    /// shell sets it.
    pub(super) t0: f64,
    pub(super) batch: Batch,
    pub(super) idx: u64,
    pub(super) dropped: u64,
    status_every: u64,
    /// Interruption log lines (run time, text): what interrupted or threatened the run.
    pub(super) log: Vec<(Option<f64>, String)>,
    /// Wake-up lateness, recorded by the shell before each tick.
    pub(super) stats: PeriodStats,
    /// Time from waking to the end of each tick's work, recorded by the shell: what the
    /// rest of the period must hold.
    pub(super) work: PeriodStats,
    /// The previous tick ran into this one's period (the shell says so).
    pub(super) overran: bool,
    /// The drive's usual round trip, and whether this tick's was late.
    round_trip: RoundTrip,
    late_read: bool,
    /// The `[[suspend]]` conditions and what they remember.
    pub(super) rules: &'a [SuspendRule],
    pub(super) suspenders: Suspenders,
    /// A condition held at this segment's start: the shell pauses the run before it.
    pub(super) pause_at: Option<usize>,
    /// Segments passed over from the start (a continuation's finished ones).
    skip: Vec<usize>,
    /// Lines of `log` already handed to the recorder (a pause's, as they happen).
    pub(super) flushed: usize,
    /// Ticks run (the status cadence; `idx` counts recorded samples).
    ticks: u64,
    /// A DAQ stream's scans, recorded one sample each ([`scans`]).
    scans: scans::ScanRows,
}

/// What the loop is made of, besides the plan: built once per run before the drive moves.
#[derive(Debug)]
pub struct Parts {
    /// Lockstep models.
    pub lockstep: Lockstep,
    /// Friction compensators, by the index segments name.
    pub compensators: Vec<Compensator>,
}

impl<'a> LoopState<'a> {
    /// The state of a run whose drive starts at `x0` (rad, as the drive reads) in `mode`.
    pub fn new(
        loaded: &'a Loaded,
        plan: &'a Plan,
        control: &'a Control,
        sinks: Sinks<'a>,
        parts: Parts,
        modes: ModeMap,
        (x0, mode): (f64, Mode),
    ) -> LoopState<'a> {
        let cfg = &loaded.config;
        let ts = plan.period_s();
        let guard = Guard::new(plan.limits, cfg.safety.breach_margin);
        let rules = Rules {
            guard,
            comm_errors: cfg.safety.comm_errors,
            sensor_stall_s: cfg.safety.sensor_stall_s,
            drive_stall_s: cfg.safety.drive_stall_s,
        };
        let width = parts.lockstep.width();
        LoopState {
            plan,
            control,
            sinks,
            ts,
            seq: Sequencer::new(),
            outer: OuterLoop::new(cfg.controller),
            guard,
            judge: Judge::new(rules, x0),
            lockstep: parts.lockstep,
            compensators: parts.compensators,
            modes,
            mode,
            wire: if mode == Mode::Position { x0 } else { 0.0 },
            x0,
            m: Measurement::default(),
            stop_after: None,
            t0: 0.0,
            batch: Batch::with_capacity(0, BATCH_SAMPLES, width),
            idx: 0,
            dropped: 0,
            status_every: ((1.0 / STATUS_HZ) / ts).round().max(1.0) as u64,
            log: Vec::new(),
            stats: PeriodStats::default(),
            work: PeriodStats::default(),
            overran: false,
            round_trip: RoundTrip::default(),
            late_read: false,
            rules: &cfg.suspend,
            suspenders: Suspenders::default(),
            pause_at: None,
            skip: Vec::new(),
            flushed: 0,
            ticks: 0,
            scans: scans::ScanRows::default(),
        }
    }

    /// Passes over the segments `skip` (a continuation's finished ones).
    pub fn skipping(mut self, skip: Vec<usize>) -> LoopState<'a> {
        self.seq = Sequencer::skipping(skip.clone());
        self.skip = skip;
        self
    }

    /// Measures `segment` again from its start on the next tick (after a pause; never
    /// spliced), the segments before it passed over.
    pub(super) fn restart_at(&mut self, segment: usize) {
        let mut skip = self.skip.clone();
        skip.extend((0..segment).filter(|i| !self.skip.contains(i)));
        self.seq = Sequencer::skipping(skip);
    }

    /// The control period \[s\].
    pub fn period_s(&self) -> f64 {
        self.ts
    }
}

/// One control period at run time `now` \[s\]: `None` while the run goes on, else how it ended
/// (the safe state is the caller's next step).
pub async fn tick(state: &mut LoopState<'_>, io: &mut impl BenchIo, now: f64) -> Option<Outcome> {
    state.m.t = now;
    if let Some(stop) = requests(state) {
        return Some(stop.into());
    }
    let tick = match sequence(state) {
        Ok(tick) => tick,
        Err(end) => return Some(end),
    };
    if tick.started && suspend_check::suspend_before(state, io, tick.segment, now).await {
        state.pause_at = Some(tick.segment);
        return None;
    }
    let cmd = command(state, &tick, now);
    let input = match exchange(state, io, cmd.mode).await {
        Ok(input) => input,
        Err(stop) => return Some(stop.into()),
    };
    let t_read = input.t;
    let judged = match state.judge.tick(input) {
        Ok(j) => j,
        Err(stop) => return Some(stop.into()),
    };
    if let Some(note) = &judged.note {
        state.log.push((Some(now), note.clone()));
    }
    let sample = sample(state, &tick, &judged, &cmd, t_read);
    let recorded = match io.scan_period_s() {
        Some(dt) => scans::record(state, io, &tick, &sample, dt).await,
        None => record(state, &tick, &sample).await,
    };
    if let Err(stop) = recorded {
        return Some(stop.into());
    }
    state.m = Measurement {
        t: now,
        x: judged.x,
        v: judged.v,
    };
    if let Some(stop) = judged.then_stop {
        return Some(stop.into());
    }
    publish(state, io, &tick, &sample, now).await;
    None
}

/// A period's command, after the limits.
#[derive(Clone, Copy, Debug)]
struct Command {
    /// The drive mode it is for.
    mode: Mode,
    /// The value (relative to the run's start in position mode).
    value: f64,
    /// The clamp changed it.
    clamped: bool,
}

/// Stage 1: an abort ends the run now; a stop request ends it with the current segment.
fn requests(state: &mut LoopState<'_>) -> Option<StopReason> {
    match state.control.pending() {
        Some(Request::Abort(reason)) => Some(reason),
        Some(Request::Stop(reason)) if state.stop_after.is_none() => {
            state.stop_after = Some((state.seq.segment(), reason));
            None
        }
        _ => None,
    }
}

/// Stage 2: the plan's set point for this period, or the end of the run (plan done, or the
/// segment a stop request waited for is over).
fn sequence(state: &mut LoopState<'_>) -> Result<Tick, Outcome> {
    let Some(tick) = state.seq.tick(state.plan, &state.m) else {
        return Err(Outcome::Completed);
    };
    if let Some((seg, reason)) = &state.stop_after
        && tick.segment != *seg
    {
        return Err(reason.clone().into());
    }
    Ok(tick)
}

/// Stage 3: the mode and the command, clamped to the limits before anything leaves; sets the
/// value to write (`state.wire`, absolute in position mode).
fn command(state: &mut LoopState<'_>, tick: &Tick, now: f64) -> Command {
    if let Some(e) = tick
        .ended
        .filter(|e| e.reason == experiments::StopReason::TrackingError)
    {
        state.log.push((
            Some(now),
            format!(
                "'{}' stopped: tracking error beyond its bound (unstable compensator); the next segment takes the torque away",
                state.plan.segments[e.segment].label
            ),
        ));
    }
    let segment = &state.plan.segments[tick.segment];
    let want = state.modes.of_segment(segment);
    let raw = match want {
        Mode::Torque => {
            let limit = state.plan.limits.torque_nm;
            let feedforward = segment
                .compensator
                .and_then(|c| state.compensators.get_mut(c))
                .map_or(0.0, |c| compensation(c, tick, &state.m, state.ts, limit));
            state
                .outer
                .torque_with(tick, &state.m, state.ts, limit, feedforward)
        }
        Mode::Velocity | Mode::Position => tick.value,
    };
    let (value, clamped) = state.guard.clamp(want, raw);
    state.wire = if want == Mode::Position {
        value + state.x0
    } else {
        value
    };
    Command {
        mode: want,
        value,
        clamped,
    }
}

/// Stage 4: the switch to `mode` if the segment needs one, the command written with the
/// feedback read back, and the sensor read ([`BenchIo::exchange`]: beside the drive's
/// transaction when the sensor has a link of its own). The sample is stamped when the drive latched it
/// (between request and reply), not when its tick was due: a tick that starts or waits late
/// would otherwise put a later position at the scheduled time (a false 10 % speed spread at
/// 2 rad/s from one 9 ms stall).
async fn exchange(
    state: &mut LoopState<'_>,
    io: &mut impl BenchIo,
    mode: Mode,
) -> Result<TickInput, StopReason> {
    if mode != state.mode {
        switch_mode(io, mode, state.wire)
            .await
            .map_err(|detail| StopReason::CommsFault {
                device: Device::Drive,
                detail,
            })?;
        state.mode = mode;
    }
    let Exchanged {
        sent,
        read,
        drive,
        sensor,
    } = io.exchange(state.wire).await;
    let drive = match drive {
        // A value the profile refuses never left: not a comms fault, a command to stop on.
        Err(e) if e.is_limit() => return Err(StopReason::CommandRefused(e.to_string())),
        other => other.map_err(|e| e.to_string()),
    };
    // An output to the drive that does not read back as set (its enable line on the DAQ) is
    // no transient for the sensor's error budget: the drive is not in the state commanded.
    if let Some(Err(e)) = &sensor
        && e.kind() == protocols::ErrorKind::Sequence
    {
        return Err(StopReason::CommsFault {
            device: Device::Drive,
            detail: e.to_string(),
        });
    }
    state.late_read = state.round_trip.late(read - sent);
    let t = 0.5 * (sent + read) - state.t0;
    let sensor = sensor.map(|r| r.map_err(|e| e.to_string()));
    Ok(TickInput { t, drive, sensor })
}

/// Stage 5 (after the judge): the sample as recorded, stamped `t`.
fn sample(state: &LoopState<'_>, tick: &Tick, judged: &Judged, cmd: &Command, t: f64) -> Sample {
    let mut flags = Flags::default();
    for (set, flag) in [
        (cmd.clamped, Flags::CLAMPED),
        (tick.started, Flags::SEGMENT_START),
        (!judged.sensor_fresh, Flags::SENSOR_STALE),
        (state.overran, Flags::OVERRUN),
        (state.late_read, Flags::LATE_READ),
    ] {
        if set {
            flags = flags.with(flag);
        }
    }
    Sample {
        t,
        x: judged.x,
        v: judged.v,
        u_cmd: cmd.value,
        torque_motor: judged.torque_motor,
        torque_sensor: judged.torque_sensor,
        segment: tick.segment as u32,
        flags,
    }
}

/// Stage 6: the lockstep models step on the sample; sample and outputs go into the batch
/// (handed to the recorder when full) and, decimated, to the live stream. A bench with a DAQ
/// stream records its scans instead ([`scans::record`]).
async fn record(state: &mut LoopState<'_>, tick: &Tick, sample: &Sample) -> Result<(), StopReason> {
    let torque_mode = tick.mode == DriveMode::Torque;
    push_row(state, sample, torque_mode, tick.started, state.ts).await
}

/// One recorded sample: the lockstep models step on it over `dt`, then it goes into the batch
/// (handed to the recorder when full) and, decimated, to the live stream.
async fn push_row(
    state: &mut LoopState<'_>,
    sample: &Sample,
    torque_mode: bool,
    started: bool,
    dt: f64,
) -> Result<(), StopReason> {
    let outputs = state.lockstep.step(sample, torque_mode, started, dt);
    state.batch.push(to_store(sample), outputs);
    if let Some((tx, every)) = state.sinks.live
        && state.idx.is_multiple_of(u64::from(*every))
    {
        let _ = tx.send(Frame {
            idx: state.idx,
            sample: *sample,
            outputs: LiveOutputs::from_slice(outputs),
        });
    }
    state.idx += 1;
    if state.batch.samples.len() < BATCH_SAMPLES {
        return Ok(());
    }
    let Some(recorder) = state.sinks.recorder else {
        state.batch.reset(state.idx);
        return Ok(());
    };
    // A written batch back from the recorder: no allocation on the tick path.
    let full = std::mem::replace(&mut state.batch, recorder.batch(state.idx, BATCH_SAMPLES));
    let sent = if state.sinks.wait_for_recorder {
        recorder.send(full).await
    } else {
        recorder.try_send(full)
    };
    match sent {
        Ok(()) => Ok(()),
        Err(Dropped::Full { .. }) => {
            state.dropped += 1;
            Ok(())
        }
        Err(e) => Err(StopReason::RecordingFailed(format!(
            "recording failed: the run store took no more samples ({e})"
        ))),
    }
}

/// Stage 7: progress, latest values and counters, STATUS_HZ times per second of run time.
async fn publish(
    state: &mut LoopState<'_>,
    io: &impl BenchIo,
    tick: &Tick,
    sample: &Sample,
    now: f64,
) {
    state.ticks += 1;
    if !state.ticks.is_multiple_of(state.status_every) {
        return;
    }
    let label = &state.plan.segments[tick.segment].label;
    let (drive_link, sensor_link) = io.link_stats().await;
    let lateness = state.stats.histogram();
    let (mode, idx, overruns, dropped) =
        (state.mode, state.idx, state.stats.overruns, state.dropped);
    state.sinks.status.send_modify(|s| {
        s.t = now;
        s.segment = tick.segment;
        if s.label != *label {
            s.label.clone_from(label);
        }
        s.command = mode.name();
        s.sample = *sample;
        s.samples = idx;
        s.overruns = overruns;
        s.dropped_batches = dropped;
        s.lateness = lateness;
        s.drive_link = drive_link;
        s.sensor_link = sensor_link;
    });
}

/// The drive mode each segment mode runs in, resolved once per run (not at every tick).
#[derive(Clone, Copy, Debug)]
pub struct ModeMap {
    velocity: Mode,
    position: Mode,
}

impl ModeMap {
    /// The daemon closes the outer loops itself (torque mode) when asked to, or when the
    /// drive has no such mode.
    pub fn new(choice: OuterLoopChoice, io: &impl BenchIo) -> ModeMap {
        let native = |m: Mode| {
            if choice == OuterLoopChoice::Daemon || !io.has_mode(m) {
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
    pub fn of_segment(&self, seg: &experiments::Segment) -> Mode {
        if seg.compensator.is_some() {
            Mode::Torque
        } else {
            match seg.mode {
                DriveMode::Torque => Mode::Torque,
                DriveMode::Velocity => self.velocity,
                DriveMode::Position => self.position,
            }
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
pub async fn switch_mode(io: &mut impl BenchIo, mode: Mode, wire: f64) -> Result<(), String> {
    io.command_in(mode, wire)
        .await
        .map_err(|e| format!("{mode} command before the mode switch: {e}"))?;
    io.set_mode(mode)
        .await
        .map_err(|e| format!("set {mode} mode: {e}"))
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
