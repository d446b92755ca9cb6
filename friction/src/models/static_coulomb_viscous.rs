//! Static + Coulomb + viscous friction (Morin stiction, "S+C+V"): S4 eqs. 2, 4, 6, 7; S1 8.14;
//! docs/src/models/static_coulomb_viscous.md.
//!
//! $$F = \begin{cases} \operatorname{clamp}(u, f_s) & v = 0 \\
//!   f_c \operatorname{sgn}(v) + f_v v & v \ne 0 \end{cases}$$
//!
//! `fs` \[N\] is the breakaway (maximum static) level, `fc` \[N\] the Coulomb level, `fv` \[N s/m\] the
//! viscous coefficient, `v` \[m/s\] the velocity, `u` \[N\] the applied force; `F` resists motion,
//! `sgn(0) = 0`, and `clamp(x, a) = x` if `|x| < a`, else `a sgn(x)` (S4 eq. 8). The friction
//! drops from `fs` to `fc` when motion starts (no Stribeck curve). `fs` is convention A; S1 8.14
//! writes the limit `F_C + F_s` (convention B), so `fs = F_C + F_s(B)`. An optional `negative` set
//! applies to negative motion (by `sgn(v)`, or `sgn(u)` at rest).
//!
//! Numerics (see [`static_curve`](crate::models::static_curve)): in a plant "v = 0" is replaced by
//! the exact backward-Euler stick of Kikuuwe et al. 2005 (docs/src/models/numerics.md#drift-free-stick) with limit `fs` and
//! kinetic level `fc`: drift-free stick and a stable step at any `dt`. With measured velocities
//! `|v| <= dv` counts as rest (a Karnopp window, S1 8.45).

use crate::ParamError;
use crate::error::check;
use crate::model::{ModelDef, ParamDoc, Validate};
use crate::models::static_curve::{
    DV, FC, FS, FV, Static, StaticCurve, check_levels, check_negative,
};
use serde::{Deserialize, Serialize};

/// Static + Coulomb + viscous parameters. Defaults: the Canudas 1995 levels (docs/src/models/lugre.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb (kinetic) level \[N\]; default 1.
    pub fc: f64,
    /// Breakaway level, the stick limit \[N\] (convention A, `fs >= fc`); default 1.5.
    pub fs: f64,
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
            fs: 1.5,
            fv: 0.4,
            dv: 0.0,
            negative: None,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check_levels(self.fc, self.fs, self.fv)?;
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
        self.fs
    }
    fn fv(&self) -> f64 {
        self.fv
    }
    fn dv(&self) -> f64 {
        self.dv
    }
}

/// Marker type of the static + Coulomb + viscous model.
pub type StaticCoulombViscous = Static<Params>;

impl ModelDef for StaticCoulombViscous {
    const ID: &'static str = "static_coulomb_viscous";
    const DESCRIPTION: &'static str =
        "Morin stiction clamp(u, fs) at rest + Coulomb + viscous when sliding (S4 eqs. 6-7)";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[FC, FS, FV, DV];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::sgn;
    use crate::models::static_curve::testing;
    use crate::{FrictionModel, Input, Model};

    fn asymmetric() -> Params {
        Params {
            negative: Some(Box::new(Params {
                fc: 1.2,
                fs: 2.5,
                fv: 0.6,
                ..Params::default()
            })),
            ..Params::default()
        }
    }

    #[test]
    fn steady_state_is_coulomb_plus_viscous() {
        let formula = |q: &Params, v: f64| q.fc * sgn(v) + q.fv * v;
        testing::assert_map::<StaticCoulombViscous>(&Params::default(), formula);
        testing::assert_map::<StaticCoulombViscous>(&asymmetric(), formula);
    }

    #[test]
    fn sticks_below_fs_and_breaks_away_at_fs() {
        for p in [Params::default(), asymmetric()] {
            testing::assert_clamp_at_rest::<StaticCoulombViscous>(&p);
            testing::assert_stick_and_breakaway::<StaticCoulombViscous>(&p);
        }
    }

    #[test]
    fn window_counts_as_rest_for_measured_velocities() {
        let p = Params {
            dv: 1e-3,
            ..Params::default()
        };
        let mut m = Model::<StaticCoulombViscous>::new(p).unwrap();
        let inp = |v: f64, u: f64| Input {
            v,
            u,
            ..Input::default()
        };
        assert_eq!(m.step(&inp(5e-4, 1.2), 1e-3), 1.2);
        assert_eq!(m.step(&inp(-1e-3, 9.0), 1e-3), 1.5);
        assert_eq!(m.step(&inp(2e-3, 1.2), 1e-3), 1.0 + 0.4 * 2e-3);
    }

    #[test]
    fn rejects_bad_params() {
        let bad = |p: Params| p.validate().unwrap_err().to_string();
        let d = Params::default();
        assert_eq!(
            bad(Params {
                fs: 0.5,
                ..d.clone()
            }),
            "fs (0.5) must be >= fc (1)"
        );
        assert!(
            bad(Params {
                fc: -1.0,
                ..d.clone()
            })
            .starts_with("fc")
        );
        assert!(
            bad(Params {
                fv: -1.0,
                ..d.clone()
            })
            .starts_with("fv")
        );
        assert!(bad(Params { dv: -1.0, ..d }).starts_with("dv"));
        let mut p = asymmetric();
        p.negative.as_mut().unwrap().fs = 0.1;
        assert!(bad(p).starts_with("negative.fs"));
    }

    #[test]
    fn robust_at_every_step() {
        testing::assert_robust::<StaticCoulombViscous>(&Params::default(), 1.5);
    }
}
