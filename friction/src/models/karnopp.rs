//! Karnopp model: S1 8.44–8.46 (§8.4.2.3); docs/src/models/karnopp.md, docs/src/models/numerics.md#switched-models.
//!
//! $$\dot p = F_a - F_m,\qquad v = \begin{cases} 0 & |p/M| < D_v \\ p/M & \text{otherwise}
//!   \end{cases}$$
//! $$F_m = \begin{cases} \operatorname{clamp}(F_a, f_s) & |v| < D_v \\
//!   \operatorname{sgn}(v)\left\[f_c + (f_s - f_c)\,e^{-|v/v_s|^{\delta}}\right\] + f_v v
//!   & |v| \ge D_v \end{cases}$$
//!
//! `p` \[kg m/s\] is the momentum, `M` \[kg\] the mass, `F_a = u` \[N\] the applied force, `F_m = F`
//! \[N\] the friction, `D_v = dv` \[m/s\] the velocity window, `fs` \[N\] the breakaway level, `fc` \[N\]
//! the Coulomb level, `fv` \[N s/m\] the viscous coefficient, `vs` \[m/s\] and `delta` \[-\] an optional
//! exponential Stribeck term of the sliding law (S1: "can be upgraded with any other convenient
//! curves"). `vs = 0` (the default) removes it, giving S1 8.46's sliding law
//! `fc sgn(v) + fv v`. `F` resists motion and `sgn(0) = 0`. S1 compares `|p|` with `D_v`; the
//! window is on the velocity `|p/M|`. S1 prints `max(|F_a|, F_C + F_s)` inside the window: an
//! erratum for `min`, i.e. the clamp above. `fs` is convention A; S1 8.46 writes `F_C + F_s(B)`,
//! so `fs = F_C + F_s(B)`. An optional `negative` set applies to negative motion (by `sgn(v)`,
//! or `sgn(u)` at rest). The window compares `<=` so that `dv = 0` means exact rest.
//!
//! **Numerics.** `M` is the mass of the plant the model is coupled to, and Karnopp's momentum
//! is the plant's: the model has no state of its own. Each step evaluates the mode once from
//! `v_k` (docs/src/models/numerics.md#switched-models). Inside the window the law is the exact set-valued stick
//! (`StepLaw::Stick`, limit and kinetic level `fs`, no viscous term; docs/src/models/numerics.md#drift-free-stick): drift-free,
//! and beyond breakaway it is Karnopp's explicit `p_{k+1} = p_k + h (u - fs sgn u)`. Outside the
//! window the sliding law is frozen at `v_k` with the viscous term implicit
//! (`StepLaw::Smooth`), stable at any `dt`. A decelerating body lands in the window only if
//! `dv > h max|u - F| / (2 M)` (docs/src/models/numerics.md#switched-models); otherwise it jumps over it and chatters around
//! rest (bounded, of amplitude about `h |u - F| / M`). The default `dv = 1e-3` m/s satisfies the
//! rule for `h <= 1` ms with `|u - F| <= 2` N on 1 kg; at 10 ms use `dv >= 1e-2` or a
//! set-valued model (`static_coulomb_viscous`, `stribeck_exp`). `dv` should also exceed the
//! sensor's velocity resolution (S1 8.31).

use crate::curve::{sgn, stribeck_level};
use crate::error::check;
use crate::model::{ModelDef, ParamDoc, Validate};
use crate::models::static_curve::{
    DELTA, DV, FC, FS, FV, Static, StaticCurve, VS, check_levels, check_negative,
};
use crate::{ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Karnopp parameters. Defaults: the Canudas 1995 levels (docs/src/models/lugre.md), no Stribeck term.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level of the sliding law \[N\]; default 1.
    pub fc: f64,
    /// Breakaway level, the clamp inside the window \[N\] (convention A, `fs >= fc`); default 1.5.
    pub fs: f64,
    /// Viscous coefficient of the sliding law \[N s/m\]; default 0.4.
    pub fv: f64,
    /// Stribeck velocity of the sliding law \[m/s\]; default 0 (no Stribeck term, S1 8.46).
    pub vs: f64,
    /// Stribeck exponent \[-\]; default 2 (used only when `vs > 0`).
    pub delta: f64,
    /// Velocity window `D_v` \[m/s\]; default 1e-3. Choose `dv > h max|u - F| / (2 m)`.
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
            vs: 0.0,
            delta: 2.0,
            dv: 1e-3,
            negative: None,
        }
    }
}

impl Params {
    /// The smallest window for which a body of mass `mass` decelerating with force imbalance up
    /// to `max_imbalance` \[N\] lands in it at step `h`: `h max|u - F| / (2 m)` (docs/src/models/numerics.md#switched-models).
    pub fn min_window(h: f64, max_imbalance: f64, mass: f64) -> f64 {
        h * max_imbalance / (2.0 * mass)
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check_levels(self.fc, self.fs, self.fv)?;
        check::non_negative("vs", self.vs)?;
        check::positive("delta", self.delta)?;
        check::non_negative("dv", self.dv)?;
        check_negative(self)
    }
}

impl StaticCurve for Params {
    fn negative(&self) -> Option<&Params> {
        self.negative.as_deref()
    }
    /// The sliding level; `vs = 0` is the limit `vs -> 0` of the Stribeck term: `fc` for `v != 0`.
    fn level(&self, speed: f64) -> f64 {
        if self.vs > 0.0 {
            stribeck_level(speed, self.fc, self.fs, self.vs, self.delta)
        } else {
            self.fc
        }
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
    /// Inside the window: exact stick with limit and kinetic level `fs` (S1 8.46 clamp);
    /// outside: the sliding law frozen at `v_k`, viscous term implicit.
    fn law(&self, v: f64, _: f64) -> StepLaw {
        let q = self.side(v);
        if v.abs() <= q.dv {
            let (pos, neg) = (self.side(1.0), self.side(-1.0));
            StepLaw::Stick {
                limit_pos: pos.fs,
                limit_neg: neg.fs,
                kinetic_pos: pos.fs,
                kinetic_neg: neg.fs,
                damping: 0.0,
            }
        } else {
            StepLaw::Smooth {
                offset: q.level(v.abs()) * sgn(v),
                damping: q.fv,
            }
        }
    }
}

/// Marker type of the Karnopp model.
pub type Karnopp = Static<Params>;

impl ModelDef for Karnopp {
    const ID: &'static str = "karnopp";
    const DESCRIPTION: &'static str = "Karnopp velocity window: clamp(u, fs) for |v| <= dv, Coulomb + viscous (+ Stribeck) outside";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        FC,
        ParamDoc {
            description: "breakaway level, the clamp inside the window (convention A, fs >= fc)",
            ..FS
        },
        FV,
        ParamDoc {
            description: "Stribeck velocity of the sliding law; 0 = none (S1 8.46)",
            ..VS
        },
        ParamDoc {
            description: "Stribeck exponent (2 = Gaussian; used when vs > 0)",
            ..DELTA
        },
        ParamDoc {
            description: "velocity window D_v counted as rest; choose > h*max|u-F|/(2m)",
            ..DV
        },
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::static_curve::testing::{self, force, run};
    use crate::scenario::Profile;
    use crate::{FrictionModel, Input, Model};

    /// A window below the velocities `assert_map` samples.
    fn narrow(p: Params) -> Params {
        Params { dv: 1e-4, ..p }
    }

    fn stribeck() -> Params {
        narrow(Params {
            vs: 1e-3,
            ..Params::default()
        })
    }

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

    fn formula(q: &Params, v: f64) -> f64 {
        let phi = if q.vs > 0.0 {
            (-(v / q.vs).abs().powf(q.delta)).exp()
        } else {
            0.0
        };
        sgn(v) * (q.fc + (q.fs - q.fc) * phi) + q.fv * v
    }

    #[test]
    fn outside_the_window_is_the_sliding_law() {
        testing::assert_map::<Karnopp>(&narrow(Params::default()), formula);
        testing::assert_map::<Karnopp>(&stribeck(), formula);
        let mut asym = narrow(asymmetric());
        asym.negative = asym.negative.map(|n| Box::new(narrow(*n)));
        testing::assert_map::<Karnopp>(&asym, formula);
    }

    /// S1 8.46 with the "max" erratum fixed: inside the window F = clamp(u, fs).
    #[test]
    fn inside_the_window_clamps_the_applied_force() {
        for p in [Params::default(), asymmetric()] {
            testing::assert_clamp_at_rest::<Karnopp>(&p);
            let mut m = Model::<Karnopp>::new(p.clone()).unwrap();
            let inp = |v: f64, u: f64| Input {
                v,
                u,
                ..Input::default()
            };
            assert_eq!(m.step(&inp(5e-4, 0.7), 1e-3), 0.7);
            assert_eq!(m.step(&inp(5e-4, 3.0), 1e-3), 1.5);
            assert_eq!(m.step(&inp(-1e-3, -9.0), 1e-3), -p.side(-1.0).fs);
            assert_eq!(m.step(&inp(2e-3, 0.0), 1e-3), 1.0 + 0.4 * 2e-3);
        }
    }

    #[test]
    fn sticks_below_fs_and_breaks_away_at_fs() {
        for p in [Params::default(), asymmetric(), stribeck()] {
            testing::assert_stick_and_breakaway::<Karnopp>(&p);
        }
    }

    #[test]
    fn plant_law_switches_on_the_window() {
        let p = Params::default();
        let law = |v: f64| p.law(v, 0.3);
        assert!(matches!(
            law(5e-4),
            StepLaw::Stick {
                limit_pos: 1.5,
                damping: 0.0,
                ..
            }
        ));
        assert_eq!(
            law(-0.1),
            StepLaw::Smooth {
                offset: -1.0,
                damping: 0.4
            }
        );
    }

    /// A body pushed, then released, lands in the window (dv > h fc/(2m)) and stays at rest.
    #[test]
    fn decelerating_body_lands_in_the_window_and_sticks() {
        let push = force(Profile::Samples {
            t: vec![0.0, 1.0, 1.0 + 1e-9],
            value: vec![3.0, 3.0, 0.0],
        });
        for dt in [1e-4, 1e-3] {
            assert!(Params::default().dv > Params::min_window(dt, 1.0, 1.0));
            let (mut x_end, mut x_10) = (0.0, 0.0);
            let mut v_end = 1.0;
            run::<Karnopp>(&Params::default(), &push, dt, 20.0, |r| {
                if (r.t - 10.0).abs() < 0.5 * dt {
                    x_10 = r.x;
                }
                x_end = r.x;
                v_end = r.v;
            });
            assert!(x_end > 0.5, "dt={dt}: x = {x_end}");
            assert_eq!(v_end, 0.0, "dt={dt}");
            assert_eq!(x_end, x_10, "dt={dt}: drift after stopping");
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
                vs: -1e-3,
                ..d.clone()
            }),
            "vs"
        );
        assert_eq!(bad(Params { dv: -1.0, ..d }), "dv");
    }

    #[test]
    fn robust_at_every_step() {
        testing::assert_robust::<Karnopp>(&Params::default(), 1.5);
        testing::assert_robust::<Karnopp>(&stribeck(), 1.5);
    }
}
