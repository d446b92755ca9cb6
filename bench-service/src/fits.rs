//! Fits and comparisons on stored runs, in this process on blocking threads (the same code as
//! `bench fit --run` and `bench compare`, [`bench_daemon::fitting`]): `POST /api/fits`,
//! `POST /api/comparisons`, `GET /api/fits` (in progress, with progress) and
//! `DELETE /api/fits/{id}` (cancelled: nothing stored, its request answers 409). Each has a
//! time limit (`timeout_s`, default 10 minutes).

use super::body::Json;
use super::error::{Answer, ApiError, ApiResult, Created, errors};
use super::extract::FitId;
use super::jobs::{DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, Running};
use super::schema::Record;
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::{delete_with, post_with};
use axum::extract::State;
use axum::http::StatusCode;
use bench_daemon::fitting::validate::{self, held_out};
use bench_daemon::fitting::{CompareJob, FitError, FitRequest, ReplayKind, Source};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    let busy = (
        503,
        "Two fits or comparisons already going (one while a run is on the bench)",
    );
    let cancelled = (
        409,
        "Cancelled by DELETE /api/fits/{id}: nothing was stored",
    );
    let unknown_run = (404, "An unknown run");
    ApiRouter::new()
        .api_route(
            "/api/fits",
            post_with(fit, move |op| {
                let op = op.summary("Fit a model to a stored run (as bench fit --run --json, in the daemon's process) within timeout_s (default 600 s; the fit stops there with termination timeout); the result is saved as a parameter set");
                errors(op, &[unknown_run, cancelled, busy])
            })
            .get_with(list, |op| {
                op.summary("Fits and comparisons in progress, with their progress (also `fit` events on /api/live)")
            }),
        )
        .api_route(
            "/api/fits/{id}",
            delete_with(cancel, |op| {
                let op = op.summary("Cancel a fit or comparison in progress: it stops at its next iteration, stores nothing, and its request answers 409");
                errors(op, &[(404, "No such fit in progress")])
            }),
        )
        .api_route(
            "/api/comparisons",
            post_with(compare, move |op| {
                let op = op.summary("Fit models on estimation runs and score them on validation runs (as bench compare --json); stored with the runs");
                errors(op, &[unknown_run, cancelled, busy])
            }),
        )
}

/// A body's `timeout_s`: seconds > 0 up to a day; the default when absent.
fn timeout_s(t: Option<f64>) -> Result<f64, ApiError> {
    match t {
        None => Ok(DEFAULT_TIMEOUT_S),
        Some(t) if t.is_finite() && t > 0.0 && t <= MAX_TIMEOUT_S => Ok(t),
        Some(_) => Err(ApiError::unprocessable(
            "timeout_s",
            format!("timeout_s must be a number of seconds > 0 and <= {MAX_TIMEOUT_S}"),
        )),
    }
}

/// Runs `work` (a fit or comparison described by `what`) within `timeout_s`; its JSON and
/// the fit's id.
async fn run(
    state: &AppState,
    what: String,
    timeout_s: f64,
    work: impl FnOnce() -> Result<Value, FitError> + Send + 'static,
) -> Result<(Value, u64), ApiError> {
    let busy = state.view.borrow().running.is_some();
    let job = state
        .fits
        .begin(what, timeout_s, busy, &state.hub)
        .map_err(|m| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, None, m))?;
    let id = job.id;
    let done = job
        .run(work)
        .await
        .map_err(|e| ApiError::from_anyhow(e.into()))?;
    done.map(|v| (v, id)).map_err(|e| fit_error(e, id))
}

/// A fit's error as the API answers it: 409 when cancelled, else 422 naming the body key
/// (`body` when no one field is to blame).
fn fit_error(e: FitError, id: u64) -> ApiError {
    match e {
        FitError::Cancelled => ApiError::conflict(format!(
            "fit {id} was cancelled (DELETE /api/fits/{id}): nothing was stored"
        )),
        FitError::Field { field, detail } => {
            ApiError::unprocessable(field.key(), format!("{}{detail}", field.key()))
        }
        FitError::Input(e) => ApiError::unprocessable("body", e.0),
        FitError::Failed(e) => ApiError::unprocessable("body", format!("{e:#}")),
    }
}

/// A fit done.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Fitted {
    /// The saved parameter set.
    parameter_set_id: Option<i64>,
    /// The fit's id while it ran.
    fit_id: u64,
    /// The procedure's report (fitted values under `params`, `std_errors`, `mse`,
    /// `provenance`, ...).
    report: Record,
}

/// The body of `POST /api/fits`: the fit (as `bench fit --run`) and the held-out runs its set is
/// scored on (as `bench fit --validate RUN`).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
struct FitBody {
    /// Held-out runs the fitted set is scored on the procedure's own way (idim_ls, power_rls,
    /// output_error): the answer's `validation` has `rms`, `rel_error_pct`, `r2`, `n` per run.
    #[serde(default)]
    validate: Vec<i64>,
    /// The fit; read as [`FitRequest`] once `validate` is taken out, so that its unknown
    /// keys are still refused.
    #[serde(flatten)]
    #[schemars(with = "FitRequest")]
    request: serde_json::Map<String, Value>,
}

async fn fit(
    State(state): State<AppState>,
    Json(body): Json<FitBody>,
) -> ApiResult<Created<Fitted>> {
    let req: FitRequest = super::body::typed(&Value::Object(body.request))?;
    state.store.run(req.run).await.map_err(ApiError::store)?;
    for id in &body.validate {
        // A held-out run that is not there is named by the key that asked for it.
        state.store.run(*id).await.map_err(|e| {
            let mut err = ApiError::store(e);
            err.field = Some("validate".into());
            err.error = format!("validate: {}", err.error);
            err
        })?;
    }
    let timeout = timeout_s(req.timeout_s)?;
    let (db, what) = (state.db_path.clone(), req.command_line());
    let held: Vec<_> = body
        .validate
        .iter()
        .map(|&id| validate::Record::Run(id))
        .collect();
    let work = move || {
        let mut done = bench_daemon::fitting::fit_stored(&req, &db)?;
        done.report.validation = held_out(&done.report, &held, &db)?;
        done.to_json()
    };
    let (report, fit_id) = run(&state, what, timeout, work).await?;
    Ok(Answer(Fitted {
        parameter_set_id: report["parameter_set_id"].as_i64(),
        fit_id,
        report: Record(report),
    }))
}

/// The body of `POST /api/comparisons`: models fitted on the estimation runs and scored on the
/// validation runs (as `bench compare` on run ids).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CompareRequest {
    /// Estimation runs.
    #[schemars(length(min = 1))]
    estimate: Vec<i64>,
    /// Validation runs.
    #[schemars(length(min = 1))]
    validate: Vec<i64>,
    /// Models: `ID` (every parameter it can fit), `ID=p1+p2` or `ID=none` (its defaults).
    #[schemars(length(min = 1))]
    models: Vec<String>,
    /// `velocity` (friction error, the default) or `torque` (position error through the plant).
    replay: Option<ReplayKind>,
    /// Levenberg–Marquardt iteration cap per model (default 100).
    #[schemars(range(min = 1))]
    max_iters: Option<u64>,
    /// Time limit per model's fit \[s\] (> 0, at most a day; default 600 s).
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 86_400))]
    timeout_s: Option<f64>,
}

impl CompareRequest {
    /// Refuses what the core would not take, naming the key.
    async fn check(&self, state: &AppState) -> Result<(), ApiError> {
        for (key, ids) in [("estimate", &self.estimate), ("validate", &self.validate)] {
            if ids.is_empty() {
                let msg = format!("{key} must be a list of run ids");
                return Err(ApiError::unprocessable(key, msg));
            }
            for id in ids {
                state.store.run(*id).await.map_err(ApiError::store)?;
            }
        }
        if self.models.is_empty() || self.models.iter().any(|m| m.trim().is_empty()) {
            let msg = "models must be a list of model ids (ID, ID=p1+p2 or ID=none)";
            return Err(ApiError::unprocessable("models", msg.into()));
        }
        if self.max_iters == Some(0) {
            let msg = "max_iters must be an integer >= 1";
            return Err(ApiError::unprocessable("max_iters", msg.into()));
        }
        Ok(())
    }

    /// The command line that does the same.
    fn command_line(&self) -> String {
        let list = |ids: &[i64]| ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        format!(
            "compare --estimate {} --validate {} --models {}",
            list(&self.estimate),
            list(&self.validate),
            self.models.join(",")
        )
    }
}

async fn compare(
    State(state): State<AppState>,
    Json(req): Json<CompareRequest>,
) -> ApiResult<Created<Compared>> {
    req.check(&state).await?;
    // `timeout_s` limits each model's fit, as `bench compare --timeout-s`; the comparison
    // as a whole gets that much per model.
    let per_fit = timeout_s(req.timeout_s)?;
    let whole = (per_fit * req.models.len() as f64).min(MAX_TIMEOUT_S);
    let what = req.command_line();
    let runs = |ids: &[i64]| ids.iter().map(|&id| Source::Run(id)).collect();
    let job = CompareJob {
        estimate: runs(&req.estimate),
        validate: runs(&req.validate),
        models: req.models,
        replay: req.replay.unwrap_or(ReplayKind::Velocity),
        mass: 1.0,
        presliding_velocity: 1e-3,
        presliding_displacement: None,
        max_iters: req.max_iters.unwrap_or(100),
        timeout_s: req.timeout_s,
        offset: false,
        db: state.db_path.clone(),
        geometry: state.loaded.config.geometry,
        given: serde_json::Map::new(),
    };
    let (mut table, fit_id) = run(&state, what, whole, move || Ok(job.run()?.json)).await?;
    let stored = table
        .as_object_mut()
        .and_then(|t| t.remove("comparison_id"));
    let comparison_id = stored.and_then(|v| v.as_i64()).ok_or_else(|| {
        ApiError::from_anyhow(anyhow::anyhow!("BUG: a comparison of runs was not stored"))
    })?;
    Ok(Answer(Compared {
        table,
        comparison_id,
        fit_id,
    }))
}

/// A comparison done (`POST /api/comparisons`): its table as stored with the runs (a run's
/// `comparisons[].table`), the stored comparison's id and the job's.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Compared {
    /// The table.
    #[serde(flatten)]
    #[schemars(with = "friction::identify::procedures::compare::Table")]
    table: Value,
    /// The stored comparison (listed in `comparisons` of each run it used).
    comparison_id: i64,
    /// The comparison's id while it ran (`GET /api/fits`).
    fit_id: u64,
}

/// The fits and comparisons in progress.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct InProgress {
    /// Oldest first.
    fits: Vec<Running>,
}

async fn list(State(state): State<AppState>) -> axum::Json<InProgress> {
    axum::Json(InProgress {
        fits: state.fits.list(),
    })
}

/// A cancel requested.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Cancelling {
    /// The fit.
    cancelled: u64,
}

async fn cancel(
    State(state): State<AppState>,
    FitId(id): FitId,
) -> ApiResult<axum::Json<Cancelling>> {
    if state.fits.cancel(id) {
        return Ok(axum::Json(Cancelling { cancelled: id }));
    }
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        None,
        format!("no fit or comparison {id} in progress (GET /api/fits lists them)"),
    ))
}
