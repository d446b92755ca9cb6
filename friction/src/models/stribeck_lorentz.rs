//! Lorentzian Stribeck curve (Hess & Soom): S1 8.19; docs/src/models/stribeck_exp.md.
//!
//! $$F = \operatorname{sgn}(v)\left\[f_c + \frac{f_s - f_c}{1 + (v/v_s)^2}\right\] + f_v v
//!   \quad (v \ne 0), \qquad F = \operatorname{clamp}(u, f_s) \quad (v = 0)$$
//!
//! `fc` \[N\] is the Coulomb level, `fs` \[N\] the breakaway level (convention A, as S1 8.19 writes
//! it: `g(0) = fs`), `vs` \[m/s\] the characteristic Stribeck velocity, `fv` \[N s/m\] the viscous
//! coefficient, `v` \[m/s\] the velocity, `u` \[N\] the applied force. `F` resists motion and
//! `sgn(0) = 0`. At rest the map is set-valued with limit `g(0) = fs`. Hess & Soom found `fv` and
//! `vs` depend on lubricant and load. An optional `negative` set applies to negative motion (by
//! `sgn(v)`, or `sgn(u)` at rest).
//!
//! Numerics (see [`static_curve`](crate::models::static_curve)): in a plant the set-valued law
//! is solved by backward Euler (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick) with the Stribeck level
//! frozen at `|v_k|` and the viscous term implicit: drift-free stick, stable at any `dt`. With
//! measured velocities `|v| <= dv` counts as rest (a Karnopp window, S1 8.45).

use crate::ParamError;
use crate::curve::phi_lorentz;
use crate::error::check;
use crate::model::{ModelDef, ParamDoc, Validate};
use crate::models::static_curve::{
    DV, FC, FS, FV, Static, StaticCurve, VS, check_levels, check_negative,
};
use serde::{Deserialize, Serialize};

/// Lorentzian Stribeck parameters. Defaults: the Canudas 1995 levels (docs/src/models/lugre.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Breakaway level `g(0)`, the stick limit \[N\] (convention A, `fs >= fc`); default 1.5.
    pub fs: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub fv: f64,
    /// Stribeck velocity \[m/s\]; default 1e-3.
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
        self.fc + (self.fs - self.fc) * phi_lorentz(speed, self.vs)
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

/// Marker type of the Lorentzian Stribeck model.
pub type StribeckLorentz = Static<Params>;

impl ModelDef for StribeckLorentz {
    const ID: &'static str = "stribeck_lorentz";
    const DESCRIPTION: &'static str = "Lorentzian (Hess-Soom) Stribeck curve sgn(v)[fc + (fs-fc)/(1+(v/vs)^2)] + fv*v, set-valued at rest";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[FC, FS, FV, VS, DV];
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

    fn formula(q: &Params, v: f64) -> f64 {
        sgn(v) * (q.fc + (q.fs - q.fc) / (1.0 + (v / q.vs).powi(2))) + q.fv * v
    }

    #[test]
    fn steady_state_is_the_stribeck_curve() {
        testing::assert_map::<StribeckLorentz>(&Params::default(), formula);
        testing::assert_map::<StribeckLorentz>(&asymmetric(), formula);
        // Half the Stribeck excess remains at v = vs.
        let p = Params::default();
        assert!((p.level(p.vs) - 1.25).abs() < 1e-15);
    }

    #[test]
    fn sticks_below_fs_and_breaks_away_at_fs() {
        for p in [Params::default(), asymmetric()] {
            testing::assert_clamp_at_rest::<StribeckLorentz>(&p);
            testing::assert_stick_and_breakaway::<StribeckLorentz>(&p);
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
        testing::assert_robust::<StribeckLorentz>(&Params::default(), 1.5);
    }
}
