//! What a procedure returns: the fitted values with their uncertainty, quality and provenance.

use super::{Given, quality};
use crate::identify::TerminationReason;
use serde::Serialize;
use serde_json::{Map, Value};

/// What a fit used and how it ran.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "FitProvenance")]
pub struct Provenance {
    /// Procedure name.
    pub procedure: String,
    /// Model id the parameters belong to.
    pub model: String,
    /// The estimator (e.g. `levenberg_marquardt`, `linear_least_squares`, `weighted_rls`).
    pub method: String,
    /// Why an iterative fit stopped (absent for direct methods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub termination: Option<TerminationReason>,
    /// Rows used.
    pub n_points: usize,
    /// Columns read.
    pub columns: Vec<String>,
    /// Time range `[t_first, t_last]` of the rows used \[s\], for time series.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_range_s: Option<[f64; 2]>,
    /// Given values used (held fixed or options).
    pub given: Given,
    /// Settings the procedure chose from the data (filter cut-offs, decimation, sub-steps, ...).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub settings: Map<String, Value>,
    /// Remarks: assumptions, values held fixed, warnings.
    pub notes: Vec<String>,
}

/// A procedure's result.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FitReport {
    /// Fitted values by the model's parameter names (a `negative` object for negative motion).
    pub params: Map<String, Value>,
    /// Standard errors by the same names, where the method gives them.
    pub std_errors: Map<String, Value>,
    /// Mean squared residual of the fit in the units of its target (absent if it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mse: Option<f64>,
    /// Procedure, method and data used.
    pub provenance: Provenance,
    /// Procedure-specific figures (samples, per-weighting estimates, ...).
    pub details: Value,
    /// Why an iterative fit stopped (`converged`, `max_iters`, `timeout`, ...; absent for
    /// direct methods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub termination: Option<TerminationReason>,
    /// Fitted parameters that ended on a bound of their search range (`negative.NAME` for the
    /// negative set).
    pub at_bound: Vec<String>,
    /// `std_error / |value|` by the names of `std_errors` (`null`: the value is 0).
    pub relative_std_errors: Map<String, Value>,
    /// Condition number of `JᵀJ` at the optimum with unit-norm columns (the worst direction),
    /// where the method has a Jacobian.
    pub condition: Option<f64>,
    /// 95 % interval `[low, high]` by the names of `std_errors`: Student's `t` on `n_eff`, or
    /// the bootstrap's percentiles.
    pub ci95: Map<String, Value>,
    /// Effective number of independent samples behind the standard errors (below
    /// `provenance.n_points` when the residuals are correlated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_eff: Option<f64>,
    /// `1 - SSE/SST` of the fitted target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r2: Option<f64>,
    /// Akaike's information criterion `n ln(SSE/n) + 2k`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aic: Option<f64>,
    /// Schwarz's Bayesian information criterion `n ln(SSE/n) + k ln n`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bic: Option<f64>,
    /// With `given.asymmetric = true`: whether the two directions differ, per parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directions: Option<super::sides::Directions>,
    /// `ok`, or `warning` with the reasons ([`quality::verdict`]).
    pub verdict: quality::Verdict,
    /// Scores on held-out records (`bench fit --validate`), one per record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validation: Vec<super::validation::Validation>,
}

impl FitReport {
    /// Notes the parameters a given held fixed (nothing when none was).
    pub(crate) fn note_held(&mut self, held: &[&str]) {
        if !held.is_empty() {
            let note = format!("held fixed (given): {}", held.join(", "));
            self.provenance.notes.push(note);
        }
    }

    /// An empty report for `procedure` on `model`, with the columns read and `n_points` rows.
    pub(crate) fn new(
        procedure: &str,
        model: &str,
        method: &str,
        columns: &[&str],
        n_points: usize,
        given: &Given,
    ) -> FitReport {
        FitReport {
            params: Map::new(),
            std_errors: Map::new(),
            mse: None,
            provenance: Provenance {
                procedure: procedure.into(),
                model: model.into(),
                method: method.into(),
                termination: None,
                n_points,
                columns: columns.iter().map(|c| c.to_string()).collect(),
                time_range_s: None,
                given: given.clone(),
                settings: Map::new(),
                notes: Vec::new(),
            },
            details: Value::Object(Map::new()),
            termination: None,
            at_bound: Vec::new(),
            relative_std_errors: Map::new(),
            condition: None,
            ci95: Map::new(),
            n_eff: None,
            r2: None,
            aic: None,
            bic: None,
            directions: None,
            verdict: quality::Verdict::default(),
            validation: Vec::new(),
        }
    }

    /// Records R², AIC and BIC of `k` fitted parameters leaving `resid` on `target`.
    pub(crate) fn goodness(&mut self, target: &[f64], resid: &[f64], k: usize) {
        if let Some(g) = crate::identify::stats::GoodnessOfFit::of(target, resid, k) {
            self.r2 = Some(g.r2).filter(|x| x.is_finite());
            self.aic = Some(g.aic);
            self.bic = Some(g.bic);
        }
    }

    /// Replaces the standard errors of `names` by a bootstrap's (and its percentile
    /// intervals), recording how it ran under `details.bootstrap`.
    pub(crate) fn use_bootstrap(
        &mut self,
        names: &[String],
        b: &crate::identify::stats::Bootstrap,
    ) {
        use super::output_error::put;
        for (i, n) in names.iter().enumerate() {
            // `negative.NAME` goes into the `negative` object, as the values do.
            put(&mut self.std_errors, n, num(b.std_errors[i]));
            put(
                &mut self.ci95,
                n,
                serde_json::json!([num(b.ci95[i][0]), num(b.ci95[i][1])]),
            );
        }
        if let Value::Object(d) = &mut self.details {
            d.insert(
                "bootstrap".into(),
                serde_json::json!({"replicates": b.replicates, "failed": b.failed, "block": b.block, "seed": b.seed}),
            );
        }
        self.provenance.notes.push(format!(
            "standard errors and ci95 from a moving-block bootstrap: {} replicates ({} failed), blocks of {} samples, seed {}",
            b.replicates, b.failed, b.block, b.seed
        ));
    }

    /// The fitted value of `name` (top level), if numeric.
    pub fn param(&self, name: &str) -> Option<f64> {
        self.params.get(name).and_then(Value::as_f64)
    }

    /// The fitted value of `name` in the `negative` set, if any.
    pub fn negative_param(&self, name: &str) -> Option<f64> {
        self.params
            .get("negative")
            .and_then(|n| n.get(name))
            .and_then(Value::as_f64)
    }

    /// Sets a parameter and (optionally) its standard error.
    pub(crate) fn set(&mut self, name: &str, value: f64, std_error: Option<f64>) {
        self.params.insert(name.into(), num(value));
        if let Some(s) = std_error {
            self.std_errors.insert(name.into(), num(s));
        }
    }

    /// Sets a parameter of the negative direction (`params.negative.NAME`) and (optionally)
    /// its standard error.
    pub(crate) fn set_negative(&mut self, name: &str, value: f64, std_error: Option<f64>) {
        let put = |map: &mut Map<String, Value>, v: Value| {
            if let Value::Object(m) = map
                .entry("negative")
                .or_insert_with(|| Value::Object(Map::new()))
            {
                m.insert(name.into(), v);
            }
        };
        put(&mut self.params, num(value));
        if let Some(s) = std_error {
            put(&mut self.std_errors, num(s));
        }
    }

    /// Records the time range of `t[from..to]`.
    pub(crate) fn time_range(&mut self, t: &[f64]) {
        if let (Some(a), Some(b)) = (t.first(), t.last()) {
            self.provenance.time_range_s = Some([*a, *b]);
        }
    }
}

/// A JSON number (`null` for a non-finite value).
pub(crate) fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}
