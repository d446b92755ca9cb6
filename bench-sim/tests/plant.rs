//! The plant alone (no bus): friction ground truth, drive loops, watchdog.

use bench_sim::physics::{Action, FaultCause, Mode, Sim, SimParams, default_truth};

fn sim() -> Sim {
    Sim::new(SimParams::default(), &default_truth()).unwrap()
}

/// Runs `s` for `seconds` with a command every millisecond; returns (mean motor torque,
/// mean sensor torque, mean speed) over the last half.
fn hold(s: &mut Sim, seconds: f64) -> (f64, f64, f64) {
    let n = (seconds * 1e3) as usize;
    let (mut tm, mut ts, mut v, mut k) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..n {
        s.apply(Action::Heartbeat);
        for _ in 0..10 {
            s.step(1e-4);
            if i >= n / 2 {
                let fb = s.feedback();
                tm += fb.motor_torque_nm;
                ts += fb.sensor_torque_nm;
                v += s.truth().v_rad_s;
                k += 1.0;
            }
        }
    }
    (tm / k, ts / k, v / k)
}

#[test]
fn velocity_mode_torque_equals_true_steady_state_friction() {
    // The default truth (asymmetric GMS) in both directions, and an asymmetric LuGre (the
    // other presliding model) for contrast. The reference is whatever model the sim holds.
    let lugre = friction::registry::ModelSpec {
        model: "lugre".into(),
        params: serde_json::json!({"negative": {"fc": 0.8, "fs": 1.2}}),
    };
    for (truth, speed) in [0.5, 2.0, -0.5, -2.0]
        .map(|v| (default_truth(), v))
        .into_iter()
        .chain([(lugre.clone(), 1.0), (lugre, -1.0)])
    {
        let mut s = Sim::new(SimParams::default(), &truth).unwrap();
        s.apply(Action::Enable);
        s.apply(Action::SetMode(Mode::Velocity));
        s.apply(Action::Velocity(speed));
        let (motor, sensor, v) = hold(&mut s, 2.0);
        let truth = s
            .truth_model()
            .steady_state(speed)
            .expect("true model has a steady state");
        let noise = s.params.sensor_noise_nm;
        println!(
            "{} speed {speed}: v {v:.5} motor {motor:.5} sensor {sensor:.5} truth {truth:.5}",
            s.truth_model().id()
        );
        assert!(
            (v - speed).abs() < 1e-3 * speed.abs().max(1.0),
            "speed {v} vs {speed}"
        );
        assert!(
            (motor - truth).abs() < noise,
            "speed {speed}: motor torque {motor} vs true friction {truth} (noise {noise})"
        );
        assert!(
            (sensor - truth).abs() < noise,
            "speed {speed}: sensor torque {sensor} vs true friction {truth} (noise {noise})"
        );
    }
}

#[test]
fn the_default_truth_is_asymmetric_gms() {
    let s = sim();
    let m = s.truth_model();
    assert_eq!(m.id(), "gms");
    for v in [1e-9_f64, 1e-3, 0.1, 1.0] {
        let pos = m.steady_state(v).unwrap();
        let neg = m.steady_state(-v).unwrap();
        // Negative motion: levels about 10 % lower, visibly beyond the 2 mN m sensor noise.
        assert!(neg < 0.0 && pos > 0.0);
        assert!(pos + neg > 0.05, "v {v}: {pos} vs {neg}");
    }
    // Friction of about 1-1.5 N m, within the drive's 2 N m at the speeds the tests use.
    let at = |v: f64| m.steady_state(v).unwrap().abs();
    assert!(
        (1.0..=1.55).contains(&at(1e-6)) && at(2.0) < 2.0,
        "{}",
        at(2.0)
    );
}

#[test]
fn max_torque_caps_the_demand_of_every_mode_without_winding_up() {
    let mut s = sim();
    assert_eq!(
        s.feedback().max_torque_nm,
        5.0,
        "power-on: the motor's saturation"
    );
    assert!(!s.apply(Action::SetMaxTorque(-1.0)));
    assert!(!s.apply(Action::SetMaxTorque(f64::NAN)));
    assert!(s.apply(Action::SetMaxTorque(9.0)));
    assert_eq!(
        s.feedback().max_torque_nm,
        5.0,
        "never above the motor's saturation"
    );
    assert!(s.apply(Action::SetMaxTorque(2.0)));
    s.apply(Action::Enable);
    s.apply(Action::SetMode(Mode::Velocity));
    s.apply(Action::Velocity(10.0));
    let mut peak: f64 = 0.0;
    for _ in 0..300 {
        s.apply(Action::Heartbeat);
        s.advance(1e-3);
        peak = peak.max(s.feedback().motor_torque_nm.abs());
    }
    assert!(peak > 1.99 && peak <= 2.0 + 1e-12, "peak {peak}");
    // Anti-windup against the cap: reaching the speed does not overshoot by a wound integral.
    let mut vmax: f64 = 0.0;
    for _ in 0..2000 {
        s.apply(Action::Heartbeat);
        s.advance(1e-3);
        vmax = vmax.max(s.truth().v_rad_s);
    }
    assert!(vmax < 11.0, "overshoot to {vmax} rad/s");
    assert!((s.truth().v_rad_s - 10.0).abs() < 0.1, "{:?}", s.truth());
}

#[test]
fn watchdog_disables_the_drive_and_sets_the_fault() {
    let mut s = sim();
    s.apply(Action::Enable);
    s.apply(Action::Torque(3.0));
    // Commands every 50 ms keep it alive.
    for _ in 0..10 {
        s.advance(0.05);
        s.apply(Action::Heartbeat);
    }
    assert!(s.feedback().enabled);
    assert!(s.feedback().motor_torque_nm > 2.9);
    // 100 ms of silence trips it.
    s.advance(0.099);
    assert!(s.feedback().enabled);
    s.advance(0.002);
    let fb = s.feedback();
    assert!(!fb.enabled, "{fb:?}");
    assert_eq!(fb.fault, Some(FaultCause::Watchdog));
    assert_eq!(fb.motor_torque_nm, 0.0);
    // Latched until cleared.
    assert!(!s.apply(Action::Enable));
    s.apply(Action::ClearFault);
    assert!(s.apply(Action::Enable));
}
