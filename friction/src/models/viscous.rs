//! Viscous friction: S1 8.13, S0 eq. 1; docs/src/models/viscous.md.
//!
//! $$F = f_v\, v$$
//!
//! `fv` \[N s/m\] is the viscous coefficient (S0 writes `d`), `v` \[m/s\] the sliding velocity;
//! `F` resists motion (docs/src/models/conventions.md). An optional `negative` set gives a separate `fv` for
//! negative motion (S4 Table 1 identifies `f_v` per direction).
//!
//! Numerics: the map is linear, so the plant coupling is the implicit
//! `StepLaw::Smooth { offset: 0, damping: fv }`, stable at any step (backward Euler of a
//! linear damper). There is no breakaway level (`fs` convention does not apply) and no state.

use crate::error::check;
use crate::model::{ModelDef, ParamDoc, Validate};
use crate::models::static_curve::{FV, Static, StaticCurve, check_negative, direction};
use crate::{ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Viscous parameters. Default: the Canudas 1995 `sigma2` (docs/src/models/lugre.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub fv: f64,
    /// Parameters for negative motion, if the friction is asymmetric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative: Option<Box<Params>>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            fv: 0.4,
            negative: None,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("fv", self.fv)?;
        check_negative(self)
    }
}

impl StaticCurve for Params {
    fn negative(&self) -> Option<&Params> {
        self.negative.as_deref()
    }
    fn level(&self, _: f64) -> f64 {
        0.0
    }
    fn limit(&self) -> f64 {
        0.0
    }
    fn fv(&self) -> f64 {
        self.fv
    }
    fn dv(&self) -> f64 {
        0.0
    }
    /// Linear and single-valued: implicit in `v_{k+1}`.
    fn law(&self, v: f64, u: f64) -> StepLaw {
        StepLaw::Smooth {
            offset: 0.0,
            damping: self.side(direction(v, u)).fv,
        }
    }
}

/// Marker type of the viscous model.
pub type Viscous = Static<Params>;

impl ModelDef for Viscous {
    const ID: &'static str = "viscous";
    const DESCRIPTION: &'static str = "viscous friction fv*v";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[FV];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::static_curve::testing::{self, DTS, force, run};
    use crate::scenario::Profile;

    fn asymmetric() -> Params {
        Params {
            negative: Some(Box::new(Params {
                fv: 1.3,
                negative: None,
            })),
            ..Params::default()
        }
    }

    #[test]
    fn steady_state_is_linear_per_direction() {
        let formula = |q: &Params, v: f64| q.fv * v;
        testing::assert_map::<Viscous>(&Params::default(), formula);
        testing::assert_map::<Viscous>(&asymmetric(), formula);
    }

    #[test]
    fn constant_force_reaches_u_over_fv() {
        for p in [Params::default(), asymmetric()] {
            for u in [1.0, -1.0] {
                for dt in DTS {
                    let mut v = 0.0;
                    run::<Viscous>(&p, &force(Profile::Constant { value: u }), dt, 60.0, |r| {
                        v = r.v
                    });
                    let want = u / p.side(u).fv;
                    assert!((v - want).abs() < 1e-6, "dt={dt} u={u}: {v} vs {want}");
                }
            }
        }
    }

    #[test]
    fn rejects_negative_fv() {
        let p = Params {
            fv: -0.1,
            ..Params::default()
        };
        assert_eq!(p.validate().unwrap_err().field, "fv");
        let mut p = asymmetric();
        p.negative.as_mut().unwrap().fv = -1.0;
        assert_eq!(p.validate().unwrap_err().field, "negative.fv");
    }

    #[test]
    fn robust_at_every_step() {
        testing::assert_robust::<Viscous>(&Params::default(), 1.0);
    }
}
