//! A run paused on a `[[suspend]]` condition, whole loop on the simulated plant in simulated
//! time: the pause before a segment, the safe state, the wait, the continuation, the timeout.

use super::*;
use crate::config::{Loaded, SuspendRule};
use experiments::Spec;
use std::sync::Arc;

/// Four segments: 0.5 and 1 rad/s, both directions, 0.3 s settle + 0.2 s measure each.
fn sweep() -> experiments::Plan {
    let spec = Spec::from_value(serde_json::json!({
        "kind": "constant_velocity_sweep",
        "params": {"velocities": [0.5, 1.0], "directions": "both",
                   "settle_s": 0.3, "measure_s": 0.2, "repeats": 1}
    }))
    .unwrap();
    spec.plan(&experiments::BenchLimits::sim_default()).unwrap()
}

/// The shipped simulated bench, pausing while the drive reads above 60 °C (hold 1 s).
fn loaded(timeout_s: f64) -> Loaded {
    let mut l = Loaded::sim("127.0.0.1:0");
    l.config.suspend = vec![SuspendRule {
        signal: "drive.temperature".into(),
        above: Some(60.0),
        below: None,
        hold_s: 1.0,
        suspended_timeout_s: timeout_s,
        line: None,
    }];
    l
}

fn setup(loaded: Loaded, temperatures: Vec<(f64, f64)>) -> LoopSetup {
    setup_on(loaded, |io| io.with_temperatures(temperatures))
}

/// [`setup`] on the simulated plant as `io` makes it.
fn setup_on(loaded: Loaded, io: impl FnOnce(SimIo) -> SimIo) -> LoopSetup {
    let mut s = super::loop_tests::setup(loaded, sweep(), Arc::new(Control::new()));
    let sim =
        bench_sim::Sim::new(bench_sim::SimParams::default(), &bench_sim::default_truth()).unwrap();
    s.devices = Devices::Simulated(Box::new(io(SimIo::new(sim))));
    s
}

fn lines(report: &LoopReport) -> Vec<String> {
    report.log.iter().map(|(_, l)| l.clone()).collect()
}

#[test]
fn a_warm_drive_pauses_the_run_before_its_next_segment_and_it_goes_on_once_cool() {
    let plan = sweep();
    let ticks = (plan.estimate_duration() / plan.period_s()).round() as u64;
    // Settle 0.3 s then measure 0.2 s per point: no pause between the two.
    let second = plan.segments[2].label.clone();
    // Warm during the first point (0..0.5 s), cool again at 2 s.
    let report = run(setup(loaded(600.0), vec![(0.2, 75.0), (2.0, 50.0)]));
    assert_eq!(report.outcome, Outcome::Completed, "{:?}", report.log);
    let log = lines(&report);
    let (t_pause, pause) = &report.log[0];
    assert!(
        pause.starts_with(&format!(
            "suspended before '{second}': drive.temperature > 60 read 75.0"
        )),
        "{log:?}"
    );
    // At the second segment's start, on the run's clock.
    assert!((t_pause.unwrap() - 0.5).abs() < 0.01, "{t_pause:?}");
    assert!(log[1].starts_with("drive disabled, confirmed"), "{log:?}");
    let (t_on, on) = &report.log[2];
    assert!(
        on.starts_with("continued after ")
            && on.ends_with(&format!("'{second}' is measured from its start")),
        "{log:?}"
    );
    // Clear from 2 s, read every 0.5 s, held 1 s: on again at 3 to 3.5 s.
    assert!((3.0..=3.6).contains(&t_on.unwrap()), "{t_on:?}");
    assert_eq!(log.len(), 3, "{log:?}");
    // Every segment measured once, whole: the plan's ticks, none twice, none cut.
    assert!(
        report.ticks.abs_diff(ticks) <= 3,
        "{} ticks vs the plan's {ticks}",
        report.ticks
    );
    assert!(report.elapsed_s > 3.0 + 1.5, "{}", report.elapsed_s);
    assert!(report.safe_state_s.is_some());
}

#[test]
fn a_pause_beyond_its_limit_ends_the_run_suspended_timeout_with_the_drive_disabled() {
    let report = run(setup(loaded(5.0), vec![(0.2, 75.0)]));
    let Outcome::Stopped(reason) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(reason.code(), run_store::ReasonCode::SuspendedTimeout);
    assert_eq!(reason.code().as_str(), "suspended_timeout");
    assert_eq!(report.outcome.status(), run_store::RunStatus::Aborted);
    assert!(
        reason
            .to_string()
            .starts_with("suspended_timeout: paused 5.0 s on drive.temperature > 60, longer than suspended_timeout_s = 5"),
        "{reason}"
    );
    let log = lines(&report);
    assert!(log[1].starts_with("suspended before 'settle "), "{log:?}");
    // Confirmed when it paused, and again when the run ended.
    let confirmed = log
        .iter()
        .filter(|l| l.starts_with("drive disabled, confirmed"));
    assert_eq!(confirmed.count(), 2, "{log:?}");
    assert!(report.safe_state_s.is_some());
    // Nothing but the first segment ran.
    assert!(report.ticks.abs_diff(500) <= 2, "{}", report.ticks);
}

#[test]
fn a_drive_fault_during_a_pause_ends_the_run_as_a_drive_fault() {
    let faulty = |io: SimIo| io.with_temperatures(vec![(0.2, 75.0)]).with_trip_at(2.0);
    let report = run(setup_on(loaded(600.0), faulty));
    let Outcome::Stopped(reason) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(reason.code(), run_store::ReasonCode::DriveFault, "{reason}");
    assert_eq!(report.outcome.status(), run_store::RunStatus::Failed);
    let log = lines(&report);
    assert!(
        log.iter().any(|l| l.starts_with("suspended before ")),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.starts_with("continued")), "{log:?}");
    assert!(report.safe_state_s.is_some(), "{log:?}");
}
