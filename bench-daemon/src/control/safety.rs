//! The bench limits as the loop enforces them: every command is clamped before it leaves, and
//! every measurement is checked against the limits (plus a margin for overshoot).

use experiments::BenchLimits;
use protocols::Mode;
use std::fmt;

/// A measured value beyond its limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breach {
    /// What was measured: `velocity`, `position` or `motor torque`.
    pub quantity: &'static str,
    /// The measured value (SI; position relative to the run's start).
    pub value: f64,
    /// The limit it crossed (before the margin).
    pub limit: f64,
    /// Its unit.
    pub unit: &'static str,
    /// The margin allowed beyond the limit \[-\].
    pub margin: f64,
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "limit breach: measured {} {:.4} {} beyond the limit ±{} {} (+{:.0} % margin)",
            self.quantity,
            self.value,
            self.unit,
            self.limit,
            self.unit,
            self.margin * 100.0
        )
    }
}

/// The limits of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Guard {
    limits: BenchLimits,
    margin: f64,
}

impl Guard {
    /// Enforces `limits`; measurements may exceed them by the fraction `margin`.
    pub fn new(limits: BenchLimits, margin: f64) -> Guard {
        Guard { limits, margin }
    }

    /// Clamps a command in `mode` (N m, rad/s, or rad relative to the run's start) to the
    /// limits; returns it and whether it was changed.
    pub fn clamp(&self, mode: Mode, value: f64) -> (f64, bool) {
        let bound = match mode {
            Mode::Torque => self.limits.torque_nm,
            Mode::Velocity => self.limits.velocity_rad_s,
            Mode::Position => self.limits.position_window_rad,
        };
        // A non-finite command never leaves: it becomes the neutral value.
        if !value.is_finite() {
            return (0.0, true);
        }
        let c = value.clamp(-bound, bound);
        (c, c != value)
    }

    /// The first measured quantity beyond its limit, if any. `x` is relative to the run's
    /// start; `torque_motor` may be NaN (not reported).
    pub fn check(&self, x: f64, v: f64, torque_motor: f64) -> Option<Breach> {
        let l = &self.limits;
        let checks = [
            ("velocity", v, l.velocity_rad_s, "rad/s"),
            ("position", x, l.position_window_rad, "rad"),
            ("motor torque", torque_motor, l.torque_nm, "N m"),
        ];
        checks
            .into_iter()
            .find(|(_, value, limit, _)| value.abs() > limit * (1.0 + self.margin))
            .map(|(quantity, value, limit, unit)| Breach {
                quantity,
                value,
                limit,
                unit,
                margin: self.margin,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_clamped_per_mode_and_nan_becomes_zero() {
        let g = Guard::new(BenchLimits::sim_default(), 0.1);
        assert_eq!(g.clamp(Mode::Torque, 2.5), (2.0, true));
        assert_eq!(g.clamp(Mode::Torque, -1.0), (-1.0, false));
        assert_eq!(g.clamp(Mode::Velocity, -30.0), (-20.0, true));
        assert_eq!(g.clamp(Mode::Position, 60.0), (50.0, true));
        assert_eq!(g.clamp(Mode::Torque, f64::NAN), (0.0, true));
    }

    #[test]
    fn breaches_beyond_the_margin_are_named() {
        let g = Guard::new(BenchLimits::sim_default(), 0.1);
        assert_eq!(g.check(1.0, 21.9, 1.0), None);
        assert_eq!(g.check(1.0, 1.0, f64::NAN), None);
        let b = g.check(0.0, -22.5, 0.0).unwrap();
        assert_eq!(b.quantity, "velocity");
        assert_eq!(
            b.to_string(),
            "limit breach: measured velocity -22.5000 rad/s beyond the limit ±20 rad/s (+10 % margin)"
        );
        assert_eq!(g.check(55.1, 0.0, 0.0).unwrap().quantity, "position");
        assert_eq!(g.check(0.0, 0.0, 2.3).unwrap().quantity, "motor torque");
    }
}
