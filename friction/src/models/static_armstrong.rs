//! Static + Armstrong friction ("S+A"): S4 eqs. 5–7 and §5.2 (iii); docs/src/models/static_coulomb_viscous.md, docs/src/models/stribeck_exp.md, docs/src/models/improved_static.md.
//!
//! $$F = \begin{cases} \operatorname{clamp}(u, f_s) & v = 0 \\
//!   \operatorname{sgn}(v)\left\[f_c + (f_s - f_c)\,e^{-|v/v_s|^{\delta}}\right\] + f_v v
//!   & v \ne 0 \end{cases}$$
//!
//! Morin's stiction limit `fs` at rest (S4 eqs. 2, 6) with Armstrong's exponential kinetic curve
//! (S4 eq. 5), as Sánchez-Mazuca & Campa simulate it. `fc` \[N\] is the Coulomb level, `fs` \[N\] the
//! maximum static friction (convention A, also `g(0)`), `vs` \[m/s\] the Stribeck velocity,
//! `delta` \[-\] the fitted exponent (S4's `delta_v`), `fv` \[N s/m\] the viscous coefficient; `F`
//! resists motion and `sgn(0) = 0`. The curve is that of `stribeck_exp`; this model carries S4's
//! identified values as defaults.
//!
//! Defaults: S4 Table 1, column (+) (a direct-drive motor, J = 0.167 kg m^2; the values are in
//! N m, rad/s and N m s/rad, read here as N, m/s and N s/m). [`Params::s4_table1`] adds the
//! (−) column as the `negative` set. Under the ramp `u = 0.05 t` (S4 Fig. 10) the body breaks
//! away at `t = fs/0.05` = 352.3 s ((+) set) and 476.3 s ((−) set), docs/src/reproduction.md#check-1
//! (S4 reports ≈ 360 s for S+A).
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

/// Static + Armstrong parameters. Defaults: S4 Table 1 (+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 8.955 (S4 Table 1 (+)).
    pub fc: f64,
    /// Maximum static friction, the stick limit and `g(0)` \[N\] (convention A, `fs >= fc`);
    /// default 17.617.
    pub fs: f64,
    /// Viscous coefficient \[N s/m\]; default 5.234.
    pub fv: f64,
    /// Stribeck velocity \[m/s\]; default 0.145.
    pub vs: f64,
    /// Stribeck exponent `delta_v` \[-\]; default 1.032.
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
            fc: 8.955,
            fs: 17.617,
            fv: 5.234,
            vs: 0.145,
            delta: 1.032,
            dv: 0.0,
            negative: None,
        }
    }
}

impl Params {
    /// S4 Table 1 for both directions: column (+) with column (−) as the `negative` set.
    pub fn s4_table1() -> Params {
        Params {
            negative: Some(Box::new(Params {
                fc: 10.01,
                fs: 23.813,
                fv: 5.335,
                vs: 0.078,
                delta: 1.286,
                ..Params::default()
            })),
            ..Params::default()
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

/// Marker type of the static + Armstrong model.
pub type StaticArmstrong = Static<Params>;

impl ModelDef for StaticArmstrong {
    const ID: &'static str = "static_armstrong";
    const DESCRIPTION: &'static str =
        "static + Armstrong (S+A, S4): clamp(u, fs) at rest, exponential Stribeck when sliding";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        FC,
        FS,
        FV,
        VS,
        ParamDoc {
            description: "Stribeck exponent delta_v (S4 eq. 5)",
            ..DELTA
        },
        DV,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::sgn;
    use crate::models::static_curve::testing;

    fn formula(q: &Params, v: f64) -> f64 {
        sgn(v) * (q.fc + (q.fs - q.fc) * (-(v / q.vs).abs().powf(q.delta)).exp()) + q.fv * v
    }

    #[test]
    fn steady_state_is_the_armstrong_curve() {
        testing::assert_map::<StaticArmstrong>(&Params::default(), formula);
        testing::assert_map::<StaticArmstrong>(&Params::s4_table1(), formula);
    }

    /// Also docs/src/reproduction.md#check-1: S+A under `u = 0.05 t` breaks away at fs/0.05 = 352.3 s
    /// (+) and 476.3 s (−).
    #[test]
    fn sticks_below_fs_and_breaks_away_at_fs() {
        // Table 1 (+) is the default set; (−) covers the negative side.
        testing::assert_clamp_at_rest::<StaticArmstrong>(&Params::default());
        testing::assert_clamp_at_rest::<StaticArmstrong>(&Params::s4_table1());
        testing::assert_stick_and_breakaway::<StaticArmstrong>(&Params::s4_table1());
        let p = Params::s4_table1();
        assert!((p.fs / 0.05 - 352.34).abs() < 0.01);
        assert!((p.negative.unwrap().fs / 0.05 - 476.26).abs() < 0.01);
    }

    #[test]
    fn rejects_bad_params() {
        let bad = |p: Params| p.validate().unwrap_err().field;
        let d = Params::default();
        assert_eq!(
            bad(Params {
                fs: 1.0,
                ..d.clone()
            }),
            "fs"
        );
        assert_eq!(
            bad(Params {
                vs: -1.0,
                ..d.clone()
            }),
            "vs"
        );
        assert_eq!(bad(Params { delta: 0.0, ..d }), "delta");
    }

    #[test]
    fn robust_at_every_step() {
        testing::assert_robust::<StaticArmstrong>(&Params::default(), 17.617);
    }
}
