//! Runs: `GET /api/runs` (newest first, filtered), `POST /api/runs` (a spec enqueued or started
//! now), `POST /api/runs/import` (a recording made elsewhere, [`import`]), one run, its
//! results, its samples (columnar JSON or CSV), its export (CSV, JSON, Parquet) and its stop
//! and abort, its continuation (`POST /api/runs/{id}/resume`, `resume.rs`).

mod annotate;
mod diff;
pub mod import;
mod record;
mod resume;

use super::audit::{Marked, Touched};
use super::body::SpecJson;
use super::error::{Accepted, Answer, ApiError, ApiResult, Created, errors};
use super::extract::{Query, RunId};
use super::guard::Caller;
use super::scheduler::{Cmd, Enqueued, EnqueuedStatus, check_value};
use super::schema::Record;
use super::state::{AppState, ask};
use super::stream::Shape;
use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use axum::extract::State;
use axum::{Extension, Json};
use record::RunRecord;
use run_store::{RunFilter, RunStatus, SampleQuery};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/runs",
            get_with(list, |op| op.summary("Runs, newest first")).post_with(create, |op| {
                let op = op.summary("Create a run (status queued at once): enqueue it, or start it now");
                errors(op, &[
                    (409, "Conflict: bench busy or e-stop latched (start=now)"),
                    (503, "No plan-check worker free within 0.5 s"),
                ])
            }),
        )
        .api_route(
            super::body::RECORDING_PATH,
            post_with(import::import_run, |op| {
                op.summary("Import a recording made elsewhere (the body: a CSV, MATLAB level 5 MAT-file or Parquet file, streamed) as a run of kind `imported`, as `bench runs import` does; nothing is stored when it is refused")
            }),
        )
        .api_route(
            "/api/runs/{id}",
            get_with(get, |op| {
                op.summary("One run (status, timing, interruption log, results, spec, models, comparisons, the calibration and zero of each sensor)")
            })
            .patch_with(annotate::patch, |op| {
                op.summary("Edit the run's tags (`tags` replaces the list, `add`/`remove` edit it) and notes, at any time (operator); the audit log keeps the old and new values")
            }),
        )
        .api_route(
            "/api/runs/{id}/diff",
            get_with(diff::diff, |op| {
                op.summary("What changed on the bench between this run and run `with`: spec, bench configuration, lockstep sets, device profiles (SHA-256), software version and bench id, as `bench runs diff` lists them")
            }),
        )
        .api_route(
            "/api/runs/{id}/results",
            get_with(results, |op| {
                errors(op.summary("The run's analysis"), &[(409, "The run has no results (yet): its status says why")])
            }),
        )
        .api_route(
            "/api/runs/{id}/samples",
            get_with(samples, |op| {
                let op = op.summary("Samples by run time range with decimation, with every lockstep model's output");
                errors(op, &[(503, "Four sample downloads are already going")])
            }),
        )
        .api_route(
            "/api/runs/{id}/export",
            get_with(export, |op| {
                let op = op.summary("The whole run as a file (Content-Disposition: attachment)");
                errors(op, &[(503, "Four sample downloads are already going")])
            }),
        )
        .api_route(
            "/api/runs/{id}/resume",
            post_with(resume::resume, |op| {
                let op = op.summary("Continue an interrupted, failed or aborted run from its last completed segment: a new run (`continues`: this one) of the segments its chain did not measure whole, started now after the same checks as any run");
                errors(op, &[
                    (409, "The run cannot be resumed (its status, a continuation already, a changed bench), or the bench is busy or the e-stop latched"),
                ])
            }),
        )
        .api_route(
            "/api/runs/{id}/stop",
            post_with(stop, |op| {
                let op = op.summary("Finish the current segment, then end (status aborted, reason \"stop requested\"); a waiting run is removed from the queue");
                errors(op, &[(409, "The run is neither running nor waiting")])
            }),
        )
        .api_route(
            "/api/runs/{id}/abort",
            post_with(abort, |op| {
                let op = op.summary("Safe state now (status aborted); a waiting run is cancelled (reason \"removed from the queue\")");
                errors(op, &[(409, "The run is neither running nor waiting")])
            }),
        )
}

fn kind_schema(_: &mut SchemaGenerator) -> Schema {
    let mut kinds: Vec<&str> = experiments::Kind::NAMES.to_vec();
    kinds.push(run_store::IMPORTED_KIND);
    json_schema!({
        "enum": kinds,
        "description": "experiment kind, or `imported` (recordings from POST /api/runs/import)",
    })
}

fn status_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"enum": ["queued", "running", "completed", "aborted", "failed", "interrupted"]})
}

/// The filters and page of `GET /api/runs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RunsQuery {
    /// Experiment kind.
    #[serde(default)]
    #[schemars(schema_with = "kind_schema")]
    kind: Option<String>,
    /// Bench id (bench.toml `bench_id`; `sim` for the simulated bench).
    #[schemars(pattern(r"^[A-Za-z0-9._-]{1,64}$"))]
    bench: Option<String>,
    /// queued, running, completed, aborted, failed, interrupted.
    #[serde(default)]
    #[schemars(schema_with = "status_schema")]
    status: Option<String>,
    /// Created at or after (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC).
    #[schemars(pattern(super::schema::DATE_PATTERN))]
    since: Option<String>,
    /// Created before (as since).
    #[schemars(pattern(super::schema::DATE_PATTERN))]
    until: Option<String>,
    /// Only runs with this tag (`bench runs tag`).
    tag: Option<String>,
    /// Search: every word must occur (case-insensitively) in the run's name, kind, a tag or
    /// its notes, or be its id (`#12`).
    #[schemars(length(max = 200))]
    q: Option<String>,
    /// Page size (default 50).
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
    /// Rows to skip.
    offset: Option<u64>,
}

async fn list(
    State(state): State<AppState>,
    Query(q): Query<RunsQuery>,
) -> ApiResult<Json<Record>> {
    let bad = |field: &str, e: String| ApiError::bad_request(Some(field), format!("{field}: {e}"));
    let status = q
        .status
        .map(|s| {
            s.parse::<RunStatus>()
                .map_err(|e| bad("status", e.to_string()))
        })
        .transpose()?;
    let limit = q.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request(
            Some("limit"),
            format!("limit ({limit}) must be between 1 and 1000"),
        ));
    }
    if let Some(text) = q.q.as_deref().filter(|t| t.chars().count() > 200) {
        return Err(ApiError::bad_request(
            Some("q"),
            format!(
                "q ({} characters) must be at most 200",
                text.chars().count()
            ),
        ));
    }
    let filter = RunFilter {
        kind: bench_daemon::db::kind_filter(q.kind.as_deref()).map_err(|e| bad("kind", e))?,
        bench: bench_daemon::db::bench_filter(q.bench.as_deref()).map_err(|e| bad("bench", e))?,
        status,
        since: q.since,
        until: q.until,
        tag: q.tag,
        q: q.q,
        limit,
        offset: q.offset.unwrap_or(0),
    };
    let page = state
        .store
        .list_runs(&filter)
        .await
        .map_err(ApiError::store)?;
    Ok(Json(Record(to_value(page)?)))
}

/// `start=now` or the queue.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Start {
    /// Start at once (409 if the bench is busy or the e-stop latched).
    Now,
    /// Enqueue (the default).
    Queue,
}

/// Where a new run goes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateQuery {
    /// `now`: start at once; absent or `queue`: enqueue.
    start: Option<Start>,
    /// Queue priority, higher first (default 0).
    #[schemars(range(min = -1000, max = 1000))]
    priority: Option<i64>,
}

async fn create(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<CreateQuery>,
    SpecJson(body): SpecJson,
) -> ApiResult<Marked<Created<Enqueued>>> {
    let priority = q.priority.unwrap_or(0);
    if !(-1000..=1000).contains(&priority) {
        return Err(ApiError::unprocessable(
            "priority",
            format!("priority ({priority}) must be within -1000..=1000"),
        ));
    }
    let loaded = state.loaded.clone();
    let checked = state
        .pool
        .run(move || -> Result<_, ApiError> { Ok(check_value(&body, &loaded, "")?) })
        .await?;
    let answer = ask(&state, |reply| Cmd::Enqueue {
        checked: Box::new(checked),
        priority,
        now: q.start == Some(Start::Now),
        reply,
    })
    .await?;
    let how = match answer.status {
        EnqueuedStatus::Running => "started",
        EnqueuedStatus::Queued => "queued",
    };
    let line = format!("{how} by {}", resume::who(&caller));
    if let Err(e) = state.store.append_note(answer.id, None, &line).await {
        tracing::warn!("run {}: {line} not logged: {e}", answer.id);
    }
    let touched = Touched {
        run_id: Some(answer.id),
        ..Touched::default()
    };
    Ok(Marked(Answer(answer), touched))
}

/// Run `id` from the store (404 if none).
async fn load(state: &AppState, RunId(id): RunId) -> Result<run_store::Run, ApiError> {
    state.store.run(id).await.map_err(ApiError::store)
}

fn to_value(v: impl Serialize) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::from_anyhow(e.into()))
}

async fn get(State(state): State<AppState>, id: RunId) -> ApiResult<Json<RunRecord>> {
    let run = load(&state, id).await?;
    let comparisons = state
        .store
        .comparisons_for_run(run.id)
        .await
        .map_err(ApiError::store)?;
    let chain = state.store.chain(run.id).await.map_err(ApiError::store)?;
    let mut v = to_value(&run)?;
    v["comparisons"] = to_value(comparisons)?;
    // The chain of continuations it belongs to (`bench runs resume`), first run first.
    v["chain"] = to_value(chain)?;
    // The characterisation campaign it is a step of (`bench characterise`), or null.
    let campaign = state.store.campaign_of_run(run.id).await;
    v["campaign"] = match campaign.map_err(ApiError::store)? {
        Some((id, step)) => serde_json::json!({"id": id, "step": step}),
        None => serde_json::Value::Null,
    };
    // What it read each torque sensor with: the calibration, overdue, a note, the zero.
    let sensors = state.store.run_sensors(run.id).await;
    v["sensors"] = to_value(sensors.map_err(ApiError::store)?)?;
    Ok(Json(RunRecord(v)))
}

async fn results(State(state): State<AppState>, id: RunId) -> ApiResult<Json<Record>> {
    let run = load(&state, id).await?;
    match run.results {
        Some(r) => Ok(Json(Record(r))),
        // The run exists (so not 404): its state has no results, yet or ever.
        None => Err(ApiError::conflict(format!(
            "run {} has no results (status {})",
            run.id, run.status
        ))),
    }
}

/// How samples come: columnar JSON or CSV.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum SampleFormat {
    /// `{models, idx, t, x, ..., outputs: {model: [...]}}` (NaN as null).
    #[default]
    Json,
    /// As `bench runs export` writes it.
    Csv,
}

/// Which samples.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SamplesQuery {
    /// First run time \[s\].
    from: Option<f64>,
    /// Last run time \[s\].
    to: Option<f64>,
    /// Keep samples whose index is a multiple of this (default 1).
    #[schemars(range(min = 1, max = 1_000_000_000))]
    every: Option<u64>,
    /// `json` (columnar, the default) or `csv`.
    format: Option<SampleFormat>,
}

/// The sparsest decimation `GET /api/runs/{id}/samples?every=` takes.
pub const MAX_EVERY: u64 = 1_000_000_000;

async fn samples(
    State(state): State<AppState>,
    id: RunId,
    Query(q): Query<SamplesQuery>,
) -> ApiResult<super::stream::Download> {
    let run = load(&state, id).await?;
    for (k, t) in [("from", q.from), ("to", q.to)] {
        if t.is_some_and(|t| !t.is_finite()) {
            return Err(ApiError::bad_request(
                Some(k),
                format!("{k} must be a finite number of seconds"),
            ));
        }
    }
    let every = q.every.unwrap_or(1);
    if !(1..=MAX_EVERY).contains(&every) {
        return Err(ApiError::bad_request(
            Some("every"),
            format!("every ({every}) must be from 1 to {MAX_EVERY}"),
        ));
    }
    let query = SampleQuery {
        from_t: q.from,
        to_t: q.to,
        every,
    };
    let (shape, ctype) = match q.format.unwrap_or_default() {
        SampleFormat::Csv => {
            let rows = Shape::Rows(run_store::Format::Csv, run_store::ExportOptions::default());
            (rows, "text/csv; charset=utf-8")
        }
        SampleFormat::Json => (Shape::Columns, "application/json"),
    };
    let body = super::stream::body(state.store.clone(), run, query, shape).await?;
    Ok(super::stream::Download::samples(ctype, body))
}

/// The export's file format.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ExportFormat {
    /// Columns idx, t, x, v, u_cmd, torque_motor, torque_sensor, segment, flags, then one per
    /// model output named by its id (the default).
    #[default]
    Csv,
    /// `{run, columns, rows}`.
    Json,
    /// Units as field metadata; run, spec, units and software version as file metadata.
    Parquet,
}

/// The export's format.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExportQuery {
    /// csv (the default), json or parquet, streamed page by page.
    format: Option<ExportFormat>,
    /// CSV: `true` adds a first line `# units: ...` with each column's unit; JSON: a `units`
    /// array after `columns`.
    units: Option<bool>,
}

async fn export(
    State(state): State<AppState>,
    id: RunId,
    Query(q): Query<ExportQuery>,
) -> ApiResult<super::stream::Download> {
    let run = load(&state, id).await?;
    let opts = run_store::ExportOptions {
        units: q.units.unwrap_or(false),
    };
    let (shape, ctype, ext) = match q.format.unwrap_or_default() {
        ExportFormat::Csv => (
            Shape::Rows(run_store::Format::Csv, opts),
            "text/csv; charset=utf-8",
            "csv",
        ),
        ExportFormat::Json => (
            Shape::Rows(run_store::Format::Json, opts),
            "application/json",
            "json",
        ),
        ExportFormat::Parquet => (Shape::Parquet, "application/vnd.apache.parquet", "parquet"),
    };
    let id = run.id;
    let body = super::stream::body(state.store.clone(), run, SampleQuery::default(), shape).await?;
    Ok(super::stream::Download::file(
        ctype,
        format!("run-{id}.{ext}"),
        body,
    ))
}

/// A stop or abort taken.
#[derive(Debug, Serialize, JsonSchema)]
struct Requested {
    /// The run.
    id: i64,
    /// `stop` or `abort`.
    requested: &'static str,
}

async fn stop(State(state): State<AppState>, id: RunId) -> ApiResult<Accepted<Requested>> {
    end(state, id, false).await
}

async fn abort(State(state): State<AppState>, id: RunId) -> ApiResult<Accepted<Requested>> {
    end(state, id, true).await
}

async fn end(state: AppState, id: RunId, abort: bool) -> ApiResult<Accepted<Requested>> {
    let run_id = load(&state, id).await?.id;
    ask(&state, |reply| match abort {
        true => Cmd::Abort { run_id, reply },
        false => Cmd::Stop { run_id, reply },
    })
    .await?;
    let requested = if abort { "abort" } else { "stop" };
    Ok(Answer(Requested {
        id: run_id,
        requested,
    }))
}
