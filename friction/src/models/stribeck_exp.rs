//! Exponential Stribeck curve (Bo & Pavelescu; Armstrong's generalised exponential): S1 8.20,
//! S4 eq. 5; docs/src/models/stribeck_exp.md.
//!
//! $$F = \operatorname{sgn}(v)\left\[f_c + (f_s - f_c)\,e^{-|v/v_s|^{\delta}}\right\] + f_v v
//!   \quad (v \ne 0), \qquad F = \operatorname{clamp}(u, f_s) \quad (v = 0)$$
//!
//! `fc` \[N\] is the Coulomb level, `fs` \[N\] the breakaway level (convention A: `g(0) = fs`), `vs`
//! \[m/s\] the Stribeck velocity, `delta` \[-\] the shape exponent (Bo & Pavelescu 0.5–1, Armstrong
//! 2 = Gaussian, Fuller "very large"), `fv` \[N s/m\] the viscous coefficient, `v` \[m/s\] the
//! velocity and `u` \[N\] the applied force. `F` resists motion and `sgn(0) = 0`. At rest the map is
//! set-valued with limit `g(0) = fs`, so the friction is continuous at breakaway. An optional
//! `negative` set applies to negative motion (by `sgn(v)`, or `sgn(u)` at rest).
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
    DELTA, DV, FC, FS, FV, Static, StaticCurve, VS, check_levels, check_negative,
};
use serde::{Deserialize, Serialize};

/// Exponential Stribeck parameters. Defaults: the Canudas 1995 set (docs/src/models/lugre.md).
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
    /// Stribeck exponent \[-\]; default 2 (Gaussian).
    pub delta: f64,
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
            delta: 2.0,
            dv: 0.0,
            negative: None,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check_levels(self.fc, self.fs, self.fv)?;
        check::positive("vs", self.vs)?;
        check::positive("delta", self.delta)?;
        check::non_negative("dv", self.dv)?;
        check_negative(self)
    }
}

impl StaticCurve for Params {
    fn negative(&self) -> Option<&Params> {
        self.negative.as_deref()
    }
    fn level(&self, speed: f64) -> f64 {
        stribeck_level(speed, self.fc, self.fs, self.vs, self.delta)
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

/// Marker type of the exponential Stribeck model.
pub type StribeckExp = Static<Params>;

impl ModelDef for StribeckExp {
    const ID: &'static str = "stribeck_exp";
    const DESCRIPTION: &'static str = "exponential Stribeck curve sgn(v)[fc + (fs-fc)exp(-|v/vs|^delta)] + fv*v, set-valued at rest";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[FC, FS, FV, VS, DELTA, DV];
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
                delta: 0.7,
                ..Params::default()
            })),
            ..Params::default()
        }
    }

    fn formula(q: &Params, v: f64) -> f64 {
        sgn(v) * (q.fc + (q.fs - q.fc) * (-(v / q.vs).abs().powf(q.delta)).exp()) + q.fv * v
    }

    #[test]
    fn steady_state_is_the_stribeck_curve() {
        testing::assert_map::<StribeckExp>(&Params::default(), formula);
        testing::assert_map::<StribeckExp>(&asymmetric(), formula);
        let p = Params::default();
        // g(0) = fs, g(vs) = fc + (fs - fc)/e, g(inf) = fc.
        assert_eq!(p.level(0.0), p.fs);
        assert!((p.level(p.vs) - (1.0 + 0.5 / std::f64::consts::E)).abs() < 1e-15);
        assert!((p.level(1.0) - p.fc).abs() < 1e-15);
    }

    #[test]
    fn sticks_below_fs_and_breaks_away_at_fs() {
        for p in [Params::default(), asymmetric()] {
            testing::assert_clamp_at_rest::<StribeckExp>(&p);
            testing::assert_stick_and_breakaway::<StribeckExp>(&p);
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
        assert_eq!(
            bad(Params {
                vs: 0.0,
                ..d.clone()
            }),
            "vs"
        );
        assert_eq!(
            bad(Params {
                delta: 0.0,
                ..d.clone()
            }),
            "delta"
        );
        assert_eq!(
            bad(Params {
                fs: f64::INFINITY,
                ..d
            }),
            "fs"
        );
    }

    #[test]
    fn robust_at_every_step() {
        testing::assert_robust::<StribeckExp>(&Params::default(), 1.5);
    }
}
