//! Seven-parameter model (Armstrong-Hélouvry) with stick/slip logic: S1 §8.4.2.1 eqs. 8.23–8.25
//! and 8.31; docs/src/models/seven_parameter.md (delay docs/src/models/numerics.md#switched-models, stick docs/src/models/numerics.md#drift-free-stick).
//!
//! Stick (`s = 0`, presliding spring with the breakaway guard of docs/src/models/seven_parameter.md) and slip (`s = 1`,
//! Coulomb + viscous + Stribeck with frictional memory and rising static friction):
//!
//! $$s = 0:\quad F = \operatorname{clamp}\big(k_t (x - x_{stick}),\ F_s(t_2)\big)\qquad (8.23)$$
//! $$s = 1:\quad F = (f_c + f_v |v|) \operatorname{sgn} v +
//!   \frac{F_{sb} - f_c}{1 + \big(v(t - \tau_l)/v_s\big)^2} \operatorname{sgn} v\qquad (8.24)$$
//! $$F_s(t_2) = F_{sa} + (F_{s\infty} - F_{sa}) \frac{t_2}{t_2 + \gamma}\qquad (8.25)$$
//!
//! Mode logic (S1 8.31 and the table after it), evaluated once per step: `s = 0` if
//! `|v| < dv` (S1's v_critical), else `s = 1`;
//!
//! | change | action |
//! |---|---|
//! | 0 → 0 | `t2 += h` |
//! | 0 → 1 | `F_sb = F_s(t2)`, frozen for the slip interval |
//! | 1 → 0 | `F_sa = fc + (F_sb - fc) / (1 + (v(t - tau_l)/vs)^2)`, `t2 = 0`, `x_stick = x` |
//! | 1 → 1 | nothing |
//!
//! Symbols: `x` \[m\], `v` \[m/s\]; `fc` \[N\] Coulomb level; `fv` \[N s/m\] viscous coefficient;
//! `fs_inf` \[N\] breakaway level after a long rest; `gamma` \[s\] rise time of the static friction;
//! `tau_l` \[s\] frictional lag; `vs` \[m/s\] Stribeck velocity; `kt` \[N/m\] tangential contact
//! stiffness; `t2` \[s\] dwell time; `F_sa`, `F_sb` \[N\] levels at the end of the last slip and at the
//! breakaway of the current one. `F` resists motion (docs/src/models/conventions.md).
//!
//! **F_s convention A.** S1 writes `F_s,inf`, `F_s,a` and `F_s,b` as excesses over `F_C`
//! (convention B; breakaway = F_C + F_s). The library stores breakaway levels:
//! `fs_inf = F_C + F_s,inf(S1)`, and likewise for `F_sa`, `F_sb`. 8.25 is affine in F_s, so it
//! keeps its form; 8.24's Stribeck term becomes `(F_sb - fc) L(v)`. Initially the contact has
//! rested long: `s = 0`, `t2 = 0`, `F_sa = fs_inf` (docs/src/models/seven_parameter.md); `x_stick` is the first sample's
//! position. The spring is linear, so there is no presliding hysteresis (S1 §8.6.3).
//!
//! **Numerics.** The delay `v(t - tau_l)` is a ring buffer with linear interpolation, replaced by
//! a first-order lag of time constant `tau_l` when `tau_l` is shorter than the step (
//! docs/src/models/numerics.md#switched-models; [`crate::models::timedep`]). The velocity-driven step (lockstep with a bench: measured
//! `x` and `v`) applies the equations above as written. Coupled to a plant, the stick is the
//! drift-free set-valued stick (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick) with limit `F_s(t2)`, not the
//! spring: the body rests exactly and the friction balances the applied force up to the breakaway
//! level. We do not integrate the spring in the plant because (a) `kt` is stiff (`omega =
//! sqrt(kt/m)` = 316 rad/s for the defaults and 1 kg) and (b) 8.23 with `x_stick = x` drops the
//! friction to zero at every arrival: the body then springs into the contact at about
//! `u/sqrt(kt m)` (2.5 mm/s at 0.8 N), well above `dv`, slips again and creeps on instead of
//! sticking. We tried that variant (spring implicit in `v_{k+1}`, offset `kt (x_k - x_stick)`,
//! damping `kt h`, saturated at `F_s(t2)`): in the spring-pull benchmark (1 kg, 2 N/m, 0.1 m/s,
//! 40 s) it gave 1440, 162 and 90 slip intervals at h = 0.1, 1 and 10 ms, against 6 at every `h`
//! with the set-valued stick. The price: the presliding displacement (at most `fs_inf/kt`,
//! 15 µm by default) is not simulated in a plant. While sliding, the Stribeck level is frozen at `v_k` and the
//! viscous term is implicit, so the plant step is stable for every `h`.

use crate::curve::{phi_lorentz, sat, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::models::timedep::{DelayLine, Memory};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Seven-parameter model parameters. Defaults: the Canudas 1995 curve (fc, fv, breakaway 1.5 N,
/// vs; docs/src/models/lugre.md); `gamma` = 1 s (S1 Table 8.2: 0–200 s); `tau_l` = 5 ms (Table 8.2: 1–50 ms,
/// Hess & Soom 3–9 ms); `kt` = 1e5 N/m, i.e. the breakaway force over 15 µm (Table 8.2:
/// `(F_C + F_s)/Δx`, Δx = 1–50 µm); `dv` = 1e-4 m/s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level `F_C` \[N\]; default 1.
    pub fc: f64,
    /// Viscous coefficient `F_v` \[N s/m\]; default 0.4.
    pub fv: f64,
    /// Breakaway level after a long rest \[N\] (convention A: S1's `F_C + F_s,inf`); default 1.5.
    pub fs_inf: f64,
    /// Rise time of the static friction `gamma` \[s\]; default 1.
    pub gamma: f64,
    /// Frictional lag `tau_L` \[s\]; default 5e-3 (at most 1 s).
    pub tau_l: f64,
    /// Stribeck velocity `v_s` of the Lorentzian \[m/s\]; default 1e-3.
    pub vs: f64,
    /// Tangential contact stiffness in stick `k_t` \[N/m\]; default 1e5.
    pub kt: f64,
    /// `v_critical`: `|v|` below it is stick (sensor velocity resolution) \[m/s\]; default 1e-4.
    pub dv: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            fc: 1.0,
            fv: 0.4,
            fs_inf: 1.5,
            gamma: 1.0,
            tau_l: 5e-3,
            vs: 1e-3,
            kt: 1e5,
            dv: 1e-4,
        }
    }
}

impl Params {
    /// Breakaway level after a dwell `t2` from `fs_a` (8.25), at most `fs_inf`.
    #[inline]
    pub fn rise(&self, fs_a: f64, t2: f64) -> f64 {
        let t2 = t2.max(0.0);
        (fs_a + (self.fs_inf - fs_a) * t2 / (t2 + self.gamma)).min(self.fs_inf)
    }

    /// Sliding level magnitude without the viscous term: `fc + (fs_b - fc) L(v_del)` (8.24).
    #[inline]
    pub fn slip_level(&self, fs_b: f64, v_del: f64) -> f64 {
        self.fc + (fs_b - self.fc) * phi_lorentz(v_del, self.vs)
    }

    /// Presliding displacement at the breakaway level after a long rest: `fs_inf/kt` \[m\].
    pub fn presliding_range(&self) -> f64 {
        self.fs_inf / self.kt
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("fc", self.fc)?;
        check::non_negative("fv", self.fv)?;
        check::finite("fs_inf", self.fs_inf)?;
        check::at_least("fs_inf", self.fs_inf, "fc", self.fc)?;
        check::positive("gamma", self.gamma)?;
        check::non_negative("tau_l", self.tau_l)?;
        if self.tau_l > 1.0 {
            return Err(ParamError::new("tau_l", self.tau_l, "must be <= 1 s"));
        }
        check::positive("vs", self.vs)?;
        check::positive("kt", self.kt)?;
        check::positive("dv", self.dv)
    }
}

/// The switched part of the state (docs/src/models/seven_parameter.md).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Logic {
    /// Mode `s` at the last sample: slip (`true`) or stick.
    pub slip: bool,
    /// Dwell time `t2` \[s\].
    pub t2: f64,
    /// Level at the end of the last slip `F_sa` \[N\].
    pub fs_a: f64,
    /// Breakaway level of the current (or last) slip `F_sb` \[N\].
    pub fs_b: f64,
    /// Position where the stick began `x_stick` \[m\].
    pub x_stick: f64,
    /// `x_stick` has been set (at the first sample).
    pub anchored: bool,
}

impl Logic {
    /// The current breakaway level `F_s(t2)`.
    #[inline]
    pub fn limit(&self, p: &Params) -> f64 {
        p.rise(self.fs_a, self.t2)
    }

    /// The mode-change table of S1 8.31 for the sample at `v`, `x` with delayed velocity `v_del`.
    fn enter(&mut self, p: &Params, v: f64, x: f64, v_del: f64) {
        if !self.anchored {
            self.x_stick = x;
            self.anchored = true;
        }
        let slip = v.abs() >= p.dv;
        match (self.slip, slip) {
            (false, true) => self.fs_b = self.limit(p),
            (true, false) => {
                self.fs_a = p.slip_level(self.fs_b, v_del);
                self.t2 = 0.0;
                self.x_stick = x;
            }
            _ => {}
        }
        self.slip = slip;
    }
}

/// Seven-parameter state: the mode logic and the delay line of `v`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Mode, dwell, levels and stick position.
    pub logic: Logic,
    /// Past velocities for `v(t - tau_l)`.
    pub line: DelayLine,
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            logic: self.logic,
            line: self.line.clone(),
        }
    }

    fn clone_from(&mut self, src: &State) {
        self.logic = src.logic;
        self.line.clone_from(&src.line);
    }
}

/// Marker type of the seven-parameter model.
#[derive(Clone, Copy, Debug)]
pub struct SevenParameter;

/// The velocity-driven step (measured `x` and `v`): mode logic, then 8.23 or 8.24.
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let v_del = s.line.push(v, p.tau_l, dt, Memory::Delay);
    let l = &mut s.logic;
    l.enter(p, v, input.x, v_del);
    if l.slip {
        ((p.fc + p.fv * v.abs()) + (l.fs_b - p.fc) * phi_lorentz(v_del, p.vs)) * sgn(v)
    } else {
        let f = sat(p.kt * (input.x - l.x_stick), l.limit(p));
        l.t2 += dt;
        f
    }
}

impl Dynamics for SevenParameter {
    type Params = Params;
    type State = State;

    fn initial_state(p: &Params) -> State {
        State {
            logic: Logic {
                slip: false,
                t2: 0.0,
                fs_a: p.fs_inf,
                fs_b: p.fs_inf,
                x_stick: 0.0,
                anchored: false,
            },
            line: DelayLine::default(),
        }
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Drift-free set-valued stick at `F_s(t2)`, or the slip level of 8.24 frozen at `v_k` with
    /// the viscous term implicit (docs/src/models/numerics.md#drift-free-stick).
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let v_del = s.line.peek(input.v, p.tau_l, dt, Memory::Delay);
        let mut q = s.logic;
        q.enter(p, input.v, input.x, v_del);
        let (limit, kinetic) = if q.slip {
            let k = p.slip_level(q.fs_b, v_del);
            (k, k)
        } else {
            let l = q.limit(p);
            (l, l)
        };
        StepLaw::Stick {
            limit_pos: limit,
            limit_neg: limit,
            kinetic_pos: kinetic,
            kinetic_neg: kinetic,
            damping: p.fv,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, _v_next: f64, _force: f64, dt: f64) {
        let v_del = s.line.push(input.v, p.tau_l, dt, Memory::Delay);
        s.logic.enter(p, input.v, input.x, v_del);
        if !s.logic.slip {
            s.logic.t2 += dt;
        }
    }

    /// Equation 8.24 at constant velocity after a long rest (`F_sb = fs_inf`).
    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.slip_level(p.fs_inf, v) * sgn(v) + p.fv * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        ["slip", "t2", "fs_a", "fs_b", "x_stick", "v_delayed"]
            .into_iter()
            .map(String::from)
            .collect()
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        let l = &s.logic;
        out.extend([
            if l.slip { 1.0 } else { 0.0 },
            l.t2,
            l.fs_a,
            l.fs_b,
            l.x_stick,
            s.line.out,
        ]);
    }
}

impl ModelDef for SevenParameter {
    const ID: &'static str = "seven_parameter";
    const DESCRIPTION: &'static str = "Armstrong-Hélouvry seven-parameter model: presliding spring, \
         Stribeck with frictional memory, rising static friction";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new("fv", "N s/m", "viscous coefficient"),
        ParamDoc::new(
            "fs_inf",
            "N",
            "breakaway level after a long rest (fs_inf >= fc; S1's F_C + F_s,inf)",
        ),
        ParamDoc::new(
            "gamma",
            "s",
            "rise time of the static friction with dwell time",
        ),
        ParamDoc::new("tau_l", "s", "frictional lag of the Stribeck level"),
        ParamDoc::new("vs", "m/s", "Stribeck velocity (Lorentzian)"),
        ParamDoc::new("kt", "N/m", "tangential contact stiffness in stick"),
        ParamDoc::new(
            "dv",
            "m/s",
            "v_critical: |v| below it is stick (sensor resolution)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::plant::{self, Applied, PlantParams, PlantState};

    fn at(t: f64, x: f64, v: f64) -> Input {
        Input {
            t,
            x,
            v,
            ..Input::default()
        }
    }

    #[test]
    fn no_presliding_hysteresis() {
        // Position-driven below v_critical: loading and unloading follow F = kt (x - x_stick).
        let p = Params::default();
        let mut s = SevenParameter::initial_state(&p);
        let (a, w, dt) = (1.2e-5, 1.0, 1e-3);
        assert!(a * w < p.dv && p.kt * a < p.fs_inf);
        let x0 = 3.0; // arbitrary encoder offset: the first sample anchors the spring
        let mut pts = Vec::new();
        for k in 0..((4.0 * std::f64::consts::PI / w) / dt) as usize {
            let t = k as f64 * dt;
            let x = x0 + a * (w * t).sin();
            let f = step(&p, &mut s, &at(t, x, a * w * (w * t).cos()), dt);
            assert!(!s.logic.slip);
            assert!((f - p.kt * (x - x0)).abs() < 1e-9, "t={t}: {f}");
            pts.push((x - x0, f));
        }
        // Same force at the same displacement on the way up and on the way down.
        let up = pts.iter().find(|(x, _)| *x > 0.5 * a).unwrap();
        let down = pts
            .iter()
            .rev()
            .find(|(x, _)| (*x - up.0).abs() < 1e-9 * a + a * w * dt)
            .unwrap();
        assert!((up.1 / up.0 - down.1 / down.0).abs() < 1e-6 * p.kt);
    }

    #[test]
    fn slip_follows_8_24_and_its_steady_state() {
        let p = Params::default();
        for &v in &[2e-4, 1e-3, 3e-3, 0.1, -5e-4, -0.05] {
            let mut m = Model::<SevenParameter>::new(p.clone()).unwrap();
            let mut f = 0.0;
            for k in 0..200 {
                f = m.step(&at(k as f64 * 1e-3, v * k as f64 * 1e-3, v), 1e-3);
            }
            let ss = m.steady_state(v).unwrap();
            assert!((f - ss).abs() < 1e-12, "v={v}: {f} vs {ss}");
        }
    }

    #[test]
    fn breakaway_level_rises_with_dwell_from_the_lagged_end_level() {
        let p = Params::default();
        let dt = 1e-3;
        let (v_slide, rest) = (0.01, 2.0);
        let mut s = SevenParameter::initial_state(&p);
        let (mut t, mut x) = (0.0, 0.0);
        // Slide 0.5 s, then stop abruptly: v(t - tau_l) is still v_slide at the arrival sample.
        while t < 0.5 {
            step(&p, &mut s, &at(t, x, v_slide), dt);
            x += v_slide * dt;
            t += dt;
        }
        step(&p, &mut s, &at(t, x, 0.0), dt);
        let fs_a = p.fc + (p.fs_inf - p.fc) / (1.0 + (v_slide / p.vs).powi(2));
        assert!((s.logic.fs_a - fs_a).abs() < 1e-12, "{}", s.logic.fs_a);
        // Rest, then push slowly (below v_critical) until the spring reaches the breakaway level.
        let t_rest_end = t + rest;
        let v_push = 1e-5;
        let mut f = 0.0;
        let mut t2 = 0.0;
        while t < t_rest_end + 3.0 {
            t += dt;
            let v = if t < t_rest_end { 0.0 } else { v_push };
            x += v * dt;
            t2 = s.logic.t2;
            f = step(&p, &mut s, &at(t, x, v), dt);
        }
        let expected = fs_a + (p.fs_inf - fs_a) * t2 / (t2 + p.gamma);
        assert!(t2 > rest + 2.9);
        assert!((f - expected).abs() < 1e-12, "{f} vs {expected}");
        assert!(p.kt * (x - s.logic.x_stick) > expected, "the guard clamps");
    }

    /// Spring pull (m = 1 kg, k = 2 N/m, V = 0.1 m/s) in the plant for 30 s.
    fn spring_pull(dt: f64) -> (Vec<(f64, f64, f64)>, Model<SevenParameter>) {
        let mut m = Model::<SevenParameter>::new(Params::default()).unwrap();
        let mut s = PlantState::default();
        let (k, vp) = (2.0, 0.1);
        let mut rows = Vec::new();
        for i in 0..(30.0 / dt).round() as usize {
            let t = i as f64 * dt;
            let a = Applied {
                u: k * (vp * t - s.x),
                u0: k * (vp * (t + dt) - s.x),
                cu: k * dt,
                du_dt: k * (vp - s.v),
            };
            let f = plant::step(&mut m, &PlantParams { mass: 1.0 }, &mut s, &a, dt);
            rows.push((t, s.v, f));
        }
        (rows, m)
    }

    #[test]
    fn plant_sticks_without_drift_or_ringing_at_every_step() {
        let p = Params::default();
        for dt in [1e-4, 1e-3, 1e-2] {
            let (rows, m) = spring_pull(dt);
            let mut slips = 0;
            let mut moving = false;
            for w in rows.windows(2) {
                let (v0, v1) = (w[0].1, w[1].1);
                if v0 == 0.0 && v1 != 0.0 {
                    slips += 1;
                }
                moving |= v1 != 0.0;
                // Friction never above the ultimate breakaway level plus the viscous term.
                assert!(w[1].2.abs() <= p.fs_inf + p.fv * v1.abs() + 1e-9, "dt={dt}");
            }
            assert!(moving);
            // Regular stick-slip: a few cycles in 30 s, not chatter.
            assert!((3..=30).contains(&slips), "dt={dt}: {slips} breakaways");
            // The first breakaway is at the long-rest level fs_inf = k x: t ≈ 1.5/(2*0.1) = 7.5 s.
            let first = rows.iter().find(|r| r.1 != 0.0).unwrap().0;
            assert!((first - 7.5).abs() < 2.0 * dt + 1e-9, "dt={dt}: {first}");
            assert_eq!(m.quarantined(), 0);
        }
    }

    #[test]
    fn plant_rests_exactly_under_a_force_below_breakaway() {
        // S1's presliding benchmark: 0.5 N sine on 1 kg. The plant's stick is rigid and exact.
        for dt in [1e-4, 1e-3, 1e-2] {
            let mut m = Model::<SevenParameter>::new(Params::default()).unwrap();
            let mut s = PlantState::default();
            for k in 0..(20.0 / dt) as usize {
                let u = 0.5 * (k as f64 * dt).sin();
                let f = plant::step(
                    &mut m,
                    &PlantParams { mass: 1.0 },
                    &mut s,
                    &Applied::force(u, 0.0),
                    dt,
                );
                assert_eq!((s.x, s.v, f), (0.0, 0.0, u), "dt={dt}");
            }
            assert!(!m.state.logic.slip && m.state.logic.t2 > 19.9);
        }
    }

    #[test]
    fn robust_in_every_scenario() {
        crate::models::timedep::assert_robust::<SevenParameter>(Params::default().fs_inf);
    }
}
