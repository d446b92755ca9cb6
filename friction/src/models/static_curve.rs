//! Shared machinery of the static (memory-less) friction maps: docs/src/models/conventions.md, docs/src/models/numerics.md#switched-models, docs/src/models/numerics.md#drift-free-stick, docs/src/models/index.md#static-maps.
//!
//! Every model of this family (`viscous`, `coulomb_viscous`, `static_coulomb_viscous`,
//! `stribeck_exp`, `stribeck_lorentz`, `tustin`, `static_armstrong`, `karnopp`) is a parameter
//! struct implementing [`StaticCurve`]: per direction of motion a kinetic level `g(|v|)` \[N\], a
//! viscous slope `fv` \[N s/m\] and a breakaway limit `f_lim` \[N\] (convention A). [`Static<P>`]
//! turns any such curve into a model, following Morin's static + kinetic law (S4 eqs. 6–7):
//!
//! $$F(v, u) = \begin{cases} \operatorname{clamp}(u, f_{lim}) & v = 0 \\
//!   g(|v|)\,\operatorname{sgn}(v) + f_v v & v \ne 0 \end{cases}$$
//!
//! - **Sign convention** (docs/src/models/conventions.md): `F` resists motion, the plant is `m dv/dt = u - F`, and
//!   `sgn(0) = 0`.
//! - **Asymmetry** (docs/src/models/conventions.md, S4 Table 1): an optional `negative` parameter set applies to
//!   negative motion, chosen by `sgn(v)`, or by `sgn(u)` at rest ([`StaticCurve::side`]).
//! - **Plant coupling** ([`stick_law`]): backward Euler of the set-valued law (Kikuuwe et al.
//!   2005, docs/src/models/numerics.md#drift-free-stick) as a [`StepLaw::Stick`]: limits `f_lim` per side, kinetic levels
//!   frozen at `|v_k|`, viscous slope implicit in `v_{k+1}`. When the force needed to stop the
//!   body lies within the limits the body ends the step exactly at rest, so it sticks without
//!   drift or chatter at any step; otherwise it slides with `damping >= 0` and a bounded level,
//!   so the step is stable for every `h`. The viscous slope is that of the side `sgn(v_k)` (or
//!   `sgn(u_k)` at rest); a one-step reversal uses the previous side's slope.
//! - **Measured velocities** (lockstep with a bench): `|v| <= dv` counts as rest (a Karnopp
//!   window, S1 8.45) and gives `F = clamp(u, f_lim)`; set `dv` to the sensor's velocity
//!   resolution (S1 8.31). `dv` plays no part in the plant coupling, whose stick is exact
//!   (except in `karnopp`, whose window is part of the model and overrides [`StaticCurve::law`]).
//!
//! These maps have no state: the mode (stick or slip) is decided once per step from `v_k` and
//! `u_k` (docs/src/models/numerics.md#switched-models), and no stick flag needs to be stored.

use crate::curve::sgn;
use crate::error::check;
use crate::model::{Dynamics, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use std::marker::PhantomData;

/// A static friction curve per direction of motion (one model's parameter set).
pub trait StaticCurve:
    Clone + std::fmt::Debug + Default + Serialize + DeserializeOwned + Validate + Send + Sync + 'static
{
    /// The parameter set for negative motion, if the friction is asymmetric.
    fn negative(&self) -> Option<&Self>;

    /// Kinetic level `g(|v|) >= 0` \[N\] at speed `speed = |v|`, without the viscous part.
    fn level(&self, speed: f64) -> f64;

    /// Largest friction held at rest, the breakaway level (convention A) \[N\].
    fn limit(&self) -> f64;

    /// Viscous slope \[N s/m\].
    fn fv(&self) -> f64;

    /// Velocity window counted as rest for measured velocities \[m/s\].
    fn dv(&self) -> f64;

    /// The friction over the next step as a function of `v_{k+1}`, given `v_k` and `u_k`.
    /// Default: the set-valued stick of docs/src/models/numerics.md#drift-free-stick ([`stick_law`]).
    fn law(&self, v: f64, u: f64) -> StepLaw {
        stick_law(self, v, u)
    }

    /// The set that applies to motion of sign `dir` (the positive set for `dir >= 0`).
    #[inline]
    fn side(&self, dir: f64) -> &Self {
        match self.negative() {
            Some(n) if dir < 0.0 => n,
            _ => self,
        }
    }

    /// Sliding friction, the steady-state (Stribeck) curve: `g(|v|) sgn(v) + fv v`.
    #[inline]
    fn sliding(&self, v: f64) -> f64 {
        let q = self.side(v);
        q.level(v.abs()) * sgn(v) + q.fv() * v
    }
}

/// The direction that selects the parameter set: `v`, or `u` at rest (docs/src/models/conventions.md).
#[inline]
pub fn direction(v: f64, u: f64) -> f64 {
    if v != 0.0 { v } else { u }
}

/// The set-valued law of docs/src/models/numerics.md#drift-free-stick over one step: limits `f_lim` per side, kinetic levels
/// `g(|v_k|)` per side, viscous slope of the side `direction(v_k, u_k)`.
pub fn stick_law<P: StaticCurve>(p: &P, v: f64, u: f64) -> StepLaw {
    let (pos, neg) = (p.side(1.0), p.side(-1.0));
    let speed = v.abs();
    let (limit_pos, kinetic_pos) = (pos.limit(), pos.level(speed));
    // A symmetric set needs its (transcendental) levels once.
    let (limit_neg, kinetic_neg) = if std::ptr::eq(pos, neg) {
        (limit_pos, kinetic_pos)
    } else {
        (neg.limit(), neg.level(speed))
    };
    StepLaw::Stick {
        limit_pos,
        limit_neg,
        kinetic_pos,
        kinetic_neg,
        damping: p.side(direction(v, u)).fv(),
    }
}

/// Checks the levels shared by the Coulomb-based curves: `fc > 0`, `fs >= fc` (finite),
/// `fv >= 0`, in this order.
pub(crate) fn check_levels(fc: f64, fs: f64, fv: f64) -> Result<(), ParamError> {
    check::positive("fc", fc)?;
    check::finite("fs", fs)?;
    check::at_least("fs", fs, "fc", fc)?;
    check::non_negative("fv", fv)
}

/// Checks the `negative` set of `p`: valid itself, and without a nested `negative`.
pub(crate) fn check_negative<P: StaticCurve>(p: &P) -> Result<(), ParamError> {
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

/// Doc of `fc`.
pub(crate) const FC: ParamDoc = ParamDoc::new("fc", "N", "Coulomb level");
/// Doc of `fs`.
pub(crate) const FS: ParamDoc = ParamDoc::new(
    "fs",
    "N",
    "breakaway level, the stick limit (convention A, fs >= fc)",
);
/// Doc of `fv`.
pub(crate) const FV: ParamDoc = ParamDoc::new("fv", "N s/m", "viscous coefficient");
/// Doc of `vs`.
pub(crate) const VS: ParamDoc = ParamDoc::new("vs", "m/s", "Stribeck velocity");
/// Doc of `delta`.
pub(crate) const DELTA: ParamDoc = ParamDoc::new("delta", "-", "Stribeck exponent (2 = Gaussian)");
/// Doc of `dv`.
pub(crate) const DV: ParamDoc = ParamDoc::new(
    "dv",
    "m/s",
    "velocity window counted as rest (measured velocities)",
);

/// Static maps have no state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State;

/// Marker type of the model defined by the static curve `P` (each model file names it, e.g.
/// `type StribeckExp = Static<stribeck_exp::Params>`).
pub struct Static<P>(PhantomData<fn() -> P>);

impl<P> std::fmt::Debug for Static<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Static")
    }
}

impl<P: StaticCurve> Dynamics for Static<P> {
    type Params = P;
    type State = State;

    fn initial_state(_: &P) -> State {
        State
    }

    /// Measured velocity: `|v| <= dv` is rest, `F = clamp(u, f_lim)`; else the sliding curve.
    fn step(p: &P, _: &mut State, input: &Input, _: f64) -> f64 {
        let v = if input.v.abs() <= p.side(input.v).dv() {
            0.0
        } else {
            input.v
        };
        p.law(v, input.u).force_at(v, input.u)
    }

    fn law(p: &P, _: &State, input: &Input, _: f64) -> StepLaw {
        p.law(input.v, input.u)
    }

    fn advance(_: &P, _: &mut State, _: &Input, _: f64, _: f64, _: f64) {}

    fn steady_state(p: &P, v: f64) -> Option<f64> {
        Some(p.sliding(v))
    }

    fn state_names(_: &P) -> Vec<String> {
        Vec::new()
    }

    fn state_values(_: &State, _: &mut Vec<f64>) {}
}

/// Test helpers shared by the static-map models.
#[cfg(test)]
pub(crate) mod testing {
    use super::StaticCurve;
    use crate::Input;
    use crate::model::{FrictionModel, Model, ModelDef};
    use crate::scenario::{Profile, Row, Scenario, simulate};

    /// The step sizes every property is checked at.
    pub(crate) const DTS: [f64; 3] = [1e-4, 1e-3, 1e-2];

    fn model<M: ModelDef>(p: &M::Params) -> Model<M> {
        Model::new(p.clone()).expect("valid parameters")
    }

    fn limits<M: ModelDef>(p: &M::Params) -> (f64, f64)
    where
        M::Params: StaticCurve,
    {
        (p.side(1.0).limit(), p.side(-1.0).limit())
    }

    /// A force profile on a 1 kg mass.
    pub(crate) fn force(force: Profile) -> Scenario {
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force,
        }
    }

    /// Runs `sc` for `duration` s at `dt`, calling `f` on every row.
    pub(crate) fn run<M: ModelDef>(
        p: &M::Params,
        sc: &Scenario,
        dt: f64,
        duration: f64,
        f: impl FnMut(&Row),
    ) {
        let mut m = model::<M>(p);
        simulate(&mut m, sc, dt, duration, 1, f);
        assert_eq!(m.quarantined(), 0, "{} quarantined a step", M::ID);
    }

    /// The map equals `expected(set, v)` at several velocities of both signs, through
    /// `steady_state` and the velocity-driven `step`, where `set` is the negative set (if any)
    /// for `v < 0`. Velocities are at least 3e-4 m/s: keep `dv` below that.
    pub(crate) fn assert_map<M: ModelDef>(p: &M::Params, expected: impl Fn(&M::Params, f64) -> f64)
    where
        M::Params: StaticCurve,
    {
        let mut m = model::<M>(p);
        for v in [3e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.1, 1.0] {
            for v in [v, -v] {
                let set = if v < 0.0 {
                    p.negative().unwrap_or(p)
                } else {
                    p
                };
                let want = expected(set, v);
                let tol = 1e-12 * want.abs().max(1.0);
                let ss = m.steady_state(v).unwrap();
                assert!((ss - want).abs() <= tol, "{} v={v}: {ss} vs {want}", M::ID);
                let f = m.step(&Input::velocity(v), 1e-3);
                assert!((f - want).abs() <= tol, "{} v={v}: {f} vs {want}", M::ID);
            }
        }
        assert_eq!(m.steady_state(0.0), Some(0.0));
    }

    /// At rest the velocity-driven step returns `clamp(u, f_lim)` with the limit of `sgn(u)`.
    pub(crate) fn assert_clamp_at_rest<M: ModelDef>(p: &M::Params)
    where
        M::Params: StaticCurve,
    {
        let (lp, ln) = limits::<M>(p);
        let mut m = model::<M>(p);
        let at = |u: f64| Input {
            u,
            ..Input::default()
        };
        assert_eq!(m.step(&at(0.5 * lp), 1e-3), 0.5 * lp);
        assert_eq!(m.step(&at(3.0 * lp), 1e-3), lp);
        assert_eq!(m.step(&at(-0.5 * ln), 1e-3), -0.5 * ln);
        assert_eq!(m.step(&at(-3.0 * ln), 1e-3), -ln);
    }

    /// Drift-free stick and breakaway on a 1 kg mass (docs/src/models/numerics.md#drift-free-stick): a constant force of
    /// 0.9 `f_lim` of either sign and a sine of amplitude 0.9 `f_lim` keep `x` exactly 0 for
    /// 60 s at every step; 1.2 `f_lim` slides; a ramp `u = ±0.05 t` breaks away at
    /// `t = f_lim / 0.05` to one step.
    pub(crate) fn assert_stick_and_breakaway<M: ModelDef>(p: &M::Params)
    where
        M::Params: StaticCurve,
    {
        let (lp, ln) = limits::<M>(p);
        let constant = |value: f64| force(Profile::Constant { value });
        for dt in DTS {
            let below = [
                constant(0.9 * lp),
                constant(-0.9 * ln),
                force(Profile::Sine {
                    amplitude: 0.9 * lp.min(ln),
                    omega: 2.0,
                    offset: 0.0,
                    phase: 0.0,
                }),
            ];
            for sc in &below {
                run::<M>(p, sc, dt, 60.0, |r| {
                    assert!(r.x == 0.0 && r.v == 0.0, "{} dt={dt} {sc:?}: {r:?}", M::ID);
                });
            }
            for (sc, dir) in [(constant(1.2 * lp), 1.0), (constant(-1.2 * ln), -1.0)] {
                let mut last = 0.0;
                run::<M>(p, &sc, dt, 5.0, |r| last = r.x);
                assert!(dir * last > 0.0, "{} dt={dt}: no slide, x = {last}", M::ID);
            }
            for (dir, lim) in [(1.0, lp), (-1.0, ln)] {
                let rate = 0.05 * dir;
                let sc = force(Profile::Ramp { rate, offset: 0.0 });
                let mut moved: Option<f64> = None;
                run::<M>(p, &sc, dt, lim / 0.05 + 1.0, |r| {
                    if moved.is_none() && r.v != 0.0 {
                        assert!(dir * r.v > 0.0, "{}: wrong direction", M::ID);
                        // The row at t_j carries v_j: the step that broke away began at t_j - dt.
                        moved = Some(r.t - dt);
                    }
                });
                let t = moved.unwrap_or_else(|| panic!("{} dt={dt}: no breakaway", M::ID));
                assert!(
                    (t - lim / 0.05).abs() <= dt * (1.0 + 1e-6),
                    "{} dt={dt}: breakaway at {t}, expected {}",
                    M::ID,
                    lim / 0.05
                );
            }
        }
    }

    /// Robustness (COMMON.md): spring pull (m = 1, k = 2, V = 0.1), force sines of amplitude
    /// 0.5 and 2 `scale`, a velocity sine and a position sine, 60 s at every step: all outputs
    /// finite, `|v| <= 5 scale + 1`, `|F| <= 3 scale + fv (5 scale + 1)`.
    pub(crate) fn assert_robust<M: ModelDef>(p: &M::Params, scale: f64)
    where
        M::Params: StaticCurve,
    {
        let sine = |amplitude: f64, omega: f64| Profile::Sine {
            amplitude,
            omega,
            offset: 0.0,
            phase: 0.0,
        };
        let scenarios = [
            Scenario::SpringPull {
                mass: 1.0,
                stiffness: 2.0,
                pull_velocity: 0.1,
                pull_stop_s: None,
            },
            force(sine(0.5 * scale, 1.0)),
            force(sine(2.0 * scale, 1.0)),
            Scenario::Velocity {
                velocity: sine(0.1, 2.0),
            },
            Scenario::Position {
                position: sine(0.01, 3.0),
            },
        ];
        let fv = p.side(1.0).fv().max(p.side(-1.0).fv());
        let v_max = 5.0 * scale + 1.0;
        let f_max = 3.0 * scale + fv * v_max;
        for dt in DTS {
            for sc in &scenarios {
                run::<M>(p, sc, dt, 60.0, |r| {
                    let ok = [r.x, r.v, r.u, r.friction].iter().all(|x| x.is_finite())
                        && r.v.abs() <= v_max
                        && r.friction.abs() <= f_max;
                    assert!(ok, "{} dt={dt} {sc:?}: {r:?}", M::ID);
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::{ModelSpec, build_model};

    const IDS: [&str; 8] = [
        "viscous",
        "coulomb_viscous",
        "static_coulomb_viscous",
        "stribeck_exp",
        "stribeck_lorentz",
        "tustin",
        "static_armstrong",
        "karnopp",
    ];

    /// Through the registry: a `negative` overlay changes only negative motion, and the
    /// velocity-driven friction is odd for symmetric parameters.
    #[test]
    fn registry_builds_asymmetric_sets() {
        for id in IDS {
            let spec = |params| ModelSpec {
                model: id.into(),
                params,
            };
            let sym = build_model(&spec(serde_json::json!({}))).unwrap();
            let asym = build_model(&spec(serde_json::json!({"negative": {"fv": 9.0}}))).unwrap();
            for v in [0.01, 0.3] {
                let (p, n) = (sym.steady_state(v).unwrap(), sym.steady_state(-v).unwrap());
                assert_eq!(p, -n, "{id}");
                assert_eq!(asym.steady_state(v), Some(p), "{id}");
                let fv = sym.params_json()["fv"].as_f64().unwrap();
                let want = n - (9.0 - fv) * v;
                let got = asym.steady_state(-v).unwrap();
                assert!((got - want).abs() < 1e-12, "{id}: {got} vs {want}");
            }
        }
    }
}
