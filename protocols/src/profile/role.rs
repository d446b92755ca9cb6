//! Semantic roles of signals: the names the rest of the code uses instead of addresses.

use std::fmt;

/// Semantic roles: the rest of the code speaks roles, never addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// CiA 402-style control word (written by sequences).
    ControlWord,
    /// A single enable register or coil (1 = on), for drives without a control word.
    Enable,
    /// Operating mode selector (values in `[modes]`).
    Mode,
    /// Operating mode as the drive reports it.
    ModeDisplay,
    /// Status word (patterns in `[status]`).
    Status,
    /// Active fault / alarm code (0 = none).
    FaultCode,
    /// Torque command, N m.
    TorqueCommand,
    /// Velocity command, rad/s (alias `speed_command`).
    VelocityCommand,
    /// Position command, rad.
    PositionCommand,
    /// Position feedback, rad.
    PositionFeedback,
    /// Velocity feedback, rad/s (alias `speed_feedback`).
    VelocityFeedback,
    /// Motor torque feedback, N m.
    TorqueFeedback,
    /// A torque sensor's measured torque, N m.
    MeasuredTorque,
    /// Communication watchdog timeout, s.
    WatchdogTimeout,
    /// Maximum torque in every mode, N m (CiA 402 6072h); the daemon writes its torque limit
    /// here so the drive's own loops saturate inside it.
    MaxTorque,
    /// A counter the device increments when it publishes new data.
    Heartbeat,
}

pub(super) const ROLES: &[(&str, Role)] = &[
    ("control_word", Role::ControlWord),
    ("enable", Role::Enable),
    ("mode", Role::Mode),
    ("mode_display", Role::ModeDisplay),
    ("status", Role::Status),
    ("fault_code", Role::FaultCode),
    ("torque_command", Role::TorqueCommand),
    ("velocity_command", Role::VelocityCommand),
    ("speed_command", Role::VelocityCommand),
    ("position_command", Role::PositionCommand),
    ("position_feedback", Role::PositionFeedback),
    ("velocity_feedback", Role::VelocityFeedback),
    ("speed_feedback", Role::VelocityFeedback),
    ("torque_feedback", Role::TorqueFeedback),
    ("measured_torque", Role::MeasuredTorque),
    ("watchdog_timeout", Role::WatchdogTimeout),
    ("max_torque", Role::MaxTorque),
    ("heartbeat", Role::Heartbeat),
];

impl Role {
    /// The canonical profile spelling.
    pub fn name(self) -> &'static str {
        ROLES
            .iter()
            .find(|(_, r)| *r == self)
            .map(|(n, _)| *n)
            .unwrap_or("BUG: unnamed role")
    }

    /// Parses a profile spelling (aliases included).
    pub fn parse(s: &str) -> Option<Role> {
        ROLES.iter().find(|(n, _)| *n == s).map(|(_, r)| *r)
    }

    /// The SI unit a signal with this role must resolve to, if the role has one.
    pub fn si_unit(self) -> Option<&'static str> {
        match self {
            Role::PositionCommand | Role::PositionFeedback => Some("rad"),
            Role::VelocityCommand | Role::VelocityFeedback => Some("rad/s"),
            Role::TorqueCommand | Role::TorqueFeedback | Role::MeasuredTorque | Role::MaxTorque => {
                Some("N m")
            }
            Role::WatchdogTimeout => Some("s"),
            _ => None,
        }
    }

    /// True for the roles a run relies on to move the bench or to stop it safely: commands,
    /// enable/mode/control, status and fault, watchdog and torque limit. A profile that maps
    /// one of these to an `unverified` signal needs the operator's explicit consent.
    pub fn is_command_or_safety(self) -> bool {
        matches!(
            self,
            Role::ControlWord
                | Role::Enable
                | Role::Mode
                | Role::Status
                | Role::FaultCode
                | Role::TorqueCommand
                | Role::VelocityCommand
                | Role::PositionCommand
                | Role::WatchdogTimeout
                | Role::MaxTorque
        )
    }

    pub(super) fn must_write(self) -> bool {
        matches!(
            self,
            Role::ControlWord
                | Role::Enable
                | Role::Mode
                | Role::TorqueCommand
                | Role::VelocityCommand
                | Role::PositionCommand
                | Role::WatchdogTimeout
                | Role::MaxTorque
        )
    }

    pub(super) fn must_read(self) -> bool {
        matches!(
            self,
            Role::ModeDisplay
                | Role::Status
                | Role::FaultCode
                | Role::PositionFeedback
                | Role::VelocityFeedback
                | Role::TorqueFeedback
                | Role::MeasuredTorque
                | Role::Heartbeat
        )
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
