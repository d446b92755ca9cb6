//! Identification on the run store: one procedure's fit of a stored run ([`FitRequest`]) and
//! model comparisons on stored runs or CSV files ([`CompareJob`]), each storing its result.
//! The command line (`bench fit --run`, `bench compare`) and the REST API (`POST /api/fits`,
//! `POST /api/comparisons`) build the same request and run the same code; errors are typed
//! ([`FitError`]) and name the request's [`Field`], which each front end spells its own way
//! (`--t-range` on the command line, `t_range` in a body).
//!
//! ```text
//! FitRequest ──fit::fit_stored──► run_data (samples, results) ──procedures::run──► FitReport
//!     │                            start (the bench's earlier fits)        └─► parameter set
//! CompareJob ──compare::compare_stored──► output-error fits per model ──► table (stored)
//! ```

pub mod compare;
pub mod fit;
mod plant;
pub mod run_data;
pub mod start;
pub mod validate;

use crate::InputError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use compare::{CompareJob, Compared, ReplayKind, Source};
pub use fit::{Fitted, fit_stored};

/// A field of a fit or comparison request, named by each front end in its own terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The model id.
    Model,
    /// The procedure.
    Procedure,
    /// The stored run fitted.
    Run,
    /// Known values and options.
    Given,
    /// The saved set's name.
    Name,
    /// Plan segments `A..B`.
    Segments,
    /// Run time `A..B`.
    TRange,
    /// The time limit.
    TimeoutS,
    /// Estimation runs.
    Estimate,
    /// Validation runs.
    Validate,
    /// The compared models.
    Models,
    /// The replay of a comparison.
    Replay,
    /// The plant mass of a torque replay.
    Mass,
    /// The presliding velocity threshold.
    PreslidingVelocity,
    /// The presliding displacement threshold.
    PreslidingDisplacement,
    /// The iteration cap.
    MaxIters,
}

impl Field {
    /// The key of a REST body (`t_range`).
    pub fn key(self) -> &'static str {
        match self {
            Field::Model => "model",
            Field::Procedure => "procedure",
            Field::Run => "run",
            Field::Given => "given",
            Field::Name => "name",
            Field::Segments => "segments",
            Field::TRange => "t_range",
            Field::TimeoutS => "timeout_s",
            Field::Estimate => "estimate",
            Field::Validate => "validate",
            Field::Models => "models",
            Field::Replay => "replay",
            Field::Mass => "mass",
            Field::PreslidingVelocity => "presliding_velocity",
            Field::PreslidingDisplacement => "presliding_displacement",
            Field::MaxIters => "max_iters",
        }
    }

    /// The command line's flag (`--t-range`).
    pub fn flag(self) -> String {
        format!("--{}", self.key().replace('_', "-"))
    }
}

/// Why a fit or comparison did not store a result.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// A field of the request breaks a rule; `detail` follows the field's name, e.g.
    /// `" (3..1) must be A..B with B > A"` after `--segments` or `segments`.
    #[error("{}{detail}", field.key())]
    Field {
        /// The field.
        field: Field,
        /// The rule broken, to follow the field's name.
        detail: String,
    },
    /// Input that no single field is to blame for (an unknown model, a column missing from the
    /// data, a procedure's rule).
    #[error(transparent)]
    Input(#[from] InputError),
    /// Cancelled from outside (`DELETE /api/fits/{id}`): nothing was stored.
    #[error("cancelled: nothing was stored")]
    Cancelled,
    /// The store, a bug or the fit itself failed.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

impl FitError {
    /// A rule broken by `field`.
    pub fn field(field: Field, detail: impl Into<String>) -> FitError {
        FitError::Field {
            field,
            detail: detail.into(),
        }
    }

    /// The error as the command line reports it: input errors (exit code 2) name the flag.
    pub fn into_cli(self) -> anyhow::Error {
        match self {
            FitError::Field { field, detail } => {
                InputError(format!("{}{detail}", field.flag())).into()
            }
            FitError::Input(e) => e.into(),
            FitError::Cancelled => anyhow::anyhow!("cancelled: nothing was stored"),
            FitError::Failed(e) => e,
        }
    }
}

impl From<run_store::Error> for FitError {
    fn from(e: run_store::Error) -> FitError {
        match crate::db::store_error(e).downcast::<InputError>() {
            Ok(input) => FitError::Input(input),
            Err(other) => FitError::Failed(other),
        }
    }
}

/// A fit of one model by one procedure on a stored run, saved as a parameter set: the body of
/// `POST /api/fits`, and what `bench fit --run` builds from its flags.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FitRequest {
    /// Model id whose parameters are fitted (`GET /api/models`).
    #[schemars(length(min = 1))]
    pub model: String,
    /// Procedure, by name: one of `GET /api/procedures` (what each reads, fits and takes).
    #[schemars(length(min = 1))]
    pub procedure: String,
    /// The stored run to fit.
    pub run: i64,
    /// Known values (held fixed) and procedure options, e.g. `{"j": 0.167, "delta": 2}` or
    /// `{"offset": true}`; keys a procedure does not take are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<Map<String, Value>>,
    /// Name of the saved parameter set (default `<model>-run<ID>-<procedure>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Time-series procedures: plan segment indices `A..B` (B excluded; `A..` or `..B`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<String>,
    /// Time-series procedures: run time `A..B` \[s\] (both included; `A..` or `..B`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_range: Option<String>,
    /// Time limit \[s\] (> 0, at most a day): the fit stops there with termination `timeout`.
    /// The service's default is 600 s; the command line has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 86_400))]
    pub timeout_s: Option<f64>,
    /// Time-series procedures: the speed column replaced by the centred difference of the
    /// encoder angle ([`run_data::centred_speed`]), as the campaign's comparison replays it.
    /// Not part of the REST body.
    #[serde(skip)]
    pub encoder_velocity: bool,
}

impl FitRequest {
    /// The request as the command line that does the same (`fit --model M --procedure P
    /// --run ID ...`), for listings of the fits in progress.
    pub fn command_line(&self) -> String {
        let mut out = format!(
            "fit --model {} --procedure {} --run {}",
            self.model, self.procedure, self.run
        );
        let mut opt = |field: Field, v: Option<String>| {
            if let Some(v) = v {
                out.push_str(&format!(" {} {v}", field.flag()));
            }
        };
        opt(
            Field::Given,
            self.given
                .as_ref()
                .map(|g| Value::Object(g.clone()).to_string()),
        );
        opt(Field::Name, self.name.clone());
        opt(Field::Segments, self.segments.clone());
        opt(Field::TRange, self.t_range.clone());
        opt(Field::TimeoutS, self.timeout_s.map(|t| t.to_string()));
        out
    }
}

/// A non-empty string field, or the rule naming it.
fn non_empty(field: Field, text: &str) -> Result<(), FitError> {
    if text.trim().is_empty() {
        return Err(FitError::field(field, " must be a non-empty string"));
    }
    Ok(())
}
