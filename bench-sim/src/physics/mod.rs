//! The simulated rotary bench as plain data: parameters, state and a pure `step`.
//!
//! ```text
//! command ──► drive loop (torque | velocity PI | position PID) ──► saturation ──►
//!   current-loop lag ──► motor torque u ──► friction::plant::step (inertia J, true friction F,
//!   known load L(x))
//!   ──► x, v ──► encoder (counts/rev) ──► position and velocity feedback
//!              F ──► torque sensor (noise, low-pass, resolution) ──► sensor reading
//! ```
//!
//! The torque sensor sits in the shaft between the rotor and the friction element, so it reads
//! the friction torque `F` (plus noise); at constant speed `u = F`. The drive's velocity estimate
//! is differentiated from encoder counts and low-pass filtered, as in a real drive. The comms
//! watchdog disables the drive and sets the fault bit when `watchdog_s` passes without a command
//! while enabled. No I/O here: the real-time runner and the Modbus devices call
//! [`Sim::step`] and [`Sim::apply`].

mod drive;
mod params;
mod plant;
#[cfg(test)]
mod tests;
mod truth;

pub use drive::{AMBIENT_C, Action, Command, FaultCause, Feedback, Mode};
pub use params::{SimError, SimParams};
pub use plant::PlantStateData;
pub use truth::default_truth;

use friction::FrictionModel;
use friction::registry::{self, ModelSpec};
use plant::Rng;
use serde::{Deserialize, Serialize};

/// Ground truth, for tests and the dashboard; never on the bus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    /// True angle \[rad\].
    pub x_rad: f64,
    /// True speed [rad/s].
    pub v_rad_s: f64,
    /// True friction torque [N m].
    pub friction_nm: f64,
}

/// Integrated state of the bench (besides the friction model's own state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimState {
    /// Plant: time, angle, speed.
    pub plant: PlantStateData,
    /// Motor torque after the current loop [N m].
    pub torque_nm: f64,
    /// Friction of the last step [N m].
    pub friction_nm: f64,
    /// Sensor value before resolution [N m].
    pub sensor_filtered_nm: f64,
    /// Last quantised sensor reading [N m].
    pub sensor_nm: f64,
    /// Encoder count.
    pub counts: i64,
    /// Velocity estimate [rad/s].
    pub velocity_est_rad_s: f64,
    /// Velocity-loop integrator [N m].
    pub velocity_integral: f64,
    /// Position-loop integrator [rad s].
    pub position_integral: f64,
    /// Previous position error \[rad\].
    pub position_error_prev: f64,
    /// The command in force.
    pub command: Command,
    /// Latched fault.
    pub fault: Option<FaultCause>,
    /// Simulated time of the last command \[s\].
    pub last_command_s: f64,
    /// The drive's temperature reading [°C] once set ([`AMBIENT_C`] before).
    #[serde(default)]
    pub temperature_c: Option<f64>,
}

/// The bench: parameters, state, the true friction model and the noise generator.
#[derive(Debug)]
pub struct Sim {
    /// Parameters (validated).
    pub params: SimParams,
    /// State.
    pub state: SimState,
    truth: Box<dyn FrictionModel>,
    rng: Rng,
}

impl Sim {
    /// A bench at rest, disabled, in torque mode.
    pub fn new(params: SimParams, truth: &ModelSpec) -> Result<Sim, SimError> {
        params.validate()?;
        let truth = registry::build_model(truth)?;
        Ok(Sim {
            rng: Rng::new(params.seed),
            params,
            state: SimState::default(),
            truth,
        })
    }

    /// The true friction model.
    pub fn truth_model(&self) -> &dyn FrictionModel {
        &*self.truth
    }

    /// Simulated time \[s\].
    pub fn time_s(&self) -> f64 {
        self.state.plant.t
    }

    /// The true angle, speed and friction.
    pub fn truth(&self) -> Truth {
        Truth {
            x_rad: self.state.plant.x,
            v_rad_s: self.state.plant.v,
            friction_nm: self.state.friction_nm,
        }
    }
}
