//! Routes and handlers of the REST API (`docs/src/api.md`, served as OpenAPI at
//! `/api/openapi.json`). Handlers own nothing mutable: they read the store and the published
//! views, and send the scheduler a [`Cmd`] with a oneshot reply for anything that changes the
//! queue or the bench. Bodies are parsed here (400 for malformed JSON, 422 for a rule broken),
//! and checked completely before anything is sent, so a rejected request changes nothing.

use super::body::Body;
use super::live;
use super::queue::{
    Cmd, OnFailure, QueueView, SchedulerError, check_value, format_time, parse_time, validate,
};
use super::stream::Shape;
use crate::config::Loaded;
use crate::control::{Interlock, Status};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{delete, get, post};
use run_store::{RunFilter, RunStatus, SampleQuery, Store};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, watch};

/// What every handler sees (cheap to clone; nothing in it is mutated by handlers).
#[derive(Clone, Debug)]
pub struct AppState {
    /// The run store (reads; fits and comparisons write through the `bench` CLI).
    pub store: Store,
    /// The bench configuration.
    pub loaded: Arc<Loaded>,
    /// Requests to the scheduler.
    pub cmd: mpsc::Sender<Cmd>,
    /// The e-stop and fault reset, which never wait for the scheduler.
    pub interlock: Arc<Interlock>,
    /// The scheduler's published queue.
    pub view: watch::Receiver<QueueView>,
    /// Live channels.
    pub hub: live::Hub,
    /// Host, Origin, token and Content-Type checks (`guard.rs`).
    pub guard: Arc<super::guard::Guard>,
    /// Turns true at shutdown (ends live streams).
    pub shutdown: watch::Receiver<bool>,
    /// The database file (for the `bench fit` / `bench compare` children).
    pub db_path: PathBuf,
    /// Where plan checks and sweep expansion run (never on the request threads).
    pub pool: super::pool::Pool,
    /// Fits and comparisons in progress.
    pub fits: Arc<super::fitting::Registry>,
    /// A lab view (`bench serve --lab`): read-only, no bench attached.
    pub lab: bool,
}

/// An error answer: `{"error": ..., "field": ...}` with its status code.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Message naming the field and the limit or rule.
    pub error: String,
    /// The offending field, if one.
    pub field: Option<String>,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, field: Option<&str>, error: String) -> ApiError {
        ApiError {
            status,
            error,
            field: field.map(str::to_string),
        }
    }

    /// 400.
    pub fn bad_request(field: Option<&str>, error: String) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, field, error)
    }

    /// 404.
    pub fn not_found(field: &str, error: String) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, Some(field), error)
    }

    /// 409.
    pub fn conflict(error: String) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, None, error)
    }

    /// 422.
    pub fn unprocessable(field: &str, error: String) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, Some(field), error)
    }

    /// A store error: unknown ids 404, bad arguments 400, the rest 500.
    pub fn store(e: run_store::Error) -> ApiError {
        match &e {
            run_store::Error::RunNotFound { .. } | run_store::Error::NotFound { .. } => {
                ApiError::new(StatusCode::NOT_FOUND, Some("id"), e.to_string())
            }
            run_store::Error::InvalidInput { field, .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, Some(field), e.to_string())
            }
            _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, None, e.to_string()),
        }
    }

    /// Input errors (`cli::InputError`) are 422, the rest 500.
    pub fn from_anyhow(e: anyhow::Error) -> ApiError {
        if let Some(input) = e.downcast_ref::<crate::cli::InputError>() {
            return ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("spec"),
                input.0.clone(),
            );
        }
        if let Some(store) = e.downcast_ref::<run_store::Error>()
            && matches!(
                store,
                run_store::Error::RunNotFound { .. } | run_store::Error::NotFound { .. }
            )
        {
            return ApiError::new(StatusCode::NOT_FOUND, Some("id"), store.to_string());
        }
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, None, format!("{e:#}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = axum::Json(json!({"error": self.error, "field": self.field}));
        (self.status, body).into_response()
    }
}

type ApiResult = Result<Response, ApiError>;

fn ok(v: Value) -> ApiResult {
    Ok(axum::Json(v).into_response())
}

fn created(v: Value) -> ApiResult {
    Ok((StatusCode::CREATED, axum::Json(v)).into_response())
}

/// The router: the API, the live stream, the OpenAPI document and the dashboard.
/// `web`: a dashboard directory (`--web`), else the dashboard embedded at build time.
pub fn router(state: AppState, web: Option<&FsPath>) -> Router {
    let api = Router::new()
        .route("/api/health", get(health))
        .route("/api/bench", get(bench))
        .route("/api/experiments/kinds", get(kinds))
        .route("/api/experiments/check", post(check))
        .route("/api/runs", get(list_runs).post(create_run))
        .route("/api/runs/{id}", get(get_run))
        .route("/api/runs/{id}/results", get(run_results))
        .route("/api/runs/{id}/samples", get(run_samples))
        .route("/api/runs/{id}/export", get(run_export))
        .route("/api/runs/{id}/stop", post(stop_run))
        .route("/api/runs/{id}/abort", post(abort_run))
        .route("/api/estop", post(super::estop::estop))
        .route("/api/estop/reset", post(super::estop::estop_reset))
        .route("/api/faults/reset", post(faults_reset))
        .route("/api/queue", get(get_queue).put(put_queue))
        .route("/api/queue/{id}", axum::routing::delete(delete_queue_item))
        .route("/api/schedule", get(get_schedule).post(post_schedule))
        .route("/api/schedule/{id}", axum::routing::delete(delete_schedule))
        .route("/api/models", get(models))
        .route("/api/parameter-sets", get(parameter_sets))
        .route("/api/parameter-sets/{id}", get(parameter_set))
        .route("/api/fits", post(fits).get(fits_running))
        .route("/api/fits/{id}", delete(cancel_fit))
        .route("/api/comparisons", post(comparisons))
        .route("/api/live", get(live::live))
        .route("/api/openapi.json", get(openapi))
        .route("/api/{*rest}", axum::routing::any(api_not_found))
        .route("/metrics", get(super::metrics::metrics));
    let app = match web {
        Some(dir) if dir.is_dir() => api.fallback_service(tower_http::services::ServeDir::new(dir)),
        None if super::web::embedded() => api.fallback(super::web::serve),
        _ => {
            let page = not_built_page(web);
            api.route("/", get(move || async move { Html(page) }))
                .fallback(api_not_found)
        }
    };
    layered(app, state)
}

/// Just the e-stop, behind the same guard and body limit: what the HTTP front
/// ([`super::front`]) answers on its own thread.
pub fn estop_router(state: AppState) -> Router {
    let estop = Router::new()
        .route("/api/estop", post(super::estop::estop))
        .fallback(api_not_found);
    layered(estop, state)
}

/// The body limit and the guard (Host, Origin, content type, token) around `routes`.
fn layered(routes: Router<AppState>, state: AppState) -> Router {
    routes
        .layer(middleware::from_fn_with_state(state.lab, read_only_lab))
        .layer(axum::extract::DefaultBodyLimit::max(
            super::body::MAX_BODY_BYTES,
        ))
        .layer(middleware::from_fn_with_state(
            state.guard.clone(),
            super::guard::guard,
        ))
        .with_state(state)
}

/// In a lab view (`bench serve --lab`), every call but GET, HEAD and OPTIONS is answered 409
/// before it reaches its handler: nothing there can change the store or move a bench.
async fn read_only_lab(
    State(lab): State<bool>,
    req: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    if lab && !reads.contains(req.method()) {
        return ApiError::conflict(format!(
            "{} {}: this is a lab view (bench serve --lab), read-only with no bench attached; \
             run, queue, fit and compare on a bench's own daemon, then bench runs push",
            req.method(),
            req.uri().path()
        ))
        .into_response();
    }
    next.run(req).await
}

fn not_built_page(web: Option<&FsPath>) -> String {
    let missing = match web {
        Some(dir) => format!("no directory <code>{}</code>", dir.display()),
        None => "this binary was compiled without <code>web/dist</code>".to_string(),
    };
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>frictionbench</title></head>\
         <body><h1>frictionbench</h1><p>The dashboard is not built: {missing}.</p>\
         <p>Build it with <code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code>, then rebuild \
         <code>bench</code> (which embeds it) or point <code>--web DIR</code> at the build.</p>\
         <p>The REST API is up: <a href=\"/api/health\">/api/health</a>, \
         <a href=\"/api/openapi.json\">/api/openapi.json</a>.</p></body></html>"
    )
}

async fn api_not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        None,
        format!(
            "no such endpoint: {method} {} (see /api/openapi.json)",
            uri.path()
        ),
    )
}

/// Parses a JSON body: 400 if it is not JSON or gives a key twice.
fn json_body(body: &Bytes) -> Result<Value, ApiError> {
    super::body::parse(body)
}

/// The query as a map: 400 if it cannot be decoded.
fn query(
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<HashMap<String, String>, ApiError> {
    q.map(|Query(m)| m)
        .map_err(|e| ApiError::bad_request(None, format!("bad query: {e}")))
}

fn known_keys(q: &HashMap<String, String>, known: &[&str]) -> Result<(), ApiError> {
    for k in q.keys() {
        if !known.contains(&k.as_str()) {
            return Err(ApiError::bad_request(
                Some(k),
                format!(
                    "unknown query parameter '{k}' (known: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

fn parse_q<T: std::str::FromStr>(
    q: &HashMap<String, String>,
    key: &str,
    what: &str,
) -> Result<Option<T>, ApiError> {
    q.get(key)
        .map(|v| {
            v.parse::<T>().map_err(|_| {
                ApiError::bad_request(Some(key), format!("{key} ({v}) must be {what}"))
            })
        })
        .transpose()
}

fn id_of(text: &str, field: &str, what: &str) -> Result<i64, ApiError> {
    text.parse().map_err(|_| {
        ApiError::not_found(
            field,
            format!("{what} '{text}' not found (ids are integers)"),
        )
    })
}

/// Sends a command and waits for the reply.
pub(super) async fn ask<T>(
    state: &AppState,
    make: impl FnOnce(super::queue::Reply<T>) -> Cmd,
) -> Result<T, ApiError> {
    let (tx, rx) = oneshot::channel();
    let gone = || {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            "the scheduler is shutting down".into(),
        )
    };
    state.cmd.send(make(tx)).await.map_err(|_| gone())?;
    Ok(rx.await.map_err(|_| gone())??)
}

impl From<SchedulerError> for ApiError {
    fn from(e: SchedulerError) -> ApiError {
        match e {
            SchedulerError::Conflict(m) => ApiError::conflict(m),
            SchedulerError::NotFound { field, message } => ApiError::not_found(field, message),
            SchedulerError::Invalid { field, message } => ApiError::unprocessable(&field, message),
            SchedulerError::Store(e) => ApiError::store(e),
            SchedulerError::Run(e) => ApiError::from_anyhow(e),
            SchedulerError::Unavailable(m) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, None, m)
            }
        }
    }
}

impl From<super::pool::PoolError> for ApiError {
    fn from(e: super::pool::PoolError) -> ApiError {
        SchedulerError::from(e).into()
    }
}

/// Liveness (the daemon answers) and readiness: the bench is connected, no e-stop is
/// latched and the queue may start runs. Cheap: read from the published views.
async fn health(State(state): State<AppState>) -> ApiResult {
    let view = state.view.borrow();
    let estop = view.estop || state.interlock.is_latched();
    let ready = view.connected && !estop;
    ok(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "ready": ready,
        "bench": {"connected": view.connected, "estop": estop},
        "loop_running": view.running.is_some(),
        "queue": {"paused": view.paused, "waiting": view.items.len()},
    }))
}

/// `GET /api/bench` (also the live `status` event).
pub fn bench_json(state: &AppState) -> Value {
    // Borrowed, not cloned: the view holds every waiting run, and every live client asks for
    // this five times a second.
    let view = state.view.borrow();
    let s: Status = state.hub.status.borrow().clone();
    let models = match &view.running {
        Some(r) => json!(r.models),
        None => json!(state.loaded.config.lockstep.models),
    };
    json!({
        "lab": state.lab,
        "source": state.loaded.source,
        "connected": view.connected,
        "busy": view.running.is_some(),
        "run_id": view.running.as_ref().map(|r| r.run_id),
        "estop": view.estop || state.interlock.is_latched(),
        "paused": view.paused,
        "limits": state.loaded.config.limits,
        "geometry": state.loaded.config.geometry,
        "units": {
            "force": state.loaded.config.geometry.force(),
            "position": state.loaded.config.geometry.position(),
        },
        "live": {
            "phase": s.phase, "t": s.t, "segment": s.segment, "segments": s.segments,
            "label": s.label, "command": s.command, "sample": s.sample, "samples": s.samples,
            "overruns": s.overruns, "dropped_batches": s.dropped_batches,
        },
        "models": models,
    })
}

async fn bench(State(state): State<AppState>) -> ApiResult {
    ok(bench_json(&state))
}

async fn kinds(State(state): State<AppState>) -> ApiResult {
    let mut cat = experiments::catalogue();
    if let Some(list) = cat.as_array_mut() {
        for k in list {
            let estimate = k["kind"]
                .as_str()
                .and_then(|name| experiments::Spec::from_value(json!({"kind": name})).ok())
                .and_then(|s| s.plan(&state.loaded.config.limits).ok())
                .map(|p| p.estimate_duration());
            k["estimate_s"] = json!(estimate);
        }
    }
    ok(cat)
}

async fn check(State(state): State<AppState>, Body(body): Body) -> ApiResult {
    let loaded = state.loaded.clone();
    let answer = state
        .pool
        .run(move || -> Result<Value, ApiError> {
            let c = check_value(&json_body(&body)?, &loaded, "")?;
            let plan = &c.plan;
            Ok(json!({
                "ok": true,
                "estimate_s": plan.estimate_duration(),
                "max_s": plan.max_duration(),
                "segments": plan.segments.len(),
                "spec": c.document,
            }))
        })
        .await?;
    ok(answer)
}

async fn create_run(
    State(state): State<AppState>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
    Body(body): Body,
) -> ApiResult {
    let q = query(q)?;
    known_keys(&q, &["start", "priority"])?;
    let now = match q.get("start").map(String::as_str) {
        None | Some("queue") => false,
        Some("now") => true,
        Some(other) => {
            return Err(ApiError::bad_request(
                Some("start"),
                format!("start ({other}) must be \"now\" (or absent to enqueue)"),
            ));
        }
    };
    let priority: i64 = parse_q(&q, "priority", "an integer")?.unwrap_or(0);
    if !(-1000..=1000).contains(&priority) {
        return Err(ApiError::unprocessable(
            "priority",
            format!("priority ({priority}) must be within -1000..=1000"),
        ));
    }
    let loaded = state.loaded.clone();
    let checked = state
        .pool
        .run(move || -> Result<_, ApiError> { Ok(check_value(&json_body(&body)?, &loaded, "")?) })
        .await?;
    let answer = ask(&state, |reply| Cmd::Enqueue {
        checked: Box::new(checked),
        priority,
        now,
        reply,
    })
    .await?;
    created(serde_json::to_value(answer).unwrap_or_default())
}

async fn list_runs(
    State(state): State<AppState>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    known_keys(
        &q,
        &[
            "kind", "bench", "status", "since", "until", "tag", "limit", "offset",
        ],
    )?;
    let status = match q.get("status") {
        Some(s) => Some(
            s.parse::<RunStatus>()
                .map_err(|e| ApiError::bad_request(Some("status"), format!("status: {e}")))?,
        ),
        None => None,
    };
    let limit: u32 = parse_q(&q, "limit", "an integer from 1 to 1000")?.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request(
            Some("limit"),
            format!("limit ({limit}) must be between 1 and 1000"),
        ));
    }
    let offset: u64 = parse_q(&q, "offset", "a non-negative integer")?.unwrap_or(0);
    let filter = RunFilter {
        kind: crate::cli::runs::kind_filter(q.get("kind").map(String::as_str))
            .map_err(|e| ApiError::bad_request(Some("kind"), format!("kind: {e}")))?,
        bench: crate::cli::runs::bench_filter(q.get("bench").map(String::as_str))
            .map_err(|e| ApiError::bad_request(Some("bench"), format!("bench: {e}")))?,
        status,
        since: q.get("since").cloned(),
        until: q.get("until").cloned(),
        tag: q.get("tag").cloned(),
        limit,
        offset,
    };
    let page = state
        .store
        .list_runs(&filter)
        .await
        .map_err(ApiError::store)?;
    ok(serde_json::to_value(page).map_err(|e| ApiError::from_anyhow(e.into()))?)
}

async fn load_run(state: &AppState, id: &str) -> Result<run_store::Run, ApiError> {
    let id = id_of(id, "id", "run")?;
    state.store.run(id).await.map_err(ApiError::store)
}

async fn get_run(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let run = load_run(&state, &id).await?;
    let comparisons = state
        .store
        .comparisons_for_run(run.id)
        .await
        .map_err(ApiError::store)?;
    let mut v = serde_json::to_value(&run).map_err(|e| ApiError::from_anyhow(e.into()))?;
    v["comparisons"] = serde_json::to_value(comparisons).unwrap_or(Value::Null);
    ok(v)
}

async fn run_results(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let run = load_run(&state, &id).await?;
    match run.results {
        Some(r) => ok(r),
        // The run exists (so not 404): its state has no results, yet or ever.
        None => Err(ApiError::conflict(format!(
            "run {} has no results (status {})",
            run.id, run.status
        ))),
    }
}

async fn run_samples(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    known_keys(&q, &["from", "to", "every", "format"])?;
    let run = load_run(&state, &id).await?;
    let from_t: Option<f64> = parse_q(&q, "from", "a run time in seconds")?;
    let to_t: Option<f64> = parse_q(&q, "to", "a run time in seconds")?;
    let every: u64 = parse_q(&q, "every", "an integer >= 1")?.unwrap_or(1);
    for (k, t) in [("from", from_t), ("to", to_t)] {
        if t.is_some_and(|t| !t.is_finite()) {
            return Err(ApiError::bad_request(
                Some(k),
                format!("{k} must be a finite number of seconds"),
            ));
        }
    }
    if !(1..=MAX_EVERY).contains(&every) {
        return Err(ApiError::bad_request(
            Some("every"),
            format!("every ({every}) must be from 1 to {MAX_EVERY}"),
        ));
    }
    let csv = match q.get("format").map(String::as_str) {
        None | Some("json") => false,
        Some("csv") => true,
        Some(f) => {
            return Err(ApiError::bad_request(
                Some("format"),
                format!("format ({f}) must be json or csv"),
            ));
        }
    };
    let q = SampleQuery {
        from_t,
        to_t,
        every,
    };
    let (shape, ctype) = if csv {
        let rows = Shape::Rows(run_store::Format::Csv, run_store::ExportOptions::default());
        (rows, "text/csv; charset=utf-8")
    } else {
        (Shape::Columns, "application/json")
    };
    let body = super::stream::body(state.store.clone(), run, q, shape).await?;
    Ok(([(header::CONTENT_TYPE, ctype)], body).into_response())
}

async fn run_export(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    known_keys(&q, &["format", "units"])?;
    let units = match q.get("units").map(String::as_str) {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::bad_request(
                Some("units"),
                format!("units ({other}) must be true or false"),
            ));
        }
    };
    let run = load_run(&state, &id).await?;
    let opts = run_store::ExportOptions { units };
    let (shape, ctype, ext) = match q.get("format").map(String::as_str) {
        None | Some("csv") => (
            Shape::Rows(run_store::Format::Csv, opts),
            "text/csv; charset=utf-8",
            "csv",
        ),
        Some("json") => (
            Shape::Rows(run_store::Format::Json, opts),
            "application/json",
            "json",
        ),
        Some("parquet") => (Shape::Parquet, "application/vnd.apache.parquet", "parquet"),
        Some(f) => {
            return Err(ApiError::bad_request(
                Some("format"),
                format!("format ({f}) must be csv, json or parquet"),
            ));
        }
    };
    let id = run.id;
    let body = super::stream::body(state.store.clone(), run, SampleQuery::default(), shape).await?;
    let disposition = format!("attachment; filename=\"run-{id}.{ext}\"");
    Ok((
        [
            (header::CONTENT_TYPE, ctype.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

async fn stop_run(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let run = load_run(&state, &id).await?;
    ask(&state, |reply| Cmd::Stop {
        run_id: run.id,
        reply,
    })
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({"id": run.id, "requested": "stop"})),
    )
        .into_response())
}

async fn abort_run(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let run = load_run(&state, &id).await?;
    ask(&state, |reply| Cmd::Abort {
        run_id: run.id,
        reply,
    })
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({"id": run.id, "requested": "abort"})),
    )
        .into_response())
}

/// Clears a latched drive fault (token needed; never while a run is running).
async fn faults_reset(State(state): State<AppState>) -> ApiResult {
    match state.interlock.fault_reset().await {
        Ok(r) => ok(json!(r)),
        Err(e) if state.interlock.running().is_some() => Err(ApiError::conflict(e)),
        Err(e) => Err(ApiError::new(StatusCode::BAD_GATEWAY, None, e)),
    }
}

/// The sparsest decimation `GET /api/runs/{id}/samples?every=` takes.
pub const MAX_EVERY: u64 = 1_000_000_000;

/// Most waiting runs one `GET /api/queue?limit=` asks for.
pub const MAX_QUEUE_LISTING: usize = 1_000_000;

fn queue_json(state: &AppState, limit: Option<usize>) -> Value {
    let t = state.hub.status.borrow().t;
    state.view.borrow().to_json(t, limit)
}

async fn get_queue(
    State(state): State<AppState>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    known_keys(&q, &["limit"])?;
    let limit = parse_q::<usize>(&q, "limit", "a whole number of runs ≥ 0")?;
    if let Some(n) = limit.filter(|&n| n > MAX_QUEUE_LISTING) {
        return Err(ApiError::bad_request(
            Some("limit"),
            format!("limit ({n}) must be at most {MAX_QUEUE_LISTING}"),
        ));
    }
    ok(queue_json(&state, limit))
}

async fn put_queue(State(state): State<AppState>, Body(body): Body) -> ApiResult {
    let v = json_body(&body)?;
    let obj = object_with(&v, &["order", "paused", "on_failure"])?;
    let order = match obj.get("order") {
        None => None,
        Some(o) => Some(
            o.as_array()
                .and_then(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<i64>>>())
                .ok_or_else(|| {
                    ApiError::unprocessable("order", "order must be a list of run ids".into())
                })?,
        ),
    };
    let paused = match obj.get("paused") {
        None => None,
        Some(p) => Some(p.as_bool().ok_or_else(|| {
            ApiError::unprocessable("paused", "paused must be true or false".into())
        })?),
    };
    let on_failure = match obj.get("on_failure") {
        None => None,
        Some(f) => Some(f.as_str().and_then(OnFailure::parse).ok_or_else(|| {
            ApiError::unprocessable(
                "on_failure",
                format!("on_failure ({f}) must be \"continue\" or \"stop\""),
            )
        })?),
    };
    ask(&state, |reply| Cmd::Edit {
        order,
        paused,
        on_failure,
        reply,
    })
    .await?;
    ok(queue_json(&state, None))
}

async fn delete_queue_item(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let run = load_run(&state, &id).await?;
    ask(&state, |reply| Cmd::Remove {
        run_id: run.id,
        reply,
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// A schedule entry as the API shows it.
fn schedule_json(e: &run_store::ScheduleEntry) -> Value {
    let mut v = json!({
        "id": e.id, "run_at": e.run_at, "recurrence": e.recurrence, "priority": e.priority,
        "next_run_at": e.next_run_at, "state": e.state, "last_run_id": e.last_run_id,
        "created_at": e.created_at,
    });
    if let Some(body) = e.body.as_object() {
        for (k, b) in body {
            v[k] = b.clone();
        }
    }
    v
}

async fn get_schedule(State(state): State<AppState>) -> ApiResult {
    let list: Vec<Value> = state
        .view
        .borrow()
        .schedule
        .iter()
        .map(schedule_json)
        .collect();
    ok(json!(list))
}

async fn post_schedule(State(state): State<AppState>, Body(body): Body) -> ApiResult {
    let v = json_body(&body)?;
    let obj = object_with(
        &v,
        &["run_at", "recurrence", "priority", "spec", "batch", "sweep"],
    )?;
    let bodies = ["spec", "batch", "sweep"]
        .iter()
        .filter(|k| obj.contains_key(**k))
        .count();
    if bodies != 1 {
        return Err(ApiError::unprocessable(
            "spec",
            "give exactly one of \"spec\", \"batch\" or \"sweep\"".into(),
        ));
    }
    let run_at = match obj.get("run_at") {
        None | Some(Value::Null) => format_time(chrono::Utc::now()),
        Some(t) => {
            let text = t.as_str().unwrap_or_default();
            let parsed = parse_time(text).ok_or_else(|| {
                ApiError::unprocessable(
                    "run_at",
                    format!("run_at ({t}) must be an RFC 3339 time, e.g. 2026-11-23T02:00:00Z"),
                )
            })?;
            format_time(parsed)
        }
    };
    let recurrence = match obj.get("recurrence") {
        None | Some(Value::Null) => None,
        Some(Value::String(r)) if r == "nightly" || r == "weekly" => Some(r.clone()),
        Some(r) => {
            return Err(ApiError::unprocessable(
                "recurrence",
                format!("recurrence ({r}) must be null, \"nightly\" or \"weekly\""),
            ));
        }
    };
    let priority = match obj.get("priority") {
        None | Some(Value::Null) => 0,
        Some(p) => p
            .as_i64()
            .filter(|p| (-1000..=1000).contains(p))
            .ok_or_else(|| {
                ApiError::unprocessable(
                    "priority",
                    format!("priority ({p}) must be an integer within -1000..=1000"),
                )
            })?,
    };
    let mut entry_body = serde_json::Map::new();
    for k in ["spec", "batch", "sweep"] {
        if let Some(b) = obj.get(k) {
            entry_body.insert(k.into(), b.clone());
        }
    }
    let entry_body = Value::Object(entry_body);
    let (doc, loaded) = (entry_body.clone(), state.loaded.clone());
    state
        .pool
        .run(move || validate(&doc, &loaded).map_err(ApiError::from))
        .await?;
    let entry = ask(&state, |reply| Cmd::AddSchedule {
        body: entry_body,
        run_at,
        recurrence,
        priority,
        reply,
    })
    .await?;
    created(schedule_json(&entry))
}

async fn delete_schedule(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let id = id_of(&id, "id", "schedule entry")?;
    ask(&state, |reply| Cmd::DeleteSchedule { id, reply }).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn models(State(state): State<AppState>) -> ApiResult {
    ok(friction::units::catalogue_in(state.loaded.config.geometry))
}

async fn parameter_sets(
    State(state): State<AppState>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult {
    let q = query(q)?;
    known_keys(&q, &["model"])?;
    let sets = state
        .store
        .parameter_sets(q.get("model").map(String::as_str))
        .await
        .map_err(ApiError::store)?;
    ok(serde_json::to_value(sets).map_err(|e| ApiError::from_anyhow(e.into()))?)
}

async fn parameter_set(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let id = id_of(&id, "id", "parameter set")?;
    let set = state
        .store
        .parameter_set(id)
        .await
        .map_err(ApiError::store)?;
    ok(serde_json::to_value(set).map_err(|e| ApiError::from_anyhow(e.into()))?)
}

/// Runs `bench ARGS --db DB --json` (the CLI's own fit or comparison, which stores its result
/// in the same database); exit 0 → its JSON, else 422 with its message.
fn str_field<'a>(obj: &'a serde_json::Map<String, Value>, key: &str) -> Result<&'a str, ApiError> {
    obj.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && !s.starts_with('-'))
        .ok_or_else(|| ApiError::unprocessable(key, format!("{key} must be a non-empty string")))
}

/// The body as a JSON object whose keys are all in `known` (422 naming the first unknown one).
fn object_with<'a>(
    v: &'a Value,
    known: &[&str],
) -> Result<&'a serde_json::Map<String, Value>, ApiError> {
    let obj = v
        .as_object()
        .ok_or_else(|| ApiError::unprocessable("body", "the body must be a JSON object".into()))?;
    if let Some(k) = obj.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ApiError::unprocessable(
            k,
            format!("unknown field '{k}' (known: {})", known.join(", ")),
        ));
    }
    Ok(obj)
}

/// The keys of a `POST /api/fits` body.
const FIT_KEYS: &[&str] = &[
    "model",
    "procedure",
    "run",
    "given",
    "name",
    "segments",
    "t_range",
    "timeout_s",
];

/// The keys of a `POST /api/comparisons` body.
const COMPARE_KEYS: &[&str] = &[
    "estimate",
    "validate",
    "models",
    "replay",
    "max_iters",
    "timeout_s",
];

async fn fits(State(state): State<AppState>, Body(body): Body) -> ApiResult {
    let v = json_body(&body)?;
    let obj = object_with(&v, FIT_KEYS)?;
    let model = str_field(obj, "model")?;
    let procedure = str_field(obj, "procedure")?;
    let run = obj
        .get("run")
        .and_then(Value::as_i64)
        .ok_or_else(|| ApiError::unprocessable("run", "run must be a run id".into()))?;
    state.store.run(run).await.map_err(ApiError::store)?;
    let mut args: Vec<String> = vec![
        "fit".into(),
        "--model".into(),
        model.into(),
        "--procedure".into(),
        procedure.into(),
        "--run".into(),
        run.to_string(),
    ];
    match obj.get("given") {
        None | Some(Value::Null) => {}
        Some(g @ Value::Object(_)) => args.extend(["--given".into(), g.to_string()]),
        Some(_) => {
            return Err(ApiError::unprocessable(
                "given",
                "given must be an object".into(),
            ));
        }
    }
    for (k, flag) in [
        ("name", "--name"),
        ("segments", "--segments"),
        ("t_range", "--t-range"),
    ] {
        if obj.get(k).is_some_and(|v| !v.is_null()) {
            args.extend([flag.into(), str_field(obj, k)?.into()]);
        }
    }
    let timeout = timeout_s(obj)?;
    let (report, id) = super::fitting::run(&state, args, FIT_KEYS, timeout).await?;
    created(json!({"parameter_set_id": report["parameter_set_id"], "fit_id": id, "report": report}))
}

/// A body's `timeout_s`: seconds > 0 up to a day; the default when absent.
fn timeout_s(obj: &serde_json::Map<String, Value>) -> Result<f64, ApiError> {
    use super::fitting::{DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S};
    match obj.get("timeout_s") {
        None | Some(Value::Null) => Ok(DEFAULT_TIMEOUT_S),
        Some(t) => t
            .as_f64()
            .filter(|t| t.is_finite() && *t > 0.0 && *t <= MAX_TIMEOUT_S)
            .ok_or_else(|| {
                ApiError::unprocessable(
                    "timeout_s",
                    format!("timeout_s must be a number of seconds > 0 and <= {MAX_TIMEOUT_S}"),
                )
            }),
    }
}

/// `GET /api/fits`: the fits and comparisons in progress.
async fn fits_running(State(state): State<AppState>) -> ApiResult {
    ok(json!({"fits": state.fits.list()}))
}

/// `DELETE /api/fits/{id}`: stops a fit or comparison at its next iteration; it stores
/// nothing and its request answers 409.
async fn cancel_fit(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let id: u64 = id
        .parse()
        .map_err(|_| ApiError::unprocessable("id", format!("id '{id}' must be a fit id")))?;
    if state.fits.cancel(id) {
        ok(json!({"cancelled": id}))
    } else {
        Err(ApiError::new(
            StatusCode::NOT_FOUND,
            None,
            format!("no fit or comparison {id} in progress (GET /api/fits lists them)"),
        ))
    }
}

async fn comparisons(State(state): State<AppState>, Body(body): Body) -> ApiResult {
    let v = json_body(&body)?;
    let obj = object_with(&v, COMPARE_KEYS)?;
    let mut args: Vec<String> = vec!["compare".into()];
    for key in ["estimate", "validate"] {
        let ids = obj
            .get(key)
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .and_then(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<i64>>>())
            .ok_or_else(|| {
                ApiError::unprocessable(key, format!("{key} must be a list of run ids"))
            })?;
        for id in &ids {
            state.store.run(*id).await.map_err(ApiError::store)?;
        }
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        args.extend([format!("--{key}"), list.join(",")]);
    }
    let models = obj
        .get("models")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .and_then(|a| a.iter().map(Value::as_str).collect::<Option<Vec<&str>>>())
        .filter(|m| {
            m.iter()
                .all(|s| !s.is_empty() && !s.contains(',') && !s.starts_with('-'))
        })
        .ok_or_else(|| {
            ApiError::unprocessable(
                "models",
                "models must be a list of model ids (ID, ID=p1+p2 or ID=none)".into(),
            )
        })?;
    args.extend(["--models".into(), models.join(",")]);
    if let Some(r) = obj.get("replay") {
        let r = r
            .as_str()
            .filter(|r| *r == "velocity" || *r == "torque")
            .ok_or_else(|| {
                ApiError::unprocessable(
                    "replay",
                    "replay must be \"velocity\" or \"torque\"".into(),
                )
            })?;
        args.extend(["--replay".into(), r.into()]);
    }
    if let Some(n) = obj.get("max_iters") {
        let n = n.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
            ApiError::unprocessable("max_iters", "max_iters must be an integer >= 1".into())
        })?;
        args.extend(["--max-iters".into(), n.to_string()]);
    }
    // `timeout_s` limits each model's fit, as `bench compare --timeout-s`; the comparison
    // as a whole gets that much per model.
    let per_fit = timeout_s(obj)?;
    if obj.get("timeout_s").is_some_and(|t| !t.is_null()) {
        args.extend(["--timeout-s".into(), per_fit.to_string()]);
    }
    let whole = (per_fit * models.len() as f64).min(super::fitting::MAX_TIMEOUT_S);
    let (mut table, id) = super::fitting::run(&state, args, COMPARE_KEYS, whole).await?;
    table["fit_id"] = json!(id);
    created(table)
}

async fn openapi() -> ApiResult {
    ok(super::openapi::document())
}
