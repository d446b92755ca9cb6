//! What every fit result carries (issue 5): the procedure, the data used, the residual MSE, the
//! parameter uncertainty where the method gives one, and how the fitter stopped.

use crate::identify::{FitResult, TerminationReason};
use serde::Serialize;
use std::collections::BTreeMap;

/// Where a result came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    /// Procedure name as in `bench fit --procedure` (e.g. `output_error`, `aep`, `nnaji`).
    pub procedure: String,
    /// The data used: one entry per segment (file name or run id, samples, time span).
    pub data: Vec<DataUsed>,
    /// Mean squared residual at the result, in the residual's unit squared (N^2 for a friction
    /// error, m^2 for a motion error).
    pub residual_mse: f64,
    /// What the residual is (e.g. `friction [N]`, `position [m]`).
    pub residual: String,
    /// Why the fitter stopped (`None` for a direct method).
    pub termination: Option<TerminationReason>,
    /// Fitter name (`levenberg_marquardt`, `aep`, ...).
    pub fitter: String,
    /// Iterations run.
    pub iterations: u64,
    /// Residual evaluations (each one replays the data through the model).
    pub evaluations: u64,
    /// Wall time [s].
    pub elapsed_s: f64,
    /// The settings that determine the result (bounds, scaling, seed, beta1/beta2, ...).
    pub settings: serde_json::Value,
}

impl Provenance {
    /// Provenance of an iterative fit.
    pub fn of_fit(
        procedure: &str,
        data: Vec<DataUsed>,
        residual: &str,
        r: &FitResult,
        settings: serde_json::Value,
    ) -> Provenance {
        Provenance {
            procedure: procedure.into(),
            data,
            residual_mse: r.mse,
            residual: residual.into(),
            termination: Some(r.termination),
            fitter: r.fitter.into(),
            iterations: r.iters,
            evaluations: r.evals,
            elapsed_s: r.elapsed_s,
            settings,
        }
    }
}

/// One segment of data a result used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DataUsed {
    /// File name or run id.
    pub source: String,
    /// Samples used.
    pub samples: usize,
    /// First and last time [s].
    pub t_start: f64,
    /// Last time [s].
    pub t_end: f64,
}

/// A fitted parameter set with its provenance (what `bench fit --json` prints).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitReport {
    /// Model id.
    pub model: String,
    /// The full parameter set (fitted and fixed), with the model's parameter names.
    pub params: serde_json::Value,
    /// Names of the fitted parameters.
    pub fitted: Vec<String>,
    /// Standard errors of the fitted parameters (absent where the method gives none).
    pub std_errors: BTreeMap<String, f64>,
    /// Where the result came from.
    pub provenance: Provenance,
}
