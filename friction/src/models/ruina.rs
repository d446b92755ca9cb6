//! Ruina–Rice single-state (rate-and-state) friction law: S1 §8.4.2.2 eqs. 8.38–8.40 (values
//! Table 8.4, identification 8.41–8.43); docs/src/models/ruina.md (numerics docs/src/models/numerics.md#exact-and-implicit-state-updates (item 2), stick docs/src/models/numerics.md#drift-free-stick).
//!
//! $$f = f_0 + A \ln\frac{v}{v_0} + \theta\qquad (8.38)$$
//! $$\dot\theta = -\frac{v}{L}\Big\[\theta + B \ln\frac{v}{v_0}\Big\]\qquad (8.39)$$
//! $$f_{ss}(v) = f_0 + (A - B) \ln\frac{v}{v_0}\qquad (8.40)$$
//!
//! `f` is a friction coefficient; the force is `F = fn_load f`. Symbols: `v` \[m/s\] sliding speed;
//! `a`, `b` \[-\] the direct and evolution effects (S1's A, B); `l` \[m\] characteristic sliding
//! length `L`; `(v0, f0)` \[m/s, -\] any reference point on the steady-state curve; `theta` \[-\] the
//! state; `fn_load` \[N\] normal load. A velocity step changes `dtheta/dt`, not `theta`, so the
//! friction jumps by `A ln(v2/v1)` and then relaxes over about `L` to the new steady state;
//! `A < B` (all of Table 8.4, [`TABLE_8_4`]) gives velocity weakening.
//!
//! **Signed use at a floor.** The law is defined for `v > 0` only (ln 0 = -inf). We use
//! `F = sgn(v) fn_load f(max(|v|, v_min))`, and `|v| < v_min` counts as rest: there the friction
//! balances the applied force up to the level at `v_min` (S1: "a switch which for zero velocity
//! gives a finite friction value"). Results depend on `v_min` (S1 declares the law inadequate at
//! low speed). A coefficient that would turn negative (far beyond the curve's range, e.g.
//! `v > v0 exp(f0/(B - A))`) is clamped to 0. There is no F_s parameter (no convention A/B
//! question); the breakaway level is `fn_load f(v_min)` with the current `theta`.
//!
//! **Numerics.** `theta` is linear for a frozen speed, so it is advanced by the exact space-domain
//! update (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 2)) over the step's sliding distance `Δx`:
//!
//! $$\theta_{k+1} = -B \ln\frac{|v|}{v_0} + \Big(\theta_k + B \ln\frac{|v|}{v_0}\Big)
//!   e^{-|\Delta x|/L}$$
//!
//! with `|v|` floored at `v_min`; velocity-driven `Δx = v_k h` (exact for piecewise-constant `v`),
//! in a plant `Δx = h v_{k+1}` (the plant's own displacement; 0 at rest, so `theta` holds). The
//! update is a convex combination, stable for every `h`. Coupled to a plant, rest is the
//! drift-free set-valued stick (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick); while sliding the direct
//! effect `A ln|v|` is linearised at `v_k` and made implicit (`dF/dv = fn_load A/|v_k| >= 0` as
//! damping), so the step is stable where the explicit slope `fn_load A/|v|` would not be.

use crate::curve::{relax, sat, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// One row of S1 Table 8.4 (Dupont et al.; tool steel, Rockwell 59C; mean values).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lubricant {
    /// Lubrication condition.
    pub name: &'static str,
    /// Direct effect `A` \[-\].
    pub a: f64,
    /// Evolution effect `B` \[-\].
    pub b: f64,
    /// Characteristic sliding length `L` \[m\] (the table prints µm; S1's "m" is garbled).
    pub l: f64,
}

/// S1 Table 8.4. Paraffin oil's `A` was below the measurement noise (printed 0.0).
pub const TABLE_8_4: [Lubricant; 3] = [
    Lubricant {
        name: "dry",
        a: 2.8e-3,
        b: 9.4e-3,
        l: 64.7e-6,
    },
    Lubricant {
        name: "paraffin oil",
        a: 0.0,
        b: 11.1e-3,
        l: 22.4e-6,
    },
    Lubricant {
        name: "boundary lubricant paste",
        a: 1.1e-3,
        b: 4.0e-3,
        l: 19.2e-6,
    },
];

/// Ruina–Rice parameters. `a`, `b`, `l`: the "dry" row of S1 Table 8.4. S1 gives no reference
/// point: we choose `f0` = 0.1 at `v0` = 1 mm/s and `fn_load` = 10 N, which puts the friction near
/// 1 N like the other models' defaults (about 1.46 N at `v_min` = 1 µm/s, 0.70 N at 0.1 m/s).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Direct effect `A` \[-\]; default 2.8e-3.
    pub a: f64,
    /// Evolution effect `B` \[-\]; default 9.4e-3.
    pub b: f64,
    /// Characteristic sliding length `L` \[m\]; default 64.7e-6.
    pub l: f64,
    /// Reference velocity `v0` \[m/s\]; default 1e-3.
    pub v0: f64,
    /// Friction coefficient at `v0` in steady state `f0` \[-\]; default 0.1.
    pub f0: f64,
    /// Speed floor; `|v|` below it counts as rest \[m/s\]; default 1e-6.
    pub v_min: f64,
    /// Normal load: `F = fn_load f` \[N\]; default 10.
    pub fn_load: f64,
}

impl Default for Params {
    fn default() -> Params {
        let dry = TABLE_8_4[0];
        Params {
            a: dry.a,
            b: dry.b,
            l: dry.l,
            v0: 1e-3,
            f0: 0.1,
            v_min: 1e-6,
            fn_load: 10.0,
        }
    }
}

impl Params {
    /// `max(|v|, v_min)`.
    #[inline]
    pub fn speed(&self, v: f64) -> f64 {
        v.abs().max(self.v_min)
    }

    /// Friction force magnitude at speed `|v|` (floored) and state `theta` (8.38), >= 0.
    #[inline]
    pub fn level(&self, theta: f64, v: f64) -> f64 {
        self.fn_load * (self.f0 + self.a * (self.speed(v) / self.v0).ln() + theta).max(0.0)
    }

    /// Steady-state `theta` at speed `|v|` (floored): `-B ln(|v|/v0)`.
    #[inline]
    pub fn theta_ss(&self, v: f64) -> f64 {
        -self.b * (self.speed(v) / self.v0).ln()
    }

    /// Steady-state friction coefficient `f0 + (A - B) ln(|v|/v0)` (8.40), floored speed.
    #[inline]
    pub fn f_ss(&self, v: f64) -> f64 {
        self.f0 + (self.a - self.b) * (self.speed(v) / self.v0).ln()
    }

    /// Exact space-domain update of `theta` over a sliding distance `dx` at speed `|v|`.
    #[inline]
    pub fn evolve(&self, theta: f64, v: f64, dx: f64) -> f64 {
        relax(theta, self.theta_ss(v), dx.abs() / self.l)
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("a", self.a)?;
        check::non_negative("b", self.b)?;
        check::positive("l", self.l)?;
        check::positive("v0", self.v0)?;
        check::positive("f0", self.f0)?;
        check::positive("v_min", self.v_min)?;
        check::positive("fn_load", self.fn_load)
    }
}

/// Ruina–Rice state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// State variable `theta` \[-\].
    pub theta: f64,
}

/// Marker type of the Ruina–Rice model.
#[derive(Clone, Copy, Debug)]
pub struct Ruina;

/// The velocity-driven step: 8.38 at the floored speed (or `clamp(u, level(v_min))` at rest),
/// then the exact update of `theta` over `Δx = v h`.
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let f = if v.abs() < p.v_min {
        sat(input.u, p.level(s.theta, p.v_min))
    } else {
        sgn(v) * p.level(s.theta, v)
    };
    s.theta = p.evolve(s.theta, v, v * dt);
    f
}

impl Dynamics for Ruina {
    type Params = Params;
    type State = State;

    /// At rest after a long dwell: `theta` in steady state at `v_min`.
    fn initial_state(p: &Params) -> State {
        State {
            theta: p.theta_ss(p.v_min),
        }
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Set-valued stick at the `v_min` level; sliding with `A ln|v|` linearised at `v_k`.
    fn law(p: &Params, s: &State, input: &Input, _dt: f64) -> StepLaw {
        let limit = p.level(s.theta, p.v_min);
        // Linearise F(|v|) = level(theta, |v|) at |v_k| (floored): F ≈ kinetic + damping |v|.
        let sp = p.speed(input.v);
        let level = p.level(s.theta, sp);
        let damping = if level > 0.0 {
            p.fn_load * p.a / sp
        } else {
            0.0
        };
        let kinetic = (level - damping * sp).max(0.0);
        StepLaw::Stick {
            limit_pos: limit,
            limit_neg: limit,
            kinetic_pos: kinetic,
            kinetic_neg: kinetic,
            damping,
        }
    }

    fn advance(p: &Params, s: &mut State, _input: &Input, v_next: f64, _force: f64, dt: f64) {
        s.theta = p.evolve(s.theta, v_next, v_next * dt);
    }

    /// `sgn(v) fn_load (f0 + (A - B) ln(|v|/v0))` for `|v| >= v_min` (clamped at 0), 0 at rest.
    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        if v.abs() < p.v_min {
            Some(0.0)
        } else {
            Some(sgn(v) * p.fn_load * p.f_ss(v).max(0.0))
        }
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["theta".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.theta);
    }
}

impl ModelDef for Ruina {
    const ID: &'static str = "ruina";
    const DESCRIPTION: &'static str =
        "Ruina-Rice single-state rate-and-state law f0 + A ln(v/v0) + theta, times a normal load";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new(
            "a",
            "-",
            "direct effect A (friction jump A ln(v2/v1) on a velocity step)",
        ),
        ParamDoc::new("b", "-", "evolution effect B (A < B: velocity weakening)"),
        ParamDoc::new("l", "m", "characteristic sliding length L"),
        ParamDoc::new("v0", "m/s", "reference velocity of the steady-state curve"),
        ParamDoc::new("f0", "-", "steady-state friction coefficient at v0"),
        ParamDoc::new("v_min", "m/s", "speed floor; |v| below it counts as rest"),
        ParamDoc::new(
            "fn_load",
            "N",
            "normal load (force = fn_load * coefficient)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::plant::{self, Applied, PlantParams, PlantState};

    #[test]
    fn table_8_4_is_velocity_weakening() {
        for row in TABLE_8_4 {
            assert!(row.a - row.b < 0.0, "{}", row.name);
            assert!(row.l > 1e-5 && row.l < 1e-4, "{}: L in µm", row.name);
        }
    }

    #[test]
    fn steady_state_is_8_40_times_the_load() {
        let p = Params::default();
        for &v in &[1e-5f64, 1e-4, 1e-3, 1e-2, 0.1, -3e-4, -0.05] {
            let mut m = Model::<Ruina>::new(p.clone()).unwrap();
            // Slide a hundred characteristic lengths.
            let dt = 100.0 * p.l / v.abs() / 20_000.0;
            let mut f = 0.0;
            for _ in 0..20_000 {
                f = m.step(&Input::velocity(v), dt);
            }
            let expected = sgn(v) * p.fn_load * (p.f0 + (p.a - p.b) * (v.abs() / p.v0).ln());
            assert!((f - expected).abs() < 1e-9, "v={v}: {f} vs {expected}");
            assert_eq!(m.steady_state(v).unwrap(), expected);
        }
    }

    #[test]
    fn velocity_step_jumps_by_a_ln_ratio_then_relaxes_over_l() {
        let p = Params::default();
        let (v1, v2) = (1e-3, 1e-2);
        let dt = p.l / v2 / 100.0; // 100 steps per characteristic length after the step
        let mut s = Ruina::initial_state(&p);
        let mut f1 = 0.0;
        for _ in 0..200_000 {
            f1 = step(&p, &mut s, &Input::velocity(v1), dt);
        }
        let ln = (v2 / v1).ln();
        let mut fs = Vec::new();
        for _ in 0..2000 {
            fs.push(step(&p, &mut s, &Input::velocity(v2), dt));
        }
        let f2_ss = p.fn_load * p.f_ss(v2);
        // Jump: A ln(v2/v1) times the load, at the step itself.
        assert!((fs[0] - f1 - p.fn_load * p.a * ln).abs() < 1e-12);
        // After one sliding length the excess over the new steady state is B ln(v2/v1) e^-1.
        let excess = fs[100] - f2_ss;
        assert!(
            (excess - p.fn_load * p.b * ln * (-1.0f64).exp()).abs() < 1e-12,
            "{excess}"
        );
        // Relaxed after 20 L; S1 8.41–8.42 recover A and B.
        let f2 = fs[1999];
        assert!((f2 - f2_ss).abs() < 1e-9);
        let (f1c, fmax, f2c) = (f1 / p.fn_load, fs[0] / p.fn_load, f2 / p.fn_load);
        let a = (fmax - f1c) / ln;
        let b = a - (f2c - f1c) / ln;
        assert!(
            (a - p.a).abs() < 1e-9 && (b - p.b).abs() < 1e-9,
            "A {a} B {b}"
        );
    }

    #[test]
    fn sticks_without_drift_below_the_v_min_level() {
        let p = Params::default();
        let limit = p.level(Ruina::initial_state(&p).theta, p.v_min);
        assert!((limit - p.fn_load * p.f_ss(p.v_min)).abs() < 1e-12);
        for dt in [1e-4, 1e-3, 1e-2] {
            let mut m = Model::<Ruina>::new(p.clone()).unwrap();
            let mut s = PlantState::default();
            for _ in 0..(10.0 / dt) as usize {
                let f = plant::step(
                    &mut m,
                    &PlantParams { mass: 1.0 },
                    &mut s,
                    &Applied::force(0.99 * limit, 0.0),
                    dt,
                );
                assert_eq!((s.v, s.x, f), (0.0, 0.0, 0.99 * limit));
            }
            // 10 % above the level it creeps out, weakens (A < B) and runs away.
            for _ in 0..(10.0 / dt) as usize {
                plant::step(
                    &mut m,
                    &PlantParams { mass: 1.0 },
                    &mut s,
                    &Applied::force(1.1 * limit, 0.0),
                    dt,
                );
            }
            assert!(s.v > 0.1, "dt={dt}: {}", s.v);
        }
    }

    #[test]
    fn robust_in_every_scenario() {
        let p = Params::default();
        crate::models::timedep::assert_robust::<Ruina>(p.fn_load * p.f_ss(p.v_min));
    }
}
