//! How good a fit is: termination, parameters pinned at a bound, relative standard errors, the
//! condition of the problem, and a verdict (`ok` or `warning` with reasons) built from them.
//!
//! A least-squares optimum is only worth reading when the fitter converged, no parameter was
//! stopped by its search box, every parameter is determined by the data (its standard error
//! small against its value), the parameters do not trade off against each other (the Jacobian's
//! scaled normal matrix is well conditioned), and the values make physical sense (a Stribeck
//! model needs `fs > fc`: the static level above the Coulomb level, S4 eq. 5).

use super::{FitReport, num};
use crate::identify::TerminationReason;
use nalgebra::DMatrix;
use serde::Serialize;
use serde_json::{Map, Value};

/// A standard error above this fraction of its value makes the parameter "not determined".
pub const REL_STD_ERROR_LIMIT: f64 = 0.5;
/// A scaled condition number of `JᵀJ` above this means the parameters trade off.
pub const CONDITION_LIMIT: f64 = 1e10;

/// Overall judgement of a fit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "VerdictStatus")]
pub enum Status {
    /// Nothing found wrong.
    #[default]
    Ok,
    /// Read the reasons before using the values.
    Warning,
}

/// `{"status": "ok"|"warning", "reasons": [...]}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "FitVerdict")]
pub struct Verdict {
    /// `ok` when `reasons` is empty.
    pub status: Status,
    /// One sentence per problem found.
    pub reasons: Vec<String>,
    /// With a fit per direction: whether the directions differ beyond their standard errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directions: Option<String>,
}

/// Condition number of `JᵀJ` after scaling its columns to unit norm (scale-free: a parameter
/// in N m and one in rad/s weigh alike); `None` without a usable Jacobian. Large values mean
/// some parameters trade off against each other.
pub fn scaled_condition(jac: &DMatrix<f64>) -> Option<f64> {
    let n = jac.ncols();
    if n == 0 || jac.nrows() < n || jac.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut j = jac.clone();
    for mut c in j.column_iter_mut() {
        let norm = c.norm();
        if norm == 0.0 {
            return Some(f64::INFINITY);
        }
        c /= norm;
    }
    let eig = (j.transpose() * j).symmetric_eigen().eigenvalues;
    let (lo, hi) = eig.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), e| {
        (lo.min(e.abs()), hi.max(e.abs()))
    });
    Some(if lo > 0.0 { hi / lo } else { f64::INFINITY })
}

/// True when `x` sits on the bound `b` (a finite bound, to relative precision 1e-9).
pub fn on_bound(x: f64, b: f64) -> bool {
    b.is_finite() && (x - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

/// `std_error / |value|` by name, recursing into the `negative` set.
fn relative_errors(params: &Map<String, Value>, errors: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, se) in errors {
        match (se, params.get(name)) {
            (Value::Object(sub), Some(Value::Object(p))) => {
                out.insert(name.clone(), Value::Object(relative_errors(p, sub)));
            }
            (se, Some(v)) => {
                if let (Some(se), Some(v)) = (se.as_f64(), v.as_f64()) {
                    let rel = if v != 0.0 {
                        se / v.abs()
                    } else {
                        f64::INFINITY
                    };
                    out.insert(name.clone(), num(rel));
                }
            }
            _ => {}
        }
    }
    out
}

/// Reasons from the relative errors (`null` = infinite), with `prefix` for nested sets.
fn uncertain(prefix: &str, rel: &Map<String, Value>, reasons: &mut Vec<String>) {
    for (name, r) in rel {
        match r {
            Value::Object(sub) => uncertain(&format!("{prefix}{name}."), sub, reasons),
            Value::Null => reasons.push(format!(
                "{prefix}{name} is not determined by the data (its value is 0 within an error)"
            )),
            r => {
                if let Some(r) = r.as_f64().filter(|r| *r > REL_STD_ERROR_LIMIT) {
                    reasons.push(format!(
                        "{prefix}{name} is not determined by the data: std error {:.0} % of its value (limit {:.0} %)",
                        r * 100.0,
                        REL_STD_ERROR_LIMIT * 100.0
                    ));
                }
            }
        }
    }
}

/// `fs < fc` (or `fs = fc` when `fs` was fitted: it has a standard error, or is listed in
/// `details.fitted` as output-error fits list their free parameters) in one parameter set.
fn stribeck_sense(
    prefix: &str,
    p: &Map<String, Value>,
    fitted: &Map<String, Value>,
    listed: bool,
    out: &mut Vec<String>,
) {
    let (Some(fc), Some(fs)) = (
        p.get("fc").and_then(Value::as_f64),
        p.get("fs").and_then(Value::as_f64),
    ) else {
        return;
    };
    if fs < fc {
        out.push(format!(
            "{prefix}fs < {prefix}fc ({fs:.4} < {fc:.4}): static friction below Coulomb friction is physically meaningless"
        ));
    } else if (listed || fitted.contains_key("fs")) && (fs - fc).abs() <= 1e-6 * fc.abs().max(1e-12)
    {
        out.push(format!(
            "{prefix}fs = {prefix}fc ({fs:.4}): the fit found no Stribeck effect, so vs is meaningless"
        ));
    }
}

/// The verdict of a report whose quality fields are filled in.
pub fn verdict(r: &FitReport) -> Verdict {
    let mut reasons = Vec::new();
    if let Some(t) = r.termination
        && !matches!(
            t,
            TerminationReason::Converged | TerminationReason::TargetCost
        )
    {
        let t = serde_json::to_value(t)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        reasons.push(format!(
            "the fit did not converge (termination: {t}); the values are where it stopped"
        ));
    }
    for name in &r.at_bound {
        let value = name
            .strip_prefix("negative.")
            .map_or_else(
                || r.params.get(name),
                |n| r.params.get("negative").and_then(|s| s.get(n)),
            )
            .and_then(Value::as_f64)
            .map_or(String::new(), |v| format!(" ({v})"));
        reasons.push(format!(
            "{name} is pinned at a bound of its search range{value}: the optimum lies outside it"
        ));
    }
    uncertain("", &r.relative_std_errors, &mut reasons);
    if let Some(c) = r.condition.filter(|c| c.is_nan() || *c > CONDITION_LIMIT) {
        reasons.push(format!(
            "ill-conditioned: cond(JᵀJ) = {c:.3e} (limit {CONDITION_LIMIT:.0e}); parameters trade off against each other"
        ));
    }
    reasons.extend(super::nested::reason(&r.details));
    if let Some(r2) = r.r2.filter(|x| *x < 0.0) {
        reasons.push(format!(
            "R² = {r2:.3e} < 0: the fit explains the data worse than their mean; the values are meaningless"
        ));
    }
    reasons.extend(
        r.details["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string),
    );
    let listed = r.details["fitted"]
        .as_array()
        .is_some_and(|a| a.iter().any(|n| n == "fs"));
    stribeck_sense("", &r.params, &r.std_errors, listed, &mut reasons);
    if let Some(Value::Object(neg)) = r.params.get("negative") {
        let empty = Map::new();
        let fitted = r
            .std_errors
            .get("negative")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        stribeck_sense("negative.", neg, fitted, false, &mut reasons);
    }
    Verdict {
        status: if reasons.is_empty() {
            Status::Ok
        } else {
            Status::Warning
        },
        reasons,
        directions: r.directions.as_ref().map(|d| d.summary.clone()),
    }
}

/// Number of standard errors (parameters with an uncertainty), counting the negative set.
fn count_errors(errors: &Map<String, Value>) -> usize {
    errors
        .values()
        .map(|v| match v {
            Value::Object(sub) => count_errors(sub),
            _ => 1,
        })
        .sum()
}

/// `value ± q se` for each name of `errors` that `ci` lacks, recursing into the negative set.
fn intervals(
    params: &Map<String, Value>,
    errors: &Map<String, Value>,
    q: f64,
    ci: &mut Map<String, Value>,
) {
    for (name, se) in errors {
        match (se, params.get(name)) {
            (Value::Object(sub), Some(Value::Object(p))) => {
                let mut inner = match ci.remove(name) {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                intervals(p, sub, q, &mut inner);
                ci.insert(name.clone(), Value::Object(inner));
            }
            (se, Some(v)) if !ci.contains_key(name) => {
                if let (Some(se), Some(v)) = (se.as_f64(), v.as_f64())
                    && q.is_finite()
                {
                    ci.insert(
                        name.clone(),
                        serde_json::json!([num(v - q * se), num(v + q * se)]),
                    );
                }
            }
            _ => {}
        }
    }
}

impl FitReport {
    /// Fills `termination`, `relative_std_errors`, `ci95` (Student's `t` on `n_eff`, or on the
    /// points used, less the parameters) and `verdict` from what the procedure set (`params`,
    /// `std_errors`, `provenance.termination`, `at_bound`, `condition`).
    pub fn assess(&mut self) {
        self.termination = self.provenance.termination;
        self.relative_std_errors = relative_errors(&self.params, &self.std_errors);
        let k = count_errors(&self.std_errors) as f64;
        let n = self.n_eff.unwrap_or(self.provenance.n_points as f64);
        let q = crate::identify::stats::t975(n - k);
        let mut ci = std::mem::take(&mut self.ci95);
        intervals(&self.params, &self.std_errors, q, &mut ci);
        self.ci95 = ci;
        self.verdict = verdict(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::procedures::Given;
    use serde_json::json;

    fn report(params: Value, errors: Value) -> FitReport {
        let mut r = FitReport::new("static_curve", "stribeck_exp", "lm", &[], 10, &Given::new());
        r.params = params.as_object().unwrap().clone();
        r.std_errors = errors.as_object().unwrap().clone();
        r.provenance.termination = Some(TerminationReason::Converged);
        r.condition = Some(1e3);
        r
    }

    #[test]
    fn a_clean_fit_is_ok() {
        let mut r = report(
            json!({"fc": 1.0, "fs": 1.5, "vs": 0.1, "negative": {"fc": 0.9, "fs": 1.35}}),
            json!({"fc": 0.01, "fs": 0.02, "vs": 0.005, "negative": {"fc": 0.01}}),
        );
        r.assess();
        assert_eq!(r.verdict.status, Status::Ok, "{:?}", r.verdict);
        assert!((r.relative_std_errors["vs"].as_f64().unwrap() - 0.05).abs() < 1e-12);
        assert!(
            (r.relative_std_errors["negative"]["fc"].as_f64().unwrap() - 0.01 / 0.9).abs() < 1e-12
        );
    }

    #[test]
    fn max_iters_bound_and_uncertainty_each_warn() {
        // The static fit: max_iters, negative.delta = 20 ± 13620 at its upper bound.
        let mut r = report(
            json!({"fc": 1.0, "fs": 1.5, "negative": {"fc": 0.9, "fs": 1.35, "delta": 20.0}}),
            json!({"fc": 0.01, "negative": {"delta": 13620.0}}),
        );
        r.provenance.termination = Some(TerminationReason::MaxIters);
        r.at_bound = vec!["negative.delta".into()];
        r.assess();
        assert_eq!(r.verdict.status, Status::Warning);
        let all = r.verdict.reasons.join("\n");
        assert!(all.contains("termination: max_iters"), "{all}");
        assert!(
            all.contains("negative.delta is pinned at a bound of its search range (20)"),
            "{all}"
        );
        assert!(
            all.contains("negative.delta is not determined by the data: std error 68100 %"),
            "{all}"
        );
        assert_eq!(r.verdict.reasons.len(), 3, "{all}");
    }

    #[test]
    fn fs_below_or_equal_to_fc_warns() {
        let mut r = report(json!({"fc": 1.0, "fs": 0.8}), json!({}));
        r.assess();
        assert_eq!(r.verdict.status, Status::Warning);
        assert!(
            r.verdict.reasons[0].starts_with("fs < fc (0.8000 < 1.0000)"),
            "{:?}",
            r.verdict
        );
        // The LuGre collapse: fs = fc = 0.9502 with both fitted.
        let mut r = report(
            json!({"fc": 0.9502, "fs": 0.9502, "vs": 3.6e-5}),
            json!({"fc": 1e-3, "fs": 1e-3, "vs": 1e-6}),
        );
        r.assess();
        assert_eq!(r.verdict.status, Status::Warning);
        assert!(
            r.verdict.reasons[0].contains("no Stribeck effect"),
            "{:?}",
            r.verdict
        );
    }

    #[test]
    fn ill_conditioning_warns_and_is_scale_free() {
        let mut r = report(json!({"fc": 1.0}), json!({}));
        r.condition = Some(1e14);
        r.assess();
        assert!(
            r.verdict.reasons[0].starts_with("ill-conditioned"),
            "{:?}",
            r.verdict
        );
        // Two identical columns (one scaled by 1e6): singular whatever the scale.
        let j = DMatrix::from_row_slice(3, 2, &[1.0, 1e6, 2.0, 2e6, 3.0, 3e6]);
        assert!(scaled_condition(&j).unwrap() > 1e12);
        // Orthogonal columns of very different sizes: perfectly conditioned once scaled.
        let j = DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 0.0, 1e6, 0.0, 0.0]);
        assert!((scaled_condition(&j).unwrap() - 1.0).abs() < 1e-9);
    }
}
