//! The simulated rotary bench as plain data: parameters, state and a pure `step`.
//!
//! ```text
//! command ──► drive loop (torque | velocity PI | position PID) ──► saturation ──►
//!   current-loop lag ──► motor torque u ──► friction::plant::step (inertia J, true friction F)
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

use friction::FrictionModel;
use friction::plant::{self, Applied, PlantParams as MassParams, PlantState};
use friction::registry::{self, ModelSpec};
use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;

/// Bench parameters (SI units).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimParams {
    /// Internal plant step \[s\]; default 1e-4 (10 kHz).
    pub step_s: f64,
    /// Rotor plus load inertia [kg m^2]; default 1e-3.
    pub inertia_kg_m2: f64,
    /// Motor torque saturation [N m]; default 5.
    pub torque_limit_nm: f64,
    /// Current-loop time constant (first-order lag from demand to torque) \[s\]; default 2e-4.
    pub current_lag_s: f64,
    /// Encoder resolution [counts/rev]; default 2^17 (the simulated drive's profile).
    pub encoder_counts_per_rev: u32,
    /// Low-pass time constant of the drive's encoder velocity estimate \[s\]; default 1e-3.
    pub velocity_filter_s: f64,
    /// Velocity-loop proportional gain [N m s/rad]; default 0.3.
    pub velocity_kp: f64,
    /// Velocity-loop integral gain [N m/rad]; default 30.
    pub velocity_ki: f64,
    /// Position-loop proportional gain [N m/rad]; default 20.
    pub position_kp: f64,
    /// Position-loop integral gain [N m/(rad s)]; default 200.
    pub position_ki: f64,
    /// Position-loop derivative gain [N m s/rad]; default 0.3.
    pub position_kd: f64,
    /// Torque-sensor noise, standard deviation [N m]; default 0.002.
    pub sensor_noise_nm: f64,
    /// Torque-sensor resolution (quantum) [N m]; default 0.001; 0 = continuous.
    pub sensor_resolution_nm: f64,
    /// Torque-sensor low-pass time constant \[s\]; default 0 (off).
    pub sensor_lowpass_s: f64,
    /// Comms watchdog: time without a command before the drive trips \[s\]; default 0.1; 0 = off.
    pub watchdog_s: f64,
    /// Seed of the sensor-noise generator; default 1.
    pub seed: u64,
}

impl Default for SimParams {
    fn default() -> SimParams {
        SimParams {
            step_s: 1e-4,
            inertia_kg_m2: 1e-3,
            torque_limit_nm: 5.0,
            current_lag_s: 2e-4,
            encoder_counts_per_rev: 1 << 17,
            velocity_filter_s: 1e-3,
            velocity_kp: 0.3,
            velocity_ki: 30.0,
            position_kp: 20.0,
            position_ki: 200.0,
            position_kd: 0.3,
            sensor_noise_nm: 0.002,
            sensor_resolution_nm: 0.001,
            sensor_lowpass_s: 0.0,
            watchdog_s: 0.1,
            seed: 1,
        }
    }
}

/// A rejected simulator setting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A parameter broke its rule.
    #[error("sim parameter {field} ({value}) must be {rule}")]
    Param {
        /// Field name.
        field: &'static str,
        /// Value given.
        value: f64,
        /// The rule, e.g. "> 0".
        rule: &'static str,
    },
    /// The true friction model could not be built.
    #[error("true friction model: {0}")]
    Truth(#[from] friction::BuildError),
    /// A device profile could not be used.
    #[error("{0}")]
    Profile(String),
    /// A socket or pty could not be set up.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl SimParams {
    /// Checks every rule; the first broken one is named.
    pub fn validate(&self) -> Result<(), SimError> {
        let positive = [
            ("step_s", self.step_s),
            ("inertia_kg_m2", self.inertia_kg_m2),
            ("torque_limit_nm", self.torque_limit_nm),
            (
                "encoder_counts_per_rev",
                f64::from(self.encoder_counts_per_rev),
            ),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(SimError::Param {
                    field,
                    value,
                    rule: "finite and > 0",
                });
            }
        }
        let non_negative = [
            ("current_lag_s", self.current_lag_s),
            ("velocity_filter_s", self.velocity_filter_s),
            ("velocity_kp", self.velocity_kp),
            ("velocity_ki", self.velocity_ki),
            ("position_kp", self.position_kp),
            ("position_ki", self.position_ki),
            ("position_kd", self.position_kd),
            ("sensor_noise_nm", self.sensor_noise_nm),
            ("sensor_resolution_nm", self.sensor_resolution_nm),
            ("sensor_lowpass_s", self.sensor_lowpass_s),
            ("watchdog_s", self.watchdog_s),
        ];
        for (field, value) in non_negative {
            if !(value.is_finite() && value >= 0.0) {
                return Err(SimError::Param {
                    field,
                    value,
                    rule: "finite and >= 0",
                });
            }
        }
        if self.step_s > 1e-3 {
            return Err(SimError::Param {
                field: "step_s",
                value: self.step_s,
                rule: "<= 1e-3 (the plant runs at >= 1 kHz)",
            });
        }
        Ok(())
    }

    /// Encoder angle per count \[rad\].
    pub fn rad_per_count(&self) -> f64 {
        TAU / f64::from(self.encoder_counts_per_rev)
    }
}

/// The default true friction: an asymmetric GMS (Generalized Maxwell-Slip), the model with
/// presliding hysteresis and non-local memory the issue asks for, scaled to a small rotary
/// bench (N m, rad, rad/s) so that every experiment sees its effect through the 2^17 count/rev
/// encoder:
/// - Coulomb 1 N m and breakaway 1.5 N m for positive motion, 0.9 and 1.35 N m (10 % lower)
///   for negative motion; Stribeck speed 0.1 rad/s (Gaussian, delta 2), so a sweep from
///   0.05 rad/s shows the Stribeck dip; viscous 0.05 N m s/rad (1.5 N m at 10 rad/s);
/// - four elements of stiffness 500, 250, 150 and 100 N m/rad (total 1000) holding 10, 20,
///   30 and 40 % of the level: presliding spans 0.3 to 6 mrad (6 to 125 counts), so hysteresis
///   loops and the sinusoidal presliding amplitude are resolved;
/// - micro-damping 1 N m s/rad: with the 1e-3 kg m² rotor the presliding mode is at
///   sqrt(1000 / 1e-3) = 1000 rad/s with damping ratio 0.5 (a torque step overshoots);
/// - attraction C = 50 N m/s on both sides: a slipping element follows a change of s(v)
///   with a frictional lag s/C of 20 to 30 ms, which the frictional-lag sinusoids resolve.
///   It also keeps breakaway well posed: with the registry's C = 1e4 (lag 0.15 ms) the
///   slipping elements follow the falling Stribeck curve at once, and a 0.1 ms jitter in when
///   a command lands turned a ramp's breakaway from 1.32 into 1.07 N m; at 50 it moves it
///   by less than 0.7 %.
pub fn default_truth() -> ModelSpec {
    ModelSpec {
        model: "gms".to_string(),
        params: serde_json::json!({
            "k": [500.0, 250.0, 150.0, 100.0],
            "alpha": [0.1, 0.2, 0.3, 0.4],
            "fc": 1.0,
            "fs": 1.5,
            "vs": 0.1,
            "delta": 2.0,
            "sigma1": 1.0,
            "sigma2": 0.05,
            "c": 50.0,
            "negative": {"fc": 0.9, "fs": 1.35, "c": 50.0}
        }),
    }
}

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

/// Plant time, angle and speed (a serde copy of [`PlantState`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlantStateData {
    /// Time \[s\].
    pub t: f64,
    /// Angle \[rad\].
    pub x: f64,
    /// Speed [rad/s].
    pub v: f64,
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

    /// Advances the bench by `dt` \[s\] in internal steps of at most `params.step_s`.
    pub fn advance(&mut self, dt: f64) {
        let h = self.params.step_s;
        let n = (dt / h).round().max(1.0) as u64;
        let hh = dt / n as f64;
        for _ in 0..n {
            self.step(hh);
        }
    }

    /// One plant step of `dt` \[s\].
    pub fn step(&mut self, dt: f64) {
        let cap = self.max_torque_nm();
        let p = &self.params;
        let s = &mut self.state;
        if p.watchdog_s > 0.0 && s.command.enabled && s.plant.t - s.last_command_s > p.watchdog_s {
            s.fault = Some(FaultCause::Watchdog);
            s.command.enabled = false;
        }
        let rpc = p.rad_per_count();
        let angle = s.counts as f64 * rpc;
        // Drive loop → torque demand.
        let demand = if !s.command.enabled {
            0.0
        } else {
            match s.command.mode {
                Mode::Torque => s.command.torque_nm,
                Mode::Velocity => {
                    let e = s.command.velocity_rad_s - s.velocity_est_rad_s;
                    let unsat = p.velocity_kp * e + s.velocity_integral + p.velocity_ki * e * dt;
                    // Conditional integration (anti-windup).
                    if unsat.abs() < cap || unsat.signum() != e.signum() {
                        s.velocity_integral += p.velocity_ki * e * dt;
                    }
                    p.velocity_kp * e + s.velocity_integral
                }
                Mode::Position => {
                    let e = s.command.position_rad - angle;
                    let de = (e - s.position_error_prev) / dt;
                    s.position_error_prev = e;
                    let unsat = p.position_kp * e
                        + p.position_ki * (s.position_integral + e * dt)
                        + p.position_kd * de;
                    if unsat.abs() < cap || unsat.signum() != e.signum() {
                        s.position_integral += e * dt;
                    }
                    p.position_kp * e + p.position_ki * s.position_integral + p.position_kd * de
                }
            }
        };
        let demand = demand.clamp(-cap, cap);
        // Current loop: exact first-order lag; off means no torque at once.
        let prev = s.torque_nm;
        s.torque_nm = if !s.command.enabled {
            0.0
        } else if p.current_lag_s > 0.0 {
            demand + (prev - demand) * (-dt / p.current_lag_s).exp()
        } else {
            demand
        };
        // Plant with the true friction.
        let mut ps = PlantState {
            t: s.plant.t,
            x: s.plant.x,
            v: s.plant.v,
        };
        let applied = Applied::force(s.torque_nm, (s.torque_nm - prev) / dt);
        s.friction_nm = plant::step(
            &mut *self.truth,
            &MassParams {
                mass: p.inertia_kg_m2,
            },
            &mut ps,
            &applied,
            dt,
        );
        s.plant = PlantStateData {
            t: ps.t,
            x: ps.x,
            v: ps.v,
        };
        // Encoder and the drive's velocity estimate.
        let counts = (ps.x / rpc).floor() as i64;
        let v_raw = (counts - s.counts) as f64 * rpc / dt;
        s.counts = counts;
        let a = if p.velocity_filter_s > 0.0 {
            1.0 - (-dt / p.velocity_filter_s).exp()
        } else {
            1.0
        };
        s.velocity_est_rad_s += a * (v_raw - s.velocity_est_rad_s);
        // Torque sensor: shaft torque into the friction element, noise, low-pass, resolution.
        let raw = s.friction_nm + p.sensor_noise_nm * self.rng.normal();
        let b = if p.sensor_lowpass_s > 0.0 {
            1.0 - (-dt / p.sensor_lowpass_s).exp()
        } else {
            1.0
        };
        s.sensor_filtered_nm += b * (raw - s.sensor_filtered_nm);
        s.sensor_nm = if p.sensor_resolution_nm > 0.0 {
            (s.sensor_filtered_nm / p.sensor_resolution_nm).round() * p.sensor_resolution_nm
        } else {
            s.sensor_filtered_nm
        };
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

    /// The true angle, speed and friction.
    pub fn truth(&self) -> Truth {
        Truth {
            x_rad: self.state.plant.x,
            v_rad_s: self.state.plant.v,
            friction_nm: self.state.friction_nm,
        }
    }
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

/// SplitMix64 with Box–Muller normals: seeded, reproducible, no dependency.
#[derive(Clone, Debug)]
struct Rng {
    state: u64,
    spare: Option<f64>,
}

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng {
            state: seed,
            spare: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let r = (-2.0 * self.uniform().ln()).sqrt();
        let th = TAU * self.uniform();
        self.spare = Some(r * th.sin());
        r * th.cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim() -> Sim {
        Sim::new(SimParams::default(), &default_truth()).unwrap()
    }

    #[test]
    fn torque_mode_below_breakaway_stays_put_and_above_accelerates() {
        let mut s = sim();
        s.apply(Action::Enable);
        s.apply(Action::Torque(0.5));
        for _ in 0..50 {
            s.apply(Action::Heartbeat);
            s.advance(1e-3);
        }
        assert!(s.truth().v_rad_s.abs() < 1e-3, "{:?}", s.truth());
        s.apply(Action::Torque(3.0));
        for _ in 0..50 {
            s.apply(Action::Heartbeat);
            s.advance(1e-3);
        }
        assert!(s.truth().v_rad_s > 4.0, "{:?}", s.truth());
    }

    #[test]
    fn position_mode_reaches_the_target() {
        let mut s = sim();
        s.apply(Action::Enable);
        s.apply(Action::SetMode(Mode::Position));
        s.apply(Action::Position(1.0));
        for _ in 0..1000 {
            s.apply(Action::Heartbeat);
            s.advance(1e-3);
        }
        // The PID's integral against the true friction's stiction hunts around the target (the
        // classic stick-slip limit cycle of a soft position loop, ±20 mrad here) and stays in
        // that band.
        for _ in 0..3000 {
            s.apply(Action::Heartbeat);
            s.advance(1e-3);
            let x = s.feedback().position_rad;
            assert!((x - 1.0).abs() < 3e-2, "{x} at {} s", s.time_s());
        }
    }

    #[test]
    fn same_seed_same_run() {
        let run = || {
            let mut s = sim();
            s.apply(Action::Enable);
            s.apply(Action::SetMode(Mode::Velocity));
            s.apply(Action::Velocity(2.0));
            let mut out = Vec::new();
            for _ in 0..50 {
                s.apply(Action::Heartbeat);
                s.advance(1e-3);
                out.push(s.feedback().sensor_torque_nm);
            }
            out
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn enable_is_refused_while_faulted() {
        let mut s = sim();
        s.apply(Action::Trip);
        assert!(!s.apply(Action::Enable));
        assert_eq!(s.feedback().fault, Some(FaultCause::External));
        s.apply(Action::ClearFault);
        assert!(s.apply(Action::Enable));
    }

    #[test]
    fn bad_params_are_named() {
        let p = SimParams {
            inertia_kg_m2: -1.0,
            ..SimParams::default()
        };
        let err = Sim::new(p, &default_truth()).unwrap_err().to_string();
        assert_eq!(
            err,
            "sim parameter inertia_kg_m2 (-1) must be finite and > 0"
        );
    }
}
