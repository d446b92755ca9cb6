//! LuGre model (Canudas de Wit, Olsson, Åström, Lischinsky 1995): S4 eqs. 11–13, S1 8.47–8.50,
//! docs/src/models/lugre.md.
//!
//! $$F = \sigma_0 z + \sigma_1(v)\,\dot z + \sigma_2 v,\qquad
//!   \dot z = v - \frac{\sigma_0 |v|}{g(v)} z,\qquad
//!   g(v) = f_c + (f_s - f_c)\,e^{-|v/v_s|^\delta}$$
//!
//! `z` \[m\] is the mean bristle deflection, `sigma0` \[N/m\] the bristle stiffness, `sigma1` \[N s/m\]
//! the micro-damping, `sigma2` \[N s/m\] the viscous coefficient, `fc`, `fs` \[N\] the Coulomb and
//! breakaway levels (convention A), `vs` \[m/s\] the Stribeck velocity. The steady state is the
//! Stribeck curve `F_ss = g(v) sgn v + sigma2 v` (S1 8.50). Optional velocity-dependent damping
//! `sigma1(v) = sigma1 exp(-(v/vd)^2)` (Olsson et al. 1998) keeps the model passive; `vd = 0`
//! keeps `sigma1` constant.
//!
//! Numerics: the bristle state is stiff (`lambda = sigma0 |v| / g(v)`, 1e4 1/s at 0.1 m/s with the
//! Canudas set), so explicit Euler diverges at 1 ms. The velocity-driven step uses the frozen-v
//! exact exponential (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 1)) with `zdot = (z_{k+1} - z_k)/h` (item 4); the plant
//! coupling is backward Euler with `lambda` frozen at `v_k` (item 5). Both keep
//! `|z| <= fs/sigma0` for every `h`: stable at any step.

use crate::curve::{guard, relax, sgn, stribeck_level};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// LuGre parameters. Defaults: the Canudas 1995 set (docs/src/models/lugre.md).
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
    /// Velocity scale of the damping `sigma1 exp(-(v/vd)^2)` \[m/s\]; 0 = constant `sigma1`.
    pub vd: f64,
    /// Parameters for negative motion, if the friction is asymmetric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative: Option<Box<Params>>,
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
            vd: 0.0,
            negative: None,
        }
    }
}

impl Params {
    /// The set that applies to motion of sign `dir` (positive set for `dir >= 0`).
    #[inline]
    pub fn side(&self, dir: f64) -> &Params {
        match (&self.negative, dir < 0.0) {
            (Some(n), true) => n,
            _ => self,
        }
    }

    /// Stribeck level `g(v)` (S4 eq. 13).
    #[inline]
    pub fn g(&self, v: f64) -> f64 {
        let p = self.side(v);
        stribeck_level(v, p.fc, p.fs, p.vs, p.delta)
    }

    /// Micro-damping at velocity `v`.
    #[inline]
    pub fn sigma1_at(&self, v: f64) -> f64 {
        if self.vd > 0.0 {
            self.sigma1 * (-(v / self.vd).powi(2)).exp()
        } else {
            self.sigma1
        }
    }

    /// Presliding stiffness `dF/dx` at `z = 0`: `sigma0` (S4 eq. 23).
    pub fn presliding_stiffness(&self) -> f64 {
        self.sigma0
    }

    /// Bound on the bristle deflection, `max(fs)/sigma0`, kept by every update.
    pub fn z_max(&self) -> f64 {
        let fs = self
            .negative
            .as_ref()
            .map_or(self.fs, |n| n.fs.max(self.fs));
        fs / self
            .sigma0
            .min(self.negative.as_ref().map_or(self.sigma0, |n| n.sigma0))
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
        check::non_negative("vd", self.vd)?;
        if let Some(n) = &self.negative {
            if n.negative.is_some() {
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
}

/// LuGre state: the mean bristle deflection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Bristle deflection `z` \[m\].
    pub z: f64,
}

/// Marker type of the LuGre model.
#[derive(Clone, Copy, Debug)]
pub struct LuGre;

/// The velocity-driven step (exact frozen-v update, docs/src/models/numerics.md#exact-and-implicit-state-updates (items 1 and 4)).
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let q = p.side(v);
    let g = p.g(v);
    let z0 = guard(s.z, p.z_max());
    let z1 = relax(z0, sgn(v) * g / q.sigma0, q.sigma0 * v.abs() * dt / g);
    s.z = z1;
    q.sigma0 * z1 + q.sigma1_at(v) * (z1 - z0) / dt + q.sigma2 * v
}

/// The plant coupling of the bristle state over one step: `z_{k+1} = a z_k + b v_{k+1}` with
/// `a = exp(-lambda h)`, `b = h phi1(lambda h)`, `phi1(x) = (1 - e^-x)/x`, `lambda` frozen at `v_k`.
/// Exact for a constant `lambda`; `b` is positive and at most `h`, so the step is stable for all `h`.
fn coupling<'a>(p: &'a Params, input: &Input, dt: f64) -> (&'a Params, f64, f64) {
    let v = input.v;
    let q = p.side(if v != 0.0 { v } else { input.u });
    let x = dt * q.sigma0 * v.abs() / p.g(v);
    let b = if x > 1e-9 {
        -(-x).exp_m1() / x * dt
    } else {
        dt * (1.0 - 0.5 * x)
    };
    (q, (-x).exp(), b)
}

impl Dynamics for LuGre {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Exponential Euler with `lambda` frozen at `v_k` and `v_{k+1}` as the forcing (
    /// docs/src/models/numerics.md#exact-and-implicit-state-updates (items 1 and 5)): `z_{k+1} = e z_k + h phi1(lambda h) v_{k+1}` is affine in `v_{k+1}`.
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let (q, a, b) = coupling(p, input, dt);
        let sigma1 = q.sigma1_at(input.v);
        StepLaw::Smooth {
            offset: (q.sigma0 + sigma1 / dt) * a * s.z - sigma1 / dt * s.z,
            damping: (q.sigma0 + sigma1 / dt) * b + q.sigma2,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        let (_, a, b) = coupling(p, input, dt);
        s.z = guard(a * s.z + b * v_next, p.z_max());
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.g(v) * sgn(v) + p.side(v).sigma2 * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["z".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.z);
    }
}

impl ModelDef for LuGre {
    const ID: &'static str = "lugre";
    const DESCRIPTION: &'static str =
        "LuGre bristle model (Canudas de Wit et al. 1995): presliding, Stribeck, frictional lag";
    const ASYMMETRIC: bool = true;
    const REFINE_LAW: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("sigma0", "N/m", "bristle stiffness"),
        ParamDoc::new("sigma1", "N s/m", "micro-damping"),
        ParamDoc::new("sigma2", "N s/m", "viscous coefficient"),
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new("fs", "N", "breakaway level (fs >= fc)"),
        ParamDoc::new("vs", "m/s", "Stribeck velocity"),
        ParamDoc::new("delta", "-", "Stribeck exponent (2 = Gaussian)"),
        ParamDoc::new(
            "vd",
            "m/s",
            "damping decay velocity, sigma1*exp(-(v/vd)^2); 0 = constant",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};

    fn model() -> Model<LuGre> {
        Model::new(Params::default()).unwrap()
    }

    #[test]
    fn steady_state_is_the_stribeck_curve() {
        for &v in &[1e-4, 5e-4, 1e-3, 3e-3, 0.01, 0.1, -2e-3, -0.05] {
            let mut m = model();
            let dt = 1e-3;
            let mut f = 0.0;
            for _ in 0..20_000 {
                f = m.step(&Input::velocity(v), dt);
            }
            let ss = m.steady_state(v).unwrap();
            assert!(
                (f - ss).abs() < 1e-6 * ss.abs().max(1.0),
                "v={v}: {f} vs {ss}"
            );
        }
    }

    #[test]
    fn presliding_stiffness_is_sigma0() {
        let p = Params::default();
        let mut s = State::default();
        let (dt, v) = (1e-4, 1e-6);
        let mut x = 0.0;
        let mut f = 0.0;
        for k in 0..10 {
            let inp = Input {
                t: k as f64 * dt,
                x,
                v,
                ..Input::default()
            };
            f = step(&p, &mut s, &inp, dt);
            x += v * dt;
        }
        // F = sigma0 z + sigma1 zdot: subtract the damping part, compare the spring to sigma0 x.
        let spring = f - p.sigma1 * v - p.sigma2 * v;
        assert!(
            (spring / x - p.sigma0).abs() / p.sigma0 < 1e-3,
            "{}",
            spring / x
        );
    }

    #[test]
    fn bristle_bound_holds_at_every_step_size() {
        for &dt in &[1e-4, 1e-3, 1e-2] {
            let mut m = model();
            for k in 0..20_000 {
                let v = 0.5 * (k as f64 * 0.01).sin();
                m.step(&Input::velocity(v), dt);
                assert!(m.state.z.abs() <= m.params.fs / m.params.sigma0 * (1.0 + 1e-12));
            }
        }
    }
}
