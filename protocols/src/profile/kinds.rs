//! The small enums of a register map: Modbus table, access, device kind, protocol, drive mode.

use std::fmt;

use super::Role;

pub use crate::table::Table;

/// Whether a signal may be read, written or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Read,
    /// Write only (reading is not expected to be meaningful).
    Write,
    /// Read and write.
    ReadWrite,
}

impl Access {
    /// May be read.
    pub fn readable(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite)
    }
    /// May be written.
    pub fn writable(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
}

/// What kind of device a profile describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// A servo drive (clients: [`crate::Drive`]).
    Drive,
    /// A torque sensor or load-cell transmitter (clients: [`crate::TorqueSensor`]).
    TorqueSensor,
}

/// A wire protocol a device speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Modbus RTU over RS-485 (or a pty).
    ModbusRtu,
    /// Modbus TCP.
    ModbusTcp,
}

/// Drive operating modes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The command is a motor torque (N m).
    Torque,
    /// The command is a velocity (rad/s); the drive closes the speed loop.
    Velocity,
    /// The command is a position (rad); the drive closes the position loop.
    Position,
}

impl Mode {
    /// All modes.
    pub const ALL: [Mode; 3] = [Mode::Torque, Mode::Velocity, Mode::Position];

    /// The profile spelling (`[modes]` keys).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Torque => "torque",
            Mode::Velocity => "velocity",
            Mode::Position => "position",
        }
    }

    /// The role of the command signal this mode uses.
    pub fn command_role(self) -> Role {
        match self {
            Mode::Torque => Role::TorqueCommand,
            Mode::Velocity => Role::VelocityCommand,
            Mode::Position => Role::PositionCommand,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
