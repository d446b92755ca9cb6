//! `GET /api/runs/{id}/diff?with=B`: what changed on the bench between two runs, as `bench runs
//! diff A B --json` prints it: the run page's "Compare with…".

use super::super::error::{ApiError, ApiResult};
use super::super::extract::{Query, RunId};
use super::super::schema::Record;
use super::super::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;

/// The run to compare with.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DiffQuery {
    /// Its id.
    with: i64,
}

/// `GET /api/runs/{id}/diff?with=B`: `{"a", "b", "differences": [{"what", "a", "b"}],
/// "profiles": [{"device", "a", "b"}]}`.
pub(super) async fn diff(
    State(state): State<AppState>,
    id: RunId,
    Query(q): Query<DiffQuery>,
) -> ApiResult<Json<Record>> {
    let a = super::load(&state, id).await?;
    let b = state.store.run(q.with).await.map_err(|e| match e {
        run_store::Error::RunNotFound { .. } => {
            ApiError::new(StatusCode::NOT_FOUND, Some("with"), e.to_string())
        }
        e => ApiError::store(e),
    })?;
    let d = run_store::diff_runs(&a, &b);
    Ok(Json(Record(super::to_value(d)?)))
}
