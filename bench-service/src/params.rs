//! Parameter sets: `GET /api/parameter-sets` (newest first, of one model) and one set.

use super::error::{ApiError, ApiResult};
use super::extract::{Query, SetId};
use super::schema::{Record, Records};
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::Json;
use axum::extract::State;
use serde::Deserialize;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/parameter-sets",
            get_with(list, |op| op.summary("Parameter sets, newest first")),
        )
        .api_route(
            "/api/parameter-sets/{id}",
            get_with(get, |op| op.summary("One parameter set")),
        )
}

/// Which sets.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SetsQuery {
    /// Only this model's sets.
    model: Option<String>,
}

fn json(v: impl serde::Serialize) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::from_anyhow(e.into()))
}

async fn list(
    State(state): State<AppState>,
    Query(q): Query<SetsQuery>,
) -> ApiResult<Json<Records>> {
    let sets = state
        .store
        .parameter_sets(q.model.as_deref())
        .await
        .map_err(ApiError::store)?;
    Ok(Json(Records(json(sets)?)))
}

async fn get(State(state): State<AppState>, SetId(id): SetId) -> ApiResult<Json<Record>> {
    let set = state
        .store
        .parameter_set(id)
        .await
        .map_err(ApiError::store)?;
    Ok(Json(Record(json(set)?)))
}
