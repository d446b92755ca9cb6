//! The bench limits a plan is validated against, as the daemon's bench configuration gives them.

use crate::Error;
use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;

/// Limits and timing of one bench (SI units). The daemon builds this from `bench.toml`; every
/// plan is checked against it before anything moves.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchLimits {
    /// Largest torque command magnitude \[N m\].
    pub torque_nm: f64,
    /// Largest velocity magnitude \[rad/s\].
    pub velocity_rad_s: f64,
    /// Half-width of the position window around the run's start position \[rad\]: every plan
    /// keeps `|x - x_start| <= position_window_rad`.
    pub position_window_rad: f64,
    /// Control period `Ts` \[s\]; plans sample their setpoints at this period.
    pub period_s: f64,
    /// Encoder resolution \[counts/rev\]; turns motion thresholds given in counts into radians.
    pub encoder_counts_per_rev: u32,
}

impl BenchLimits {
    /// The simulated bench of `bench-sim` with its shipped configuration: a small rotary bench
    /// (inertia 1e-3 kg m², true friction about 1–1.5 N m) with torque 2 N m, velocity
    /// 20 rad/s, position window ±50 rad, period 1 ms and a 2^17 count/rev encoder.
    pub fn sim_default() -> BenchLimits {
        BenchLimits {
            torque_nm: 2.0,
            velocity_rad_s: 20.0,
            position_window_rad: 50.0,
            period_s: 1e-3,
            encoder_counts_per_rev: 1 << 17,
        }
    }

    /// Checks that every limit is usable (finite, > 0).
    pub fn validate(&self) -> Result<(), Error> {
        let fields = [
            ("torque_nm", self.torque_nm),
            ("velocity_rad_s", self.velocity_rad_s),
            ("position_window_rad", self.position_window_rad),
            ("period_s", self.period_s),
            (
                "encoder_counts_per_rev",
                f64::from(self.encoder_counts_per_rev),
            ),
        ];
        for (field, value) in fields {
            if !(value.is_finite() && value > 0.0) {
                return Err(Error::BadLimits {
                    field,
                    value,
                    rule: "must be finite and > 0",
                });
            }
        }
        if self.period_s > 0.1 {
            return Err(Error::BadLimits {
                field: "period_s",
                value: self.period_s,
                rule: "must be <= 0.1 (a control loop of at least 10 Hz)",
            });
        }
        Ok(())
    }

    /// Angle of one encoder count \[rad\].
    pub fn rad_per_count(&self) -> f64 {
        TAU / f64::from(self.encoder_counts_per_rev)
    }
}

impl Default for BenchLimits {
    fn default() -> BenchLimits {
        BenchLimits::sim_default()
    }
}
