//! Elasto-plastic model (Dupont, Hayward, Armstrong, Altpeter 2002, "Single state elastoplastic
//! friction models", IEEE TAC 47(5)) \[P\]; docs/src/models/elasto_plastic.md (S3 mentions it only).
//!
//! $$F = \sigma_0 z + \sigma_1 \dot z + \sigma_2 v,\qquad
//!   \dot z = v\Big(1 - \alpha(z, v)\,\frac{z}{z_{ss}(v)}\Big),\qquad
//!   z_{ss}(v) = \frac{g(v)}{\sigma_0}\operatorname{sgn} v,\qquad
//!   g(v) = f_c + (f_s - f_c)\,e^{-|v/v_s|^\delta}$$
//! $$\alpha(z, v) = \begin{cases}
//!   0 & |z| \le z_{ba} \text{ or } \operatorname{sgn} v \ne \operatorname{sgn} z\\
//!   \tfrac12 \sin\!\Big(\pi\,\frac{|z| - (z_{max} + z_{ba})/2}{z_{max} - z_{ba}}\Big) + \tfrac12
//!     & z_{ba} < |z| < z_{max},\ \operatorname{sgn} v = \operatorname{sgn} z\\
//!   1 & |z| \ge z_{max},\ \operatorname{sgn} v = \operatorname{sgn} z
//! \end{cases},\qquad z_{max}(v) = |z_{ss}(v)|$$
//!
//! `z` \[m\] is the bristle deflection, `sigma0` \[N/m\] the stiffness, `sigma1` \[N s/m\] the
//! micro-damping, `sigma2` \[N s/m\] the viscous coefficient, `fc`, `fs` \[N\] the Coulomb and
//! breakaway levels (convention A, as LuGre), `vs` \[m/s\] the Stribeck velocity, `delta` \[-\] the
//! Stribeck exponent and `z_ba` \[m\] the breakaway displacement: for `|z| <= z_ba` presliding is
//! purely elastic (`dz = dx`), so an oscillating force that keeps `sigma0 |z| <= sigma0 z_ba`
//! produces no drift (LuGre drifts). `0 < z_ba < fc/sigma0 <= z_max(v)`. The sine blend uses
//! `|z|` (symmetric; some public code uses signed `z`, docs/src/models/elasto_plastic.md). F resists motion. The
//! steady state is LuGre's Stribeck curve `F_ss = g(v) sgn v + sigma2 v`.
//!
//! Defaults: the Canudas 1995 LuGre set (docs/src/models/lugre.md) and `z_ba = 0.5 fc/sigma0 = 5e-6 m`
//! (Dupont et al. leave it to identification; half the Coulomb deflection is a neutral choice).
//!
//! Numerics (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 3), docs/src/models/elasto_plastic.md): `alpha` depends on `z`, so the update is linearly
//! implicit with `alpha`, `z_ss` frozen at `(z_k, v_k)`:
//! `z_{k+1} = (z_k + Δx)/(1 + alpha(z_k, v_k) |Δx| / |z_ss(v_k)|)`, `Δx = v_k h` (velocity-driven)
//! or `h v_{k+1}` (plant, with `|Δx|` frozen at `h |v_k|` in the denominator), whose denominator
//! is >= 1, then the clamp `|z_{k+1}| <= max(z_max(v_k), |z_k|)`: the continuous solution never
//! crosses `z_ss` from inside, and from outside (`alpha = 1`) the update already contracts toward
//! `z_ss`, so the frictional lag is kept. `zdot = (z_{k+1} - z_k)/h` (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 4)). The plant
//! coupling is LuGre's docs/src/models/numerics.md#exact-and-implicit-state-updates (item 5) with `lambda = alpha sigma0 |v_k| / g(v_k)`. Stable at any `h`.

use crate::curve::{guard, sgn, stribeck_level};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Elasto-plastic parameters. Defaults: the Canudas 1995 set and `z_ba = 0.5 fc/sigma0`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Bristle stiffness \[N/m\]; default 1e5.
    pub sigma0: f64,
    /// Micro-damping \[N s/m\]; default sqrt(1e5) ≈ 316.23.
    pub sigma1: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub sigma2: f64,
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Breakaway level \[N\] (convention A); default 1.5.
    pub fs: f64,
    /// Stribeck velocity \[m/s\]; default 1e-3.
    pub vs: f64,
    /// Stribeck exponent \[-\]; default 2 (Gaussian).
    pub delta: f64,
    /// Breakaway displacement \[m\], purely elastic below it, `0 < z_ba < fc/sigma0`; default 5e-6
    /// (0.5 fc/sigma0).
    pub z_ba: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            sigma0: 1e5,
            sigma1: 1e5f64.sqrt(),
            sigma2: 0.4,
            fc: 1.0,
            fs: 1.5,
            vs: 1e-3,
            delta: 2.0,
            z_ba: 0.5 * 1.0 / 1e5,
        }
    }
}

impl Params {
    /// Stribeck level `g(v)`.
    #[inline]
    pub fn g(&self, v: f64) -> f64 {
        stribeck_level(v, self.fc, self.fs, self.vs, self.delta)
    }

    /// `z_max(v) = |z_ss(v)| = g(v)/sigma0` \[m\] (docs/src/models/elasto_plastic.md).
    #[inline]
    pub fn z_max(&self, v: f64) -> f64 {
        self.g(v) / self.sigma0
    }

    /// The blend `alpha(z, v)` in \[0, 1\] (Dupont et al. 2002; symmetric in `|z|`).
    #[inline]
    pub fn alpha(&self, z: f64, v: f64) -> f64 {
        self.alpha_at(z, v, self.z_max(v))
    }

    /// `alpha(z, v)` given `z_max(v)` (computed once per step on the hot path).
    #[inline]
    fn alpha_at(&self, z: f64, v: f64, z_max: f64) -> f64 {
        let az = z.abs();
        if az <= self.z_ba || sgn(v) != sgn(z) {
            return 0.0;
        }
        if az >= z_max {
            1.0
        } else {
            0.5 * (PI * (az - 0.5 * (z_max + self.z_ba)) / (z_max - self.z_ba)).sin() + 0.5
        }
    }

    /// Presliding stiffness `dF/dx` at rest (`|z| <= z_ba`): `sigma0`.
    pub fn presliding_stiffness(&self) -> f64 {
        self.sigma0
    }

    /// Breakaway force of the elastic range, `sigma0 z_ba` \[N\]: oscillating forces below it
    /// cause no drift.
    pub fn elastic_limit(&self) -> f64 {
        self.sigma0 * self.z_ba
    }

    /// Bound on the deflection over all velocities, `fs/sigma0`.
    pub fn z_bound(&self) -> f64 {
        self.fs / self.sigma0
    }

    /// Relaxation rate with `(z, v)` frozen, `alpha sigma0 |v| / g(v)` \[1/s\] (docs/src/models/numerics.md#stability-limits).
    #[inline]
    fn lambda(&self, z: f64, v: f64, z_max: f64) -> f64 {
        self.alpha_at(z, v, z_max) * v.abs() / z_max
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("sigma0", self.sigma0)?;
        check::non_negative("sigma1", self.sigma1)?;
        check::non_negative("sigma2", self.sigma2)?;
        check::positive("fc", self.fc)?;
        check::at_least("fs", self.fs, "fc", self.fc)?;
        check::positive("vs", self.vs)?;
        check::positive("delta", self.delta)?;
        check::positive("z_ba", self.z_ba)?;
        let limit = self.fc / self.sigma0;
        if self.z_ba >= limit {
            return Err(ParamError::new(
                "z_ba",
                self.z_ba,
                format!("must be < fc/sigma0 ({limit})"),
            ));
        }
        Ok(())
    }
}

/// Elasto-plastic state: the bristle deflection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Bristle deflection `z` \[m\].
    pub z: f64,
}

/// Marker type of the elasto-plastic model.
#[derive(Clone, Copy, Debug)]
pub struct ElastoPlastic;

/// Linearly implicit update over `dx` with `alpha`, `z_ss` frozen at `(z0, v)`, then the clamp.
#[inline]
fn update(z0: f64, z_max: f64, dx: f64, d: f64) -> f64 {
    let bound = z_max.max(z0.abs());
    ((z0 + dx) / d).clamp(-bound, bound)
}

/// The velocity-driven step (docs/src/models/elasto_plastic.md, docs/src/models/numerics.md#exact-and-implicit-state-updates (items 3 and 4)).
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let z0 = guard(s.z, p.z_bound());
    let zm = p.z_max(v);
    let z1 = update(z0, zm, v * dt, 1.0 + dt * p.lambda(z0, v, zm));
    s.z = z1;
    p.sigma0 * z1 + p.sigma1 * (z1 - z0) / dt + p.sigma2 * v
}

impl Dynamics for ElastoPlastic {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// LuGre's backward Euler (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 5)) with `lambda` scaled by `alpha(z_k, v_k)`.
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let v = input.v;
        let z0 = guard(s.z, p.z_bound());
        let lambda = p.lambda(z0, v, p.z_max(v));
        let d = 1.0 + dt * lambda;
        StepLaw::Smooth {
            offset: (p.sigma0 - p.sigma1 * lambda) * z0 / d,
            damping: (p.sigma0 * dt + p.sigma1) / d + p.sigma2,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        let v = input.v;
        let z0 = guard(s.z, p.z_bound());
        let zm = p.z_max(v);
        let d = 1.0 + dt * p.lambda(z0, v, zm);
        s.z = guard(update(z0, zm, dt * v_next, d), p.z_bound());
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.g(v) * sgn(v) + p.sigma2 * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["z".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.z);
    }
}

impl ModelDef for ElastoPlastic {
    const ID: &'static str = "elasto_plastic";
    const DESCRIPTION: &'static str =
        "Elasto-plastic model (Dupont et al. 2002): LuGre with purely elastic presliding, no drift";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("sigma0", "N/m", "bristle stiffness"),
        ParamDoc::new("sigma1", "N s/m", "micro-damping"),
        ParamDoc::new("sigma2", "N s/m", "viscous coefficient"),
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new("fs", "N", "breakaway level (fs >= fc)"),
        ParamDoc::new("vs", "m/s", "Stribeck velocity"),
        ParamDoc::new("delta", "-", "Stribeck exponent (2 = Gaussian)"),
        ParamDoc::new(
            "z_ba",
            "m",
            "breakaway displacement, purely elastic below (0 < z_ba < fc/sigma0)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::models::dahl_family::{assert_robust, cycle_mean_positions};
    use crate::models::lugre::LuGre;
    use crate::scenario::{Profile, Scenario};
    use std::f64::consts::TAU;

    fn model() -> Model<ElastoPlastic> {
        Model::new(Params::default()).unwrap()
    }

    #[test]
    fn steady_state_is_the_stribeck_curve() {
        let p = Params::default();
        for &v in &[1e-4, 5e-4, 1e-3, 3e-3, 0.01, 0.1, -2e-3, -0.05] {
            let mut m = model();
            let mut f = 0.0;
            for _ in 0..20_000 {
                f = m.step(&Input::velocity(v), 1e-3);
            }
            let ss = stribeck_level(v, p.fc, p.fs, p.vs, p.delta) * sgn(v) + p.sigma2 * v;
            assert_eq!(m.steady_state(v), Some(ss));
            assert!((f - ss).abs() < 1e-6, "v={v}: {f} vs {ss}");
        }
    }

    #[test]
    fn presliding_is_elastic_with_stiffness_sigma0() {
        let p = Params::default();
        let mut s = State::default();
        let (dt, v) = (1e-4, 1e-3);
        let mut f = 0.0;
        let n = 40; // x = 4e-6 < z_ba
        for _ in 0..n {
            f = step(&p, &mut s, &Input::velocity(v), dt);
        }
        let x = n as f64 * v * dt;
        assert!(x < p.z_ba);
        assert!((s.z - x).abs() < 1e-18, "z={} x={x}", s.z);
        let k = (f - (p.sigma1 + p.sigma2) * v) / x;
        assert!((k / p.presliding_stiffness() - 1.0).abs() < 1e-9, "{k}");
    }

    #[test]
    fn alpha_blend_is_symmetric_and_monotone() {
        let p = Params::default();
        let v = 1e-2;
        let zm = p.z_max(v);
        assert_eq!(p.alpha(p.z_ba, v), 0.0);
        assert_eq!(p.alpha(zm, v), 1.0);
        assert_eq!(p.alpha(0.9 * zm, -v), 0.0);
        let mut last = 0.0;
        for i in 0..=100 {
            let z = p.z_ba + (zm - p.z_ba) * i as f64 / 100.0;
            let a = p.alpha(z, v);
            assert!((a - p.alpha(-z, -v)).abs() < 1e-15);
            assert!(a >= last - 1e-15 && (0.0..=1.0).contains(&a));
            last = a;
        }
        assert!((p.alpha(0.5 * (zm + p.z_ba), v) - 0.5).abs() < 1e-12);
    }

    /// Dupont et al. 2002: a biased oscillating force whose peak stays below the elastic limit
    /// `sigma0 z_ba` leaves the position bounded with no cycle-to-cycle drift, while LuGre
    /// ratchets forward under the same input (docs/src/models/lugre.md, docs/src/models/elasto_plastic.md).
    #[test]
    fn no_drift_under_sub_breakaway_oscillating_force_unlike_lugre() {
        let p = Params::default();
        let limit = p.elastic_limit(); // 0.5 N
        for dt in [1e-4f64, 1e-3, 1e-2] {
            let per = (1.0 / dt).round() as usize; // 1 s period
            let sc = Scenario::Force {
                load: crate::Load::None,
                mass: 1.0,
                force: Profile::Sine {
                    amplitude: 0.4 * limit,
                    omega: TAU,
                    offset: 0.4 * limit,
                    phase: 0.0,
                },
            };
            let cycles = 12;
            let ep = cycle_mean_positions(&mut model(), &sc, dt, per, cycles);
            let lugre = cycle_mean_positions(
                &mut Model::<LuGre>::new(Default::default()).unwrap(),
                &sc,
                dt,
                per,
                cycles,
            );
            let ep_drift = ep[cycles - 1] - ep[cycles - 2];
            let lugre_drift = lugre[cycles - 1] - lugre[cycles - 2];
            assert!(
                ep_drift.abs() < 1e-9,
                "dt={dt}: elasto-plastic drift {ep_drift}"
            );
            assert!(ep.iter().all(|x| x.abs() < 1e-5), "dt={dt}: {ep:?}");
            assert!(lugre_drift > 1e-8, "dt={dt}: LuGre drift {lugre_drift}");
        }
    }

    #[test]
    fn deflection_stays_bounded_at_every_step_size() {
        let p = Params::default();
        for &dt in &[1e-4, 1e-3, 1e-2] {
            let mut m = model();
            for k in 0..20_000 {
                let v = 0.5 * (k as f64 * 0.01).sin();
                m.step(&Input::velocity(v), dt);
                assert!(m.state.z.abs() <= p.z_bound() * (1.0 + 1e-12));
            }
        }
    }

    #[test]
    fn rejects_z_ba_outside_the_elastic_range() {
        let bad = Params {
            z_ba: 2e-5,
            ..Params::default()
        };
        let e = bad.validate().unwrap_err();
        assert_eq!(e.field, "z_ba");
        assert!(e.rule.contains("fc/sigma0"), "{e}");
    }

    #[test]
    fn robust_in_every_scenario_and_step() {
        assert_robust::<ElastoPlastic>(Params::default().fs);
    }
}
