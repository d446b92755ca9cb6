//! Shared parts of the Sánchez-Mazuca & Campa (2013) "improved" models (S4 eqs. 14–21,
//! docs/src/models/improved_static.md): the rate-dependent breakaway level of eq. 14, the torque-rate dead-band, the
//! choice of the (+)/(−) parameter set, the set-valued stick law, and S4 Table 1.
//!
//! $$\phi_s(\dot\tau) = f_c + (f_s - f_c)\,e^{-|\dot\tau/t_s|^{\delta_t}}
//!   \qquad (14),\qquad f_c \le \phi_s \le f_s,\quad \phi_s(0) = f_s\ (15),\quad
//!   \phi_s(\infty) = f_c\ (16)$$
//!
//! `tau` is the applied torque (`u` of [`Input`]), `taudot` its rate (`du_dt`) \[N m/s\], `fc`,
//! `fs` \[N m\] the Coulomb and maximum breakaway levels (convention A), `ts` \[N m/s\] the torque-rate
//! coefficient and `delta_t` \[-\] its shape exponent. The faster the torque rises, the earlier the
//! body breaks away.
//! Eq. 14 takes `|taudot|`, so a torque falling in magnitude lowers the limit too (as published).
//!
//! **The torque rate is an input.** The caller supplies `du_dt`: the analytic rate for
//! prescribed torques (a ramp `tau = m t` has `du_dt = m`), and on a bench a low-pass-filtered
//! backward difference of the commanded torque. The model does not filter it. With S4's
//! `delta_t = 0.172`, `phi_s` has an infinite slope at `taudot = 0`: a rate of 1e-6 N m/s already
//! lowers `phi_s - fc` by 9 % (docs/src/models/improved_static.md). So each model has a dead-band `taudot_deadband`:
//! a rate with `|du_dt| <= taudot_deadband` counts as 0 everywhere in the model (a hard threshold,
//! so rates above the band are used unchanged). A non-finite rate counts as 0 (NaN) or as
//! infinitely fast (±inf, `phi_s = fc`).
//!
//! **Asymmetry.** S4 Table 1 fits each direction separately. A `negative` set, if given, applies
//! to negative motion; the set is chosen by `sgn(v)`, or by `sgn(u)` when `v = 0` (docs/src/models/conventions.md).
//!
//! **Stick.** At rest the friction is set-valued, `F = clamp(u, phi_s(taudot))` (S4 eqs. 6, 20).
//! Coupled to a plant this is solved exactly by [`StepLaw::Stick`] (Kikuuwe et al. 2005,
//! docs/src/models/numerics.md#drift-free-stick), with the kinetic level frozen at `|v_k|`: no drift and no chatter at any step.

use crate::curve::phi_exp;
use crate::error::check;
use crate::model::Validate;
use crate::{Input, ParamError, StepLaw};

/// One column of S4 Table 1 (rotary: N m, N m s/rad, rad/s, N m/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Table1 {
    /// Coulomb level `f_c` \[N m\].
    pub fc: f64,
    /// Viscous coefficient `f_v` \[N m s/rad\].
    pub fv: f64,
    /// Maximum breakaway level `f_s` \[N m\].
    pub fs: f64,
    /// Stribeck velocity `v_s` \[rad/s\].
    pub vs: f64,
    /// Stribeck exponent `delta_v` \[-\].
    pub delta_v: f64,
    /// Torque-rate coefficient `t_s` \[N m/s\].
    pub ts: f64,
    /// Torque-rate exponent `delta_t` \[-\].
    pub delta_t: f64,
}

/// S4 Table 1, column (+): counter-clockwise motion. The defaults of the three models.
pub const TABLE1_POS: Table1 = Table1 {
    fc: 8.955,
    fv: 5.234,
    fs: 17.617,
    vs: 0.145,
    delta_v: 1.032,
    ts: 0.888,
    delta_t: 0.172,
};

/// S4 Table 1, column (−): clockwise motion.
pub const TABLE1_NEG: Table1 = Table1 {
    fc: 10.01,
    fv: 5.335,
    fs: 23.813,
    vs: 0.078,
    delta_v: 1.286,
    ts: 1.954,
    delta_t: 0.287,
};

/// S4 Table 1, bristle stiffness `sigma0` \[N m/rad\] (both directions).
pub const TABLE1_SIGMA0: f64 = 17260.0;
/// S4 Table 1, micro-damping `sigma1` \[N m s/rad\] (both directions).
pub const TABLE1_SIGMA1: f64 = 66.708;
/// S4 §5: inertia of the Parker DM1200A motor \[kg m^2\].
pub const S4_INERTIA: f64 = 0.167;

/// The parameters every improved model has, for one direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Common {
    /// Coulomb level \[N, rotary: N m\].
    pub fc: f64,
    /// Viscous coefficient \[N s/m\].
    pub fv: f64,
    /// Maximum breakaway level \[N, rotary: N m\].
    pub fs: f64,
    /// Torque-rate coefficient \[N/s\].
    pub ts: f64,
    /// Torque-rate exponent \[-\].
    pub delta_t: f64,
    /// Rates with `|du_dt|` up to this count as 0 \[N/s\].
    pub taudot_deadband: f64,
}

impl Common {
    /// The torque rate the model uses: 0 inside the dead-band or for NaN, else `du_dt`.
    #[inline]
    pub fn rate(&self, du_dt: f64) -> f64 {
        if du_dt.is_nan() || du_dt.abs() <= self.taudot_deadband {
            0.0
        } else {
            du_dt
        }
    }

    /// The torque-rate factor `exp(-|taudot/ts|^delta_t)` in `[0, 1]` (S4 eqs. 14, 19, 21).
    #[inline]
    pub fn rate_factor(&self, du_dt: f64) -> f64 {
        phi_exp(self.rate(du_dt), self.ts, self.delta_t)
    }

    /// `fc + (fs - fc) e`, written as a convex combination so that `e = 1` gives `fs` and
    /// `e = 0` gives `fc` exactly, and kept in `[fc, fs]` against rounding.
    #[inline]
    pub fn level(&self, e: f64) -> f64 {
        (self.fs * e + self.fc * (1.0 - e))
            .max(self.fc)
            .min(self.fs)
    }

    /// The rate-dependent breakaway level `phi_s(taudot)` (S4 eq. 14).
    #[inline]
    pub fn phi_s(&self, du_dt: f64) -> f64 {
        self.level(self.rate_factor(du_dt))
    }
}

/// A parameter set of an improved model, with an optional set for negative motion.
pub trait Sided: Sized {
    /// The set for negative motion, if the friction is asymmetric.
    fn negative(&self) -> Option<&Self>;

    /// The parameters shared by the three models, of this set.
    fn common(&self) -> Common;

    /// The set that applies to motion of sign `dir` (the positive set for `dir >= 0`).
    #[inline]
    fn side(&self, dir: f64) -> &Self {
        match (self.negative(), dir < 0.0) {
            (Some(n), true) => n,
            _ => self,
        }
    }

    /// The set chosen by `sgn(v)`, or by `sgn(u)` when `v = 0` (docs/src/models/conventions.md).
    #[inline]
    fn side_at(&self, v: f64, u: f64) -> &Self {
        self.side(if v != 0.0 { v } else { u })
    }
}

/// `v`, or 0 inside the rest window `|v| <= dv` (a Karnopp window for measured velocities).
#[inline]
pub fn rest_window(v: f64, dv: f64) -> f64 {
    if v.abs() <= dv { 0.0 } else { v }
}

/// The set-valued law of S4 eqs. 6/20 for one step (docs/src/models/numerics.md#drift-free-stick): at rest the body sticks while
/// the force needed to stop it lies in `[-phi_s^-(taudot), phi_s^+(taudot)]`; sliding, the
/// friction is `kinetic(set, |v_k|, du_dt) sgn(v) + fv v`, the kinetic level frozen at `v_k`.
///
/// The viscous slope is that of the set chosen by `sgn(v_k)` (or `sgn(u)` at rest): `StepLaw`
/// has one slope, so a reversal within one step uses the other direction's `fv` for that step.
pub fn stick_law<P: Sided>(p: &P, input: &Input, kinetic: impl Fn(&P, f64, f64) -> f64) -> StepLaw {
    let (pos, neg) = (p.side(1.0), p.side(-1.0));
    let speed = input.v.abs();
    let limit_pos = pos.common().phi_s(input.du_dt);
    let kinetic_pos = kinetic(pos, speed, input.du_dt);
    // A symmetric set needs its (transcendental) levels once.
    let (limit_neg, kinetic_neg) = if std::ptr::eq(pos, neg) {
        (limit_pos, kinetic_pos)
    } else {
        (
            neg.common().phi_s(input.du_dt),
            kinetic(neg, speed, input.du_dt),
        )
    };
    StepLaw::Stick {
        limit_pos,
        limit_neg,
        kinetic_pos,
        kinetic_neg,
        damping: p.side_at(input.v, input.u).common().fv,
    }
}

/// Checks the shared rules of one set, in field order: `fc > 0`, `fv >= 0`, `fs >= fc`,
/// `ts > 0`, `delta_t > 0`, `taudot_deadband >= 0`.
pub(crate) fn validate_common(c: &Common) -> Result<(), ParamError> {
    check::positive("fc", c.fc)?;
    check::non_negative("fv", c.fv)?;
    check::finite("fs", c.fs)?;
    check::at_least("fs", c.fs, "fc", c.fc)?;
    check::positive("ts", c.ts)?;
    check::positive("delta_t", c.delta_t)?;
    check::non_negative("taudot_deadband", c.taudot_deadband)
}

/// Validates the negative set, if any, with its errors named `negative.<field>`.
pub(crate) fn validate_negative<P: Sided + Validate>(p: &P) -> Result<(), ParamError> {
    if let Some(n) = p.negative() {
        if n.negative().is_some() {
            return Err(ParamError::new(
                "negative.negative",
                0.0,
                "must not be given",
            ));
        }
        n.validate().map_err(|e| e.nested("negative"))?;
    }
    Ok(())
}

/// Reproduction and robustness helpers shared by the three models' tests.
#[cfg(test)]
pub(crate) mod test_util {
    use crate::model::FrictionModel;
    use crate::scenario::{Profile, Scenario, simulate};
    use std::f64::consts::TAU;

    /// The first time the velocity magnitude exceeds `threshold` under the torque ramp
    /// `tau = rate t` on the S4 motor (J = 0.167 kg m^2) at step `dt`, starting at rest
    /// (docs/src/reproduction.md (checks #1, #2)). `threshold = 0` gives the first time `v != 0`.
    pub(crate) fn breakaway_time(
        model: &mut dyn FrictionModel,
        rate: f64,
        dt: f64,
        duration: f64,
        threshold: f64,
    ) -> Option<f64> {
        let scenario: Scenario = serde_json::from_value(serde_json::json!({
            "kind": "force", "mass": super::S4_INERTIA, "force": {"ramp": {"rate": rate}}
        }))
        .unwrap();
        model.reset();
        let mut t_break = None;
        simulate(model, &scenario, dt, duration, 1, |row| {
            if t_break.is_none() && row.v.abs() > threshold {
                t_break = Some(row.t);
            }
        });
        t_break
    }

    /// Runs every scenario kind at 0.1, 1 and 10 ms for 60 s and asserts finite, bounded outputs:
    /// `|F| <= f_bound`, `|v| <= v_bound`.
    pub(crate) fn assert_robust(model: &mut dyn FrictionModel, f_bound: f64, v_bound: f64) {
        let j = super::S4_INERTIA;
        let scenarios = [
            Scenario::SpringPull {
                mass: 1.0,
                stiffness: 2.0,
                pull_velocity: 0.1,
                pull_stop_s: None,
            },
            Scenario::SpringPull {
                mass: j,
                stiffness: 50.0,
                pull_velocity: 0.1,
                pull_stop_s: Some(40.0),
            },
            // Below breakaway (amplitude < fc), and above it (S4 Fig. 11 amplitude).
            Scenario::Force {
                load: crate::Load::None,
                mass: j,
                force: sine(5.0, TAU * 0.5),
            },
            Scenario::Force {
                load: crate::Load::None,
                mass: j,
                force: sine(25.0, TAU * 0.05),
            },
            Scenario::Force {
                load: crate::Load::None,
                mass: j,
                force: Profile::Ramp {
                    rate: -0.5,
                    offset: 0.0,
                },
            },
            Scenario::Velocity {
                velocity: sine(1.0, 1.0),
            },
            Scenario::Position {
                position: sine(0.5, 2.0),
            },
        ];
        let id = model.id();
        for sc in &scenarios {
            for dt in [1e-4, 1e-3, 1e-2] {
                model.reset();
                simulate(model, sc, dt, 60.0, 1, |r| {
                    let ok = r.friction.is_finite()
                        && r.v.is_finite()
                        && r.x.is_finite()
                        && r.states.iter().all(|x| x.is_finite());
                    assert!(ok, "{id} {sc:?} dt={dt}: non-finite at t={}", r.t);
                    assert!(
                        r.friction.abs() <= f_bound && r.v.abs() <= v_bound,
                        "{id} {sc:?} dt={dt}: t={} F={} v={}",
                        r.t,
                        r.friction,
                        r.v
                    );
                });
                assert_eq!(model.quarantined(), 0, "{id} {sc:?} dt={dt}");
            }
        }
    }

    fn sine(amplitude: f64, omega: f64) -> Profile {
        Profile::Sine {
            amplitude,
            omega,
            offset: 0.0,
            phase: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(t: &Table1) -> Common {
        Common {
            fc: t.fc,
            fv: t.fv,
            fs: t.fs,
            ts: t.ts,
            delta_t: t.delta_t,
            taudot_deadband: 0.0,
        }
    }

    #[test]
    fn phi_s_is_fs_at_rest_and_fc_at_infinite_rate() {
        for t in [TABLE1_POS, TABLE1_NEG] {
            let c = common(&t);
            assert_eq!(c.phi_s(0.0), t.fs, "eq. 15");
            assert_eq!(c.phi_s(f64::INFINITY), t.fc, "eq. 16");
            assert_eq!(c.phi_s(f64::NEG_INFINITY), t.fc, "eq. 16");
            assert_eq!(c.phi_s(1e300), t.fc);
            // eq. 17 and monotone decrease in |taudot|, symmetric in its sign.
            let mut last = t.fs;
            for k in -8..8 {
                let r = 10f64.powi(k);
                let p = c.phi_s(r);
                assert!(p >= t.fc && p <= t.fs && p <= last, "{r}: {p}");
                assert_eq!(p, c.phi_s(-r));
                last = p;
            }
        }
    }

    #[test]
    fn phi_s_matches_eq_14_and_the_derived_s4_numbers() {
        let c = common(&TABLE1_POS);
        for r in [1e-3, 0.05, 0.888, 1.0, 7.0] {
            let eq14 = c.fc + (c.fs - c.fc) * (-(r / c.ts).powf(c.delta_t)).exp();
            assert!((c.phi_s(r) - eq14).abs() < 1e-12);
        }
        // docs/src/reproduction.md (checks #1, #2): phi_s(0.05) = 13.663 N m, phi_s(1) = 12.076 N m.
        assert!((c.phi_s(0.05) - 13.663).abs() < 1e-3, "{}", c.phi_s(0.05));
        assert!((c.phi_s(1.0) - 12.076).abs() < 1e-3, "{}", c.phi_s(1.0));
        // docs/src/models/improved_static.md: 1e-6 N m/s already lowers phi_s - fc by about 9 %.
        let drop = 1.0 - (c.phi_s(1e-6) - c.fc) / (c.fs - c.fc);
        assert!((drop - 0.09).abs() < 0.01, "{drop}");
    }

    #[test]
    fn deadband_zeroes_small_and_nan_rates_only() {
        let c = Common {
            taudot_deadband: 1e-3,
            ..common(&TABLE1_POS)
        };
        assert_eq!(c.phi_s(5e-4), c.fs);
        assert_eq!(c.phi_s(-1e-3), c.fs);
        assert_eq!(c.phi_s(f64::NAN), c.fs);
        assert_eq!(c.phi_s(0.05), common(&TABLE1_POS).phi_s(0.05));
    }
}
