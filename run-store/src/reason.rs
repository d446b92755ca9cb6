//! Why a run ended other than completed: a stable code that programs decide on (the scheduler
//! pauses its queue on a drive fault, `/metrics` counts stops by code, the dashboard points an
//! operator at the fault reset), and the text a person reads beside it. Stored as the code's
//! snake_case name in `runs.reason_code` next to `runs.status_reason`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The stable code of a stop reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// A measured position, velocity or torque beyond its limit (+ margin).
    LimitBreach,
    /// A command the drive profile refused before it was written.
    CommandRefused,
    /// The latched e-stop.
    Estop,
    /// The operator asked the run to end after its segment.
    OperatorStop,
    /// The operator aborted the run.
    OperatorAbort,
    /// A queued run the operator removed before it started.
    RemovedFromQueue,
    /// SIGINT, SIGTERM or SIGHUP to the process running the loop, or its shutdown.
    DaemonSignal,
    /// The drive reported a fault (during the run, or latched when it started).
    DriveFault,
    /// The drive left operation enabled without reporting a fault.
    DriveDisabled,
    /// A device stopped answering, or could not be reached.
    CommsFault,
    /// The torque sensor reported a fault.
    SensorFault,
    /// No new torque-sensor sample for longer than allowed.
    SensorStall,
    /// No new drive feedback (heartbeat) for longer than allowed.
    DriveStall,
    /// The run could not be prepared (drive settings, profile, models, compensators).
    SetupFailed,
    /// The scheduler could not start the run (or put it back into the queue).
    NotStarted,
    /// The run store took no more samples.
    RecordingFailed,
    /// A panic in the control loop.
    Panic,
    /// The process recording the run ended without closing it.
    Interrupted,
    /// A `[[suspend]]` condition paused the run longer than its `suspended_timeout_s`.
    SuspendedTimeout,
    /// A reason from an older store that matches no code.
    Other,
}

impl ReasonCode {
    /// Every code.
    pub const ALL: [ReasonCode; 20] = [
        ReasonCode::LimitBreach,
        ReasonCode::CommandRefused,
        ReasonCode::Estop,
        ReasonCode::OperatorStop,
        ReasonCode::OperatorAbort,
        ReasonCode::RemovedFromQueue,
        ReasonCode::DaemonSignal,
        ReasonCode::DriveFault,
        ReasonCode::DriveDisabled,
        ReasonCode::CommsFault,
        ReasonCode::SensorFault,
        ReasonCode::SensorStall,
        ReasonCode::DriveStall,
        ReasonCode::SetupFailed,
        ReasonCode::NotStarted,
        ReasonCode::RecordingFailed,
        ReasonCode::Panic,
        ReasonCode::Interrupted,
        ReasonCode::SuspendedTimeout,
        ReasonCode::Other,
    ];

    /// The stored name (`limit_breach`, `drive_fault`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::LimitBreach => "limit_breach",
            ReasonCode::CommandRefused => "command_refused",
            ReasonCode::Estop => "estop",
            ReasonCode::OperatorStop => "operator_stop",
            ReasonCode::OperatorAbort => "operator_abort",
            ReasonCode::RemovedFromQueue => "removed_from_queue",
            ReasonCode::DaemonSignal => "daemon_signal",
            ReasonCode::DriveFault => "drive_fault",
            ReasonCode::DriveDisabled => "drive_disabled",
            ReasonCode::CommsFault => "comms_fault",
            ReasonCode::SensorFault => "sensor_fault",
            ReasonCode::SensorStall => "sensor_stall",
            ReasonCode::DriveStall => "drive_stall",
            ReasonCode::SetupFailed => "setup_failed",
            ReasonCode::NotStarted => "not_started",
            ReasonCode::RecordingFailed => "recording_failed",
            ReasonCode::Panic => "panic",
            ReasonCode::Interrupted => "interrupted",
            ReasonCode::SuspendedTimeout => "suspended_timeout",
            ReasonCode::Other => "other",
        }
    }

    /// The code of a stored name; a name this version does not know reads as
    /// [`ReasonCode::Other`] (a newer daemon may have written it).
    pub fn from_stored(s: &str) -> ReasonCode {
        s.parse().unwrap_or(ReasonCode::Other)
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ReasonCode {
    type Err = String;

    fn from_str(s: &str) -> Result<ReasonCode, String> {
        ReasonCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<_> = ReasonCode::ALL.iter().map(|c| c.as_str()).collect();
                format!("unknown reason code '{s}' (known: {})", known.join(", "))
            })
    }
}

/// A stop reason as stored: its code and its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    /// What programs decide on.
    pub code: ReasonCode,
    /// What a person reads.
    pub text: String,
}

impl Reason {
    /// A reason of `code` reading `text`.
    pub fn new(code: ReasonCode, text: impl Into<String>) -> Reason {
        Reason {
            code,
            text: text.into(),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_from_its_stored_name() {
        for c in ReasonCode::ALL {
            assert_eq!(c.as_str().parse(), Ok(c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert_eq!(
            ReasonCode::from_stored("from_the_future"),
            ReasonCode::Other
        );
        assert!(
            "nope"
                .parse::<ReasonCode>()
                .unwrap_err()
                .contains("drive_fault")
        );
    }
}
