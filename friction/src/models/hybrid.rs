//! Nouailletas, Mendes, Koenig: hybrid two-mode dry-friction model (S2 eqs. 1–4 and the Fig. 2
//! state machine; docs/src/models/hybrid.md, docs/src/models/numerics.md#switched-models).
//!
//! Mode 1 (motion) and mode 0 (motionless), S2 eqs. 3–4:
//!
//! $$q = 1:\quad J\dot v = u - f_v v - f_d(v),\qquad
//!   f_d(v) = \left(f_c + (f_s - f_c)\,e^{-(v/v_s)^2}\right)\operatorname{sgn}(v)$$
//!
//! $$q = 0:\quad J\dot v = -p_0 v,\ p_0 \to +\infty,\qquad f = u\ (\text{exactly } u + p_0 v)$$
//!
//! Guards (S2 Fig. 2 text), evaluated once per step at its start with `(u_k, v_k)` and held over
//! the step (docs/src/models/numerics.md#switched-models): `0 → 1` iff `|u| > fs`; `1 → 0` iff `|v| <= sigma_v` and
//! `|u| <= fc`. The hysteresis between the two guards (`fc < |u| <= fs` keeps the current mode)
//! prevents mode chatter.
//!
//! Symbols: `j` = J \[kg or kg m^2\] inertia of S2's plant, `fv` \[N s/m\] viscous coefficient, `fc`
//! \[N\] Coulomb level, `fs` \[N\] breakaway level (convention A), `vs` \[m/s\] Stribeck velocity,
//! `sigma_v` = Σ \[m/s\] speed threshold of the `1 → 0` guard, `p0` \[N s/m\] mode-0 damping. S2
//! also writes `σ = fs - fc` for the Stribeck amplitude: that is [`Params::sigma`], not `sigma_v`.
//! Sign convention: `f` resists motion (plant `m dv/dt = u - f`, docs/src/models/conventions.md); in mode 1 it has
//! the sign of `v`. Defaults: S2 Table I (rotary: N m, rad/s, kg m^2).
//!
//! Numerics, coupled to a plant (`law`/`advance`):
//! - Mode 0 is S2's `p0 → ∞` limit. The exact exponential `v_{k+1} = v_k exp(-p0 h/J)` is 0 in
//!   double precision once `p0 h/J > -ln(ε) ≈ 36` (Table I: `p0/J = 1.4e9` 1/s, so for any
//!   `h > 26 ns`); then the law is a stick with an unbounded limit: `v_{k+1} = 0` exactly and
//!   `f` = the force that stops the body (`u` at rest), no drift at any `h`. For a slower pole
//!   (e.g. S2's tuning rule `p0/J = 3/T_e`) it is an implicit damper `f = u_k + D v_{k+1}`,
//!   `D = J (exp(p0 h/J) - 1)/h`, which reproduces the exact exponential when the plant inertia is
//!   `J` and is stable for any plant mass. `j` is used only here.
//! - Mode 1 keeps `f_d` frozen at `|v_k|` and the viscous term implicit in `v_{k+1}`; the sign is
//!   solved set-valued at zero (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick) with the limit
//!   `fc + (fs - fc) exp(-(v_k/vs)^2)`. On the first step after `0 → 1` (`v_k = 0`) this slides in
//!   the direction of the applied force with `f_d = fs sgn(u)`, as docs/src/models/hybrid.md asks; a body
//!   that would reverse within a step under a force below that level stops at exactly `v = 0`
//!   instead of chattering across zero (which an explicit `sgn(v_k)` does at coarse `h` when
//!   `h fc / J` exceeds `Σ`: 14 rad/s against 0.01 rad/s with Table I at 10 ms). The next step's
//!   guards then decide the mode.
//!
//! Velocity-driven (`step`, lockstep with a bench): the same guards on the measured `v` and `u`;
//! mode 0 outputs `f = u` (the `p0 v` term would amplify sensor noise by `p0`), mode 1
//! `f = fv v + f_d(v)`, and at exactly `v = 0` in mode 1 `clamp(u, fs)` (= `fs sgn(u)` right after
//! breakaway). The model needs `u`: with `u = 0` (prescribed-motion scenarios) it never leaves
//! mode 0 and outputs 0, exactly as S2's state machine says.

use crate::curve::{phi_exp, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Hybrid-model parameters. Defaults: S2 Table I (docs/src/models/hybrid.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Inertia `J` \[kg m^2\]; default 7e-6. Sets only the mode-0 pole `p0/J` (S2 eq. 4).
    pub j: f64,
    /// Viscous coefficient `f_v` \[N m s/rad\]; default 1.6e-4 (S2 eq. 3).
    pub fv: f64,
    /// Coulomb level `f_c` \[N m\]; default 0.01 (S2 eq. 3); also the `1 → 0` force guard.
    pub fc: f64,
    /// Breakaway level `f_s` \[N m\] (convention A); default 0.05; the `0 → 1` guard (S2 Fig. 2).
    pub fs: f64,
    /// Stribeck velocity `v_s` \[rad/s\]; default 0.01 (S2 eq. 3).
    pub vs: f64,
    /// Speed threshold `Σ` \[rad/s\] of the `1 → 0` guard; default 0.01 (S2 Fig. 2, Table I).
    pub sigma_v: f64,
    /// Mode-0 damping `p0` \[N m s/rad\]; default 1e4 (S2 eq. 4, Table I; pole `p0/J` = 1.4e9 1/s).
    pub p0: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            j: 7e-6,
            fv: 1.6e-4,
            fc: 0.01,
            fs: 0.05,
            vs: 0.01,
            sigma_v: 0.01,
            p0: 1e4,
        }
    }
}

impl Params {
    /// S2's Stribeck amplitude `σ = fs - fc` \[N\] (S2 §II; not the speed threshold `sigma_v`).
    pub fn sigma(&self) -> f64 {
        self.fs - self.fc
    }

    /// The mode-0 pole `p0 / J` \[1/s\] (S2 eq. 4).
    pub fn mode0_pole(&self) -> f64 {
        self.p0 / self.j
    }

    /// Dry-friction level `f_c + (f_s - f_c) exp(-(v/v_s)^2)` \[N\] (S2 eq. 3, without the sign).
    #[inline]
    pub fn level(&self, v: f64) -> f64 {
        self.fc + self.sigma() * phi_exp(v, self.vs, 2.0)
    }

    /// Dry friction `f_d(v)` \[N\] (S2 eq. 3), `sgn(0) = 0`.
    #[inline]
    pub fn f_d(&self, v: f64) -> f64 {
        self.level(v) * sgn(v)
    }

    /// The mode after the guards of S2 Fig. 2 with the step-start signals `u`, `v`.
    #[inline]
    pub fn next_mode(&self, mode: Mode, u: f64, v: f64) -> Mode {
        match mode {
            Mode::Motionless if u.abs() > self.fs => Mode::Motion,
            Mode::Motion if v.abs() <= self.sigma_v && u.abs() <= self.fc => Mode::Motionless,
            m => m,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("j", self.j)?;
        check::non_negative("fv", self.fv)?;
        check::non_negative("fc", self.fc)?;
        check::finite("fs", self.fs)?;
        check::at_least("fs", self.fs, "fc", self.fc)?;
        check::positive("vs", self.vs)?;
        check::non_negative("sigma_v", self.sigma_v)?;
        check::positive("p0", self.p0)
    }
}

/// Operating mode (S2 Fig. 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Mode 0: motionless, `f = u`.
    #[default]
    Motionless,
    /// Mode 1: motion, `f = fv v + f_d(v)`.
    Motion,
}

/// Hybrid-model state: the mode held over the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Current mode; motionless at rest.
    pub mode: Mode,
}

/// Marker type of the Nouailletas hybrid model.
#[derive(Clone, Copy, Debug)]
pub struct Hybrid;

/// `p0 h / J` above which `exp(-p0 h / J) < ε`: mode 0 stops the body within one step.
fn stops_in_one_step(x: f64) -> bool {
    x > -f64::EPSILON.ln()
}

/// Mode-1 law: set-valued at zero with the Stribeck level frozen at `|v_k|`, viscous implicit.
#[inline]
fn motion_law(p: &Params, v: f64) -> StepLaw {
    let level = p.level(v);
    StepLaw::Stick {
        limit_pos: level,
        limit_neg: level,
        kinetic_pos: level,
        kinetic_neg: level,
        damping: p.fv,
    }
}

/// Mode-0 law: S2 eq. 4 over one step (see the module doc).
#[inline]
fn motionless_law(p: &Params, u: f64, dt: f64) -> StepLaw {
    let x = p.p0 * dt / p.j;
    if stops_in_one_step(x) {
        StepLaw::Stick {
            limit_pos: f64::MAX,
            limit_neg: f64::MAX,
            kinetic_pos: p.fs,
            kinetic_neg: p.fs,
            damping: 0.0,
        }
    } else {
        StepLaw::Smooth {
            offset: u,
            damping: p.j * x.exp_m1() / dt,
        }
    }
}

impl Dynamics for Hybrid {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, _dt: f64) -> f64 {
        s.mode = p.next_mode(s.mode, input.u, input.v);
        match s.mode {
            Mode::Motionless => input.u,
            Mode::Motion => motion_law(p, input.v).force_at(input.v, input.u),
        }
    }

    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        match p.next_mode(s.mode, input.u, input.v) {
            Mode::Motionless => motionless_law(p, input.u, dt),
            Mode::Motion => motion_law(p, input.v),
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, _v_next: f64, _force: f64, _dt: f64) {
        s.mode = p.next_mode(s.mode, input.u, input.v);
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.fv * v + p.f_d(v))
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["mode".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(match s.mode {
            Mode::Motionless => 0.0,
            Mode::Motion => 1.0,
        });
    }
}

impl ModelDef for Hybrid {
    const ID: &'static str = "hybrid";
    const DESCRIPTION: &'static str = "Nouailletas et al. hybrid two-mode model: motionless (f = u) / Stribeck motion, hysteretic guards";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new(
            "j",
            "kg",
            "inertia J of the model's plant; sets only the mode-0 pole p0/J",
        ),
        ParamDoc::new("fv", "N s/m", "viscous coefficient"),
        ParamDoc::new("fc", "N", "Coulomb level; mode 1 -> 0 needs |u| <= fc"),
        ParamDoc::new(
            "fs",
            "N",
            "breakaway level (fs >= fc); mode 0 -> 1 iff |u| > fs",
        ),
        ParamDoc::new("vs", "m/s", "Stribeck velocity (Gaussian)"),
        ParamDoc::new(
            "sigma_v",
            "m/s",
            "speed threshold Σ; mode 1 -> 0 needs |v| <= sigma_v",
        ),
        ParamDoc::new(
            "p0",
            "N s/m",
            "mode-0 damping; pole p0/J (effectively infinite by default)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrictionModel, Model};
    use crate::plant::{self, Applied, PlantParams, PlantState};
    use crate::scenario::{Profile, Scenario, simulate};

    const J: f64 = 7e-6;

    fn model() -> Model<Hybrid> {
        Model::new(Params::default()).unwrap()
    }

    fn mode(m: &Model<Hybrid>) -> Mode {
        m.state.mode
    }

    /// Steps the plant (inertia `J`) under `u(t)` for `steps` steps; returns the final state.
    fn run(
        m: &mut Model<Hybrid>,
        s: &mut PlantState,
        dt: f64,
        steps: usize,
        u: impl Fn(f64) -> f64,
        mut check: impl FnMut(&PlantState, f64, f64),
    ) {
        for _ in 0..steps {
            let uk = u(s.t);
            let f = plant::step(m, &PlantParams { mass: J }, s, &Applied::force(uk, 0.0), dt);
            check(s, uk, f);
        }
    }

    #[test]
    fn sticks_without_drift_below_breakaway() {
        let sine = |a: f64, w: f64| Profile::Sine {
            amplitude: a,
            omega: w,
            offset: 0.0,
            phase: 0.0,
        };
        let forces = [
            Profile::Constant { value: 0.04 },
            Profile::Constant { value: -0.05 },
            sine(0.049, 3.0),
            sine(0.05, 50.0),
        ];
        for force in forces {
            for dt in [1e-4, 1e-3, 1e-2] {
                let mut m = model();
                let sc = Scenario::Force {
                    mass: J,
                    force: force.clone(),
                };
                simulate(&mut m, &sc, dt, 10.0, 1, |r| {
                    assert_eq!((r.x, r.v), (0.0, 0.0), "{force:?} dt={dt}: {r:?}");
                    assert_eq!(r.friction, r.u);
                    assert_eq!(r.states, vec![0.0]);
                });
            }
        }
    }

    #[test]
    fn breaks_away_above_fs_in_the_direction_of_u() {
        for dir in [1.0, -1.0] {
            for dt in [1e-4, 1e-3, 1e-2] {
                let mut m = model();
                let mut s = PlantState::default();
                let mut first = None;
                // u = 0.01 t: crosses fs = 0.05 at t = 5 s.
                run(
                    &mut m,
                    &mut s,
                    dt,
                    (6.0 / dt) as usize,
                    |t| dir * 0.01 * t,
                    |s, u, _| {
                        if s.v != 0.0 && first.is_none() {
                            first = Some((s.t, u, s.v));
                        }
                    },
                );
                let (t, u, v) = first.expect("no breakaway");
                assert!(
                    u.abs() > 0.05 && t <= 5.0 + 2.0 * dt + 1e-9,
                    "dt={dt}: t={t} u={u}"
                );
                assert_eq!(sgn(v), dir);
                assert_eq!(mode(&m), Mode::Motion);
            }
        }
    }

    #[test]
    fn returns_to_rest_when_slow_and_unloaded() {
        for dt in [1e-4, 1e-3, 1e-2] {
            for u_after in [0.0, 0.008, -0.01] {
                let mut m = model();
                let mut s = PlantState::default();
                run(
                    &mut m,
                    &mut s,
                    dt,
                    (0.2 / dt) as usize,
                    |_| 0.06,
                    |_, _, _| {},
                );
                assert!(s.v > 1.0 && mode(&m) == Mode::Motion);
                run(
                    &mut m,
                    &mut s,
                    dt,
                    (1.0 / dt) as usize,
                    |_| u_after,
                    |_, _, _| {},
                );
                assert_eq!(mode(&m), Mode::Motionless, "dt={dt} u={u_after}");
                assert_eq!(s.v, 0.0);
                let x = s.x;
                run(
                    &mut m,
                    &mut s,
                    dt,
                    1000,
                    |_| u_after,
                    |s, u, f| {
                        assert_eq!((s.x, s.v, f), (x, 0.0, u));
                    },
                );
            }
        }
        // Lockstep: the same guard on measured signals.
        let p = Params::default();
        let mut st = State { mode: Mode::Motion };
        let f = Hybrid::step(
            &p,
            &mut st,
            &Input {
                v: 0.02,
                u: 0.005,
                ..Input::default()
            },
            1e-3,
        );
        assert_eq!((st.mode, f), (Mode::Motion, stribeck(&p, 0.02)));
        let f = Hybrid::step(
            &p,
            &mut st,
            &Input {
                v: 0.01,
                u: 0.005,
                ..Input::default()
            },
            1e-3,
        );
        assert_eq!((st.mode, f), (Mode::Motionless, 0.005));
    }

    fn stribeck(p: &Params, v: f64) -> f64 {
        Hybrid::steady_state(p, v).unwrap()
    }

    #[test]
    fn steady_state_is_the_stribeck_curve_in_motion() {
        let p = Params::default();
        // Velocity-driven: after breakaway, any constant v gives fv v + f_d(v).
        for &v in &[1e-3, 0.005, 0.01, 0.02, 1.0, 100.0, -0.003, -5.0] {
            let mut st = State::default();
            let kick = Input {
                v: 0.0,
                u: 2.0 * p.fs * sgn(v),
                ..Input::default()
            };
            assert_eq!(Hybrid::step(&p, &mut st, &kick, 1e-3), p.fs * sgn(v));
            let ss = stribeck(&p, v);
            let f = Hybrid::step(
                &p,
                &mut st,
                &Input {
                    v,
                    u: ss,
                    ..Input::default()
                },
                1e-3,
            );
            assert_eq!(st.mode, Mode::Motion);
            assert!((f - ss).abs() < 1e-15, "v={v}");
            assert!(
                (ss - (p.fv * v + (p.fc + p.sigma() * (-(v / p.vs).powi(2)).exp()) * sgn(v))).abs()
                    < 1e-15
            );
        }
        // Coupled: a constant torque above fs drives J to the terminal velocity where the
        // friction equals the torque.
        for dt in [1e-4, 1e-3, 1e-2] {
            let mut m = model();
            let mut s = PlantState::default();
            let mut f = 0.0;
            run(
                &mut m,
                &mut s,
                dt,
                (2.0 / dt) as usize,
                |_| 0.06,
                |_, _, fk| f = fk,
            );
            assert!((f - 0.06).abs() < 1e-9, "dt={dt}: {f}");
            assert!(
                (stribeck(&p, s.v) - 0.06).abs() < 1e-9,
                "dt={dt}: v={}",
                s.v
            );
        }
    }

    #[test]
    fn hysteresis_keeps_motion_while_fc_below_u_below_fs() {
        let p = Params::default();
        // Lockstep: slow motion (|v| <= Σ) with fc < |u| <= fs never returns to mode 0.
        let mut st = State { mode: Mode::Motion };
        for k in 0..10_000 {
            let v = 0.005 * ((k as f64) * 0.01).sin();
            let u = 0.03 * if k % 2 == 0 { 1.0 } else { -1.0 };
            Hybrid::step(
                &p,
                &mut st,
                &Input {
                    v,
                    u,
                    ..Input::default()
                },
                1e-3,
            );
            assert_eq!(st.mode, Mode::Motion);
        }
        // Coupled: a slow body under u = 0.03 stops at exactly v = 0 and stays in mode 1 with
        // f = u (no chatter across zero), until |u| <= fc.
        for dt in [1e-4, 1e-3, 1e-2] {
            let mut m = model();
            m.state.mode = Mode::Motion;
            let mut s = PlantState {
                v: 0.005,
                ..PlantState::default()
            };
            run(
                &mut m,
                &mut s,
                dt,
                (1.0 / dt) as usize,
                |_| -0.03,
                |_, _, f| {
                    assert!(f.abs() <= p.fs + 1e-12);
                },
            );
            assert_eq!((mode(&m), s.v), (Mode::Motion, 0.0));
            run(
                &mut m,
                &mut s,
                dt,
                100,
                |_| -0.03,
                |s, u, f| {
                    assert_eq!((s.v, f), (0.0, u));
                },
            );
            assert_eq!(mode(&m), Mode::Motion);
            run(&mut m, &mut s, dt, 2, |_| -0.01, |_, _, _| {});
            assert_eq!(mode(&m), Mode::Motionless);
        }
    }

    #[test]
    fn a_finite_mode0_pole_decays_exactly_on_its_own_inertia() {
        // S2's tuning rule p0/J = 3/T_e with T_e = 1 ms.
        let p = Params {
            p0: 3.0 * J / 1e-3,
            ..Params::default()
        };
        let mut m = Model::<Hybrid>::new(p).unwrap();
        let mut s = PlantState {
            v: 0.004,
            ..PlantState::default()
        };
        let f = plant::step(
            &mut m,
            &PlantParams { mass: J },
            &mut s,
            &Applied::force(0.0, 0.0),
            1e-3,
        );
        assert_eq!(mode(&m), Mode::Motionless);
        assert!((s.v - 0.004 * (-3.0f64).exp()).abs() < 1e-15, "{}", s.v);
        assert!(f > 0.0);
    }

    #[test]
    fn invalid_parameters_are_named() {
        let bad = Params {
            fs: 0.001,
            ..Params::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "fs");
        let bad = Params {
            p0: 0.0,
            ..Params::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "p0");
        let bad = Params {
            sigma_v: -1.0,
            ..Params::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "sigma_v");
    }

    #[test]
    fn robust_in_every_scenario_at_every_step() {
        let p = Params::default();
        let sine = |amplitude: f64, omega: f64| Profile::Sine {
            amplitude,
            omega,
            offset: 0.0,
            phase: 0.0,
        };
        // (scenario, mass for the impulsive mode-0 stop bound, velocity bound)
        let scenarios = [
            // Generic scale.
            (
                Scenario::SpringPull {
                    mass: 1.0,
                    stiffness: 2.0,
                    pull_velocity: 0.1,
                    pull_stop_s: None,
                },
                1.0,
            ),
            (
                Scenario::Force {
                    mass: 1.0,
                    force: sine(0.04, 1.0),
                },
                1.0,
            ),
            (
                Scenario::Force {
                    mass: 1.0,
                    force: sine(0.1, 1.0),
                },
                1.0,
            ),
            (
                Scenario::Velocity {
                    velocity: sine(0.1, 2.0),
                },
                0.0,
            ),
            (
                Scenario::Position {
                    position: sine(0.01, 5.0),
                },
                0.0,
            ),
            // S2 scale: J = 7e-6 kg m^2, torques 0.01–0.1 N m.
            (
                Scenario::SpringPull {
                    mass: J,
                    stiffness: 1.0,
                    pull_velocity: 0.1,
                    pull_stop_s: Some(30.0),
                },
                J,
            ),
            (
                Scenario::Force {
                    mass: J,
                    force: sine(0.04, 1.0),
                },
                J,
            ),
            (
                Scenario::Force {
                    mass: J,
                    force: sine(0.1, 1.0),
                },
                J,
            ),
            (
                Scenario::Force {
                    mass: J,
                    force: sine(0.1, 100.0),
                },
                J,
            ),
            (
                Scenario::Velocity {
                    velocity: sine(1.0, 2.0),
                },
                0.0,
            ),
        ];
        for (sc, mass) in &scenarios {
            for dt in [1e-4, 1e-3, 1e-2] {
                let mut m = model();
                // Mode 0 stops a body moving at |v| <= Σ within one step (S2's infinite pole):
                // the friction of that step may carry the impulse mass Σ / h.
                let f_bound = 3.0 * p.fs + 0.2 + mass * p.sigma_v / dt;
                simulate(&mut m, sc, dt, 60.0, 1, |r| {
                    assert!(
                        r.friction.is_finite() && r.v.is_finite() && r.x.is_finite(),
                        "{sc:?} dt={dt}: {r:?}"
                    );
                    assert!(r.friction.abs() <= f_bound, "{sc:?} dt={dt}: {r:?}");
                    // Terminal speed (0.1 + fc)/fv ≈ 690 rad/s bounds every run.
                    assert!(r.v.abs() < 700.0, "{sc:?} dt={dt}: {r:?}");
                });
                assert_eq!(m.quarantined(), 0);
            }
        }
    }
}
