//! Frictional memory (time lag, Hess & Soom): S1 8.18 with the Stribeck curve of S1 8.20;
//! docs/src/models/frictional_memory.md (discretisation docs/src/models/numerics.md#switched-models, stick docs/src/models/numerics.md#drift-free-stick).
//!
//! The friction follows the steady-state curve with a lag `tau_l`:
//!
//! $$F(t) = F_{vel}\big(v(t - \tau_l)\big),\qquad
//!   F_{vel}(v) = \big\[f_c + (f_s - f_c)\, e^{-|v/v_s|^\delta}\big\] \operatorname{sgn} v + f_v v$$
//!
//! As in the seven-parameter model (S1 8.24), only the Stribeck level is delayed; the sign and the
//! viscous term use the current velocity:
//!
//! $$F = g\big(v(t - \tau_l)\big) \operatorname{sgn} v(t) + f_v\, v(t)$$
//!
//! Taken literally, `sgn v(t - tau_l)` would give zero friction for `tau_l` after every start from
//! rest and friction that drives the motion for `tau_l` after a reversal; the split keeps the
//! model passive and equal to S1 8.18 in steady state and in the level's lag.
//!
//! Symbols: `v` \[m/s\] relative velocity; `fc` \[N\] Coulomb level; `fs` \[N\] breakaway level
//! (convention A); `fv` \[N s/m\] viscous coefficient; `vs` \[m/s\] Stribeck velocity; `delta` \[-\]
//! Stribeck exponent; `tau_l` \[s\] lag (Hess & Soom measured 3–9 ms; S1 Table 8.2: 1–50 ms).
//! `F` resists motion (docs/src/models/conventions.md). At rest the friction balances the applied force up to `fs`,
//! `g(0)`: with measured velocities `|v| <= dv` counts as rest.
//!
//! **Numerics.** The delay is a ring buffer with linear interpolation (fractional delay). When
//! `tau_l` is shorter than the step (e.g. 5 ms at h = 10 ms), or with `memory = "lag"`, it is
//! replaced by a first-order lag of time constant `tau_l` (docs/src/models/numerics.md#switched-models; see
//! [`crate::models::timedep`]). Coupled to a plant, the stick is set-valued with limit `fs`
//! and solved exactly (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick); the delayed level is explicit (it
//! depends only on past velocities) and the viscous term is implicit, so the step is stable and
//! drift-free at every `h`.

use crate::curve::{sat, sgn, stribeck_level};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::models::timedep::{DelayLine, Memory};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Frictional-memory parameters. Curve defaults: the Canudas 1995 set (docs/src/models/lugre.md); lag 5 ms,
/// inside Hess & Soom's 3–9 ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Breakaway level \[N\] (convention A); default 1.5.
    pub fs: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub fv: f64,
    /// Stribeck velocity \[m/s\]; default 1e-3.
    pub vs: f64,
    /// Stribeck exponent \[-\]; default 2 (Gaussian).
    pub delta: f64,
    /// Frictional lag `tau_l` \[s\]; default 5e-3 (at most 1 s).
    pub tau_l: f64,
    /// `"delay"` (ring buffer; a first-order lag when `tau_l` < step) or `"lag"`; default delay.
    pub memory: Memory,
    /// Velocity window counted as rest for measured velocities \[m/s\]; default 0 (exact zero).
    pub dv: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            fc: 1.0,
            fs: 1.5,
            fv: 0.4,
            vs: 1e-3,
            delta: 2.0,
            tau_l: 5e-3,
            memory: Memory::Delay,
            dv: 0.0,
        }
    }
}

impl Params {
    /// Stribeck level `g(v)` (S1 8.20, convention A).
    #[inline]
    pub fn g(&self, v: f64) -> f64 {
        stribeck_level(v, self.fc, self.fs, self.vs, self.delta)
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("fc", self.fc)?;
        check::finite("fs", self.fs)?;
        check::at_least("fs", self.fs, "fc", self.fc)?;
        check::non_negative("fv", self.fv)?;
        check::positive("vs", self.vs)?;
        check::positive("delta", self.delta)?;
        check::non_negative("tau_l", self.tau_l)?;
        if self.tau_l > 1.0 {
            return Err(ParamError::new("tau_l", self.tau_l, "must be <= 1 s"));
        }
        check::non_negative("dv", self.dv)
    }
}

/// Frictional-memory state: the past velocities.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Delay line of the velocity (its last output is the state value `v_delayed`).
    pub line: DelayLine,
}

/// By hand: a derived `clone_from` clones whole, and the model wrapper copies the state every
/// step; this one reuses the ring's allocation.
impl Clone for State {
    fn clone(&self) -> State {
        State {
            line: self.line.clone(),
        }
    }

    fn clone_from(&mut self, src: &State) {
        self.line.clone_from(&src.line);
    }
}

/// Marker type of the frictional-memory model.
#[derive(Clone, Copy, Debug)]
pub struct FrictionalMemory;

/// The velocity-driven step: `g(v(t - tau_l)) sgn v + fv v`, or `clamp(u, fs)` at rest.
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let v_del = s.line.push(v, p.tau_l, dt, p.memory);
    if v.abs() <= p.dv {
        sat(input.u, p.fs)
    } else {
        p.g(v_del) * sgn(v) + p.fv * v
    }
}

impl Dynamics for FrictionalMemory {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Set-valued stick at `fs`; sliding at the delayed level, viscous implicit (docs/src/models/numerics.md#drift-free-stick).
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let kinetic = p.g(s.line.peek(input.v, p.tau_l, dt, p.memory));
        StepLaw::Stick {
            limit_pos: p.fs,
            limit_neg: p.fs,
            kinetic_pos: kinetic,
            kinetic_neg: kinetic,
            damping: p.fv,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, _v_next: f64, _force: f64, dt: f64) {
        s.line.push(input.v, p.tau_l, dt, p.memory);
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.g(v) * sgn(v) + p.fv * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["v_delayed".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.line.out);
    }
}

impl ModelDef for FrictionalMemory {
    const ID: &'static str = "frictional_memory";
    const DESCRIPTION: &'static str =
        "Stribeck curve evaluated at the delayed velocity v(t - tau_l) (Hess & Soom time lag)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new("fs", "N", "breakaway level (fs >= fc)"),
        ParamDoc::new("fv", "N s/m", "viscous coefficient"),
        ParamDoc::new("vs", "m/s", "Stribeck velocity"),
        ParamDoc::new("delta", "-", "Stribeck exponent (2 = Gaussian)"),
        ParamDoc::new("tau_l", "s", "frictional lag (Hess & Soom: 3-9 ms)"),
        ParamDoc::new(
            "memory",
            "-",
            "\"delay\" (ring buffer, first-order lag if tau_l < step) or \"lag\"",
        ),
        ParamDoc::new(
            "dv",
            "m/s",
            "velocity window counted as rest (measured velocities)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::plant::{self, Applied, PlantParams, PlantState};

    #[test]
    fn steady_state_is_the_stribeck_curve() {
        for memory in [Memory::Delay, Memory::Lag] {
            for &v in &[1e-4, 5e-4, 1e-3, 3e-3, 0.1, -2e-3, -0.05] {
                let p = Params {
                    memory,
                    ..Params::default()
                };
                let mut m = Model::<FrictionalMemory>::new(p).unwrap();
                let mut f = 0.0;
                for _ in 0..2000 {
                    f = m.step(&Input::velocity(v), 1e-3);
                }
                let ss = m.steady_state(v).unwrap();
                assert!((f - ss).abs() < 1e-9, "{memory:?} v={v}: {f} vs {ss}");
            }
        }
    }

    #[test]
    fn the_level_lags_a_velocity_step_by_tau_l() {
        // v steps from 0.1 m/s (level fc) to 1e-3 m/s (level g(1e-3)) at t = 0.1 s.
        let p = Params::default();
        let dt = 1e-4;
        let mut s = State::default();
        let (v1, v2) = (0.1, 1e-3);
        for k in 0..2000 {
            let t = k as f64 * dt;
            let v = if t < 0.1 - 1e-9 { v1 } else { v2 };
            let f = step(&p, &mut s, &Input::velocity(v), dt);
            let since = t - 0.1;
            if (0.0..p.tau_l - dt / 2.0).contains(&since) {
                // Still the old level (with the new viscous term).
                assert!((f - (p.g(v1) + p.fv * v2)).abs() < 1e-12, "t={t}: {f}");
            } else if since > p.tau_l + dt / 2.0 {
                assert!((f - (p.g(v2) + p.fv * v2)).abs() < 1e-12, "t={t}: {f}");
            }
        }
    }

    #[test]
    fn sub_sample_lag_is_a_first_order_lag() {
        // tau_l = 5 ms at h = 10 ms: the delayed velocity relaxes as 1 - exp(-t/tau_l).
        let p = Params::default();
        let dt = 1e-2;
        let mut s = State::default();
        let a = (-dt / p.tau_l).exp();
        let mut y = 0.0;
        for _ in 0..10 {
            step(&p, &mut s, &Input::velocity(1.0), dt);
            y = 1.0 + (y - 1.0) * a;
            assert!((s.line.out - y).abs() < 1e-15);
        }
    }

    #[test]
    fn breaks_away_at_fs_and_sticks_without_drift() {
        for dt in [1e-4, 1e-3, 1e-2] {
            let p = Params::default();
            let mut m = Model::<FrictionalMemory>::new(p.clone()).unwrap();
            let mut s = PlantState::default();
            let rate = 0.5;
            let mut broke = None;
            for k in 0..(5.0 / dt) as usize {
                let u = rate * k as f64 * dt;
                let f = plant::step(
                    &mut m,
                    &PlantParams { mass: 1.0 },
                    &mut s,
                    &Applied::force(u, 0.0),
                    dt,
                );
                if s.v == 0.0 {
                    assert_eq!(f, u);
                } else if broke.is_none() {
                    broke = Some(u);
                    // Just after breakaway the delayed level is still g(0) = fs.
                    assert!((f - p.fs).abs() < 1e-3, "dt={dt}: {f}");
                }
            }
            let u = broke.expect("breakaway");
            assert!(u > p.fs && u <= p.fs + rate * dt + 1e-12, "dt={dt}: {u}");
        }
    }

    #[test]
    fn robust_in_every_scenario() {
        crate::models::timedep::assert_robust::<FrictionalMemory>(Params::default().fs);
    }
}
