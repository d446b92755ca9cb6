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

/// A tiny seeded generator (SplitMix64) with Gaussian samples (Box–Muller), for reproducible
/// noise in the identification tests.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Normal with standard deviation `sd`.
    pub fn normal(&mut self, sd: f64) -> f64 {
        let u1 = self.uniform().max(1e-300);
        let u2 = self.uniform();
        sd * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Rounds `x` to a multiple of `q` (encoder quantisation).
pub fn quantise(x: f64, q: f64) -> f64 {
    (x / q).round() * q
}
