//! `GET /api/trends`: one parameter over many runs with control limits, as `bench trends`
//! prints it (the same filters, [`TrendFilter`]); the dashboard's Trends page reads it. On a
//! lab server it spans every bench that pushes there.

use super::error::{ApiError, ApiResult};
use super::extract::Query;
use super::state::AppState;
use crate::cli::trends::TrendFilter;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::Json;
use axum::extract::State;
use run_store::Trend;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/trends",
        get_with(trend, |op| {
            op.summary("One parameter over many runs: a point per fitted run in time order with its standard error, run and tags; each bench's control limits from a baseline and the points outside them flagged")
        }),
    )
}

async fn trend(
    State(state): State<AppState>,
    Query(filter): Query<TrendFilter>,
) -> ApiResult<Json<Trend>> {
    let trend = state
        .store
        .trend(&filter.query())
        .await
        .map_err(ApiError::store)?;
    Ok(Json(trend))
}
