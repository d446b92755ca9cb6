//! `POST /api/campaigns/{id}/stop` (operator): the running campaign's step run aborted as
//! `POST /api/runs/{id}/abort` does (the drive to its confirmed safe state; a step still
//! waiting is dequeued), no further step started, the campaign ended `stopped`. The answer
//! comes once the campaign has ended, so it shows the stopped campaign.

use super::super::error::{ApiError, ApiResult};
use super::super::extract::CampaignId;
use super::super::scheduler::{Cmd, CurrentCampaign};
use super::super::schema::Record;
use super::super::state::{AppState, ask};
use axum::Json;
use axum::extract::State;
use bench_daemon::control::StopReason;
use run_store::CampaignStatus;
use std::time::{Duration, Instant};

/// How long the answer waits for the campaign to end (its step's safe state is a matter of
/// milliseconds; fits in progress finish first, within seconds).
const WAIT: Duration = Duration::from_secs(30);

/// How often the campaign is read back meanwhile.
const POLL: Duration = Duration::from_millis(50);

/// `POST /api/campaigns/{id}/stop`.
pub(super) async fn stop(
    State(state): State<AppState>,
    CampaignId(id): CampaignId,
) -> ApiResult<Json<Record>> {
    let c = state.store.campaign(id).await.map_err(ApiError::store)?;
    if c.status != CampaignStatus::Running {
        return Err(ApiError::conflict(format!(
            "campaign {id} is {}: only a running campaign can be stopped",
            c.status
        )));
    }
    let current = ask(&state, |reply| Cmd::CampaignCurrent { reply }).await?;
    match current {
        Some(CurrentCampaign {
            id: Some(running),
            runner: Some(runner),
        }) if running == id => {
            let why = format!("campaign {id} stopped (POST /api/campaigns/{id}/stop)");
            runner.abort(StopReason::OperatorAbort(why));
        }
        _ => {
            return Err(ApiError::conflict(format!(
                "campaign {id} is running, but not on this daemon (bench characterise in \
                 another process): stop it there (Ctrl-C)"
            )));
        }
    }
    let t0 = Instant::now();
    loop {
        let c = state.store.campaign(id).await.map_err(ApiError::store)?;
        if c.status != CampaignStatus::Running || t0.elapsed() > WAIT {
            let value = serde_json::to_value(c).map_err(|e| ApiError::from_anyhow(e.into()))?;
            return Ok(Json(Record(value)));
        }
        tokio::time::sleep(POLL).await;
    }
}
