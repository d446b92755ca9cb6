//! The simulated bench's parameters, their defaults and their checks.

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
    /// Torque-sensor zero offset, what it reads at zero torque until tared [N m]; default 0.
    pub sensor_offset_nm: f64,
    /// Torque-sensor resolution (quantum) [N m]; default 0.001; 0 = continuous.
    pub sensor_resolution_nm: f64,
    /// Torque-sensor low-pass time constant \[s\]; default 0 (off).
    pub sensor_lowpass_s: f64,
    /// Comms watchdog: time without a command before the drive trips \[s\]; default 0.1; 0 = off.
    pub watchdog_s: f64,
    /// Seed of the sensor-noise generator; default 1.
    pub seed: u64,
    /// A known load beside the inertia (a pendulum arm, a spring, a constant torque); the
    /// torque sensor sits between the motor and the friction element, so it does not see it.
    /// Default none.
    #[serde(skip_serializing_if = "friction::Load::is_none")]
    pub load: friction::Load,
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
            sensor_offset_nm: 0.0,
            sensor_resolution_nm: 0.001,
            sensor_lowpass_s: 0.0,
            watchdog_s: 0.1,
            seed: 1,
            load: friction::Load::None,
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
    /// The load broke a rule.
    #[error("sim parameter {0}")]
    Load(#[from] friction::load::LoadError),
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
        if !self.sensor_offset_nm.is_finite() {
            return Err(SimError::Param {
                field: "sensor_offset_nm",
                value: self.sensor_offset_nm,
                rule: "finite",
            });
        }
        self.load.validate()?;
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
