//! Published numbers and convergence checks (MODELS.md §1.2 item 5, §18).

use crate::util::{mean_period, model, run, scenario, upward_crossings};
use serde_json::json;

/// LuGre stick-slip with the Canudas 1995 set (m = 1 kg, k = 2 N/m, pull 0.1 m/s): the slip
/// period at 0.1 ms is within 0.5 % and at 1 ms within 2 % of the fine-step (10 µs) value.
#[test]
fn lugre_stick_slip_period_converges() {
    let s = scenario(
        json!({"kind": "spring_pull", "mass": 1.0, "stiffness": 2.0, "pull_velocity": 0.1}),
    );
    let period = |dt: f64| {
        let mut m = model("lugre", json!({}));
        let every = ((1e-4 / dt).round() as usize).max(1);
        let rows = run(m.as_mut(), &s, dt, 60.0, every);
        let c = upward_crossings(&rows, 0.2);
        (c[0], mean_period(&c, 1))
    };
    let (first_fine, fine) = period(1e-5);
    let (first_1, p1) = period(1e-4);
    let (first_2, p2) = period(1e-3);
    let (_, p3) = period(1e-2);
    eprintln!(
        "first slip {first_fine:.4}/{first_1:.4}/{first_2:.4} s; period 1e-5: {fine:.5} s, 1e-4: {p1:.5}, 1e-3: {p2:.5}, 1e-2: {p3:.5}"
    );
    assert!((p1 - fine).abs() / fine < 0.005, "dt=1e-4: {p1} vs {fine}");
    assert!((p2 - fine).abs() / fine < 0.02, "dt=1e-3: {p2} vs {fine}");
    assert!(p3.is_finite());
}
