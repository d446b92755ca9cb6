//! Unit tests of the simulated bench: torque and position modes, reproducibility, faults and
//! parameter checks.

use super::*;

fn sim() -> Sim {
    Sim::new(SimParams::default(), &default_truth()).unwrap()
}

#[test]
fn torque_mode_below_breakaway_stays_put_and_above_accelerates() {
    let mut s = sim();
    s.apply(Action::Enable);
    s.apply(Action::Torque(0.5));
    for _ in 0..50 {
        s.apply(Action::Heartbeat);
        s.advance(1e-3);
    }
    assert!(s.truth().v_rad_s.abs() < 1e-3, "{:?}", s.truth());
    s.apply(Action::Torque(3.0));
    for _ in 0..50 {
        s.apply(Action::Heartbeat);
        s.advance(1e-3);
    }
    assert!(s.truth().v_rad_s > 4.0, "{:?}", s.truth());
}

#[test]
fn position_mode_reaches_the_target() {
    let mut s = sim();
    s.apply(Action::Enable);
    s.apply(Action::SetMode(Mode::Position));
    s.apply(Action::Position(1.0));
    for _ in 0..1000 {
        s.apply(Action::Heartbeat);
        s.advance(1e-3);
    }
    // The PID's integral against the true friction's stiction hunts around the target (the
    // classic stick-slip limit cycle of a soft position loop, ±20 mrad here) and stays in
    // that band.
    for _ in 0..3000 {
        s.apply(Action::Heartbeat);
        s.advance(1e-3);
        let x = s.feedback().position_rad;
        assert!((x - 1.0).abs() < 3e-2, "{x} at {} s", s.time_s());
    }
}

#[test]
fn same_seed_same_run() {
    let run = || {
        let mut s = sim();
        s.apply(Action::Enable);
        s.apply(Action::SetMode(Mode::Velocity));
        s.apply(Action::Velocity(2.0));
        let mut out = Vec::new();
        for _ in 0..50 {
            s.apply(Action::Heartbeat);
            s.advance(1e-3);
            out.push(s.feedback().sensor_torque_nm);
        }
        out
    };
    assert_eq!(run(), run());
}

#[test]
fn enable_is_refused_while_faulted() {
    let mut s = sim();
    s.apply(Action::Trip);
    assert!(!s.apply(Action::Enable));
    assert_eq!(s.feedback().fault, Some(FaultCause::External));
    s.apply(Action::ClearFault);
    assert!(s.apply(Action::Enable));
}

#[test]
fn bad_params_are_named() {
    let p = SimParams {
        inertia_kg_m2: -1.0,
        ..SimParams::default()
    };
    let err = Sim::new(p, &default_truth()).unwrap_err().to_string();
    assert_eq!(
        err,
        "sim parameter inertia_kg_m2 (-1) must be finite and > 0"
    );
}

/// A pendulum load holds the released arm at its lowest point; without it the arm would stay
/// wherever friction stopped it.
#[test]
fn a_pendulum_load_swings_the_arm_to_its_lowest_point() {
    let load = friction::Load::Pendulum {
        mass: 5.0,
        length: 0.5,
        bottom: 0.5,
        g: friction::load::STANDARD_GRAVITY,
    };
    let p = SimParams {
        load,
        watchdog_s: 0.0,
        ..SimParams::default()
    };
    let mut sim = Sim::new(p, &default_truth()).unwrap();
    sim.advance(3.0);
    let x = sim.state.plant.x;
    // Friction (fs = 1.5 N m) leaves the arm within asin(fs / (m g l)) = 0.061 rad of the
    // bottom, 0.5 rad from where it started.
    assert!((x - 0.5).abs() < 0.062, "{x}");
    assert!(sim.state.plant.v.abs() < 1e-9, "{}", sim.state.plant.v);
    let err = Sim::new(
        SimParams {
            load: friction::Load::Spring {
                stiffness: -1.0,
                rest: 0.0,
            },
            ..SimParams::default()
        },
        &default_truth(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "sim parameter load.stiffness (-1) must be finite and > 0"
    );
}
