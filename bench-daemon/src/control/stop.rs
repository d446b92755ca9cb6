//! How a run ended, typed: every way the loop can stop is one [`StopReason`] with what it
//! knows (the limit crossed, the drive's fault code, the device that fell silent), turned into
//! a stable [`ReasonCode`] and the operator's text only at the edge (run store, API, CLI).

use super::safety::Breach;
use run_store::{Reason, ReasonCode, RunStatus};
use serde::ser::SerializeMap;
use std::fmt;

/// A device of the bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// The servo drive.
    Drive,
    /// The torque sensor.
    TorqueSensor,
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Device::Drive => "drive",
            Device::TorqueSensor => "torque sensor",
        })
    }
}

/// Why a run stopped before its plan ended.
#[derive(Clone, Debug, PartialEq)]
pub enum StopReason {
    /// A measured value beyond its limit (+ margin): the sample is recorded, then the run stops.
    LimitBreach(Breach),
    /// A command the drive profile refused before it was written.
    CommandRefused(String),
    /// The latched e-stop, with the operator's reason.
    EStop(String),
    /// The operator asked for the end of the run after the current segment.
    OperatorStop(String),
    /// The operator aborted the run.
    OperatorAbort(String),
    /// A signal to the process (`SIGINT`, `SIGTERM`, `SIGHUP`).
    DaemonSignal(&'static str),
    /// The service is shutting down (on a signal) with a run on the bench.
    DaemonShutdown,
    /// The drive reported a fault during the run.
    DriveFault {
        /// Its fault code (0 when it reports none).
        code: u64,
    },
    /// The drive had a fault latched when the run started (an operator clears it).
    LatchedDriveFault {
        /// Its fault code.
        code: u64,
    },
    /// The drive left operation enabled without reporting a fault.
    DriveDisabled {
        /// Its status word.
        status: u64,
    },
    /// A device stopped answering within its error budget.
    CommsFault {
        /// Which one.
        device: Device,
        /// The last failure.
        detail: String,
    },
    /// A device could not be reached when the run started.
    NoConnection {
        /// Which one.
        device: Device,
        /// Why.
        detail: String,
    },
    /// The torque sensor reported a fault.
    SensorFault {
        /// Its status word.
        status: u64,
    },
    /// No new torque-sensor sample for this long \[s\].
    SensorStall {
        /// Time since the last new sample.
        after_s: f64,
    },
    /// No new drive heartbeat for this long \[s\].
    DriveStall {
        /// Time since the last new heartbeat.
        after_s: f64,
    },
    /// The run could not be prepared: the text says what (drive settings read back wrong, a
    /// profile without position feedback, models or compensators that do not build).
    Setup {
        /// A Modbus transaction failed (a comms fault), rather than a rule.
        link: bool,
        /// What failed.
        text: String,
    },
    /// The run store took no more samples.
    RecordingFailed(String),
    /// A panic in the control loop, with its message.
    Panic(String),
    /// A `[[suspend]]` condition kept the run paused longer than its limit.
    SuspendedTimeout {
        /// The condition, in words (`drive.temperature > 60`).
        condition: String,
        /// How long the run was paused \[s\].
        paused_s: f64,
        /// The limit (`suspended_timeout_s`) \[s\].
        limit_s: f64,
    },
}

impl StopReason {
    /// The stable code programs decide on.
    pub fn code(&self) -> ReasonCode {
        match self {
            StopReason::LimitBreach(_) => ReasonCode::LimitBreach,
            StopReason::CommandRefused(_) => ReasonCode::CommandRefused,
            StopReason::EStop(_) => ReasonCode::Estop,
            StopReason::OperatorStop(_) => ReasonCode::OperatorStop,
            StopReason::OperatorAbort(_) => ReasonCode::OperatorAbort,
            StopReason::DaemonSignal(_) | StopReason::DaemonShutdown => ReasonCode::DaemonSignal,
            StopReason::DriveFault { .. } | StopReason::LatchedDriveFault { .. } => {
                ReasonCode::DriveFault
            }
            StopReason::DriveDisabled { .. } => ReasonCode::DriveDisabled,
            StopReason::CommsFault { .. } | StopReason::NoConnection { .. } => {
                ReasonCode::CommsFault
            }
            StopReason::Setup { link: true, .. } => ReasonCode::CommsFault,
            StopReason::Setup { link: false, .. } => ReasonCode::SetupFailed,
            StopReason::SensorFault { .. } => ReasonCode::SensorFault,
            StopReason::SensorStall { .. } => ReasonCode::SensorStall,
            StopReason::DriveStall { .. } => ReasonCode::DriveStall,
            StopReason::RecordingFailed(_) => ReasonCode::RecordingFailed,
            StopReason::Panic(_) => ReasonCode::Panic,
            StopReason::SuspendedTimeout { .. } => ReasonCode::SuspendedTimeout,
        }
    }

    /// The status a run stopped for this reason ends in: `aborted` when stopped on purpose or
    /// by a limit, `failed` on a fault.
    pub fn status(&self) -> RunStatus {
        match self {
            StopReason::LimitBreach(_)
            | StopReason::CommandRefused(_)
            | StopReason::EStop(_)
            | StopReason::OperatorStop(_)
            | StopReason::OperatorAbort(_)
            | StopReason::DaemonSignal(_)
            | StopReason::DaemonShutdown
            | StopReason::SuspendedTimeout { .. } => RunStatus::Aborted,
            _ => RunStatus::Failed,
        }
    }

    /// The reason as the run store keeps it.
    pub fn stored(&self) -> Reason {
        Reason::new(self.code(), self.to_string())
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::LimitBreach(b) => write!(f, "{b}"),
            StopReason::CommandRefused(e) => write!(f, "command refused before the write: {e}"),
            StopReason::EStop(why) => write!(f, "e-stop: {why}"),
            StopReason::OperatorStop(text)
            | StopReason::OperatorAbort(text)
            | StopReason::RecordingFailed(text) => f.write_str(text),
            StopReason::DaemonSignal(signal) => f.write_str(signal),
            StopReason::DaemonShutdown => f.write_str("the daemon is shutting down"),
            StopReason::DriveFault { code } => write!(f, "drive fault (code {code:#06x})"),
            StopReason::LatchedDriveFault { code } => write!(
                f,
                "the drive has a latched fault (code {code:#06x}): an operator clears it after \
                 checking the bench (`bench fault-reset`, POST /api/faults/reset or the \
                 dashboard); a run never clears it"
            ),
            StopReason::DriveDisabled { status } => {
                write!(f, "the drive left operation enabled (status {status:#06x})")
            }
            StopReason::CommsFault { device, detail } => {
                write!(f, "comms fault: {device}: {detail}")
            }
            StopReason::NoConnection { device, detail } => {
                write!(f, "cannot connect to the {device}: {detail}")
            }
            StopReason::SensorFault { status } => {
                write!(f, "torque sensor fault (status {status:#06x})")
            }
            StopReason::SensorStall { after_s } => write!(
                f,
                "torque sensor stall: no new sample for {:.0} ms",
                after_s * 1e3
            ),
            StopReason::DriveStall { after_s } => write!(
                f,
                "drive stall: no new feedback (heartbeat unchanged) for {:.0} ms",
                after_s * 1e3
            ),
            StopReason::Setup { text, .. } => f.write_str(text),
            StopReason::Panic(message) => write!(f, "panic in the control loop: {message}"),
            StopReason::SuspendedTimeout {
                condition,
                paused_s,
                limit_s,
            } => write!(
                f,
                "suspended_timeout: paused {paused_s:.1} s on {condition}, longer than \
                 suspended_timeout_s = {limit_s}"
            ),
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The plan ran to its end.
    Completed,
    /// Stopped before its end, for this reason.
    Stopped(StopReason),
}

impl Outcome {
    /// The run's final status.
    pub fn status(&self) -> RunStatus {
        match self {
            Outcome::Completed => RunStatus::Completed,
            Outcome::Stopped(r) => r.status(),
        }
    }

    /// Why it stopped, if it did.
    pub fn reason(&self) -> Option<&StopReason> {
        match self {
            Outcome::Completed => None,
            Outcome::Stopped(r) => Some(r),
        }
    }
}

impl From<StopReason> for Outcome {
    fn from(r: StopReason) -> Outcome {
        Outcome::Stopped(r)
    }
}

/// `{"status": "completed"}`, or `{"status": "aborted"|"failed", "reason": TEXT,
/// "reason_code": CODE}`.
impl serde::Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let reason = self.reason();
        let mut map = s.serialize_map(Some(if reason.is_some() { 3 } else { 1 }))?;
        map.serialize_entry("status", self.status().as_str())?;
        if let Some(r) = reason {
            map.serialize_entry("reason", &r.to_string())?;
            map.serialize_entry("reason_code", r.code().as_str())?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reason_keeps_its_text_and_gives_its_code_and_status() {
        let cases = [
            (
                StopReason::DriveFault { code: 0x2310 },
                "drive fault (code 0x2310)",
                "drive_fault",
                "failed",
            ),
            (
                StopReason::CommsFault {
                    device: Device::TorqueSensor,
                    detail: "timeout".into(),
                },
                "comms fault: torque sensor: timeout",
                "comms_fault",
                "failed",
            ),
            (
                StopReason::DaemonSignal("SIGINT"),
                "SIGINT",
                "daemon_signal",
                "aborted",
            ),
            (
                StopReason::EStop("operator".into()),
                "e-stop: operator",
                "estop",
                "aborted",
            ),
            (
                StopReason::SensorStall { after_s: 0.051 },
                "torque sensor stall: no new sample for 51 ms",
                "sensor_stall",
                "failed",
            ),
        ];
        for (reason, text, code, status) in cases {
            assert_eq!(reason.to_string(), text);
            assert_eq!(reason.code().as_str(), code);
            assert_eq!(reason.status().as_str(), status);
            let json = serde_json::to_value(Outcome::Stopped(reason)).unwrap();
            assert_eq!(
                json,
                serde_json::json!({"status": status, "reason": text, "reason_code": code})
            );
        }
        let done = serde_json::to_value(Outcome::Completed).unwrap();
        assert_eq!(done, serde_json::json!({"status": "completed"}));
    }

    #[test]
    fn a_latched_fault_pauses_as_a_drive_fault_does() {
        let latched = StopReason::LatchedDriveFault { code: 0x8130 };
        assert_eq!(latched.code(), ReasonCode::DriveFault);
        assert!(
            latched
                .to_string()
                .starts_with("the drive has a latched fault (code 0x8130)")
        );
    }
}
