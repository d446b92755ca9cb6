//! Helpers shared by the integration tests.

use friction::FrictionModel;
use friction::registry::{ModelSpec, build_model};
use friction::scenario::{Row, Scenario, simulate};

/// Builds `id` with `params` over its defaults, panicking with the error.
pub fn model(id: &str, params: serde_json::Value) -> Box<dyn FrictionModel> {
    build_model(&ModelSpec {
        model: id.into(),
        params,
    })
    .unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// Parses a scenario document.
pub fn scenario(doc: serde_json::Value) -> Scenario {
    let s: Scenario = serde_json::from_value(doc).expect("scenario");
    s.validate().expect("valid scenario");
    s
}

/// Runs a simulation and collects every `every`-th row.
pub fn run(
    m: &mut dyn FrictionModel,
    s: &Scenario,
    dt: f64,
    duration: f64,
    every: usize,
) -> Vec<Row> {
    let mut rows = Vec::new();
    simulate(m, s, dt, duration, every, |r| rows.push(r.clone()));
    rows
}

/// Times at which `v` first rises through `level` in each slip (upward crossings).
pub fn upward_crossings(rows: &[Row], level: f64) -> Vec<f64> {
    rows.windows(2)
        .filter(|w| w[0].v < level && w[1].v >= level)
        .map(|w| {
            let a = (level - w[0].v) / (w[1].v - w[0].v);
            w[0].t + a * (w[1].t - w[0].t)
        })
        .collect()
}

/// Mean interval between consecutive crossings after skipping the first `skip`.
pub fn mean_period(crossings: &[f64], skip: usize) -> f64 {
    let c = &crossings[skip..];
    assert!(c.len() >= 2, "too few crossings: {crossings:?}");
    (c[c.len() - 1] - c[0]) / (c.len() - 1) as f64
}
