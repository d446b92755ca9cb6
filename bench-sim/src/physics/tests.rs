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
