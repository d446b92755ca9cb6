//! Every model, every scenario kind, at 0.1 ms, 1 ms and 10 ms over 60 s with the default
//! parameters: outputs finite and bounded, and no step quarantined for a non-finite value.

use crate::util::{model, scenario};
use friction::registry::MODELS;
use friction::scenario::simulate;
use serde_json::json;

/// A force scale for the model: its steady-state friction at a moderate speed, else 1.
fn scale(m: &dyn friction::FrictionModel) -> f64 {
    m.steady_state(0.01)
        .map(f64::abs)
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(1.0)
}

fn scenarios(f: f64) -> Vec<serde_json::Value> {
    vec![
        json!({"kind": "spring_pull", "mass": 1.0, "stiffness": 2.0 * f, "pull_velocity": 0.1, "pull_stop_s": 30.0}),
        json!({"kind": "force", "mass": 1.0, "force": {"sine": {"amplitude": 0.5 * f, "omega": 3.0}}}),
        json!({"kind": "force", "mass": 1.0, "force": {"sine": {"amplitude": 3.0 * f, "omega": 1.0}}}),
        json!({"kind": "force", "mass": 1.0, "force": {"ramp": {"rate": 0.1 * f}}}),
        json!({"kind": "velocity", "velocity": {"sine": {"amplitude": 0.05, "omega": 3.0}}}),
        json!({"kind": "velocity", "velocity": {"chirp": {"amplitude": 0.5, "f0": 0.1, "f1": 20.0, "duration": 60.0, "offset": 0.2}}}),
        json!({"kind": "position", "position": {"sine": {"amplitude": 1e-5, "omega": 6.0}}}),
        json!({"kind": "position", "position": {"step": {"value": 1e-3, "at": 1.0}}}),
    ]
}

fn check_all(dt: f64) {
    let mut failures = Vec::new();
    for e in MODELS {
        let probe = model(e.id, json!({}));
        let f = scale(probe.as_ref());
        for doc in scenarios(f) {
            let mut m = model(e.id, json!({}));
            let s = scenario(doc.clone());
            let mut worst_f: f64 = 0.0;
            let mut worst_v: f64 = 0.0;
            let mut finite = true;
            simulate(m.as_mut(), &s, dt, 60.0, 1, |r| {
                finite &= r.friction.is_finite() && r.x.is_finite() && r.v.is_finite();
                finite &= r.states.iter().all(|x| x.is_finite());
                worst_f = worst_f.max(r.friction.abs());
                worst_v = worst_v.max(r.v.abs());
            });
            // Bounded: the friction stays within a few times the largest applied or steady
            // level (the 3f force ramp reaches 6f in 60 s; the chirp's viscous part is small).
            let bounded = worst_f <= 50.0 * f + 10.0 && worst_v < 1e4;
            if !finite || !bounded || m.quarantined() > 0 {
                failures.push(format!(
                    "{} dt={dt} {doc}: finite={finite} max|F|={worst_f:.3e} (scale {f:.3e}) max|v|={worst_v:.3e} quarantined={}",
                    e.id,
                    m.quarantined()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_model_every_scenario_at_0_1_ms() {
    check_all(1e-4);
}

#[test]
fn every_model_every_scenario_at_1_ms() {
    check_all(1e-3);
}

#[test]
fn every_model_every_scenario_at_10_ms() {
    check_all(1e-2);
}
