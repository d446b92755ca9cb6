//! What the control loop records once per tick.

use serde::{Deserialize, Serialize};

/// Per-sample status bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Flags(pub u32);

impl Flags {
    /// The command was clamped by a limit before it left.
    pub const CLAMPED: Flags = Flags(1);
    /// First sample of a segment.
    pub const SEGMENT_START: Flags = Flags(1 << 1);
    /// The torque-sensor reading is stale (not refreshed this tick); analyses skip its torque.
    pub const SENSOR_STALE: Flags = Flags(1 << 2);
    /// The tick missed its deadline.
    pub const OVERRUN: Flags = Flags(1 << 3);
    /// The drive reported a fault.
    pub const DRIVE_FAULT: Flags = Flags(1 << 4);
    /// The drive's feedback came back late (a round trip over twice the usual): the time
    /// stamp, the middle of the round trip, is uncertain by up to half of it, so analyses
    /// that divide by time do not end an interval on this sample.
    pub const LATE_READ: Flags = Flags(1 << 5);

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` with the bits of `other` set.
    pub fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

/// One tick of a run, in SI units and run coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Time since the run started \[s\].
    pub t: f64,
    /// Encoder position relative to the run's start \[rad\].
    pub x: f64,
    /// Velocity (drive estimate) \[rad/s\].
    pub v: f64,
    /// The command written to the drive on this tick, in the unit of the mode it was written
    /// in: N m when the drive is in torque mode (including when the daemon closes the loop),
    /// rad/s or rad in the drive's velocity or position mode.
    pub u_cmd: f64,
    /// Motor torque reported by the drive \[N m\]; NaN if the drive has none (then analyses
    /// use `u_cmd` of torque segments as the applied torque).
    pub torque_motor: f64,
    /// Torque-sensor reading \[N m\]; NaN without a sensor (then analyses use `torque_motor`).
    pub torque_sensor: f64,
    /// Index of the plan segment this tick belongs to.
    pub segment: u32,
    /// Status bits.
    pub flags: Flags,
}

impl Sample {
    /// The applied (motor) torque \[N m\]: `torque_motor`, or `u_cmd` when the drive reports no
    /// motor torque (meaningful in torque mode only).
    pub fn applied_torque(&self) -> f64 {
        if self.torque_motor.is_finite() {
            self.torque_motor
        } else {
            self.u_cmd
        }
    }

    /// The measured friction-side torque \[N m\]: the sensor when present and fresh, else the
    /// motor torque. At rest or at constant velocity both equal the friction.
    pub fn measured_torque(&self) -> f64 {
        if self.torque_sensor.is_finite() && !self.flags.contains(Flags::SENSOR_STALE) {
            self.torque_sensor
        } else {
            self.applied_torque()
        }
    }
}
