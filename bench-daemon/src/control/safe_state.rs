//! The safe state every stop path ends in: the neutral command of the mode in force, disable,
//! then the drive's status read back until it confirms, on the bench's own clock.

use super::io::BenchIo;
use crate::config::{Loaded, WatchdogRule};
use protocols::Mode;
use std::time::Duration;

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
    pub(super) fn unconfirmed(after_s: f64, what: String) -> SafeState {
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
    io: &mut impl BenchIo,
    last: Option<(Mode, f64)>,
    deadline: Duration,
) -> SafeState {
    safe_state_from(io, last, deadline, true).await
}

/// [`safe_state`]; `maybe_off` reads the status first, so a drive already off (tripped, or
/// stopped by its watchdog) is confirmed at once instead of waiting for a disable sequence's
/// state it will not reach. A loop that just read the drive enabled skips that read.
pub(super) async fn safe_state_from(
    io: &mut impl BenchIo,
    last: Option<(Mode, f64)>,
    deadline: Duration,
    maybe_off: bool,
) -> SafeState {
    let t0 = io.clock_s();
    let deadline_s = deadline.as_secs_f64();
    match try_safe_state(io, last, t0, deadline_s, maybe_off).await {
        Ok(s) => s,
        // The link reopens itself before its next request after a failure: the second try
        // runs on a fresh connection.
        Err(what) => {
            let again = io.clock_s() - t0 + deadline_s;
            let second = try_safe_state(io, last, t0, again, true).await;
            let after_s = io.clock_s() - t0;
            match second {
                Ok(s) => s,
                Err(again) if again == what => SafeState::unconfirmed(
                    after_s,
                    format!("{what} (the same again on a fresh link)"),
                ),
                Err(again) => {
                    SafeState::unconfirmed(after_s, format!("{what}; on a fresh link: {again}"))
                }
            }
        }
    }
}

async fn try_safe_state(
    io: &mut impl BenchIo,
    last: Option<(Mode, f64)>,
    t0: f64,
    deadline_s: f64,
    maybe_off: bool,
) -> Result<SafeState, String> {
    let mut problems = Vec::new();
    // A DAQ's DAC and enable line on the drive first: they command it beside the Modbus link.
    let mut outputs = io.make_outputs_safe().await;
    if maybe_off
        && outputs.is_ok()
        && let Ok(fb) = io.read_feedback().await
        && fb.enabled == Some(false)
    {
        return Ok(SafeState::Confirmed {
            after_s: io.clock_s() - t0,
            status: fb.status,
        });
    }
    if let Some((mode, wire)) = last {
        let neutral = if mode == Mode::Position { wire } else { 0.0 };
        if let Err(e) = io.command_in(mode, neutral).await {
            problems.push(format!("neutral {mode} command: {e}"));
        }
    }
    loop {
        if let Err(e) = &outputs {
            problems.push(format!("DAQ outputs: {e}"));
            outputs = io.make_outputs_safe().await;
        }
        if let Err(e) = io.disable().await {
            problems.push(format!("disable: {e}"));
        }
        match io.read_feedback().await {
            Ok(fb) if fb.enabled == Some(false) && outputs.is_err() => {
                problems.push("drive disabled, DAQ outputs not confirmed".into())
            }
            Ok(fb) if fb.enabled == Some(false) => {
                return Ok(SafeState::Confirmed {
                    after_s: io.clock_s() - t0,
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
        if io.clock_s() - t0 >= deadline_s {
            problems.dedup();
            return Err(problems.join("; "));
        }
    }
}
