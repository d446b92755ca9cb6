//! The queue: `GET /api/queue` (the waiting runs with their ETAs), `PUT /api/queue` (reorder,
//! pause or resume, failure policy, all checked before any applies) and
//! `DELETE /api/queue/{id}` (a waiting run removed).

use super::body::Json;
use super::error::{ApiError, ApiResult, errors};
use super::extract::{Query, RunId};
use super::scheduler::{Cmd, OnFailure, QueueListing};
use super::state::{AppState, ask};
use aide::axum::ApiRouter;
use aide::axum::routing::{delete_with, get_with};
use axum::extract::State;
use axum::response::NoContent;
use serde::Deserialize;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/queue",
            get_with(get, |op| op.summary("The queue with ETAs")).put_with(put, |op| {
                let op = op.summary("Reorder (a permutation of the waiting run ids), pause/resume, failure policy; all checked before any is applied");
                errors(op, &[(409, "Resuming while the e-stop is latched")])
            }),
        )
        .api_route(
            "/api/queue/{id}",
            delete_with(remove, |op| {
                let op = op.summary("Remove a waiting run (status aborted, reason \"removed from the queue\")");
                errors(op, &[(409, "The run is running or finished")])
            }),
        )
}

/// Most waiting runs one `GET /api/queue?limit=` asks for.
pub const MAX_QUEUE_LISTING: usize = 1_000_000;

/// How much of the queue to list.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueueQuery {
    /// List only the first runs (the count and the ETA cover them all).
    #[schemars(range(max = 1_000_000))]
    limit: Option<usize>,
}

/// The queue as listed, the running run's time taken from the live status.
pub fn listing(state: &AppState, limit: Option<usize>) -> QueueListing {
    let t = state.hub.status.borrow().t;
    state.view.borrow().listing(t, limit)
}

async fn get(
    State(state): State<AppState>,
    Query(q): Query<QueueQuery>,
) -> ApiResult<axum::Json<QueueListing>> {
    if let Some(n) = q.limit.filter(|&n| n > MAX_QUEUE_LISTING) {
        return Err(ApiError::bad_request(
            Some("limit"),
            format!("limit ({n}) must be at most {MAX_QUEUE_LISTING}"),
        ));
    }
    Ok(axum::Json(listing(&state, q.limit)))
}

/// Edits of the queue, applied together once all are checked.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Edit {
    /// New order: every waiting run id exactly once.
    order: Option<Vec<i64>>,
    /// Pause (nothing new starts) or resume.
    paused: Option<bool>,
    /// What the queue does when a run fails.
    on_failure: Option<OnFailure>,
}

async fn put(
    State(state): State<AppState>,
    Json(edit): Json<Edit>,
) -> ApiResult<axum::Json<QueueListing>> {
    ask(&state, |reply| Cmd::Edit {
        order: edit.order,
        paused: edit.paused,
        on_failure: edit.on_failure,
        reply,
    })
    .await?;
    Ok(axum::Json(listing(&state, None)))
}

async fn remove(State(state): State<AppState>, RunId(id): RunId) -> ApiResult<NoContent> {
    let run = state.store.run(id).await.map_err(ApiError::store)?;
    ask(&state, |reply| Cmd::Remove {
        run_id: run.id,
        reply,
    })
    .await?;
    Ok(NoContent)
}
