//! The validated profile and the queries on it (signals, roles, sequences, modes, limits).

use std::collections::BTreeMap;
use std::time::Duration;

use super::{
    CONNECT_SEQUENCE, Device, Mode, PollGroup, Role, Sequence, Signal, StatusPattern, Step,
    TestVector, Timing, TransportSettings,
};
use crate::error::Error;

/// A validated device profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The file (or label) it was loaded from.
    pub file: String,
    /// `[device]`.
    pub device: Device,
    /// `[transport]`.
    pub transport: TransportSettings,
    /// `[timing]`.
    pub timing: Timing,
    /// `[[signal]]`, in file order.
    pub signals: Vec<Signal>,
    /// `[modes]`: mode → value of the `mode` signal.
    pub modes: BTreeMap<Mode, i64>,
    /// `[status]` patterns.
    pub status: Vec<StatusPattern>,
    /// `[[sequence]]`.
    pub sequences: Vec<Sequence>,
    /// `[[poll_group]]`.
    pub poll_groups: Vec<PollGroup>,
    /// `[[test_vector]]`, all checked at load.
    pub test_vectors: Vec<TestVector>,
}

impl Profile {
    /// The signal called `name`.
    pub fn signal(&self, name: &str) -> Option<&Signal> {
        self.signals.iter().find(|s| s.name == name)
    }

    /// Index of the signal called `name` in [`Profile::signals`].
    pub fn signal_index(&self, name: &str) -> Option<usize> {
        self.signals.iter().position(|s| s.name == name)
    }

    /// The signal with `role`.
    pub fn role(&self, role: Role) -> Option<&Signal> {
        self.signals.iter().find(|s| s.role == Some(role))
    }

    /// The signal with `role`, or [`Error::Unsupported`].
    pub fn require_role(&self, role: Role) -> Result<&Signal, Error> {
        self.role(role)
            .ok_or_else(|| self.unsupported(format!("role '{role}'")))
    }

    /// The sequence called `name`.
    pub fn sequence(&self, name: &str) -> Option<&Sequence> {
        self.sequences.iter().find(|s| s.name == name)
    }

    /// The `connect` sequence, if any: settings written once when a client connects (watchdog
    /// fault treatment, "don't store in EEPROM", ...), each read back by a later `expect`
    /// step (checked at load). The client runs it before anything else.
    pub fn connect_sequence(&self) -> Option<&Sequence> {
        self.sequence(CONNECT_SEQUENCE)
    }

    /// The highest rate at which the device may be written (`timing.max_write_rate_hz`).
    pub fn max_write_rate_hz(&self) -> Option<f64> {
        self.timing.max_write_rate_hz
    }

    /// Refuses a plan that would write the device at `rate_hz` when the profile limits writes
    /// to less ([`Error::WriteRate`], an [`crate::ErrorKind::Limit`]). A plan check calls it
    /// with its command rate before anything moves.
    pub fn check_write_rate(&self, rate_hz: f64) -> Result<(), Error> {
        match self.timing.max_write_rate_hz {
            Some(max) if !(rate_hz.is_finite() && rate_hz <= max * (1.0 + 1e-9)) => {
                Err(Error::WriteRate {
                    profile: self.device.name.clone(),
                    rate_hz,
                    max_hz: max,
                })
            }
            _ => Ok(()),
        }
    }

    /// Signals marked `unverified` that a run relies on: those with a command or safety role
    /// ([`Role::is_command_or_safety`]) and those written by the `connect`, `enable`,
    /// `disable`, `fault_reset` or `mode_*` sequences or expected by them.
    pub fn unverified_critical_signals(&self) -> Vec<&Signal> {
        let in_critical_sequence = |name: &str| {
            self.sequences
                .iter()
                .filter(|q| {
                    [
                        CONNECT_SEQUENCE,
                        "enable",
                        "disable",
                        "fault_reset",
                        "after_command",
                    ]
                    .contains(&q.name.as_str())
                        || q.name.starts_with("mode_")
                })
                .flat_map(|q| q.steps.iter())
                .any(|st| match st {
                    Step::Write { signal, .. } | Step::Expect { signal, .. } => signal == name,
                    Step::Wait(_) => false,
                })
        };
        self.signals
            .iter()
            .filter(|s| {
                s.unverified
                    && (s.role.is_some_and(Role::is_command_or_safety)
                        || in_critical_sequence(&s.name))
            })
            .collect()
    }

    /// The status pattern called `name`.
    pub fn status_pattern(&self, name: &str) -> Option<&StatusPattern> {
        self.status.iter().find(|p| p.name == name)
    }

    /// The mode whose `[modes]` value is `value`.
    pub fn mode_from_value(&self, value: i64) -> Option<Mode> {
        self.modes
            .iter()
            .find(|(_, v)| **v == value)
            .map(|(m, _)| *m)
    }

    /// Modes the drive can be put in (by `[modes]` or a `mode_<name>` sequence) and has a
    /// command signal for.
    pub fn supported_modes(&self) -> Vec<Mode> {
        Mode::ALL
            .into_iter()
            .filter(|m| {
                (self.modes.contains_key(m) || self.sequence(&format!("mode_{m}")).is_some())
                    && self.role(m.command_role()).is_some()
            })
            .collect()
    }

    /// The gap to keep between frames with the profile's own serial settings.
    pub fn inter_frame_gap(&self) -> Duration {
        self.timing.gap(self.transport.serial.as_ref())
    }

    pub(crate) fn unsupported(&self, what: String) -> Error {
        Error::Unsupported {
            profile: self.device.name.clone(),
            what,
        }
    }
}
