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
//! FitError>`, its "requirements on the data", its options type (serde, `deny_unknown_fields`,
//! a doc line per key; [`typed`]) and its [`Procedure`] (what it reads, which part, whether it
//! iterates, `options: typed::<ItsOptions>()`), and one line in the `registry!`
//! below. Every front end reads the registry: the daemon's fits, the CLI, `GET /api/procedures`
//! and the dashboard's fit form.

use super::FitError;
use serde_json::{Map, Value};

pub mod compare;
pub mod compare_inverse;
mod given;
mod nested;
pub mod options;
pub mod quality;
mod replay;
mod report;
mod segment;
pub mod shared;
pub mod sides;
pub mod synthetic;
mod table;
pub mod typed;
pub mod validation;

pub use given::Offset;
pub(crate) use given::{checked_load, given_f64, no_fitted_offset_with};
pub(crate) use report::num;
pub use report::{FitReport, Provenance};
pub use table::Table;
pub(crate) use table::{mean, need_rows};

/// Values the user gives: known parameters (held fixed) and procedure options, by name.
pub type Given = Map<String, Value>;

/// A procedure as every front end reads it (`bench fit`, `POST /api/fits`, `GET
/// /api/procedures`, the dashboard's fit form): its name (part of the interface), the models it
/// identifies, the data it reads and how it is run. Adding a procedure is its file and one line
/// in [`PROCEDURES`].
#[derive(Clone, Copy, Debug)]
pub struct Procedure {
    /// Name as `bench fit --procedure` takes it.
    pub name: &'static str,
    /// Model ids whose parameters it fits (`"*"`: any registry model).
    pub models: &'static [&'static str],
    /// Columns it reads.
    pub columns: &'static [&'static str],
    /// The keys of `given` it takes besides known values: its options type.
    pub options: typed::Typed,
    /// Whether it also accepts any of the model's parameter names in `given` (held fixed).
    pub known_params: bool,
    /// What of a stored run it reads.
    pub reads: Reads,
    /// The part of a run of several parts (a presliding run) it reads unless told otherwise.
    pub part: Option<Part>,
    /// Whether it iterates from start values (`given.params`, the stored set's below them).
    pub iterates: bool,
    /// Why it takes no `offset`, for the refusal (`None`: it takes one or the question does
    /// not arise).
    pub offset_refused: Option<&'static str>,
    /// The procedure itself.
    pub fit: fn(&str, &Table, &Given) -> Result<FitReport, FitError>,
}

/// What of a stored run a procedure reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The steady-state points (`v`, `friction`) of a constant-velocity sweep's results.
    SweepPoints,
    /// The breakaway-vs-rate points (`rate`, `breakaway`) of a torque ramp's results.
    BreakawayRates,
    /// The time series of runs of these kinds (`None`: of any kind; a recording imported from
    /// elsewhere is read whatever the list says).
    TimeSeries(Option<&'static [&'static str]>),
}

impl Reads {
    /// The run kinds it reads (`None`: any).
    pub fn run_kinds(self) -> Option<&'static [&'static str]> {
        match self {
            Reads::SweepPoints => Some(&["constant_velocity_sweep"]),
            Reads::BreakawayRates => Some(&["torque_ramp"]),
            Reads::TimeSeries(kinds) => kinds,
        }
    }
}

/// A part of a run: its segments by their roles (the `snake_case` names of
/// `experiments::Role`), and its name in notes and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// As notes and errors name it (`"sine"`).
    pub name: &'static str,
    /// The roles of its segments.
    pub roles: &'static [&'static str],
}

impl Procedure {
    /// The keys of its options.
    pub fn option_names(&self) -> Vec<String> {
        self.options.names()
    }

    /// Whether it takes option `name`.
    pub fn takes(&self, name: &str) -> bool {
        self.options.names().iter().any(|o| o == name)
    }

    /// Its own keys of `given` as its options type `T` (the model's parameters, known values,
    /// left out; [`run`] has refused any other key, [`Procedure::check_given`]).
    pub fn options_of<T: serde::de::DeserializeOwned>(&self, given: &Given) -> Result<T, FitError> {
        let names = self.options.names();
        let own: Given = given
            .iter()
            .filter(|(k, _)| names.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        typed::parse(&own)
    }

    /// Whether it fits a model's presliding part: it reads a part of a presliding run. Its
    /// sets start the presliding values of later fits of the model.
    pub fn fits_presliding(&self) -> bool {
        self.part.is_some()
    }

    /// Whether it fits the steady-state (Stribeck) curve from a sweep's points. Its sets
    /// start the curve of later fits of any model.
    pub fn fits_static_curve(&self) -> bool {
        self.reads == Reads::SweepPoints
    }

    /// Refuses a value of `given` of the wrong type, naming the key and what it must be, and a
    /// key this procedure does not take, naming it and the keys it
    /// takes (so that a misspelt option never runs the fit without it): what a plan checks
    /// before any fit runs.
    pub fn check_given(&self, model: &str, given: &Given) -> Result<(), FitError> {
        let own = self.check_keys(model, given)?;
        self.options.check(&own)
    }

    /// [`Procedure::check_given`] but for the values, which the procedure parses where it
    /// starts ([`Procedure::options_of`]), so a fit parses them once; returns its own keys.
    fn check_keys(&self, model: &str, given: &Given) -> Result<Given, FitError> {
        let params: Vec<&str> = if self.known_params {
            crate::registry::entry(model)
                .map(|e| e.params.iter().map(|p| p.name).collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let names = self.options.names();
        let mut own = Given::new();
        for (key, value) in given {
            if names.contains(key) {
                own.insert(key.clone(), value.clone());
                continue;
            }
            if params.contains(&key.as_str()) {
                continue;
            }
            if let ("offset", Some(why)) = (key.as_str(), self.offset_refused) {
                return Err(FitError::Setting {
                    field: "given.offset".into(),
                    rule: format!("is not taken by procedure '{}': {why}", self.name),
                });
            }
            let mut takes = self.option_names().join(", ");
            if self.known_params {
                takes.push_str(&format!(
                    "{}and the parameters of '{model}' as known values",
                    if takes.is_empty() { "" } else { ", " }
                ));
            }
            return Err(FitError::Setting {
                field: format!("given.{key}"),
                rule: format!(
                    "is not an option of procedure '{}' (it takes: {})",
                    self.name,
                    if takes.is_empty() { "nothing" } else { &takes }
                ),
            });
        }
        Ok(own)
    }
}

/// The registry: each procedure's module (its file) and its place in [`PROCEDURES`].
macro_rules! registry {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*
        /// Every procedure [`run`] dispatches to, in the order front ends list them.
        pub static PROCEDURES: &[Procedure] = &[$($name::PROCEDURE),*];
    };
}

// Adding a procedure: its file and one line here.
registry! {
    static_curve,
    phi_s,
    idim_ls,
    power_rls,
    staircase,
    presliding_sine,
    step_damping,
    lugre_regression,
    maxwell_slip,
    ruina_step,
    nnaji,
    seven_parameter,
    output_error,
}

/// The registry's procedure `name`; an unknown name is refused with the known ones.
pub fn procedure(name: &str) -> Result<&'static Procedure, FitError> {
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
        })
}

/// Runs procedure `name` for model `model` on `table`, with the user's `given` values.
///
/// Errors name the unknown procedure, the model it does not apply to, or the missing column.
pub fn run(name: &str, model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let proc = procedure(name)?;
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
    // The keys here; an options type's values where the procedure parses them.
    proc.check_keys(model, given)?;
    let mut report = (proc.fit)(model, table, given)?;
    report.assess();
    Ok(report)
}
