//! Characterisation campaigns (`bench characterise`, [`campaign`]):
//! `POST /api/campaigns` starts one on the daemon's bench (`start.rs`); `GET /api/campaigns`
//! lists them as the run store keeps them (newest first), `GET /api/campaigns/{id}` gives the
//! record (steps with their run ids, fits, comparison, trial, answer, status) and
//! `GET /api/campaigns/{id}/report` the self-contained HTML page `bench report` writes;
//! `POST /api/campaigns/{id}/stop` stops the running one (`stop.rs`). A schedule entry's
//! campaign starts through the same code ([`Scheduled`]). At `bench serve` start, a campaign
//! left `running` by a daemon that stopped is marked `interrupted` ([`mark_interrupted`]).

mod start;
mod stop;

pub use start::{STEP_PRIORITY, Scheduled};

use super::error::errors;
use super::error::{ApiError, ApiResult};
use super::extract::{CampaignId, Query};
use super::schema::{Record, Records};
use super::state::AppState;
use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use axum::Json;
use axum::extract::State;
use axum::response::Html;
use schemars::JsonSchema;
use serde::Deserialize;

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/campaigns",
            get_with(list, |op| {
                op.summary("Characterisation campaigns (bench characterise), newest first")
            })
            .post_with(start::start, |op| {
                let op = op.summary("Start a characterisation campaign on this bench (as bench characterise --config): its steps are runs queued ahead of the waiting ones; it uses at most budget_min of bench time");
                errors(op, &[(409, "A campaign is running, the e-stop is latched or the queue is paused")])
            }),
        )
        .api_route(
            "/api/campaigns/{id}",
            get_with(get, |op| {
                op.summary("One campaign: status, request, steps with their run ids, fits, comparison id, trial run id, answer, reason")
            }),
        )
        .api_route(
            "/api/campaigns/{id}/stop",
            post_with(stop::stop, |op| {
                let op = op.summary("Stop the running campaign: its step's run aborted (the drive to its confirmed safe state), a waiting step dequeued, the campaign ended stopped; answers the campaign once it has ended");
                errors(op, &[(409, "The campaign is not running (its status named), or runs in another process")])
            }),
        )
        .api_route(
            "/api/campaigns/{id}/report",
            get_with(report, |op| {
                op.summary("The campaign's report as one self-contained HTML page (text/html), as bench report writes it")
            }),
        )
}

/// Query of `GET /api/campaigns`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CampaignsQuery {
    /// How many, newest first (1 to 1000, default 50).
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<i64>,
}

async fn list(
    State(state): State<AppState>,
    Query(q): Query<CampaignsQuery>,
) -> ApiResult<Json<Records>> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        let msg = format!("limit ({limit}) must be 1 to 1000");
        return Err(ApiError::bad_request(Some("limit"), msg));
    }
    let list = state
        .store
        .campaigns(limit)
        .await
        .map_err(ApiError::store)?;
    let value = serde_json::to_value(list).map_err(|e| ApiError::from_anyhow(e.into()))?;
    Ok(Json(Records(value)))
}

async fn get(State(state): State<AppState>, CampaignId(id): CampaignId) -> ApiResult<Json<Record>> {
    let c = state.store.campaign(id).await.map_err(ApiError::store)?;
    let value = serde_json::to_value(c).map_err(|e| ApiError::from_anyhow(e.into()))?;
    Ok(Json(Record(value)))
}

async fn report(
    State(state): State<AppState>,
    CampaignId(id): CampaignId,
) -> ApiResult<Html<String>> {
    state.store.campaign(id).await.map_err(ApiError::store)?;
    let g = state.loaded.config.geometry;
    campaign::report_html(&state.store, id, g)
        .await
        .map(Html)
        .map_err(ApiError::from_anyhow)
}

/// Marks `interrupted` the campaigns this bench's daemon was running when it stopped (killed or
/// restarted): nothing runs them any more. Their reason says how to continue; each is logged.
pub async fn mark_interrupted(
    store: &run_store::Store,
    bench_id: &str,
    config: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let config = config.map_or_else(|| "BENCH.toml".into(), |p| p.display().to_string());
    let reason = |id: i64| {
        format!(
            "the daemon stopped while it ran (killed or restarted): `bench characterise --config {config} --resume {id}` continues it from its \
             first unfinished step"
        )
    };
    for id in store.interrupt_running_campaigns(bench_id, reason).await? {
        tracing::warn!("campaign {id}: {}", reason(id));
    }
    Ok(())
}
