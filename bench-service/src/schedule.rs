//! The schedule: `GET /api/schedule`, `POST /api/schedule` (a spec, a batch, a sweep or a
//! characterisation campaign, at a time and every night or week; every spec, or the
//! campaign's request, checked before the entry is kept; a first time in the past refused
//! unless asked for), `POST /api/schedule/check` (what an entry would run, how long and until
//! when, nothing kept) and `DELETE /api/schedule/{id}`.

use super::audit::{Marked, Touched};
use super::body::Json;
use super::error::{Answer, ApiError, ApiResult, Created, errors};
use super::extract::EntryId;
use super::scheduler::PAST_GRACE;
use super::scheduler::clock::{format_time, parse_time};
use super::scheduler::{Cmd, Planned, Recurrence, ScheduleBody, SpecDoc, Sweep};
use super::state::{AppState, ask};
use aide::axum::ApiRouter;
use aide::axum::routing::{delete_with, get_with, post_with};
use axum::extract::State;
use axum::response::NoContent;
use campaign::StartCampaign;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api/schedule",
            get_with(list, |op| op.summary("Schedule entries")).post_with(add, |op| {
                let op = op.summary("Add an entry: at run_at (and every night or week) its specs are enqueued with its priority, or its campaign started as POST /api/campaigns starts one");
                errors(op, &[(503, "No plan-check worker free within 0.5 s")])
            }),
        )
        .api_route(
            "/api/schedule/check",
            post_with(check, |op| {
                let op = op.summary("What an entry would run: its runs, their estimated duration, its start and end, and whether its start is in the past; nothing is kept");
                errors(op, &[(503, "No plan-check worker free within 0.5 s")])
            }),
        )
        .api_route(
            "/api/schedule/{id}",
            delete_with(delete, |op| op.summary("Delete an entry")),
        )
}

/// A new entry: exactly one of `spec`, `batch`, `sweep`, `campaign`. Every spec is checked
/// first (422 names the batch index or sweep value and the field), as is a campaign's request.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewEntry {
    /// First time (RFC 3339; default: now). A time more than 60 s in the past is refused
    /// (422 naming `run_at`): a wrong year or a.m./p.m. would start moving the bench at once.
    #[schemars(extend("format" = "date-time"))]
    run_at: Option<String>,
    /// Accept a `run_at` in the past and fire the entry at once (default false).
    start_if_past: Option<bool>,
    /// Every night or week after, or once (null).
    recurrence: Option<Recurrence>,
    /// Priority of its runs, higher first (default 0).
    #[schemars(range(min = -1000, max = 1000))]
    priority: Option<i64>,
    /// One run.
    spec: Option<SpecDoc>,
    /// One run per spec.
    #[schemars(length(min = 1, max = 1000))]
    batch: Option<Vec<SpecDoc>>,
    /// One run per value of a parameter.
    sweep: Option<Sweep>,
    /// A characterisation campaign (the body of `POST /api/campaigns`), started as that
    /// starts one; when it cannot start (a campaign running, the e-stop latched, the queue
    /// paused) nothing moves and the entry's `last_error` says why.
    campaign: Option<StartCampaign>,
}

impl NewEntry {
    /// Its body, first time (default now) and priority (default 0), each checked.
    fn checked_fields(self) -> Result<(ScheduleBody, DateTime<Utc>, i64), ApiError> {
        let run_at = match &self.run_at {
            None => Utc::now(),
            Some(text) => parse_time(text).ok_or_else(|| {
                ApiError::unprocessable(
                    "run_at",
                    format!(
                        "run_at ({text:?}) must be an RFC 3339 time, e.g. 2026-11-23T02:00:00Z"
                    ),
                )
            })?,
        };
        let priority = self.priority.unwrap_or(0);
        if !(-1000..=1000).contains(&priority) {
            return Err(ApiError::unprocessable(
                "priority",
                format!("priority ({priority}) must be an integer within -1000..=1000"),
            ));
        }
        Ok((self.body()?, run_at, priority))
    }

    /// The one body it gives.
    fn body(self) -> Result<ScheduleBody, ApiError> {
        match (self.spec, self.batch, self.sweep, self.campaign) {
            (Some(s), None, None, None) => Ok(ScheduleBody::Spec(s)),
            (None, Some(b), None, None) => Ok(ScheduleBody::Batch(b)),
            (None, None, Some(s), None) => Ok(ScheduleBody::Sweep(s)),
            (None, None, None, Some(c)) => Ok(ScheduleBody::Campaign(c)),
            _ => Err(ApiError::unprocessable(
                "spec",
                "give exactly one of \"spec\", \"batch\", \"sweep\" or \"campaign\"".into(),
            )),
        }
    }
}

/// A schedule entry.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Entry {
    /// Its id.
    id: i64,
    /// Its first time (RFC 3339 UTC).
    #[schemars(extend("format" = "date-time"))]
    run_at: Option<String>,
    /// `nightly`, `weekly` or once.
    recurrence: Option<Recurrence>,
    /// Priority of its runs.
    priority: i64,
    /// When it fires next (none once done or failed).
    #[schemars(extend("format" = "date-time"))]
    next_run_at: Option<String>,
    /// `pending`, `done` or `failed`.
    state: EntryState,
    /// The last run it enqueued.
    last_run_id: Option<i64>,
    /// The last campaign it started.
    last_campaign_id: Option<i64>,
    /// Why it last could not enqueue its runs or start its campaign (none once it could).
    last_error: Option<String>,
    /// When it was added.
    created_at: String,
    /// Its spec, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    spec: Option<SpecDoc>,
    /// Its batch, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    batch: Option<Vec<SpecDoc>>,
    /// Its sweep, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep: Option<Sweep>,
    /// Its campaign, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    campaign: Option<StartCampaign>,
}

/// Where an entry stands.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum EntryState {
    /// Waits for `next_run_at`.
    Pending,
    /// A one-off that fired.
    Done,
    /// Its specs no longer passed, its runs could not be queued or its campaign could not
    /// start (`last_error` says why).
    Failed,
}

impl Entry {
    fn of(e: &run_store::ScheduleEntry) -> Entry {
        let body = ScheduleBody::from_stored(&e.body).ok();
        let (mut spec, mut batch, mut sweep, mut campaign) = (None, None, None, None);
        match body {
            Some(ScheduleBody::Spec(s)) => spec = Some(s),
            Some(ScheduleBody::Batch(b)) => batch = Some(b),
            Some(ScheduleBody::Sweep(s)) => sweep = Some(s),
            Some(ScheduleBody::Campaign(c)) => campaign = Some(c),
            None => {}
        }
        let recurrence = Recurrence::parse(e.recurrence.as_deref());
        let state = match e.state.as_str() {
            "done" => EntryState::Done,
            "failed" => EntryState::Failed,
            _ => EntryState::Pending,
        };
        Entry {
            id: e.id,
            run_at: e.run_at.clone(),
            recurrence,
            priority: e.priority,
            next_run_at: e.next_run_at.clone(),
            state,
            last_run_id: e.last_run_id,
            last_campaign_id: e.last_campaign_id,
            last_error: e.last_error.clone(),
            created_at: e.created_at.clone(),
            spec,
            batch,
            sweep,
            campaign,
        }
    }
}

/// What an entry would do (`POST /api/schedule/check`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Preview {
    /// Runs it queues each time it fires (0 for a campaign, whose steps are designed as it runs).
    runs: usize,
    /// Their estimated duration together (a campaign: its budget) \[s\].
    estimate_s: f64,
    /// When it first fires (RFC 3339 UTC).
    #[schemars(extend("format" = "date-time"))]
    run_at: String,
    /// When the runs of that first firing would end, started on time (RFC 3339 UTC).
    #[schemars(extend("format" = "date-time"))]
    ends_at: String,
    /// From now to `run_at` \[s\] (negative: in the past).
    starts_in_s: f64,
    /// `run_at` is more than 60 s in the past: `POST /api/schedule` refuses it without
    /// `"start_if_past": true`, and with it the entry fires at once.
    past: bool,
}

/// Checks every spec of `body` off the request threads; what it runs.
async fn planned(state: &AppState, body: &ScheduleBody) -> Result<Planned, ApiError> {
    let (checked, loaded) = (body.clone(), state.loaded.clone());
    state
        .pool
        .run(move || checked.validate(&loaded).map_err(ApiError::from))
        .await
}

async fn check(
    State(state): State<AppState>,
    Json(new): Json<NewEntry>,
) -> ApiResult<axum::Json<Preview>> {
    let (body, run_at, _) = new.checked_fields()?;
    let planned = planned(&state, &body).await?;
    let starts_in = run_at - Utc::now();
    let ends_at = run_at + chrono::Duration::milliseconds((planned.estimate_s * 1e3) as i64);
    Ok(axum::Json(Preview {
        runs: planned.runs,
        estimate_s: planned.estimate_s,
        run_at: format_time(run_at),
        ends_at: format_time(ends_at),
        starts_in_s: starts_in.num_milliseconds() as f64 / 1e3,
        past: starts_in < -PAST_GRACE,
    }))
}

async fn list(State(state): State<AppState>) -> axum::Json<Vec<Entry>> {
    axum::Json(state.view.borrow().schedule.iter().map(Entry::of).collect())
}

async fn add(
    State(state): State<AppState>,
    Json(new): Json<NewEntry>,
) -> ApiResult<Marked<Created<Entry>>> {
    let (recurrence, start_if_past) = (new.recurrence, new.start_if_past.unwrap_or(false));
    let (body, run_at, priority) = new.checked_fields()?;
    planned(&state, &body).await?;
    let run_at = format_time(run_at);
    let entry = ask(&state, |reply| Cmd::AddSchedule {
        body,
        run_at,
        recurrence,
        priority,
        start_if_past,
        reply,
    })
    .await?;
    let entry = Entry::of(&entry);
    let touched = Touched {
        schedule_id: Some(entry.id),
        ..Touched::default()
    };
    Ok(Marked(Answer(entry), touched))
}

async fn delete(State(state): State<AppState>, EntryId(id): EntryId) -> ApiResult<NoContent> {
    ask(&state, |reply| Cmd::DeleteSchedule { id, reply }).await?;
    Ok(NoContent)
}
