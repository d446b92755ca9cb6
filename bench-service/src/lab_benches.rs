//! `GET /api/lab/benches`: the fleet. Every bench the store knows, by its heartbeat (`[lab]`
//! in its bench.toml), its pushed runs or both: state, the running run and its progress, the
//! last stop reason, the last heartbeat and push, and whether it went quiet (stale). A lab
//! server (`bench serve --lab`) answers for every bench that reports to it; a bench answers
//! from its own store.

use super::error::{ApiError, ApiResult};
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::Json;
use axum::extract::State;
use run_store::FleetBench;
use serde::Serialize;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/lab/benches",
        get_with(benches, |op| {
            op.summary("Every bench known to the store (a heartbeat or pushed runs): its state, running run and progress, last stop reason, last heartbeat and push; stale after 3 missed heartbeats")
        }),
    )
}

/// `GET /api/lab/benches`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Fleet {
    /// One row per bench, by `bench_id`.
    pub benches: Vec<FleetBench>,
}

async fn benches(State(state): State<AppState>) -> ApiResult<Json<Fleet>> {
    let benches = state.store.fleet().await.map_err(ApiError::store)?;
    Ok(Json(Fleet { benches }))
}
