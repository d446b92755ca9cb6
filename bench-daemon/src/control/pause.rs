//! A run paused on a `[[suspend]]` condition, on any bench: at a segment's start the loop reads
//! the conditions (`tick::suspend_check`); when one holds, the shell calls [`pause`]: the drive
//! goes to its confirmed safe state, the conditions are read every [`POLL_S`] of bench time
//! until they have been clear for their hold time, then the drive comes back up and the
//! segment is measured from its start. Abort, stop, e-stop, a drive fault, a limit or a pause
//! beyond its `suspended_timeout_s` end the run instead (the shell's usual exit). The decisions
//! themselves are [`super::suspend`]'s.

use super::io::BenchIo;
use super::lifecycle::confirm_deadline;
use super::request::Request;
use super::safe_state::safe_state_from;
use super::setup::LoopSetup;
use super::stop::{Device, StopReason};
use super::suspend::{Decision, POLL_S};
use super::tick::suspend_check::readings;
use super::tick::{BATCH_SAMPLES, LoopState, switch_mode};
use protocols::Mode;
use run_store::Event;

/// The pause before segment `state.pause_at`: `Ok` once the run may go on (the drive enabled
/// again, the segment to be measured from its start), else why the run ends. `wait(io, s)`
/// lets `s` seconds of bench time pass (a sleep in real time, the plant stepped in simulated
/// time).
pub(super) async fn pause<I: BenchIo>(
    setup: &LoopSetup,
    state: &mut LoopState<'_>,
    io: &mut I,
    wait: &mut impl FnMut(&mut I, f64),
) -> Result<(), StopReason> {
    let Some(segment) = state.pause_at.take() else {
        return Ok(());
    };
    setup.status.send_modify(|s| s.phase = "suspended");
    let safe = safe_state_from(
        io,
        Some((state.mode, state.wire)),
        confirm_deadline(setup),
        false,
    )
    .await;
    setup.control.safe_reached(safe.clone());
    let now = |io: &I, state: &LoopState<'_>| Some(io.clock_s() - state.t0);
    state
        .log
        .push((now(io, state), safe.log_line(&setup.loaded)));
    flush_log(state).await;
    if safe.confirmed_s().is_none() {
        return Err(StopReason::Setup {
            link: true,
            text: "suspended: the drive's safe state was not confirmed".into(),
        });
    }
    let paused_s = wait_clear(setup, state, io, wait).await?;
    resume_drive(state, io, segment).await?;
    let label = &state.plan.segments[segment].label;
    state.log.push((
        now(io, state),
        format!(
            "continued after {paused_s:.1} s suspended: the conditions read clear; '{label}' \
             is measured from its start"
        ),
    ));
    flush_log(state).await;
    setup.status.send_modify(|s| s.phase = "running");
    Ok(())
}

/// Waits, drive off, until the conditions have read clear for their hold time: how long the
/// run was paused \[s\].
async fn wait_clear<I: BenchIo>(
    setup: &LoopSetup,
    state: &mut LoopState<'_>,
    io: &mut I,
    wait: &mut impl FnMut(&mut I, f64),
) -> Result<f64, StopReason> {
    loop {
        wait(io, POLL_S);
        if let Some(Request::Abort(reason) | Request::Stop(reason)) = setup.control.pending() {
            return Err(reason);
        }
        let fb = io
            .read_feedback()
            .await
            .map_err(|e| StopReason::CommsFault {
                device: Device::Drive,
                detail: e.to_string(),
            })?;
        if fb.fault == Some(true) {
            return Err(StopReason::DriveFault {
                code: fb.fault_code.unwrap_or(0),
            });
        }
        let x = fb.position_rad.unwrap_or(state.x0) - state.x0;
        let v = fb.velocity_rad_s.unwrap_or(0.0);
        if let Some(breach) = state.guard.check(x, v, fb.torque_nm.unwrap_or(f64::NAN)) {
            return Err(StopReason::LimitBreach(breach));
        }
        let values = readings(state.rules, io).await;
        match state.suspenders.decide(state.rules, &values, io.clock_s()) {
            Decision::Continue { paused_s } => return Ok(paused_s),
            Decision::Timeout { rule, paused_s } => {
                let r = &state.rules[rule];
                return Err(StopReason::SuspendedTimeout {
                    condition: r.describe(),
                    paused_s,
                    limit_s: r.suspended_timeout_s,
                });
            }
            Decision::Wait | Decision::Run | Decision::Pause { .. } => {}
        }
    }
}

/// The drive up again for `segment`: its mode with the neutral command (holding the present
/// position in position mode), enabled; the sequencer restarts the segment.
async fn resume_drive(
    state: &mut LoopState<'_>,
    io: &mut impl BenchIo,
    segment: usize,
) -> Result<(), StopReason> {
    let setup_err = |text: String| StopReason::Setup { link: true, text };
    let fb = io
        .read_feedback()
        .await
        .map_err(|e| setup_err(format!("continuing after a pause: drive: {e}")))?;
    let mode = state.modes.of_segment(&state.plan.segments[segment]);
    let hold = match (mode, fb.position_rad) {
        (Mode::Position, Some(x)) => x,
        _ => 0.0,
    };
    switch_mode(io, mode, hold)
        .await
        .map_err(|e| setup_err(format!("continuing after a pause: drive: {e}")))?;
    io.enable()
        .await
        .map_err(|e| setup_err(format!("continuing after a pause: drive: enable: {e}")))?;
    (state.mode, state.wire) = (mode, hold);
    state.restart_at(segment);
    Ok(())
}

/// Hands the log lines not yet recorded to the recorder now, so a pause is in the run's log
/// while it lasts (`bench runs log`, the run page).
async fn flush_log(state: &mut LoopState<'_>) {
    let fresh = &state.log[state.flushed..];
    state
        .batch
        .events
        .extend(fresh.iter().map(|(t, reason)| Event::Log {
            t: *t,
            reason: reason.clone(),
        }));
    state.flushed = state.log.len();
    let Some(recorder) = state.sinks.recorder else {
        return;
    };
    let batch = std::mem::replace(&mut state.batch, recorder.batch(state.idx, BATCH_SAMPLES));
    if recorder.send(batch).await.is_err() {
        state.dropped += 1;
    }
}
