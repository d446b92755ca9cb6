//! The papers' identification procedures (docs/src/identification.md), one per file, behind one dispatcher.
//!
//! # Brief overview
//!
//! Recorded data arrive as a [`Table`] of named columns (`v,friction` for sweep points,
//! `rate,breakaway` for breakaway-vs-rate points, `t,x,v,u,friction` for time series as
//! `bench simulate` writes them). [`run`] picks the procedure by name, checks that it applies to
//! the model, and returns a [`FitReport`]: the fitted values under `params` with the model's
//! parameter names (and a `negative` set for per-direction fits), their standard errors where the
//! method gives them, the residual MSE and the [`Provenance`] (procedure, method, data used).
//!
//! Values the user knows (an inertia from the data sheet, a `sigma0` from an earlier fit, a
//! parameter to hold fixed, a procedure option) come in [`Given`], a JSON object. Each
//! procedure declares the keys it accepts ([`Procedure::options`], and the model's parameter
//! names where it holds given values fixed); any other key is refused, naming it. Procedures
//! that fit a time series or a curve take `offset` (`true`: a constant term [N or N m] in the
//! measured force, fitted and reported as `params.offset`; a number: a known offset, subtracted
//! from the measurement).
//!
//! Every report carries `ci95`, a 95 % interval per parameter with a standard error (Student's
//! `t` on the effective sample count `n_eff`, see [`crate::identify::stats`]), and where the
//! procedure has residuals the goodness of fit `r2`, `aic`, `bic`.
//!
//! To add a procedure: a file here with `pub fn fit(model, &Table, &Given) -> Result<FitReport,
//! FitError>` and its "requirements on the data", one line in [`PROCEDURES`] and one match arm in
//! [`run`].

use super::FitError;
use super::TerminationReason;
use serde::Serialize;
use serde_json::{Map, Value};

pub mod compare;
pub mod idim_ls;
pub mod lugre_regression;
pub mod maxwell_slip;
mod nested;
pub mod nnaji;
pub mod output_error;
pub mod phi_s;
pub mod power_rls;
pub mod presliding_sine;
pub mod quality;
mod replay;
pub mod ruina_step;
mod segment;
pub mod seven_parameter;
pub mod staircase;
pub mod static_curve;
pub mod step_damping;
pub mod synthetic;

/// Values the user gives: known parameters (held fixed) and procedure options, by name.
pub type Given = Map<String, Value>;

/// A procedure: its name (part of the interface) and the models it identifies.
#[derive(Clone, Copy, Debug)]
pub struct Procedure {
    /// Name as `bench fit --procedure` takes it.
    pub name: &'static str,
    /// Model ids whose parameters it fits.
    pub models: &'static [&'static str],
    /// Columns it reads.
    pub columns: &'static [&'static str],
    /// Keys of `given` it accepts (options and known values).
    pub options: &'static [&'static str],
    /// Whether it also accepts any of the model's parameter names in `given` (held fixed).
    pub known_params: bool,
}

impl Procedure {
    /// Refuses a key of `given` that this procedure does not take, naming it and the keys it
    /// takes (so that a misspelt option never runs the fit without it).
    pub fn check_given(&self, model: &str, given: &Given) -> Result<(), FitError> {
        let params: Vec<&str> = if self.known_params {
            crate::registry::entry(model)
                .map(|e| e.params.iter().map(|p| p.name).collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        for key in given.keys() {
            if self.options.contains(&key.as_str()) || params.contains(&key.as_str()) {
                continue;
            }
            if let ("offset", Some(why)) = (key.as_str(), no_offset(self.name)) {
                return Err(FitError::Config {
                    field: "given.offset".into(),
                    value: f64::NAN,
                    rule: format!("is not taken by procedure '{}': {why}", self.name),
                });
            }
            let mut takes = self.options.join(", ");
            if self.known_params {
                takes.push_str(&format!(
                    "{}and the parameters of '{model}' as known values",
                    if takes.is_empty() { "" } else { ", " }
                ));
            }
            return Err(FitError::Config {
                field: format!("given.{key}"),
                value: f64::NAN,
                rule: format!(
                    "is not an option of procedure '{}' (it takes: {})",
                    self.name,
                    if takes.is_empty() { "nothing" } else { &takes }
                ),
            });
        }
        Ok(())
    }
}

/// Why a procedure that reads a force takes no offset.
fn no_offset(procedure: &str) -> Option<&'static str> {
    match procedure {
        "step_damping" => Some(
            "it uses only the size of the torque step, which a constant offset does not change",
        ),
        "maxwell_slip" => Some(
            "each reversal branch is fitted with its own force level, which absorbs any offset",
        ),
        "ruina_step" => Some(
            "friction is measured from its level before the velocity step, which absorbs any offset",
        ),
        _ => None,
    }
}

/// Every procedure [`run`] dispatches to.
pub static PROCEDURES: &[Procedure] = &[
    static_curve::PROCEDURE,
    phi_s::PROCEDURE,
    idim_ls::PROCEDURE,
    power_rls::PROCEDURE,
    staircase::PROCEDURE,
    presliding_sine::PROCEDURE,
    step_damping::PROCEDURE,
    lugre_regression::PROCEDURE,
    maxwell_slip::PROCEDURE,
    ruina_step::PROCEDURE,
    nnaji::PROCEDURE,
    seven_parameter::PROCEDURE,
    output_error::PROCEDURE,
];

/// Runs procedure `name` for model `model` on `table`, with the user's `given` values.
///
/// Errors name the unknown procedure, the model it does not apply to, or the missing column.
pub fn run(name: &str, model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let proc =
        PROCEDURES
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| FitError::UnknownProcedure {
                name: name.to_string(),
                known: PROCEDURES
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
    // "*": any registry model (output error, AEP).
    let applies = proc.models.contains(&model)
        || (proc.models == ["*"] && crate::registry::entry(model).is_ok());
    if !applies {
        if crate::registry::entry(model).is_err() {
            return Err(FitError::UnknownModel {
                id: model.to_string(),
                known: crate::registry::MODELS
                    .iter()
                    .map(|e| e.id)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        return Err(FitError::NotApplicable {
            procedure: name.to_string(),
            model: model.to_string(),
            applies_to: proc.models.join(", "),
        });
    }
    for c in proc.columns {
        table.column(c, name)?;
    }
    proc.check_given(model, given)?;
    let mut report = match name {
        "static_curve" => static_curve::fit(model, table, given),
        "idim_ls" => idim_ls::fit(model, table, given),
        "phi_s" => phi_s::fit(model, table, given),
        "power_rls" => power_rls::fit(model, table, given),
        "staircase" => staircase::fit(model, table, given),
        "presliding_sine" => presliding_sine::fit(model, table, given),
        "step_damping" => step_damping::fit(model, table, given),
        "lugre_regression" => lugre_regression::fit(model, table, given),
        "maxwell_slip" => maxwell_slip::fit(model, table, given),
        "ruina_step" => ruina_step::fit(model, table, given),
        "nnaji" => nnaji::fit_table(model, table, given),
        "aep" => seven_parameter::fit_table(model, table, given),
        "output_error" => output_error::fit_table(model, table, given),
        other => Err(FitError::Bug(format!(
            "procedure '{other}' is listed but not dispatched"
        ))),
    }?;
    report.assess();
    Ok(report)
}

/// Recorded data as named numeric columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    names: Vec<String>,
    cols: Vec<Vec<f64>>,
}

impl Table {
    /// A table from `(name, column)` pairs; the columns must have equal lengths.
    pub fn new(columns: Vec<(String, Vec<f64>)>) -> Result<Table, FitError> {
        let n = columns.first().map_or(0, |c| c.1.len());
        if let Some((name, c)) = columns.iter().find(|c| c.1.len() != n) {
            return Err(FitError::Data(format!(
                "column '{name}' has {} rows, expected {n}",
                c.len()
            )));
        }
        let (names, cols) = columns.into_iter().unzip();
        Ok(Table { names, cols })
    }

    /// Parses CSV text: a header of column names, then rows of numbers (`#` lines are skipped).
    pub fn from_csv(text: &str) -> Result<Table, FitError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let Some((_, header)) = lines.next() else {
            return Err(FitError::Data(
                "the CSV is empty (expected a header of column names)".into(),
            ));
        };
        let names: Vec<String> = header.split(',').map(|s| s.trim().to_string()).collect();
        let mut cols = vec![Vec::new(); names.len()];
        for (i, line) in lines {
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != names.len() {
                return Err(FitError::Data(format!(
                    "CSV line {}: {} fields, expected {} ({})",
                    i + 1,
                    fields.len(),
                    names.len(),
                    names.join(",")
                )));
            }
            for ((c, f), name) in cols.iter_mut().zip(fields).zip(&names) {
                let x: f64 = f.trim().parse().map_err(|_| {
                    FitError::Data(format!(
                        "CSV line {}: column '{name}': '{}' is not a number",
                        i + 1,
                        f.trim()
                    ))
                })?;
                c.push(x);
            }
        }
        Ok(Table { names, cols })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.cols.first().map_or(0, Vec::len)
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Column names in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The column `name`, or an error naming it, the procedure and the columns present.
    pub fn column(&self, name: &str, procedure: &str) -> Result<&[f64], FitError> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.cols[i].as_slice())
            .ok_or_else(|| FitError::MissingColumn {
                column: name.to_string(),
                procedure: procedure.to_string(),
                have: self.names.join(","),
            })
    }

    /// The column `name` if present.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.cols[i].as_slice())
    }
}

/// What a fit used and how it ran.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub settings: Map<String, Value>,
    /// Remarks: assumptions, values held fixed, warnings.
    pub notes: Vec<String>,
}

/// A procedure's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    /// `ok`, or `warning` with the reasons ([`quality::verdict`]).
    pub verdict: quality::Verdict,
}

impl FitReport {
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
            verdict: quality::Verdict::default(),
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
        for (i, n) in names.iter().enumerate() {
            self.std_errors.insert(n.clone(), num(b.std_errors[i]));
            self.ci95.insert(
                n.clone(),
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

/// A numeric given value, or an error naming it.
pub(crate) fn given_f64(given: &Given, name: &str) -> Result<Option<f64>, FitError> {
    match given.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| FitError::Config {
                field: format!("given.{name}"),
                value: f64::NAN,
                rule: format!("must be a finite number (got {v})"),
            }),
    }
}

/// A positive given value, or an error naming it.
pub(crate) fn given_positive(given: &Given, name: &str) -> Result<Option<f64>, FitError> {
    match given_f64(given, name)? {
        Some(x) if x <= 0.0 => Err(FitError::Config {
            field: format!("given.{name}"),
            value: x,
            rule: "must be > 0".into(),
        }),
        x => Ok(x),
    }
}

/// What `given.offset` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Offset {
    /// No offset (absent or `false`).
    None,
    /// Fit a constant offset (`true`).
    Fit,
    /// A known offset [N or N m], subtracted from the measurement.
    Known(f64),
}

impl Offset {
    /// True when an offset is fitted.
    pub fn fitted(self) -> bool {
        self == Offset::Fit
    }

    /// The known value (0 unless [`Offset::Known`]).
    pub fn known(self) -> f64 {
        match self {
            Offset::Known(c) => c,
            _ => 0.0,
        }
    }
}

/// `given.offset`: `true`, `false` or a number.
pub(crate) fn given_offset(given: &Given) -> Result<Offset, FitError> {
    match given.get("offset") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(Offset::None),
        Some(Value::Bool(true)) => Ok(Offset::Fit),
        Some(v) => match v.as_f64().filter(|x| x.is_finite()) {
            Some(c) => Ok(Offset::Known(c)),
            None => Err(FitError::Config {
                field: "given.offset".into(),
                value: f64::NAN,
                rule: format!(
                    "must be true (fit a constant offset), false, or a known offset [N or N m] (got {v})"
                ),
            }),
        },
    }
}

/// `given.bootstrap` (replicates, at least [`crate::identify::stats::MIN_REPLICATES`]) and
/// `given.seed` (default 1); `None` without `bootstrap`.
pub(crate) fn given_bootstrap(given: &Given) -> Result<Option<(usize, u64)>, FitError> {
    let Some(n) = given_f64(given, "bootstrap")? else {
        return Ok(None);
    };
    let min = crate::identify::stats::MIN_REPLICATES as f64;
    if n.fract() != 0.0 || !(min..=100_000.0).contains(&n) {
        return Err(FitError::Config {
            field: "given.bootstrap".into(),
            value: n,
            rule: format!("must be a whole number of replicates in {min}..=100000"),
        });
    }
    let seed = given_f64(given, "seed")?.unwrap_or(1.0);
    if seed.fract() != 0.0 || seed < 0.0 {
        return Err(FitError::Config {
            field: "given.seed".into(),
            value: seed,
            rule: "must be a whole number >= 0".into(),
        });
    }
    Ok(Some((n as usize, seed as u64)))
}

/// A string given value.
pub(crate) fn given_str<'a>(given: &'a Given, name: &str) -> Option<&'a str> {
    given.get(name).and_then(Value::as_str)
}

/// Fails with a `Data` error when fewer than `min` rows are present.
pub(crate) fn need_rows(n: usize, min: usize, what: &str) -> Result<(), FitError> {
    if n < min {
        return Err(FitError::Data(format!(
            "{what}: {n} rows, need at least {min}"
        )));
    }
    Ok(())
}

/// Mean of a slice (NaN when empty).
pub(crate) fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}
