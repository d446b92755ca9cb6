//! A run's loop before its first tick and after its last, on any bench: [`begin`] builds the
//! models and brings the drive up; [`finish`] takes it to its safe state and hands the last
//! batch and the log to the recorder. The shells (real time, simulated time) only differ in
//! how they pace the ticks in between.

use super::io::BenchIo;
use super::lockstep::Lockstep;
use super::safe_state::{SafeState, safe_state, safe_state_from};
use super::setup::{LoopReport, LoopSetup};
use super::stop::{Outcome, StopReason};
use super::tick::{LoopState, ModeMap, Parts, Sinks, switch_mode};
use super::timing::PeriodStats;
use experiments::Plan;
use friction::compensation::Compensator;
use protocols::Mode;
use run_store::{Batch, Event, RunStatus, TimingStats};
use std::time::Duration;

/// Log lines of a run: (run time, text).
pub type Log = Vec<(Option<f64>, String)>;

/// How long the safe state may take to be confirmed.
pub fn confirm_deadline(setup: &LoopSetup) -> Duration {
    setup.loaded.confirm_deadline(setup.plan.period_s())
}

/// Builds the models and compensators, reads the drive's start position, sets its first
/// mode with the neutral command and powers it on. On failure the run ends here (after the safe state once the drive may have
/// moved).
pub async fn begin<'a>(
    setup: &'a LoopSetup,
    io: &mut impl BenchIo,
    wait_for_recorder: bool,
) -> Result<LoopState<'a>, LoopReport> {
    let cfg = &setup.loaded.config;
    let lockstep = Lockstep::new(&setup.models, cfg.lockstep.plant_inertia_kg_m2)
        .map_err(|e| setup_failed(format!("lockstep models: {e}")));
    let compensators: Result<Vec<Compensator>, _> =
        setup.compensators.iter().map(Compensator::build).collect();
    let compensators = compensators.map_err(|e| setup_failed(format!("friction compensator: {e}")));
    let parts = match (lockstep, compensators) {
        (Ok(lockstep), Ok(compensators)) => Parts {
            lockstep,
            compensators,
        },
        (Err(e), _) | (_, Err(e)) => return Err(failed_early(e, None)),
    };
    let modes = ModeMap::new(cfg.outer_loop, io);
    let start = match prepare(io, &setup.plan, &setup.skip, &modes).await {
        Ok(start) => start,
        Err(e) => {
            let safe = safe_state(io, None, confirm_deadline(setup)).await;
            setup.control.safe_reached(safe.clone());
            let mut report = failed_early(e, safe.confirmed_s());
            report.log.push((None, safe.log_line(&setup.loaded)));
            return Err(report);
        }
    };
    let sinks = Sinks {
        recorder: setup.recorder.as_ref(),
        wait_for_recorder,
        status: &setup.status,
        live: setup.live.as_ref(),
    };
    let state = LoopState::new(
        &setup.loaded,
        &setup.plan,
        &setup.control,
        sinks,
        parts,
        modes,
        start,
    )
    .skipping(setup.skip.clone());
    setup.status.send_modify(|s| s.phase = "running");
    Ok(state)
}

fn setup_failed(text: String) -> StopReason {
    StopReason::Setup { link: false, text }
}

/// Start position, first mode with its neutral command, power on.
async fn prepare(
    io: &mut impl BenchIo,
    plan: &Plan,
    skip: &[usize],
    modes: &ModeMap,
) -> Result<(f64, Mode), StopReason> {
    let drive = |what: &str, e: protocols::Error| StopReason::Setup {
        link: e.is_link_error(),
        text: format!("drive: {what}{e}"),
    };
    if let Some(e) = missing_mode(io, plan, skip, modes) {
        return Err(setup_failed(e));
    }
    let fb = io.read_feedback().await.map_err(|e| drive("", e))?;
    let x0 = fb.position_rad.ok_or_else(|| {
        setup_failed("the drive profile has no position feedback (role position_feedback)".into())
    })?;
    let first = (0..plan.segments.len())
        .find(|i| !skip.contains(i))
        .map(|i| modes.of_segment(&plan.segments[i]))
        .unwrap_or(Mode::Torque);
    let hold = if first == Mode::Position { x0 } else { 0.0 };
    switch_mode(io, first, hold)
        .await
        .map_err(|e| setup_failed(format!("drive: {e}")))?;
    io.enable().await.map_err(|e| drive("enable: ", e))?;
    Ok((x0, first))
}

/// The first segment to run in a mode the drive does not have (a drive on the DAQ's analog
/// velocity input has velocity only: no torque, position or compensated segment), before
/// anything is enabled.
fn missing_mode(io: &impl BenchIo, plan: &Plan, skip: &[usize], modes: &ModeMap) -> Option<String> {
    plan.segments
        .iter()
        .enumerate()
        .filter(|(i, _)| !skip.contains(i))
        .map(|(_, seg)| (seg, modes.of_segment(seg)))
        .find(|(_, m)| !io.has_mode(*m))
        .map(|(seg, m)| {
            format!(
                "segment '{}' runs in the drive's {m} mode, which this bench does not have \
                 (a drive on [daq.drive_command] mode = \"velocity\" takes speed only)",
                seg.label
            )
        })
}

/// The report of a run that ended before its first tick.
pub fn failed_early(reason: StopReason, safe_state_s: Option<f64>) -> LoopReport {
    let log = vec![(None, reason.to_string())];
    LoopReport {
        outcome: reason.into(),
        stats: PeriodStats::default().stats(),
        ticks: 0,
        elapsed_s: 0.0,
        safe_state_s,
        log,
        notes: Vec::new(),
        dropped_batches: 0,
        zeros: Vec::new(),
        daq_stream: None,
    }
}

/// After the last tick (at run time `t_end`, `elapsed_s` after the first): safe state first,
/// bookkeeping after.
pub async fn finish(
    setup: &LoopSetup,
    mut state: LoopState<'_>,
    io: &mut impl BenchIo,
    outcome: Outcome,
    t_end: f64,
    elapsed_s: f64,
) -> LoopReport {
    setup.status.send_modify(|s| s.phase = "stopping");
    // Stopped on purpose or by the plan, the drive read enabled a tick ago; after a fault it
    // may be off already.
    let maybe_off = outcome.status() == RunStatus::Failed;
    let last = Some((state.mode, state.wire));
    let safe = safe_state_from(io, last, confirm_deadline(setup), maybe_off).await;
    setup.control.safe_reached(safe.clone());
    let t_end = Some(t_end);
    let mut log = std::mem::take(&mut state.log);
    if outcome != Outcome::Completed || safe.confirmed_s().is_none() {
        log.push((t_end, safe.log_line(&setup.loaded)));
    }
    let mut batch = std::mem::replace(&mut state.batch, Batch::with_capacity(0, 0, 0));
    // A pause's lines were recorded as they happened.
    batch.events.extend(
        log.iter()
            .skip(state.flushed)
            .map(|(t, reason)| Event::Log {
                t: *t,
                reason: reason.clone(),
            }),
    );
    batch.events.push(Event::Timing(state.stats.stats()));
    // The outcome's reason reaches the log through the recorder's `Finish`.
    if let Some(r) = outcome.reason() {
        log.insert(0, (t_end, r.to_string()));
    }
    let mut dropped = state.dropped;
    if let Some(r) = &setup.recorder
        && r.send(batch).await.is_err()
    {
        dropped += 1;
    }
    let (samples, overruns) = (state.idx, state.stats.overruns);
    setup.status.send_modify(|s| {
        s.phase = "done";
        s.samples = samples;
        s.overruns = overruns;
        s.dropped_batches = dropped;
    });
    LoopReport {
        outcome,
        stats: TimingStats {
            tick_work_p50_us: state.work.quantile(0.5),
            ..state.stats.stats()
        },
        ticks: state.stats.ticks(),
        elapsed_s,
        safe_state_s: safe.confirmed_s(),
        log,
        notes: Vec::new(),
        dropped_batches: dropped,
        zeros: Vec::new(),
        daq_stream: None,
    }
}

/// The loop panicked: the safe state on `io` (a fresh link, or the reason there is none), the
/// run failed with the panic's message.
pub async fn after_panic(
    setup: &LoopSetup,
    message: String,
    io: Result<&mut impl BenchIo, StopReason>,
) -> LoopReport {
    let reason = StopReason::Panic(message);
    let mut log = vec![(None, reason.to_string())];
    let safe = match io {
        Ok(io) => safe_state(io, None, confirm_deadline(setup)).await,
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
        outcome: reason.into(),
        stats: PeriodStats::default().stats(),
        ticks: 0,
        elapsed_s: 0.0,
        safe_state_s: safe.confirmed_s(),
        log,
        notes: Vec::new(),
        dropped_batches: 0,
        zeros: Vec::new(),
        daq_stream: None,
    }
}

/// The text of a caught panic.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
