//! A fit record as the campaign keeps it (`fits`): which model, procedure and run, and the fit's
//! report or the error that stopped it, with the campaign's note on why it was fitted so.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One fit of the campaign.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitRecord {
    /// The model.
    pub model: String,
    /// The procedure (`bench fit --procedure`, or `contained`: the comparison's replacement).
    pub procedure: String,
    /// The run it fitted.
    pub run_id: i64,
    /// The fit's report (absent when it failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<FitReport>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the campaign fitted it so (held values, a refit, a replacement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The Stribeck fall the sliding phases placed, held in this fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding: Option<SlidingFall>,
}

/// What the campaign reads of a fit's report (`bench fit --json`); the rest is kept as it is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// The saved parameter set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter_set_id: Option<i64>,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter_set_name: Option<String>,
    /// Fitted values by parameter name (a `negative` object for negative motion).
    #[serde(default)]
    pub params: Map<String, Value>,
    /// `std_error / |value|` by parameter name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_std_errors: Option<Map<String, Value>>,
    /// Standard errors by parameter name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std_errors: Option<Map<String, Value>>,
    /// 95 % intervals `[low, high]` by parameter name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Map<String, Value>>,
    /// Procedure, method, data used and what it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Map<String, Value>>,
    /// The fit's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Every other field of the report.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A fit's verdict: `ok` or `warning`, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `ok` or `warning`.
    pub status: String,
    /// One sentence per problem.
    #[serde(default)]
    pub reasons: Vec<String>,
    /// Every other field.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// The Stribeck fall from the sliding phases of the stick-slip, as a fit record keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlidingFall {
    /// Stribeck velocity \[rad/s\].
    pub vs: f64,
    /// Its standard error \[rad/s\].
    pub vs_std_error: f64,
    /// Shape exponent.
    pub delta: f64,
    /// Bins fitted.
    pub points: usize,
    /// Reduced chi-square.
    pub reduced_chi2: f64,
}

impl FitRecord {
    /// A record of `model` fitted by `procedure` on run `run_id`.
    pub fn new(model: &str, procedure: &str, run_id: i64) -> FitRecord {
        FitRecord {
            model: model.into(),
            procedure: procedure.into(),
            run_id,
            report: None,
            error: None,
            note: None,
            sliding: None,
        }
    }

    /// The fitted parameters (`None` when the fit failed).
    pub fn params(&self) -> Option<&Map<String, Value>> {
        self.report.as_ref().map(|r| &r.params)
    }

    /// Fitted parameter `name` of the positive (or only) set.
    pub fn param(&self, name: &str) -> Option<f64> {
        self.params()?.get(name)?.as_f64()
    }

    /// The saved parameter set's id.
    pub fn set_id(&self) -> Option<i64> {
        self.report.as_ref()?.parameter_set_id
    }

    /// Whether the fit's parameter `name` is not determined by the data in either direction:
    /// its relative standard error over `limit`, infinite or null.
    pub fn undetermined(&self, names: &[&str], limit: f64) -> bool {
        let Some(rel) = self
            .report
            .as_ref()
            .and_then(|r| r.relative_std_errors.as_ref())
        else {
            return false;
        };
        let bad = |set: Option<&Map<String, Value>>, n: &str| match set.and_then(|s| s.get(n)) {
            None => false,
            Some(Value::Null) => true,
            Some(r) => r.as_f64().is_none_or(|r| r > limit),
        };
        let negative = rel.get("negative").and_then(Value::as_object);
        names.iter().any(|n| bad(Some(rel), n) || bad(negative, n))
    }

    /// The verdict's reasons (none without a report).
    pub fn reasons(&self) -> &[String] {
        match self.report.as_ref().and_then(|r| r.verdict.as_ref()) {
            Some(v) => &v.reasons,
            None => &[],
        }
    }
}
