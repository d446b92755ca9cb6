//! The bench and what it can do: `GET /api/health` (liveness and readiness), `GET /api/bench`
//! (its status, also the live `status` event), `GET /api/models`, `GET /api/experiments/kinds`
//! and `POST /api/experiments/check` (a spec checked against its limits, nothing created).

use super::body::SpecJson;
use super::error::{ApiError, ApiResult, errors};
use super::scheduler::{SpecDoc, check_value};
use super::schema::opaque;
use super::state::AppState;
use super::status::BenchStatus;
use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::json;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/health",
            get_with(health, |op| {
                op.summary("Liveness (it answers) and readiness (`ready`: the bench is connected and no e-stop is latched); never needs the token")
            }),
        )
        .api_route(
            "/api/bench",
            get_with(bench, |op| {
                op.summary("Bench status: source, connection, busy, run, e-stop, limits, live values, lockstep models")
            }),
        )
        .api_route(
            "/api/experiments/kinds",
            get_with(kinds, |op| {
                op.summary("Experiment kinds: description, parameters in declaration order (unit, description, default, JSON type, choices), defaults, the parameters' JSON Schema, and the estimated duration of the defaults on this bench")
            }),
        )
        .api_route(
            "/api/experiments/check",
            post_with(check, |op| {
                errors(op.summary("Check a spec against the bench limits (nothing is created)"), &[(503, "No plan-check worker free within 0.5 s")])
            }),
        )
        .api_route(
            "/api/models",
            get_with(models, |op| {
                op.summary("Friction models with parameter docs, units and defaults")
            }),
        )
}

/// `GET /api/health`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Health {
    /// Always `ok`: the daemon answers.
    pub status: Ok,
    /// The daemon's version.
    pub version: &'static str,
    /// The bench is connected and no e-stop is latched.
    pub ready: bool,
    /// The bench.
    pub bench: HealthBench,
    /// A run is on the bench.
    pub loop_running: bool,
    /// The queue.
    pub queue: HealthQueue,
}

/// `"ok"`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ok {
    /// The daemon answers.
    Ok,
}

/// The bench in [`Health`].
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct HealthBench {
    /// The devices answered.
    pub connected: bool,
    /// The e-stop is latched.
    pub estop: bool,
}

/// The queue in [`Health`].
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct HealthQueue {
    /// Nothing new starts.
    pub paused: bool,
    /// Runs waiting.
    pub waiting: usize,
}

/// Liveness (the daemon answers) and readiness: the bench is connected, no e-stop is
/// latched and the queue may start runs. Cheap: read from the published views.
async fn health(State(state): State<AppState>) -> Json<Health> {
    let view = state.view.borrow();
    let estop = view.estop || state.interlock.is_latched();
    Json(Health {
        status: Ok::Ok,
        version: env!("CARGO_PKG_VERSION"),
        ready: view.connected && !estop,
        bench: HealthBench {
            connected: view.connected,
            estop,
        },
        loop_running: view.running.is_some(),
        queue: HealthQueue {
            paused: view.paused,
            waiting: view.items.len(),
        },
    })
}

async fn bench(State(state): State<AppState>) -> Json<BenchStatus> {
    Json(super::status::status(&state))
}

opaque!(
    /// Every experiment kind with its parameters and the estimated duration of its defaults.
    Kinds,
    {"type": "array", "items": {"type": "object", "properties": {
        "kind": {"type": "string"},
        "description": {"type": "string"},
        "params": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"},
            "unit": {"type": "string", "description": "SI unit, \"\" if none"},
            "description": {"type": "string"},
            "default": {},
            "type": {"description": "JSON Schema type(s) of the value"},
            "choices": {"type": ["array", "null"], "items": {"type": "string"}}}}},
        "defaults": {"type": "object"},
        "schema": {"type": "object", "description": "JSON Schema (2020-12) of the kind's params"},
        "estimate_s": {"type": ["number", "null"]}}}}
);

async fn kinds(State(state): State<AppState>) -> Json<Kinds> {
    let mut cat = experiments::catalogue();
    for k in cat.as_array_mut().into_iter().flatten() {
        let estimate = k["kind"]
            .as_str()
            .and_then(|name| experiments::Spec::from_value(json!({"kind": name})).ok())
            .and_then(|s| s.plan(&state.loaded.config.limits).ok())
            .map(|p| p.estimate_duration());
        k["estimate_s"] = json!(estimate);
    }
    Json(Kinds(cat))
}

/// A spec that passes the bench's limits.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Checked {
    /// Always true.
    pub ok: bool,
    /// Its estimated duration \[s\].
    pub estimate_s: f64,
    /// Its longest duration (every segment to its timeout) \[s\].
    pub max_s: f64,
    /// Its number of segments.
    pub segments: usize,
    /// The spec with every default filled in.
    pub spec: SpecDoc,
}

async fn check(
    State(state): State<AppState>,
    SpecJson(body): SpecJson,
) -> ApiResult<Json<Checked>> {
    let loaded = state.loaded.clone();
    let checked = state
        .pool
        .run(move || -> Result<Checked, ApiError> {
            let c = check_value(&body, &loaded, "")?;
            let plan = &c.plan;
            Ok(Checked {
                ok: true,
                estimate_s: plan.estimate_duration(),
                max_s: plan.max_duration(),
                segments: plan.segments.len(),
                spec: SpecDoc(c.document),
            })
        })
        .await?;
    Ok(Json(checked))
}

opaque!(
    /// Every friction model: id, description, parameters with unit (in the bench's units) and
    /// default.
    Models,
    {"type": "array", "items": {"type": "object"}}
);

async fn models(State(state): State<AppState>) -> Json<Models> {
    Json(Models(friction::units::catalogue_in(
        state.loaded.config.geometry,
    )))
}
