//! The bench limits a plan is validated against, as the daemon's bench configuration gives them.

use crate::{Error, caps};
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
    /// Cap on a plan's longest run time (every segment to its timeout) \[s\]; default
    /// [`caps::MAX_PLAN_DURATION_S`] (7 days), at most a year.
    #[serde(
        default = "default_duration",
        skip_serializing_if = "is_default_duration"
    )]
    pub max_plan_duration_s: f64,
    /// Cap on a plan's number of segments; default and largest [`caps::MAX_PLAN_SEGMENTS`].
    #[serde(
        default = "default_segments",
        skip_serializing_if = "is_default_segments"
    )]
    pub max_plan_segments: u32,
}

fn default_duration() -> f64 {
    caps::MAX_PLAN_DURATION_S
}

fn is_default_duration(s: &f64) -> bool {
    *s == caps::MAX_PLAN_DURATION_S
}

fn default_segments() -> u32 {
    caps::MAX_PLAN_SEGMENTS
}

fn is_default_segments(n: &u32) -> bool {
    *n == caps::MAX_PLAN_SEGMENTS
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
            max_plan_duration_s: caps::MAX_PLAN_DURATION_S,
            max_plan_segments: caps::MAX_PLAN_SEGMENTS,
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
            ("max_plan_duration_s", self.max_plan_duration_s),
            ("max_plan_segments", f64::from(self.max_plan_segments)),
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
        if self.max_plan_duration_s > 366.0 * 86_400.0 {
            return Err(Error::BadLimits {
                field: "max_plan_duration_s",
                value: self.max_plan_duration_s,
                rule: "must be <= 31622400 (366 days)",
            });
        }
        if self.max_plan_segments > caps::MAX_PLAN_SEGMENTS {
            return Err(Error::BadLimits {
                field: "max_plan_segments",
                value: f64::from(self.max_plan_segments),
                rule: "must be <= 1000000",
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
