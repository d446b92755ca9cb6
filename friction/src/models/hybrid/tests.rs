//! Tests of the hybrid model: sticking, breakaway, return to rest, the Stribeck curve, robustness.

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
                load: crate::Load::None,
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
                load: crate::Load::None,
                mass: 1.0,
                force: sine(0.04, 1.0),
            },
            1.0,
        ),
        (
            Scenario::Force {
                load: crate::Load::None,
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
                load: crate::Load::None,
                mass: J,
                force: sine(0.04, 1.0),
            },
            J,
        ),
        (
            Scenario::Force {
                load: crate::Load::None,
                mass: J,
                force: sine(0.1, 1.0),
            },
            J,
        ),
        (
            Scenario::Force {
                load: crate::Load::None,
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
