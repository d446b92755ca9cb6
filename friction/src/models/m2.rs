//! M2 model (Canudas de Wit et al. 1993): S1 8.57–8.65, docs/src/models/m2.md.
//!
//! $$F = (1 - s) F_{st} + s F_d,\qquad \tau_s \dot s = -s + G(v),\qquad G(v) = 1 - e^{-(v/v_0)^2}$$
//! $$F_{st} = \operatorname{clamp}(k_s w + d_s v,\ \alpha),\quad \alpha = \alpha_0 + \alpha_1,\qquad
//!   \dot w = (1 - s) v - \frac{s}{\tau_r} w,\qquad F_d = \alpha_0 \operatorname{sgn} v + \alpha_2 v$$
//!
//! States: `s` \[-\] in \[0, 1\], the "measure of sliding" (1 sliding, 0 sticking), and `w` \[m\], the
//! displacement since sticking began (S1's ξ, renamed to avoid a clash with the argument of `clamp`; its `-s w/tau_r` term
//! resets it while sliding). Parameters: `alpha0` \[N\] Coulomb level, `alpha1` \[N\] Stribeck excess,
//! `alpha2` \[N s/m\] viscous coefficient, `tau_s` \[s\] frictional lag of `s`, `tau_r` \[s\] reset
//! time of `w`, `v0` \[m/s\] Stribeck velocity, `k_s` \[N/m\] stick ("Dahl") spring, `d_s` \[N s/m\]
//! stick damper. F resists motion (sign of v in sliding). `clamp` is docs/src/models/conventions.md's
//! `clamp(value, limit)` (S1 8.59–8.60 write `sat(limit, value)`).
//!
//! F_s convention: S1 writes the static term as an excess (`alpha1`, convention B); the fields
//! keep S1's meaning and the breakaway level (convention A) is `alpha = alpha0 + alpha1`
//! (S1 8.61, [`Params::alpha`]).
//!
//! Steady state (S1 8.64):
//! `F_ss = G (alpha0 sgn v + alpha2 v) + (1 - G) clamp(k_s tau_r v (1 - G)/G + d_s v, alpha)`,
//! which tends to `alpha sgn v` as `v -> 0` and to `F_d` as `v -> inf`.
//!
//! Defaults: S1 gives none and the source (Canudas et al. 1993) is not in the seeds, so we use
//! values consistent with the Canudas 1995 LuGre set (docs/src/models/lugre.md): `alpha0 = 1 N`,
//! `alpha1 = 0.5 N`, `alpha2 = 0.4 N s/m`, `v0 = 1e-3 m/s`, `tau_s = 0.01 s`, `k_s = 1e5 N/m`
//! (= LuGre's sigma0), `d_s = 316 N s/m` (= LuGre's sigma1) and `tau_r = 0.1 s`. \[D\] `tau_r`
//! sets the shape of 8.64: while `k_s tau_r v (1 - G)/G + d_s v >= alpha` the clamp saturates
//! and 8.64 is exactly the Gaussian Stribeck curve `alpha0 + alpha1 e^{-(v/v0)^2} + G alpha2 v`.
//! That needs `k_s tau_r >~ 1e4 N s/m` up to `v ~ 2 v0`; with `tau_r = 0.1 s` the curve stays
//! within 0.011 N of the Gaussian one and never drops below `alpha0`. A short reset such as
//! `tau_r = 1e-3 s` makes 8.64 dip to 0.45 N near 0.4 mm/s, below the Coulomb level, so a
//! 0.5 N push makes the body creep for ever.
//!
//! Numerics (docs/src/models/m2.md, docs/src/models/numerics.md#exact-and-implicit-state-updates (item 1)): `s` uses its exact update with `v` frozen,
//! `s_{k+1} = G(v_k) + (s_k - G(v_k)) e^{-h/tau_s}`, a convex combination that keeps `s` in \[0, 1\];
//! `w` uses its exact update with `s` and `v` frozen at step start,
//! `w_{k+1} = w_k e + (1 - s_k) v h (1 - e)/a`, `a = s_k h/tau_r`, `e = e^{-a}`, with
//! `(1 - e)/a = -expm1(-a)/a -> 1` as `s -> 0`. The output uses the state at `k+1` (as LuGre).
//! Plant coupling: the stick spring (`omega = sqrt(k_s/m) = 316 rad/s`) is implicit — while the
//! spring is unsaturated at step start (`|k_s w_k + d_s v_k| < alpha`, regime frozen over the
//! step), `k_s w_{k+1} + d_s v_{k+1}` enters affinely in `v_{k+1}`, as does `alpha2 v_{k+1}`; when
//! saturated `F_st = ±alpha`. The Coulomb term `s alpha0 sgn v` is set-valued at rest (Kikuuwe et
//! al. 2005, docs/src/models/numerics.md#drift-free-stick) whenever the rest of the friction lies inside `±s alpha0`, so a
//! sliding body stops without chatter at coarse `h`; otherwise `sgn` is frozen at `v_k`. Every
//! slope is >= 0: stable at any `h`. In an unsaturated step `F_st` may exceed `alpha` by the
//! spring's one-step increment (the regime is frozen); it saturates on the next step.

use crate::curve::{sat, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// M2 parameters. Defaults: values consistent with the Canudas set (module doc); S1 gives none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 1.
    pub alpha0: f64,
    /// Stribeck excess over `alpha0` \[N\] (convention B; breakaway = alpha0 + alpha1); default 0.5.
    pub alpha1: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub alpha2: f64,
    /// Frictional lag: time constant of `s` \[s\]; default 0.01.
    pub tau_s: f64,
    /// Reset time of the stick displacement `w` while sliding \[s\]; default 0.1.
    pub tau_r: f64,
    /// Stribeck velocity of `G(v) = 1 - exp(-(v/v0)^2)` \[m/s\]; default 1e-3.
    pub v0: f64,
    /// Stick spring stiffness \[N/m\]; default 1e5.
    pub k_s: f64,
    /// Stick damper \[N s/m\]; default 316.
    pub d_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            alpha0: 1.0,
            alpha1: 0.5,
            alpha2: 0.4,
            tau_s: 0.01,
            tau_r: 0.1,
            v0: 1e-3,
            k_s: 1e5,
            d_s: 316.0,
        }
    }
}

impl Params {
    /// Breakaway level `alpha = alpha0 + alpha1` \[N\] (S1 8.61; convention A).
    pub fn alpha(&self) -> f64 {
        self.alpha0 + self.alpha1
    }

    /// Sliding weight at steady state, `G(v) = 1 - exp(-(v/v0)^2)` (S1 8.65), accurate near 0.
    #[inline]
    pub fn g(&self, v: f64) -> f64 {
        let r = v / self.v0;
        -(-r * r).exp_m1()
    }

    /// Dynamic friction `F_d = alpha0 sgn v + alpha2 v` (S1 8.63).
    #[inline]
    pub fn f_d(&self, v: f64) -> f64 {
        self.alpha0 * sgn(v) + self.alpha2 * v
    }

    /// Presliding stiffness at rest (`s = 0`, unsaturated): `k_s`.
    pub fn presliding_stiffness(&self) -> f64 {
        self.k_s
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("alpha0", self.alpha0)?;
        check::non_negative("alpha1", self.alpha1)?;
        check::non_negative("alpha2", self.alpha2)?;
        check::positive("tau_s", self.tau_s)?;
        check::positive("tau_r", self.tau_r)?;
        check::positive("v0", self.v0)?;
        check::positive("k_s", self.k_s)?;
        check::non_negative("d_s", self.d_s)
    }
}

/// M2 state, at rest `s = 0`, `w = 0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Sliding weight `s` \[-\], in \[0, 1\].
    pub s: f64,
    /// Displacement since sticking began `w` \[m\].
    pub w: f64,
}

/// Marker type of the M2 model.
#[derive(Clone, Copy, Debug)]
pub struct M2;

/// One step's frozen coefficients: `s_{k+1}` and `w_{k+1} = w_e + w_v v`.
struct Frozen {
    s1: f64,
    w_e: f64,
    w_v: f64,
}

/// Exact updates of `s` and `w` with `v` and `s` frozen at step start (docs/src/models/m2.md).
fn frozen(p: &Params, s: &State, v: f64, dt: f64) -> Frozen {
    let s0 = s.s.clamp(0.0, 1.0);
    let g = p.g(v);
    let s1 = g + (s0 - g) * (-dt / p.tau_s).exp();
    let a = s0 * dt / p.tau_r;
    // h (1 - e^-a)/a, -> h as a -> 0 (expm1 keeps it accurate).
    let phi = if a > 0.0 {
        dt * (-(-a).exp_m1() / a)
    } else {
        dt
    };
    let w = if s.w.is_finite() { s.w } else { 0.0 };
    Frozen {
        s1: s1.clamp(0.0, 1.0),
        w_e: w * (-a).exp(),
        w_v: (1.0 - s0) * phi,
    }
}

/// The velocity-driven step: exact `s`, `w` updates, then the output at `k+1` (docs/src/models/m2.md).
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let c = frozen(p, s, v, dt);
    s.s = c.s1;
    s.w = c.w_e + c.w_v * v;
    (1.0 - s.s) * sat(p.k_s * s.w + p.d_s * v, p.alpha()) + s.s * p.f_d(v)
}

impl Dynamics for M2 {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Stick spring implicit while unsaturated (regime frozen at step start); Coulomb term
    /// set-valued at rest when the rest of the friction lies inside `±s alpha0` (module doc).
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let v = input.v;
        let c = frozen(p, s, v, dt);
        let q = p.k_s * s.w + p.d_s * v;
        // F_st = st0 + st1 v_{k+1}.
        let (st0, st1) = if q.abs() < p.alpha() {
            (p.k_s * c.w_e, p.k_s * c.w_v + p.d_s)
        } else {
            (p.alpha() * sgn(q), 0.0)
        };
        let offset = (1.0 - c.s1) * st0;
        let damping = (1.0 - c.s1) * st1 + c.s1 * p.alpha2;
        let coulomb = c.s1 * p.alpha0;
        if offset.abs() <= coulomb {
            StepLaw::Stick {
                limit_pos: coulomb + offset,
                limit_neg: coulomb - offset,
                kinetic_pos: coulomb + offset,
                kinetic_neg: coulomb - offset,
                damping,
            }
        } else {
            StepLaw::Smooth {
                offset: offset + coulomb * sgn(v),
                damping,
            }
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        let c = frozen(p, s, input.v, dt);
        s.s = c.s1;
        s.w = c.w_e + c.w_v * v_next;
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        if v == 0.0 {
            return Some(0.0);
        }
        let g = p.g(v);
        // k_s tau_r v (1 - G)/G: infinite as G underflows to 0 (then the clamp saturates).
        let spring = if g > 0.0 {
            p.k_s * p.tau_r * v * (1.0 - g) / g
        } else {
            f64::INFINITY * sgn(v)
        };
        Some(g * p.f_d(v) + (1.0 - g) * sat(spring + p.d_s * v, p.alpha()))
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["s".into(), "w".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.s);
        out.push(s.w);
    }
}

impl ModelDef for M2 {
    const ID: &'static str = "m2";
    const DESCRIPTION: &'static str = "M2 model (Canudas de Wit et al. 1993): stick spring and dynamic friction blended by a lagged weight";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("alpha0", "N", "Coulomb level"),
        ParamDoc::new(
            "alpha1",
            "N",
            "Stribeck excess over alpha0 (breakaway = alpha0 + alpha1)",
        ),
        ParamDoc::new("alpha2", "N s/m", "viscous coefficient"),
        ParamDoc::new(
            "tau_s",
            "s",
            "frictional lag (time constant of the sliding weight s)",
        ),
        ParamDoc::new(
            "tau_r",
            "s",
            "reset time of the stick displacement while sliding",
        ),
        ParamDoc::new(
            "v0",
            "m/s",
            "Stribeck velocity of G(v) = 1 - exp(-(v/v0)^2)",
        ),
        ParamDoc::new("k_s", "N/m", "stick spring stiffness"),
        ParamDoc::new("d_s", "N s/m", "stick damper"),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::models::dahl_family::assert_robust;
    use crate::scenario::{Profile, Scenario, simulate};

    fn model() -> Model<M2> {
        Model::new(Params::default()).unwrap()
    }

    /// S1 8.64, written out independently of `steady_state`.
    fn eq_8_64(p: &Params, v: f64) -> f64 {
        let g = 1.0 - (-(v / p.v0).powi(2)).exp();
        let fd = p.alpha0 * sgn(v) + p.alpha2 * v;
        let st = p.k_s * p.tau_r * v * (1.0 - g) / g + p.d_s * v;
        g * fd + (1.0 - g) * st.clamp(-p.alpha(), p.alpha())
    }

    #[test]
    fn steady_state_is_s1_8_64() {
        let p = Params::default();
        for &v in &[
            1e-4, 5e-4, 1e-3, 2e-3, 3e-3, 0.01, 0.1, 1.0, -1e-4, -2e-3, -0.05,
        ] {
            let mut m = model();
            let mut f = 0.0;
            for _ in 0..20_000 {
                f = m.step(&Input::velocity(v), 1e-3);
            }
            let ss = eq_8_64(&p, v);
            assert!(
                (m.steady_state(v).unwrap() - ss).abs() < 1e-12 * ss.abs().max(1.0),
                "v={v}"
            );
            assert!(
                (f - ss).abs() < 1e-9 * ss.abs().max(1.0),
                "v={v}: {f} vs {ss}"
            );
        }
        // Limits (docs/src/models/m2.md): alpha as v -> 0, F_d as v -> inf.
        let m = model();
        for &v in &[1e-7, 1e-12, 1e-200] {
            assert!((m.steady_state(v).unwrap() - p.alpha()).abs() < 1e-6, "{v}");
            assert!(
                (m.steady_state(-v).unwrap() + p.alpha()).abs() < 1e-6,
                "{v}"
            );
        }
        assert_eq!(m.steady_state(0.0), Some(0.0));
        for &v in &[0.05, 1.0, -3.0] {
            assert!((m.steady_state(v).unwrap() - p.f_d(v)).abs() < 1e-12, "{v}");
        }
    }

    /// With the defaults 8.64 is the Gaussian Stribeck curve to within 0.011 N and never drops
    /// below the Coulomb level (the reason for `tau_r = 0.1 s`, module doc).
    #[test]
    fn default_steady_state_is_a_stribeck_curve() {
        let p = Params::default();
        let m = model();
        for i in 0..=7000 {
            let v = 10f64.powf(-7.0 + i as f64 * 1e-3);
            let f = m.steady_state(v).unwrap();
            let gauss = p.alpha0 + p.alpha1 * (-(v / p.v0).powi(2)).exp() + p.alpha2 * v;
            assert!((f - gauss).abs() < 0.011, "v={v}: {f} vs {gauss}");
            assert!(f >= p.alpha0 * (1.0 - 1e-3), "v={v}: {f}");
        }
    }

    #[test]
    fn sliding_weight_stays_in_unit_interval() {
        for &dt in &[1e-4, 1e-3, 1e-2] {
            let mut m = model();
            for k in 0..20_000 {
                let v = 0.05 * (k as f64 * 0.003).sin().powi(3);
                m.step(&Input::velocity(v), dt);
                assert!((0.0..=1.0).contains(&m.state.s), "s = {}", m.state.s);
            }
            for sc in [
                Scenario::SpringPull {
                    mass: 1.0,
                    stiffness: 2.0,
                    pull_velocity: 0.1,
                    pull_stop_s: None,
                },
                Scenario::Force {
                    load: crate::Load::None,
                    mass: 1.0,
                    force: Profile::Sine {
                        amplitude: 3.0,
                        omega: 1.0,
                        offset: 0.0,
                        phase: 0.0,
                    },
                },
            ] {
                let mut m = model();
                simulate(&mut m, &sc, dt, 30.0, 1, |r| {
                    assert!((0.0..=1.0).contains(&r.states[0]), "s = {}", r.states[0]);
                });
            }
        }
    }

    #[test]
    fn w_update_is_exact_and_tends_to_h_v_as_s_vanishes() {
        let p = Params::default();
        let (dt, v) = (1e-3, 0.02);
        let s = State { s: 0.3, w: 1e-4 };
        let c = frozen(&p, &s, v, dt);
        let rate = s.s / p.tau_r;
        let w_ss = (1.0 - s.s) * v / rate;
        let exact = w_ss + (s.w - w_ss) * (-rate * dt).exp();
        assert!((c.w_e + c.w_v * v - exact).abs() < 1e-15);
        let c = frozen(&p, &State { s: 0.0, w: 0.0 }, v, dt);
        assert_eq!(c.w_v * v, v * dt);
        let c = frozen(&p, &State { s: 1e-300, w: 0.0 }, v, dt);
        assert!((c.w_v - dt).abs() < 1e-18);
    }

    #[test]
    fn sticks_without_chatter_at_coarse_steps() {
        // A 1 kg body pushed by 2 N for 1 s, then by 0.5 N (below alpha): it must come to rest.
        for &dt in &[1e-3, 1e-2] {
            let mut m = model();
            let sc = Scenario::Force {
                load: crate::Load::None,
                mass: 1.0,
                force: Profile::Samples {
                    t: vec![0.0, 1.0, 1.0 + 1e-9],
                    value: vec![2.0, 2.0, 0.5],
                },
            };
            let mut last = (1.0, 1.0);
            simulate(&mut m, &sc, dt, 10.0, 1, |r| last = (r.v, r.friction));
            assert!(last.0.abs() < 1e-9, "dt={dt}: v={}", last.0);
            assert!((last.1 - 0.5).abs() < 1e-6, "dt={dt}: F={}", last.1);
        }
    }

    #[test]
    fn robust_in_every_scenario_and_step() {
        assert_robust::<M2>(Params::default().alpha());
    }
}
