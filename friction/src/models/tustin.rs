//! Tustin model: S1 8.21; docs/src/models/tustin.md.
//!
//! $$F = \operatorname{sgn}(v)\left\[f_c + (f_s - f_c)\,e^{-|v|/v_s}\right\] + f_v v
//!   \quad (v \ne 0), \qquad F = \operatorname{clamp}(u, f_s) \quad (v = 0)$$
//!
//! `fc` \[N\] is the Coulomb level, `fs` \[N\] the breakaway level, `vs` \[m/s\] the Stribeck velocity,
//! `fv` \[N s/m\] the viscous coefficient, `v` \[m/s\] the velocity, `u` \[N\] the applied force; `F`
//! resists motion and `sgn(0) = 0`. At rest the map is set-valued with limit `g(0) = fs`. An
//! optional `negative` set applies to negative motion (by `sgn(v)`, or `sgn(u)` at rest).
//!
//! **Convention.** S1 writes Tustin in convention B, `F = (F_C + F_s e^{-alpha |v|}) sgn v + F_v v`,
//! where `F_s` is the *excess* over Coulomb and `alpha` \[s/m\] the "downward bend". This library
//! stores convention A: `fs = F_C + F_s(B)` is the breakaway level and `vs = 1/alpha`
//! ([`Params::from_convention_b`] converts). The shape is the generalised exponential with
//! `delta = 1`.
//!
//! Numerics (see [`static_curve`](crate::models::static_curve)): in a plant the set-valued law
//! is solved by backward Euler (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick) with the Stribeck level
//! frozen at `|v_k|` and the viscous term implicit: drift-free stick, stable at any `dt`. With
//! measured velocities `|v| <= dv` counts as rest (a Karnopp window, S1 8.45).

use crate::ParamError;
use crate::curve::stribeck_level;
use crate::error::check;
use crate::model::{ModelDef, ParamDoc, Validate};
use crate::models::static_curve::{
    DV, FC, FS, FV, Static, StaticCurve, VS, check_levels, check_negative,
};
use serde::{Deserialize, Serialize};

/// Tustin parameters (convention A). Defaults: the Canudas 1995 levels (docs/src/models/lugre.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Breakaway level `F_C + F_s(B)`, the stick limit \[N\] (convention A, `fs >= fc`);
    /// default 1.5.
    pub fs: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub fv: f64,
    /// Stribeck velocity `1/alpha` \[m/s\]; default 1e-3.
    pub vs: f64,
    /// Velocity window counted as rest for measured velocities \[m/s\]; default 0 (exact zero).
    pub dv: f64,
    /// Parameters for negative motion, if the friction is asymmetric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative: Option<Box<Params>>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            fc: 1.0,
            fs: 1.5,
            fv: 0.4,
            vs: 1e-3,
            dv: 0.0,
            negative: None,
        }
    }
}

impl Params {
    /// From S1 8.21's convention B: Coulomb `fc`, static excess `fs_excess`, viscous `fv` and
    /// bend `alpha` \[s/m\]; gives `fs = fc + fs_excess`, `vs = 1/alpha`.
    pub fn from_convention_b(fc: f64, fs_excess: f64, fv: f64, alpha: f64) -> Params {
        Params {
            fc,
            fs: fc + fs_excess,
            fv,
            vs: 1.0 / alpha,
            ..Params::default()
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check_levels(self.fc, self.fs, self.fv)?;
        check::positive("vs", self.vs)?;
        check::non_negative("dv", self.dv)?;
        check_negative(self)
    }
}

impl StaticCurve for Params {
    fn negative(&self) -> Option<&Params> {
        self.negative.as_deref()
    }
    fn level(&self, speed: f64) -> f64 {
        stribeck_level(speed, self.fc, self.fs, self.vs, 1.0)
    }
    fn limit(&self) -> f64 {
        self.fs
    }
    fn fv(&self) -> f64 {
        self.fv
    }
    fn dv(&self) -> f64 {
        self.dv
    }
}

/// Marker type of the Tustin model.
pub type Tustin = Static<Params>;

impl ModelDef for Tustin {
    const ID: &'static str = "tustin";
    const DESCRIPTION: &'static str =
        "Tustin curve sgn(v)[fc + (fs-fc)exp(-|v|/vs)] + fv*v, set-valued at rest";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        FC,
        FS,
        FV,
        ParamDoc {
            description: "Stribeck velocity 1/alpha (S1 8.21)",
            ..VS
        },
        DV,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::sgn;
    use crate::models::static_curve::testing;

    fn asymmetric() -> Params {
        Params {
            negative: Some(Box::new(Params {
                fc: 1.2,
                fs: 2.5,
                fv: 0.6,
                vs: 3e-3,
                ..Params::default()
            })),
            ..Params::default()
        }
    }

    /// S1 8.21 as printed (convention B), with `F_s(B) = fs - fc` and `alpha = 1/vs`.
    fn formula(q: &Params, v: f64) -> f64 {
        let (fs_b, alpha) = (q.fs - q.fc, 1.0 / q.vs);
        (q.fc + fs_b * (-alpha * v.abs()).exp()) * sgn(v) + q.fv * v
    }

    #[test]
    fn steady_state_is_s1_8_21() {
        testing::assert_map::<Tustin>(&Params::default(), formula);
        testing::assert_map::<Tustin>(&asymmetric(), formula);
    }

    #[test]
    fn convention_b_converts_to_a() {
        let p = Params::from_convention_b(1.0, 0.5, 0.4, 1e3);
        assert_eq!(p, Params::default());
    }

    #[test]
    fn sticks_below_fs_and_breaks_away_at_fs() {
        for p in [Params::default(), asymmetric()] {
            testing::assert_clamp_at_rest::<Tustin>(&p);
            testing::assert_stick_and_breakaway::<Tustin>(&p);
        }
    }

    #[test]
    fn rejects_bad_params() {
        let bad = |p: Params| p.validate().unwrap_err().field;
        let d = Params::default();
        assert_eq!(
            bad(Params {
                fs: 0.5,
                ..d.clone()
            }),
            "fs"
        );
        assert_eq!(bad(Params { vs: 0.0, ..d }), "vs");
    }

    #[test]
    fn robust_at_every_step() {
        testing::assert_robust::<Tustin>(&Params::default(), 1.5);
    }
}
