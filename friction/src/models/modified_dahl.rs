//! Modified Dahl model (Canudas de Wit et al. 1993): S1 8.53–8.56, docs/src/models/modified_dahl.md.
//!
//! $$\varepsilon \dot z = -|v| z + v f(v),\qquad F = z + \alpha_2 v,\qquad
//!   f(v) = \alpha_0 + \alpha_1 e^{-(v/v_0)^2}$$
//!
//! `z` \[N\] is the internal friction state, `alpha0` \[N\] the Coulomb level, `alpha1` \[N\] the
//! Stribeck excess, `alpha2` \[N s/m\] the viscous coefficient, `v0` \[m/s\] the Stribeck velocity and
//! `epsilon` \[m\] a length (the time constant of `z` is `epsilon/|v|`, S1: "proportional to 1/v").
//! S1 loses the minus sign in 8.53 and calls the parameters "alpha1, alpha2, alpha3" (
//! docs/src/sources.md#errata); the names here are S1's symbols 8.54–8.55. F resists motion (sign of v in sliding).
//!
//! F_s convention: S1 writes the Stribeck term as an excess (convention B). The fields keep S1's
//! meaning (`alpha1` is the excess), and the breakaway level in convention A is
//! `alpha0 + alpha1` ([`Params::breakaway`]), as in M2's `alpha` (S1 8.61).
//!
//! Steady state (S1 8.56): `F_ss = (alpha0 + alpha1 exp(-(v/v0)^2)) sgn v + alpha2 v`. The
//! presliding stiffness at `z = 0` is `(alpha0 + alpha1)/epsilon`, and `|z| <= alpha0 + alpha1`
//! is invariant. The model has no micro-damping: stick oscillations are damped only by the plant
//! and `alpha2` (S1 §8.6 reports them).
//!
//! Defaults: S1 gives no values. We use Canudas-like values consistent with the LuGre set
//! (docs/src/models/lugre.md): `alpha0 = 1 N`, `alpha1 = 0.5 N` (breakaway 1.5 N), `alpha2 = 0.4 N s/m`,
//! `v0 = 1e-3 m/s`, and `epsilon = 1.5e-5 m` so that the presliding stiffness
//! `(alpha0 + alpha1)/epsilon = 1e5 N/m` equals LuGre's `sigma0`.
//!
//! Numerics: the state is stiff (`lambda = |v|/epsilon`, 6.7e3 1/s at 0.1 m/s). The
//! velocity-driven step uses the exact update over `Δx = v_k h` with `f` frozen at `v_k`
//! (docs/src/models/numerics.md#exact-and-implicit-state-updates (items 1–2)), `z_{k+1} = f sgn(Δx) + (z_k - f sgn(Δx)) exp(-|Δx|/epsilon)`, a
//! convex combination that keeps `|z| <= alpha0 + alpha1` at any `h`. The plant coupling is
//! backward Euler with `|v|` and `f` frozen at `v_k`:
//! `z_{k+1} = (z_k + h f(v_k) v_{k+1}/epsilon)/(1 + h |v_k|/epsilon)`, affine in `v_{k+1}` with
//! positive slope (stable at any `h`); its fixed point is the exact steady state.

use crate::curve::{guard, relax, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Modified Dahl parameters. Defaults: Canudas-like values (module doc), S1 gives none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 1.
    pub alpha0: f64,
    /// Stribeck excess over `alpha0` \[N\] (convention B; breakaway = alpha0 + alpha1); default 0.5.
    pub alpha1: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub alpha2: f64,
    /// Stribeck velocity \[m/s\]; default 1e-3.
    pub v0: f64,
    /// Relaxation length \[m\] (time constant epsilon/|v|); default 1.5e-5, i.e. a presliding
    /// stiffness (alpha0 + alpha1)/epsilon = 1e5 N/m.
    pub epsilon: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            alpha0: 1.0,
            alpha1: 0.5,
            alpha2: 0.4,
            v0: 1e-3,
            epsilon: 1.5e-5,
        }
    }
}

impl Params {
    /// Stribeck level `f(v) = alpha0 + alpha1 exp(-(v/v0)^2)` (S1 8.55).
    #[inline]
    pub fn f(&self, v: f64) -> f64 {
        let r = v / self.v0;
        self.alpha0 + self.alpha1 * (-r * r).exp()
    }

    /// Breakaway level in convention A, `alpha0 + alpha1` \[N\]; also the bound on `|z|`.
    pub fn breakaway(&self) -> f64 {
        self.alpha0 + self.alpha1
    }

    /// Presliding stiffness `dF/dx` at `z = 0`: `(alpha0 + alpha1)/epsilon` (docs/src/models/modified_dahl.md).
    pub fn presliding_stiffness(&self) -> f64 {
        self.breakaway() / self.epsilon
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("alpha0", self.alpha0)?;
        check::non_negative("alpha1", self.alpha1)?;
        check::non_negative("alpha2", self.alpha2)?;
        check::positive("v0", self.v0)?;
        check::positive("epsilon", self.epsilon)
    }
}

/// Modified Dahl state: the internal friction state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Internal friction state `z` \[N\].
    pub z: f64,
}

/// Marker type of the modified Dahl model.
#[derive(Clone, Copy, Debug)]
pub struct ModifiedDahl;

/// The velocity-driven step: exact update over `Δx = v h` with `f` frozen (docs/src/models/modified_dahl.md).
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let z0 = guard(s.z, p.breakaway());
    let z1 = relax(z0, p.f(v) * sgn(v), (v * dt).abs() / p.epsilon);
    s.z = z1;
    z1 + p.alpha2 * v
}

impl Dynamics for ModifiedDahl {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Backward Euler with `|v|` and `f` frozen at `v_k`: `F = z_{k+1} + alpha2 v_{k+1}`.
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let v = input.v;
        let d = 1.0 + dt * v.abs() / p.epsilon;
        StepLaw::Smooth {
            offset: s.z / d,
            damping: dt * p.f(v) / (p.epsilon * d) + p.alpha2,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        let v = input.v;
        let d = 1.0 + dt * v.abs() / p.epsilon;
        s.z = guard((s.z + dt * p.f(v) * v_next / p.epsilon) / d, p.breakaway());
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.f(v) * sgn(v) + p.alpha2 * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["z".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.z);
    }
}

impl ModelDef for ModifiedDahl {
    const ID: &'static str = "modified_dahl";
    const REFINE_LAW: bool = true;
    const DESCRIPTION: &'static str =
        "Modified Dahl model (Canudas de Wit et al. 1993): first-order presliding with Stribeck";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("alpha0", "N", "Coulomb level"),
        ParamDoc::new(
            "alpha1",
            "N",
            "Stribeck excess over alpha0 (breakaway = alpha0 + alpha1)",
        ),
        ParamDoc::new("alpha2", "N s/m", "viscous coefficient"),
        ParamDoc::new("v0", "m/s", "Stribeck velocity"),
        ParamDoc::new(
            "epsilon",
            "m",
            "relaxation length (presliding stiffness (alpha0+alpha1)/epsilon)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::models::dahl_family::assert_robust;
    use crate::scenario::{Scenario, simulate};

    fn model() -> Model<ModifiedDahl> {
        Model::new(Params::default()).unwrap()
    }

    #[test]
    fn steady_state_is_s1_8_56() {
        let p = Params::default();
        for &v in &[1e-4, 5e-4, 1e-3, 3e-3, 0.01, 0.1, -2e-3, -0.05] {
            let mut m = model();
            let mut f = 0.0;
            for _ in 0..20_000 {
                f = m.step(&Input::velocity(v), 1e-3);
            }
            let ss = (p.alpha0 + p.alpha1 * (-(v / p.v0).powi(2)).exp()) * sgn(v) + p.alpha2 * v;
            assert!((m.steady_state(v).unwrap() - ss).abs() < 1e-15);
            assert!((f - ss).abs() < 1e-9, "v={v}: {f} vs {ss}");
        }
        // Convention A: the breakaway level is alpha0 + alpha1, reached as v -> 0.
        assert!((m_ss(1e-9) - p.breakaway()).abs() < 1e-9);
    }

    fn m_ss(v: f64) -> f64 {
        model().steady_state(v).unwrap()
    }

    #[test]
    fn steady_state_under_plant_coupling() {
        // A mass pulled by a spring at constant speed ends up sliding on the steady-state curve.
        let sc = Scenario::SpringPull {
            mass: 1.0,
            stiffness: 2.0,
            pull_velocity: 0.1,
            pull_stop_s: None,
        };
        let mut m = Model::<ModifiedDahl>::new(Params {
            alpha2: 4.0,
            ..Params::default()
        })
        .unwrap();
        let mut last = (0.0, 0.0);
        simulate(&mut m, &sc, 1e-3, 60.0, 1, |r| last = (r.v, r.friction));
        let ss = m.steady_state(last.0).unwrap();
        assert!((last.0 - 0.1).abs() < 1e-6, "{last:?}");
        assert!((last.1 - ss).abs() < 1e-6, "{last:?} vs {ss}");
    }

    #[test]
    fn presliding_stiffness_is_f0_over_epsilon() {
        let p = Params::default();
        assert!((p.presliding_stiffness() - 1e5).abs() < 1e-6);
        let mut s = State::default();
        let (dt, v) = (1e-4, 1e-6);
        let mut f = 0.0;
        for _ in 0..10 {
            f = step(&p, &mut s, &Input::velocity(v), dt);
        }
        let x = 10.0 * v * dt;
        let k = (f - p.alpha2 * v) / x;
        assert!((k / p.presliding_stiffness() - 1.0).abs() < 1e-3, "{k}");
    }

    #[test]
    fn state_bound_holds_at_every_step_size() {
        let p = Params::default();
        for &dt in &[1e-4, 1e-3, 1e-2] {
            let mut m = model();
            for k in 0..20_000 {
                let v = 0.5 * (k as f64 * 0.01).sin();
                m.step(&Input::velocity(v), dt);
                assert!(m.state.z.abs() <= p.breakaway() * (1.0 + 1e-12));
            }
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let bad = Params {
            epsilon: 0.0,
            ..Params::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "epsilon");
        let bad = Params {
            alpha1: -0.1,
            ..Params::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "alpha1");
    }

    #[test]
    fn robust_in_every_scenario_and_step() {
        assert_robust::<ModifiedDahl>(Params::default().breakaway());
    }
}
