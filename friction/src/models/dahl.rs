//! Dahl model (Dahl 1968): S4 eqs. 9–10, S1 §8.3.5, docs/src/models/dahl.md.
//!
//! $$F = \sigma_0 z + f_v v,\qquad \dot z = v - \frac{\sigma_0 |v|}{f_c} z$$
//!
//! `z` \[m\] is the mean bristle deflection, `sigma0` \[N/m\] the bristle (presliding) stiffness,
//! `fc` \[N\] the Coulomb level and `fv` \[N s/m\] the viscous coefficient. F resists motion (it has
//! the sign of v in sliding, docs/src/models/conventions.md). Dahl has no Stribeck effect, so there is no breakaway
//! level above `fc` (the F_s convention does not arise). The steady state is
//! `F_ss = fc sgn v + fv v` (S4 §2.2.1). Under a constant force `tau0` on a mass (S4 §2.2.1): for
//! `|tau0| <= fc` the body comes to rest with `z = tau0/sigma0`; for `|tau0| > fc` it slides at
//! `|v| = (|tau0| - fc)/fv`. If `|z(0)| <= fc/sigma0` then `|z| <= fc/sigma0` for all time.
//! The model is rate-independent: `dz/dx = 1 - (sigma0/fc) sgn(dx) z`.
//!
//! Defaults: S4 and S1 give no translational set; we use the Canudas 1995 LuGre values
//! (docs/src/models/lugre.md) for the shared parameters, `sigma0 = 1e5 N/m`, `fc = 1 N`, `fv = 0.4 N s/m`,
//! so Dahl and LuGre can be compared on the same bench.
//!
//! Numerics: the state is stiff (`lambda = sigma0 |v| / fc`, 1e4 1/s at 0.1 m/s). The
//! velocity-driven step uses the frozen-v exact exponential (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 1)), a convex
//! combination of `z_k` and `sgn(v) fc/sigma0`, so `|z| <= fc/sigma0` is kept at every `h`. The
//! plant coupling is backward Euler with `lambda` frozen at `v_k` (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 5) with `sigma1 = 0`),
//! `z_{k+1} = (z_k + h v_{k+1})/(1 + h lambda)`, affine in `v_{k+1}` with positive slope, so the
//! coupled step is stable at any `h`; its fixed point is the exact steady state.

use crate::curve::{guard, relax, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Dahl parameters. Defaults: the Canudas 1995 values of the shared parameters (docs/src/models/lugre.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Bristle (presliding) stiffness \[N/m\]; default 1e5.
    pub sigma0: f64,
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub fv: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            sigma0: 1e5,
            fc: 1.0,
            fv: 0.4,
        }
    }
}

impl Params {
    /// Presliding stiffness `dF/dx` at `z = 0`: `sigma0` (docs/src/models/dahl.md).
    pub fn presliding_stiffness(&self) -> f64 {
        self.sigma0
    }

    /// Bound on the bristle deflection, `fc/sigma0` (the saturation displacement), kept by every
    /// update (docs/src/models/dahl.md).
    pub fn z_max(&self) -> f64 {
        self.fc / self.sigma0
    }

    /// Relaxation rate of `z` with `v` frozen, `sigma0 |v| / fc` \[1/s\] (docs/src/models/numerics.md#stability-limits).
    #[inline]
    pub fn lambda(&self, v: f64) -> f64 {
        self.sigma0 * v.abs() / self.fc
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("sigma0", self.sigma0)?;
        check::positive("fc", self.fc)?;
        check::non_negative("fv", self.fv)
    }
}

/// Dahl state: the mean bristle deflection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Bristle deflection `z` \[m\].
    pub z: f64,
}

/// Marker type of the Dahl model.
#[derive(Clone, Copy, Debug)]
pub struct Dahl;

/// The velocity-driven step (exact frozen-v update, docs/src/models/numerics.md#exact-and-implicit-state-updates (item 1)).
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let z0 = guard(s.z, p.z_max());
    let z1 = relax(z0, sgn(v) * p.z_max(), p.lambda(v) * dt);
    s.z = z1;
    p.sigma0 * z1 + p.fv * v
}

impl Dynamics for Dahl {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Backward Euler with `lambda` frozen at `v_k` (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 5), `sigma1 = 0`).
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let d = 1.0 + dt * p.lambda(input.v);
        StepLaw::Smooth {
            offset: p.sigma0 * s.z / d,
            damping: p.sigma0 * dt / d + p.fv,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        let d = 1.0 + dt * p.lambda(input.v);
        s.z = guard((s.z + dt * v_next) / d, p.z_max());
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.fc * sgn(v) + p.fv * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["z".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.z);
    }
}

impl ModelDef for Dahl {
    const ID: &'static str = "dahl";
    const REFINE_LAW: bool = true;
    const DESCRIPTION: &'static str =
        "Dahl model (Dahl 1968): rate-independent presliding hysteresis, Coulomb + viscous sliding";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("sigma0", "N/m", "bristle (presliding) stiffness"),
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new("fv", "N s/m", "viscous coefficient"),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::models::dahl_family::{assert_robust, cycle_forces, max_relative_gap};
    use crate::scenario::{Profile, Scenario, simulate};

    fn model() -> Model<Dahl> {
        Model::new(Params::default()).unwrap()
    }

    #[test]
    fn steady_state_is_coulomb_plus_viscous() {
        for &v in &[1e-4, 1e-3, 0.01, 0.1, 1.0, -2e-3, -0.5] {
            let mut m = model();
            let mut f = 0.0;
            for _ in 0..20_000 {
                f = m.step(&Input::velocity(v), 1e-3);
            }
            let ss = 1.0 * sgn(v) + 0.4 * v;
            assert_eq!(m.steady_state(v), Some(ss));
            assert!((f - ss).abs() < 1e-9, "v={v}: {f} vs {ss}");
        }
    }

    #[test]
    fn presliding_stiffness_is_sigma0() {
        let p = Params::default();
        let mut s = State::default();
        let (dt, v) = (1e-4, 1e-6);
        let mut f = 0.0;
        for _ in 0..10 {
            f = step(&p, &mut s, &Input::velocity(v), dt);
        }
        let x = 10.0 * v * dt;
        let k = (f - p.fv * v) / x;
        assert!((k / p.presliding_stiffness() - 1.0).abs() < 1e-3, "{k}");
    }

    #[test]
    fn deflection_bound_holds_at_every_step_size() {
        let p = Params::default();
        for &dt in &[1e-4, 1e-3, 1e-2] {
            let mut m = model();
            for k in 0..20_000 {
                let v = 0.5 * (k as f64 * 0.01).sin();
                m.step(&Input::velocity(v), dt);
                assert!(m.state.z.abs() <= p.z_max() * (1.0 + 1e-12));
            }
            // Coupled to a mass (backward Euler) the bound holds too.
            let mut m = model();
            let pull = Scenario::SpringPull {
                mass: 1.0,
                stiffness: 2.0,
                pull_velocity: 0.1,
                pull_stop_s: None,
            };
            simulate(&mut m, &pull, dt, 30.0, 1, |r| {
                assert!(r.states[0].abs() <= p.z_max() * (1.0 + 1e-12));
            });
        }
    }

    /// Under `x = A sin(w t)` the friction-position loop closes: after the transient, `F` at the
    /// same phase repeats from cycle to cycle. \[D\] Each cycle contracts the distance to the closed
    /// loop by `exp(-4 sigma0 A / fc)` (the exponential branches over a travel of `4A`), so above
    /// the saturation displacement `fc/sigma0` the loop closes after the first cycle, and below it
    /// within a few cycles, at that predicted rate.
    #[test]
    fn hysteresis_loop_closes() {
        let p = Params::default();
        let c = p.z_max();
        let dt = 1e-4;
        let per = 1000; // steps per period: T = 0.1 s
        let omega = std::f64::consts::TAU / (per as f64 * dt);
        for &(a, cycles) in &[(10.0 * c, 3), (0.5 * c, 14), (0.05 * c, 120)] {
            let forces = cycle_forces(
                &mut model(),
                &Scenario::Position {
                    position: Profile::Sine {
                        amplitude: a,
                        omega,
                        offset: 0.0,
                        phase: 0.0,
                    },
                },
                dt,
                per,
                cycles,
            );
            let ratio = (-4.0 * a / c).exp();
            let gaps: Vec<f64> = forces
                .windows(2)
                .map(|w| max_relative_gap(&w[0], &w[1]))
                .collect();
            let last = *gaps.last().unwrap();
            assert!(last < 1e-9, "A={a}: loop did not close ({gaps:?})");
            if ratio < 1e-12 {
                // Above saturation: closed after the first cycle.
                assert!(gaps[1] < 1e-9, "A={a}: {gaps:?}");
            } else {
                // Below: geometric convergence at the predicted rate.
                let measured = gaps[2] / gaps[1];
                assert!(
                    (measured / ratio - 1.0).abs() < 0.05,
                    "A={a}: rate {measured} vs {ratio}"
                );
            }
        }
    }

    /// S4 §2.2.1: a constant force on a mass either comes to rest with `z = tau0/sigma0`
    /// (`|tau0| <= fc`) or slides at `|v| = (|tau0| - fc)/fv`.
    #[test]
    fn constant_force_equilibria_follow_s4() {
        let p = Params::default();
        for &dt in &[1e-4, 1e-3, 1e-2] {
            for &tau0 in &[0.5, -0.8, 1.5, -2.0] {
                let mut m = model();
                let sc = Scenario::Force {
                    load: crate::Load::None,
                    mass: 1.0,
                    force: Profile::Constant { value: tau0 },
                };
                let mut last = (0.0, 0.0);
                simulate(&mut m, &sc, dt, 80.0, 1, |r| last = (r.v, r.states[0]));
                let (v, z) = last;
                if f64::abs(tau0) <= p.fc {
                    assert!(v.abs() < 1e-9, "dt={dt} tau0={tau0}: v={v}");
                    assert!(
                        (z * p.sigma0 / tau0 - 1.0).abs() < 1e-6,
                        "dt={dt} tau0={tau0}: z={z}"
                    );
                } else {
                    let v_ss = (tau0.abs() - p.fc) / p.fv * sgn(tau0);
                    assert!(
                        (v / v_ss - 1.0).abs() < 1e-6,
                        "dt={dt} tau0={tau0}: v={v} vs {v_ss}"
                    );
                    assert!((z.abs() / p.z_max() - 1.0).abs() < 1e-9);
                }
            }
        }
    }

    #[test]
    fn robust_in_every_scenario_and_step() {
        assert_robust::<Dahl>(Params::default().fc);
    }
}
