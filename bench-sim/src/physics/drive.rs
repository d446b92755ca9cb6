//! The simulated drive's side of the bus: modes, commands, faults, the actions it accepts and
//! what it reports.

use super::Sim;
use serde::{Deserialize, Serialize};

/// Drive operating mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The command is a torque [N m].
    #[default]
    Torque,
    /// The command is a speed [rad/s]; the drive's PI closes the velocity loop.
    Velocity,
    /// The command is an angle \[rad\]; the drive's PID closes the position loop.
    Position,
}

/// What the drive was last told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Command {
    /// Power stage on.
    pub enabled: bool,
    /// Operating mode.
    pub mode: Mode,
    /// Torque setpoint [N m] (torque mode).
    pub torque_nm: f64,
    /// Speed setpoint [rad/s] (velocity mode).
    pub velocity_rad_s: f64,
    /// Angle setpoint \[rad\] (position mode).
    pub position_rad: f64,
    /// Configured maximum torque [N m] (CiA 402 6072h), which every mode's demand is clamped
    /// to; `None` (power-on) = the motor's saturation `torque_limit_nm`.
    pub max_torque_nm: Option<f64>,
}

/// Why the drive tripped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultCause {
    /// No command within the watchdog time.
    Watchdog,
    /// Injected from outside (fault injection, e-stop input).
    External,
}

impl FaultCause {
    /// The CiA 402 error code (603Fh) a drive reports: 0x8130 communication watchdog,
    /// 0xFF00 injected (0 = no fault).
    pub fn code(self) -> u16 {
        match self {
            FaultCause::Watchdog => 0x8130,
            FaultCause::External => 0xFF00,
        }
    }
}

/// A change requested over the bus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// Power stage on (refused while a fault is latched).
    Enable,
    /// Power stage off.
    Disable,
    /// Switch mode (integrators reset, the setpoint holds the present value).
    SetMode(Mode),
    /// Torque setpoint [N m].
    Torque(f64),
    /// Speed setpoint [rad/s].
    Velocity(f64),
    /// Angle setpoint \[rad\].
    Position(f64),
    /// Clears a latched fault.
    ClearFault,
    /// Trips the drive (fault injection).
    Trip,
    /// A valid request that carries no change; feeds the watchdog.
    Heartbeat,
    /// Sets the comms watchdog time \[s\] (0 = off).
    SetWatchdog(f64),
    /// Sets the drive's maximum torque [N m] (CiA 402 6072h); negative or non-finite refused.
    SetMaxTorque(f64),
    /// Sets the drive's temperature reading [°C] (fault injection: a drive warming up, what a
    /// `[[suspend]]` condition pauses a run on); non-finite refused.
    SetTemperature(f64),
}

/// The drive's temperature reading before anything sets it [°C].
pub const AMBIENT_C: f64 = 25.0;

/// Everything the devices publish, in SI units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    /// Simulated time \[s\].
    pub t_s: f64,
    /// Encoder angle \[rad\] (quantised).
    pub position_rad: f64,
    /// Encoder count.
    pub position_counts: i64,
    /// Drive's velocity estimate [rad/s].
    pub velocity_rad_s: f64,
    /// Motor torque after the current loop [N m].
    pub motor_torque_nm: f64,
    /// Torque-sensor reading [N m] (noise, filter, resolution).
    pub sensor_torque_nm: f64,
    /// Power stage on.
    pub enabled: bool,
    /// Operating mode.
    pub mode: Mode,
    /// Latched fault, if any.
    pub fault: Option<FaultCause>,
    /// Commanded setpoint in the active mode (SI).
    pub setpoint: f64,
    /// The torque the drive will not exceed in any mode [N m]: its configured maximum torque
    /// or the motor's saturation, whichever is lower.
    pub max_torque_nm: f64,
    /// The drive's temperature reading [°C] (set by [`Action::SetTemperature`]; no thermal
    /// model behind it).
    pub temperature_c: f64,
}

impl Sim {
    /// Applies one bus action at the present simulated time; returns `false` if refused
    /// (enable while a fault is latched).
    pub fn apply(&mut self, action: Action) -> bool {
        let s = &mut self.state;
        s.last_command_s = s.plant.t;
        match action {
            Action::Enable => {
                if s.fault.is_some() {
                    return false;
                }
                if !s.command.enabled {
                    s.command.enabled = true;
                    self.reset_loops();
                }
            }
            Action::Disable => s.command.enabled = false,
            Action::SetMode(m) => {
                if s.command.mode != m {
                    s.command.mode = m;
                    // Bumpless: hold where we are.
                    s.command.velocity_rad_s = 0.0;
                    s.command.torque_nm = 0.0;
                    s.command.position_rad = s.plant.x;
                    self.reset_loops();
                }
            }
            Action::Torque(x) => s.command.torque_nm = finite_or_zero(x),
            Action::Velocity(x) => s.command.velocity_rad_s = finite_or_zero(x),
            Action::Position(x) => s.command.position_rad = finite_or_zero(x),
            Action::ClearFault => s.fault = None,
            Action::Trip => self.trip(FaultCause::External),
            Action::Heartbeat => {}
            Action::SetWatchdog(x) => {
                if x.is_finite() && x >= 0.0 {
                    self.params.watchdog_s = x;
                }
            }
            Action::SetMaxTorque(x) => {
                if !(x.is_finite() && x >= 0.0) {
                    return false;
                }
                s.command.max_torque_nm = Some(x);
            }
            Action::SetTemperature(x) => {
                if !x.is_finite() {
                    return false;
                }
                s.temperature_c = Some(x);
            }
        }
        true
    }

    /// The torque the drive will not exceed [N m] (see [`Feedback::max_torque_nm`]).
    pub fn max_torque_nm(&self) -> f64 {
        let motor = self.params.torque_limit_nm;
        self.state
            .command
            .max_torque_nm
            .map_or(motor, |m| m.min(motor))
    }

    fn reset_loops(&mut self) {
        let s = &mut self.state;
        s.velocity_integral = 0.0;
        s.position_integral = 0.0;
        s.position_error_prev =
            s.command.position_rad - s.counts as f64 * self.params.rad_per_count();
    }

    fn trip(&mut self, cause: FaultCause) {
        self.state.fault = Some(cause);
        self.state.command.enabled = false;
        self.state.torque_nm = 0.0;
    }

    /// What the drive and sensor report now.
    pub fn feedback(&self) -> Feedback {
        let s = &self.state;
        Feedback {
            t_s: s.plant.t,
            position_rad: s.counts as f64 * self.params.rad_per_count(),
            position_counts: s.counts,
            velocity_rad_s: s.velocity_est_rad_s,
            motor_torque_nm: s.torque_nm,
            sensor_torque_nm: s.sensor_nm,
            enabled: s.command.enabled,
            mode: s.command.mode,
            fault: s.fault,
            setpoint: match s.command.mode {
                Mode::Torque => s.command.torque_nm,
                Mode::Velocity => s.command.velocity_rad_s,
                Mode::Position => s.command.position_rad,
            },
            max_torque_nm: self.max_torque_nm(),
            temperature_c: s.temperature_c.unwrap_or(AMBIENT_C),
        }
    }
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}
