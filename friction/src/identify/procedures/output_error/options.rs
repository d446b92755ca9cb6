//! What an output-error fit is asked: the model, the parameters to free, how the data drive
//! the model and how the search runs.

pub use super::super::segment::{Hold, Replay, Speed};
use super::Offset;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

/// How a parameter is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// `log10(value)`: positive parameters spanning decades.
    Log,
    /// `value / |default|`.
    Linear,
}

/// A parameter to fit, as the user chose it; missing fields take the defaults described in the
/// module doc.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FreeParam {
    /// Parameter name (the model's, or `mass` in a torque replay).
    pub name: String,
    /// Lower bound.
    #[serde(default)]
    pub lower: Option<f64>,
    /// Upper bound.
    #[serde(default)]
    pub upper: Option<f64>,
    /// Search scale.
    #[serde(default)]
    pub scale: Option<Scale>,
}

impl FreeParam {
    /// A parameter with default bounds and scale.
    pub fn named(name: &str) -> FreeParam {
        FreeParam {
            name: name.into(),
            ..FreeParam::default()
        }
    }
}

/// The search method.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Method {
    /// Bounded Levenberg–Marquardt from the start values.
    Lm,
    /// Accelerated evolutionary programming within the (finite) bounds, then LM if `polish`.
    Aep {
        /// Population size.
        population: usize,
        /// Rule 2 constant for young individuals.
        beta1: f64,
        /// Rule 2 constant for aged individuals.
        beta2: f64,
        /// Random seed.
        seed: u64,
        /// Generations.
        generations: u64,
        /// Polish the best individual with LM.
        polish: bool,
    },
}

/// Settings of an output-error fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Model id.
    pub model: String,
    /// Fixed parameters and start values over the model's defaults (a JSON object).
    pub params: Value,
    /// The parameters to fit.
    pub free: Vec<FreeParam>,
    /// How the data drive the model.
    pub replay: Replay,
    /// Samples at the start of each segment left out of the cost (initial transient) \[s\].
    pub warmup_s: f64,
    /// Search method.
    pub method: Method,
    /// LM iteration cap.
    pub max_iters: u64,
    /// Wall-time budget of the whole fit.
    pub timeout: Option<Duration>,
    /// Threads for the Jacobian (0 = all cores).
    pub threads: usize,
    /// Forward-difference step of the Jacobian in scaled coordinates (decades for a log
    /// parameter, fractions of the start value for a linear one); default 1e-6. A larger step
    /// smooths a cost with kinks (stick/slip switching in a torque replay).
    pub diff_step: f64,
    /// A constant force offset in the measurement: fitted, known or none.
    pub offset: Offset,
    /// Integration sub-steps per sample interval; `None`: chosen from the data (module doc).
    pub substeps: Option<usize>,
    /// Start a model that contains a simpler one from the simpler one's optimum
    /// (docs/src/identification.md#nested-models).
    pub nested: bool,
    /// Moving-block bootstrap of the standard errors: replicates and seed.
    pub bootstrap: Option<(usize, u64)>,
    /// The applied force between samples: held (a drive's command) or interpolated (a
    /// measured force).
    pub hold: Hold,
    /// The speed between samples of a velocity replay: linear, or carrying the recorded
    /// displacement (as the comparison scores a model, `CompareOptions::speed`).
    pub speed: Speed,
}

impl Options {
    /// LM with velocity replay (speed linear between samples), no warm-up, 200 iterations, all cores, no offset, sub-steps
    /// from the data, nested start, analytic standard errors.
    pub fn new(model: &str, free: &[&str]) -> Options {
        Options {
            model: model.into(),
            params: Value::Object(Map::new()),
            free: free.iter().map(|n| FreeParam::named(n)).collect(),
            replay: Replay::Velocity,
            warmup_s: 0.0,
            method: Method::Lm,
            max_iters: 200,
            timeout: None,
            threads: 0,
            diff_step: 1e-6,
            offset: Offset::None,
            substeps: None,
            nested: true,
            bootstrap: None,
            hold: Hold::Linear,
            speed: Speed::Linear,
        }
    }
}
