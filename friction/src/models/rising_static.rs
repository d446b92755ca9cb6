//! Rising static friction with dwell time on a Stribeck curve: Armstrong-Hélouvry S1 8.17
//! (= 8.25) and Kato S1 8.16; docs/src/models/rising_static.md#kato-law, docs/src/models/rising_static.md#armstrong-law (kinetic curve docs/src/models/stribeck_exp.md, stick docs/src/models/numerics.md#drift-free-stick).
//!
//! A switched model. While sliding, the friction follows the exponential Stribeck curve whose
//! breakaway level `F_sb` was frozen when the slip interval began:
//!
//! $$F = \big\[f_c + (F_{sb} - f_c)\, e^{-|v/v_s|^\delta}\big\] \operatorname{sgn} v + f_v v$$
//!
//! At rest the friction balances the applied force up to the stick limit `F_s(t_2)`, which rises
//! with the dwell time `t_2` from the level `F_sa` at which the last slip ended towards the
//! ultimate level `fs_inf`:
//!
//! $$\text{Armstrong (8.17/8.25):}\quad F_s(t_2) = F_{sa} + (F_{s\infty} - F_{sa})\,
//!   \frac{t_2}{t_2 + \gamma}$$
//! $$\text{Kato (8.16):}\quad F_s(t_2) = F_{s\infty} - (F_{s\infty} - F_{sa})\,
//!   e^{-\gamma_K t_2^{m}}$$
//!
//! Symbols: `v` \[m/s\] relative velocity; `fc` \[N\] Coulomb level; `fs_inf` \[N\] breakaway level
//! after a long rest; `fv` \[N s/m\] viscous coefficient; `vs` \[m/s\] Stribeck velocity; `delta` \[-\]
//! Stribeck exponent; `t2` \[s\] dwell time; `gamma` \[s\] Armstrong's rise time (S1 Table 8.2:
//! 0–200 s); `gamma_kato` \[s^-m\] and `m_exp` \[-\] Kato's constants. `F` resists motion: it has the
//! sign of `v` while sliding (docs/src/models/conventions.md).
//!
//! **F_s convention A.** Every F_s here is a breakaway level (S1 writes 8.25 in convention B, as
//! an excess over F_C; adding F_C to both sides gives the same formula in convention A, because it
//! is affine in F_s). The level at the end of a slip is `F_sa = g(|v|)`, the Stribeck level of the
//! last sliding sample (Armstrong). Kato's 8.16 starts the rise from `F_C` "at the moment of
//! arrival to stick", so with `law = "kato"` the start level is `fc`. Both laws stay below
//! `fs_inf`. Initially the contact has rested long: `F_sa = fs_inf`.
//!
//! Without frictional memory a body that decelerates smoothly ends its slip at a velocity of
//! about one step's velocity change, so with the Armstrong law `F_sa` is close to `F_sb` and
//! depends on the step; an abrupt stop from speed (a velocity-controlled bench) gives `F_sa ≈ fc`.
//! In the spring-pull benchmark (1 kg, 2 N/m, 0.1 m/s) the later breakaways come at 1.4999 N,
//! about 1.48 N and 1.37–1.49 N at h = 0.1, 1 and 10 ms. For step-independent behaviour use
//! `law = "kato"` (starts from `fc`) or the `seven_parameter` model (`F_sa` at the delayed
//! velocity).
//!
//! **Numerics.** The mode (rest or slip) is evaluated once per step from the velocity at the start
//! of the step (docs/src/models/numerics.md#switched-models). Coupled to a plant, the set-valued stick is solved exactly
//! (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick) with the stick limit at the current rising level, so a
//! body sticks without drift at any step; the Stribeck level is frozen at `v_k` and the viscous
//! term is implicit, so the step is stable for every `h`. With measured velocities, `|v| <= dv`
//! counts as rest (a Karnopp window, S1 8.45): set `dv` to the sensor's velocity resolution.

use crate::curve::{sat, sgn, stribeck_level};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Which rising-static-friction law sets the stick limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiseLaw {
    /// Armstrong-Hélouvry, S1 8.17/8.25: `F_sa + (fs_inf - F_sa) t2/(t2 + gamma)`.
    #[default]
    Armstrong,
    /// Kato, S1 8.16: `fs_inf - (fs_inf - fc) exp(-gamma_kato t2^m_exp)`.
    Kato,
}

/// Rising-static-friction parameters. Curve defaults: the Canudas 1995 set (docs/src/models/lugre.md);
/// `gamma` = 1 s, a choice inside S1 Table 8.2's 0–200 s; Kato constants from Armstrong-Hélouvry
/// (docs/src/models/rising_static.md#kato-law).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Ultimate breakaway level after a long rest \[N\] (convention A); default 1.5.
    pub fs_inf: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub fv: f64,
    /// Stribeck velocity \[m/s\]; default 1e-3.
    pub vs: f64,
    /// Stribeck exponent \[-\]; default 2 (Gaussian; Armstrong's choice, S1 8.20).
    pub delta: f64,
    /// Rising law, `"armstrong"` (S1 8.17) or `"kato"` (S1 8.16); default armstrong.
    pub law: RiseLaw,
    /// Armstrong's rise time `gamma` \[s\]: half the rise at `t2 = gamma`; default 1.
    pub gamma: f64,
    /// Kato's rate `gamma` \[s^-m\]; default 1.66 (Armstrong-Hélouvry, non-conformal contacts).
    pub gamma_kato: f64,
    /// Kato's exponent `m` \[-\]; default 0.65 (Armstrong-Hélouvry).
    pub m_exp: f64,
    /// Velocity window counted as rest for measured velocities \[m/s\]; default 0 (exact zero).
    pub dv: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            fc: 1.0,
            fs_inf: 1.5,
            fv: 0.4,
            vs: 1e-3,
            delta: 2.0,
            law: RiseLaw::Armstrong,
            gamma: 1.0,
            gamma_kato: 1.66,
            m_exp: 0.65,
            dv: 0.0,
        }
    }
}

impl Params {
    /// Stribeck level `g(v) = fc + (fs_b - fc) exp(-|v/vs|^delta)` of a slip that broke away at
    /// `fs_b` (S1 8.20, convention A).
    #[inline]
    pub fn g(&self, fs_b: f64, v: f64) -> f64 {
        stribeck_level(v, self.fc, fs_b, self.vs, self.delta)
    }

    /// Fraction of the rise covered after a dwell `t2` \[s\]: `t2/(t2 + gamma)` (Armstrong) or
    /// `1 - exp(-gamma_kato t2^m_exp)` (Kato).
    #[inline]
    pub fn rise_fraction(&self, t2: f64) -> f64 {
        let t2 = t2.max(0.0);
        match self.law {
            RiseLaw::Armstrong => t2 / (t2 + self.gamma),
            RiseLaw::Kato => 1.0 - (-self.gamma_kato * t2.powf(self.m_exp)).exp(),
        }
    }

    /// The stick limit after a dwell `t2` from the start level `fs_a` (S1 8.16/8.17), at most
    /// `fs_inf`.
    #[inline]
    pub fn rise(&self, fs_a: f64, t2: f64) -> f64 {
        (fs_a + (self.fs_inf - fs_a) * self.rise_fraction(t2)).min(self.fs_inf)
    }

    /// The start level of the next rise if the slip ends at `|v|`: the Stribeck level (Armstrong)
    /// or `fc` (Kato, S1 8.16).
    #[inline]
    pub fn arrival_level(&self, fs_b: f64, v: f64) -> f64 {
        match self.law {
            RiseLaw::Armstrong => self.g(fs_b, v),
            RiseLaw::Kato => self.fc,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("fc", self.fc)?;
        check::finite("fs_inf", self.fs_inf)?;
        check::at_least("fs_inf", self.fs_inf, "fc", self.fc)?;
        check::non_negative("fv", self.fv)?;
        check::positive("vs", self.vs)?;
        check::positive("delta", self.delta)?;
        check::positive("gamma", self.gamma)?;
        check::positive("gamma_kato", self.gamma_kato)?;
        check::positive("m_exp", self.m_exp)?;
        check::non_negative("dv", self.dv)
    }
}

/// Rising-static-friction state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Dwell time at rest `t2` \[s\] (frozen while sliding).
    pub t2: f64,
    /// Level at the end of the last slip, the start of the rise `F_sa` \[N\].
    pub fs_a: f64,
    /// Breakaway level of the current (or last) slip interval `F_sb` \[N\].
    pub fs_b: f64,
    /// At rest (stick) at the last sample.
    pub stick: bool,
}

impl State {
    /// The current stick limit (breakaway level if the body starts moving now) \[N\].
    #[inline]
    pub fn limit(&self, p: &Params) -> f64 {
        p.rise(self.fs_a, self.t2)
    }

    /// Mode switch at the start of a step (docs/src/models/numerics.md#switched-models): arrival resets the dwell; breakaway
    /// freezes the slip's breakaway level.
    fn enter(&mut self, p: &Params, resting: bool) {
        if resting {
            if !self.stick {
                self.stick = true;
                self.t2 = 0.0;
            }
        } else if self.stick {
            self.fs_b = self.limit(p);
            self.stick = false;
        }
    }

    /// End of a step at velocity `v`: the dwell grows, or the slip's end level is recorded.
    fn finish(&mut self, p: &Params, v: f64, dt: f64) {
        if self.stick {
            self.t2 += dt;
        } else {
            self.fs_a = p.arrival_level(self.fs_b, v);
        }
    }
}

/// Marker type of the rising-static-friction model.
#[derive(Clone, Copy, Debug)]
pub struct RisingStatic;

/// The velocity-driven step: rest (`|v| <= dv`) balances `u` up to the rising limit; slip follows
/// the Stribeck curve of the slip interval.
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let resting = v.abs() <= p.dv;
    s.enter(p, resting);
    let f = if resting {
        sat(input.u, s.limit(p))
    } else {
        p.g(s.fs_b, v) * sgn(v) + p.fv * v
    };
    s.finish(p, v, dt);
    f
}

impl Dynamics for RisingStatic {
    type Params = Params;
    type State = State;

    fn initial_state(p: &Params) -> State {
        State {
            t2: 0.0,
            fs_a: p.fs_inf,
            fs_b: p.fs_inf,
            stick: true,
        }
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Set-valued stick at the rising limit, or the Stribeck level frozen at `v_k` (docs/src/models/numerics.md#drift-free-stick).
    fn law(p: &Params, s: &State, input: &Input, _dt: f64) -> StepLaw {
        let v = input.v;
        let mut q = *s;
        q.enter(p, v.abs() <= p.dv);
        let (limit, kinetic) = if q.stick {
            let l = q.limit(p);
            (l, l)
        } else {
            let k = p.g(q.fs_b, v);
            (k, k)
        };
        StepLaw::Stick {
            limit_pos: limit,
            limit_neg: limit,
            kinetic_pos: kinetic,
            kinetic_neg: kinetic,
            damping: p.fv,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        let v = input.v;
        s.enter(p, v.abs() <= p.dv);
        if s.stick && v_next.abs() > p.dv {
            // Broke away during this step, at the limit just overcome.
            s.fs_b = s.limit(p);
            s.stick = false;
        } else {
            s.finish(p, v, dt);
        }
    }

    /// The Stribeck curve after a long rest (`F_sb = fs_inf`).
    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.g(p.fs_inf, v) * sgn(v) + p.fv * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["t2".into(), "fs_a".into(), "fs_b".into(), "stick".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.extend([s.t2, s.fs_a, s.fs_b, if s.stick { 1.0 } else { 0.0 }]);
    }
}

impl ModelDef for RisingStatic {
    const ID: &'static str = "rising_static";
    const DESCRIPTION: &'static str =
        "Stribeck curve with static friction rising with dwell time (Armstrong-Hélouvry or Kato)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new(
            "fs_inf",
            "N",
            "breakaway level after a long rest (fs_inf >= fc)",
        ),
        ParamDoc::new("fv", "N s/m", "viscous coefficient"),
        ParamDoc::new("vs", "m/s", "Stribeck velocity"),
        ParamDoc::new("delta", "-", "Stribeck exponent (2 = Gaussian)"),
        ParamDoc::new(
            "law",
            "-",
            "rising law: \"armstrong\" (S1 8.17) or \"kato\" (S1 8.16)",
        ),
        ParamDoc::new(
            "gamma",
            "s",
            "Armstrong rise time: half the rise after a dwell of gamma",
        ),
        ParamDoc::new(
            "gamma_kato",
            "s^-m",
            "Kato rate: rise fraction 1 - exp(-gamma_kato t2^m_exp)",
        ),
        ParamDoc::new("m_exp", "-", "Kato exponent m"),
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

    /// Slides at `v` for 1 s (velocity-driven), then rests `rest` s and ramps the force at `rate`
    /// from `u_start` on a 1 kg mass; returns (friction at breakaway, dwell time at breakaway,
    /// start level of the rise).
    fn breakaway_after(
        p: Params,
        v: f64,
        rest: f64,
        u_start: f64,
        rate: f64,
        dt: f64,
    ) -> (f64, f64, f64) {
        let mut m = Model::<RisingStatic>::new(p).unwrap();
        for _ in 0..1000 {
            m.step(&Input::velocity(v), 1e-3);
        }
        let fs_a = m.state.fs_a;
        let mut s = PlantState::default();
        let steps = ((rest + 10.0) / dt) as usize;
        for k in 0..steps {
            let t = k as f64 * dt;
            let u = if t < rest {
                0.0
            } else {
                u_start + rate * (t - rest)
            };
            let t2 = m.state.t2;
            let f = plant::step(
                &mut m,
                &PlantParams { mass: 1.0 },
                &mut s,
                &Applied::force(u, 0.0),
                dt,
            );
            if s.v > 0.0 {
                assert!((t2 - t).abs() < 1e-9, "dwell {t2} vs time at rest {t}");
                return (f, t, fs_a);
            }
        }
        panic!("no breakaway");
    }

    #[test]
    fn breakaway_after_a_dwell_follows_armstrong() {
        let p = Params::default();
        let mut last = 0.0;
        for rest in [0.2, 1.0, 5.0, 20.0] {
            let (f, t2, fs_a) = breakaway_after(p.clone(), 0.1, rest, p.fc, 1.0, 1e-3);
            // An abrupt stop from 0.1 m/s ends the slip at the Coulomb level.
            assert!((fs_a - p.fc).abs() < 1e-12);
            let expected = fs_a + (p.fs_inf - fs_a) * t2 / (t2 + p.gamma);
            // The friction at breakaway is the limit plus the viscous term of one step's motion.
            assert!(
                (f - expected).abs() < 1e-4,
                "rest {rest}: {f} vs {expected}"
            );
            assert!(f > last && f <= p.fs_inf);
            last = f;
        }
    }

    #[test]
    fn breakaway_after_a_dwell_follows_kato() {
        let p = Params {
            law: RiseLaw::Kato,
            ..Params::default()
        };
        for rest in [0.1, 1.0, 3.0] {
            let (f, t2, _) = breakaway_after(p.clone(), 0.1, rest, p.fc, 1.0, 1e-3);
            let expected = p.fs_inf - (p.fs_inf - p.fc) * (-p.gamma_kato * t2.powf(p.m_exp)).exp();
            assert!(
                (f - expected).abs() < 1e-4,
                "rest {rest}: {f} vs {expected}"
            );
        }
    }

    #[test]
    fn kato_covers_81_percent_of_the_rise_after_one_second() {
        let p = Params {
            law: RiseLaw::Kato,
            ..Params::default()
        };
        assert!(
            (p.rise_fraction(1.0) - 0.810).abs() < 5e-4,
            "{}",
            p.rise_fraction(1.0)
        );
        // The same through the model: slide, stop, hold a large force for 1 s.
        let mut s = RisingStatic::initial_state(&p);
        for _ in 0..100 {
            step(&p, &mut s, &Input::velocity(0.1), 1e-3);
        }
        let mut f = 0.0;
        for _ in 0..=1000 {
            f = step(
                &p,
                &mut s,
                &Input {
                    u: 10.0,
                    ..Input::default()
                },
                1e-3,
            );
        }
        let covered = (f - p.fc) / (p.fs_inf - p.fc);
        assert!(
            (covered - (1.0 - (-1.66f64).exp())).abs() < 1e-9,
            "{covered}"
        );
    }

    #[test]
    fn limit_never_exceeds_fs_inf_and_sticks_without_drift() {
        for law in [RiseLaw::Armstrong, RiseLaw::Kato] {
            for dt in [1e-4, 1e-3, 1e-2] {
                let p = Params {
                    law,
                    ..Params::default()
                };
                let mut m = Model::<RisingStatic>::new(p.clone()).unwrap();
                let mut s = PlantState::default();
                let n = (200.0 / dt) as usize;
                for k in 0..n {
                    let t = k as f64 * dt;
                    // Stick-slip under a slow, large sine, with long rests in between.
                    let u = 1.8 * (0.2 * t).sin();
                    let x0 = s.x;
                    plant::step(
                        &mut m,
                        &PlantParams { mass: 1.0 },
                        &mut s,
                        &Applied::force(u, 0.0),
                        dt,
                    );
                    assert!(m.state.limit(&p) <= p.fs_inf && m.state.fs_b <= p.fs_inf);
                    if s.v == 0.0 {
                        assert_eq!(s.x, x0, "drift at rest");
                    }
                }
                assert!(m.state.fs_a >= p.fc);
            }
        }
    }

    #[test]
    fn steady_state_is_the_stribeck_curve() {
        for &v in &[1e-4, 1e-3, 3e-3, 0.1, -2e-3, -0.05] {
            let mut m = Model::<RisingStatic>::new(Params::default()).unwrap();
            let mut f = 0.0;
            for _ in 0..100 {
                f = m.step(&Input::velocity(v), 1e-3);
            }
            let ss = m.steady_state(v).unwrap();
            assert!((f - ss).abs() < 1e-12, "v={v}: {f} vs {ss}");
        }
    }

    #[test]
    fn robust_in_every_scenario() {
        crate::models::timedep::assert_robust::<RisingStatic>(Params::default().fs_inf);
    }
}
