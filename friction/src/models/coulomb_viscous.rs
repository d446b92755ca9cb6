//! Coulomb + viscous friction ("C+V"): S1 8.11–8.13, S4 eq. 4, S0 eqs. 1–3; docs/src/models/coulomb.md, docs/src/models/viscous.md.
//!
//! $$F = f_c \operatorname{sgn}(v) + f_v v \quad (v \ne 0), \qquad
//!   F = \operatorname{clamp}(u, f_c) \quad (v = 0)$$
//!
//! `fc` \[N\] is the Coulomb level, `fv` \[N s/m\] the viscous coefficient, `v` \[m/s\] the velocity and
//! `u` \[N\] the applied force; `F` resists motion and `sgn(0) = 0` (docs/src/models/conventions.md). At rest the law
//! is set-valued with limit `fc` (there is no separate static level: `fs` does not apply), like
//! `coulomb`. An optional `negative` set applies to negative motion (by `sgn(v)`, or `sgn(u)` at
//! rest). S4 (§5.2 (i), Table 1) uses this model with `f_c`, `f_v` of the Armstrong fit.
//!
//! Numerics (see [`static_curve`](crate::models::static_curve)): in a plant the set-valued law
//! is solved exactly by backward Euler (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick), so a body sticks
//! without drift and the step is stable at any `dt`. With measured velocities `|v| <= dv` counts
//! as rest (a Karnopp window, S1 8.45).

use crate::ParamError;
use crate::error::check;
use crate::model::{ModelDef, ParamDoc, Validate};
use crate::models::static_curve::{DV, FC, FV, Static, StaticCurve, check_negative};
use serde::{Deserialize, Serialize};

/// Coulomb + viscous parameters. Defaults: the Canudas 1995 levels (docs/src/models/lugre.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level, also the stick limit \[N\]; default 1.
    pub fc: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub fv: f64,
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
            fv: 0.4,
            dv: 0.0,
            negative: None,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("fc", self.fc)?;
        check::non_negative("fv", self.fv)?;
        check::non_negative("dv", self.dv)?;
        check_negative(self)
    }
}

impl StaticCurve for Params {
    fn negative(&self) -> Option<&Params> {
        self.negative.as_deref()
    }
    fn level(&self, _: f64) -> f64 {
        self.fc
    }
    fn limit(&self) -> f64 {
        self.fc
    }
    fn fv(&self) -> f64 {
        self.fv
    }
    fn dv(&self) -> f64 {
        self.dv
    }
}

/// Marker type of the Coulomb + viscous model.
pub type CoulombViscous = Static<Params>;

impl ModelDef for CoulombViscous {
    const ID: &'static str = "coulomb_viscous";
    const DESCRIPTION: &'static str =
        "Coulomb + viscous friction fc*sgn(v) + fv*v, set-valued at rest (C+V)";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc {
            description: "Coulomb level, also the stick limit",
            ..FC
        },
        FV,
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
                fc: 1.4,
                fv: 0.7,
                ..Params::default()
            })),
            ..Params::default()
        }
    }

    #[test]
    fn steady_state_is_coulomb_plus_viscous() {
        let formula = |q: &Params, v: f64| q.fc * sgn(v) + q.fv * v;
        testing::assert_map::<CoulombViscous>(&Params::default(), formula);
        testing::assert_map::<CoulombViscous>(&asymmetric(), formula);
    }

    #[test]
    fn sticks_below_fc_and_breaks_away_at_fc() {
        for p in [Params::default(), asymmetric()] {
            testing::assert_clamp_at_rest::<CoulombViscous>(&p);
            testing::assert_stick_and_breakaway::<CoulombViscous>(&p);
        }
    }

    #[test]
    fn rejects_bad_params() {
        let bad = |p: Params| p.validate().unwrap_err().field;
        let d = Params::default();
        assert_eq!(
            bad(Params {
                fc: 0.0,
                ..d.clone()
            }),
            "fc"
        );
        assert_eq!(
            bad(Params {
                fv: -1.0,
                ..d.clone()
            }),
            "fv"
        );
        assert_eq!(bad(Params { dv: -1.0, ..d }), "dv");
    }

    #[test]
    fn robust_at_every_step() {
        testing::assert_robust::<CoulombViscous>(&Params::default(), 1.0);
    }
}
