//! `POST /api/campaigns` (operator): a characterisation campaign started on the daemon's bench.
//! The daemon owns the bench through its queue, so each step's run is enqueued like any run
//! (ahead of the waiting ones) and the campaign waits for its end: the e-stop, the live stream,
//! the run pages, the audit and the limits apply to the steps as to every run.

use super::super::body::Json;
use super::super::error::{Answer, ApiError, ApiResult, Created};
use super::super::scheduler::Cmd;
use super::super::scheduler::clock::parse_time;
use super::super::state::{AppState, CampaignSlot};
use crate::characterise::{
    self, AbortedBeforeStart, BenchHandle, DEFAULT_MODELS, Request, StepEnd, StepFuture, StepRunner,
};
use crate::control::StopReason;
use crate::session::Checked;
use axum::extract::State;
use run_store::{RunStatus, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Queue priority of a campaign's steps: ahead of the runs users queue.
pub const STEP_PRIORITY: i64 = 1_000_000;

/// The budget when none is given \[min\] (as `bench characterise`).
const DEFAULT_BUDGET_MIN: f64 = 20.0;

/// How often a waiting step's run is read back.
const POLL: Duration = Duration::from_millis(200);

/// The body of `POST /api/campaigns`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct StartCampaign {
    /// Models to fit and compare (default all four).
    #[schemars(length(min = 1))]
    models: Option<Vec<CampaignModel>>,
    /// Bench time the campaign may use \[min\] (default 20, at most 1440): a step that would
    /// run past it is not started.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 1440))]
    budget_min: Option<f64>,
}

/// A model a campaign fits in the documented order ([`characterise::KNOWN_MODELS`]).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CampaignModel {
    CoulombViscous,
    StribeckExp,
    Lugre,
    Gms,
}

impl CampaignModel {
    fn id(self) -> &'static str {
        match self {
            CampaignModel::CoulombViscous => "coulomb_viscous",
            CampaignModel::StribeckExp => "stribeck_exp",
            CampaignModel::Lugre => "lugre",
            CampaignModel::Gms => "gms",
        }
    }
}

/// The campaign started.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Started {
    /// The campaign (`GET /api/campaigns/{id}`).
    id: i64,
    /// `running`.
    status: &'static str,
    /// The most bench time it uses \[min\]; its steps are designed from what the ones
    /// before them measured, so the real figure is known as it goes.
    budget_min: f64,
}

/// `POST /api/campaigns`.
pub(super) async fn start(
    State(state): State<AppState>,
    Json(body): Json<StartCampaign>,
) -> ApiResult<Created<Started>> {
    let request = Request {
        models: match body.models {
            Some(ms) => ms.iter().map(|m| m.id().to_string()).collect(),
            None => DEFAULT_MODELS.map(String::from).to_vec(),
        },
        budget_min: body.budget_min.unwrap_or(DEFAULT_BUDGET_MIN),
        truth: None,
    };
    request
        .check()
        .map_err(|e| ApiError::bad_request(Some(e.field), e.to_string()))?;
    refuse_if_not_ready(&state)?;
    reserve(&state.campaign)?;
    let id = match create(&state, &request).await {
        Ok(id) => id,
        Err(e) => {
            set(&state.campaign, None);
            return Err(e);
        }
    };
    set(&state.campaign, Some(id));
    spawn(state, id);
    Ok(Answer(Started {
        id,
        status: "running",
        budget_min: request.budget_min,
    }))
}

/// Takes the daemon's one campaign slot (while the record is created, it holds [`STARTING`]).
fn reserve(slot: &CampaignSlot) -> Result<(), ApiError> {
    let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
    match *slot {
        Some(STARTING) => Err(ApiError::conflict("a campaign is being started".into())),
        Some(id) => Err(ApiError::conflict(format!("campaign {id} is running"))),
        None => {
            *slot = Some(STARTING);
            Ok(())
        }
    }
}

fn set(slot: &CampaignSlot, to: Option<i64>) {
    *slot.lock().unwrap_or_else(PoisonError::into_inner) = to;
}

/// The slot's value while a campaign's record is being created.
const STARTING: i64 = -1;

/// A campaign starts only on a bench that would start a run now.
fn refuse_if_not_ready(state: &AppState) -> Result<(), ApiError> {
    let view = state.view.borrow();
    if view.estop || state.interlock.is_latched() {
        return Err(ApiError::conflict(
            "the e-stop is latched: reset it first (POST /api/estop/reset)".into(),
        ));
    }
    if view.paused {
        return Err(ApiError::conflict(
            "the queue is paused: resume it first (PUT /api/queue {\"paused\": false})".into(),
        ));
    }
    Ok(())
}

async fn create(state: &AppState, request: &Request) -> Result<i64, ApiError> {
    let (req, bench) = (to_value(request)?, to_value(&state.loaded.config)?);
    state
        .store
        .create_campaign(&req, &bench, env!("CARGO_PKG_VERSION"))
        .await
        .map_err(ApiError::store)
}

fn to_value(v: &impl Serialize) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::from_anyhow(e.into()))
}

/// Runs campaign `id` to its end in the background; the slot is freed when it ends.
fn spawn(state: AppState, id: i64) {
    tokio::spawn(async move {
        let runner = QueueRunner {
            cmd: state.cmd.clone(),
            current: Mutex::new((false, None)),
        };
        let bench = BenchHandle::with_runner((*state.loaded).clone(), Box::new(runner));
        let done = characterise::run(&state.store, &bench, id, state.db_path.clone()).await;
        match done {
            Ok(c) => tracing::info!("campaign {id}: {}", c.status.as_str()),
            Err(e) => tracing::warn!("campaign {id}: {e:#}"),
        }
        set(&state.campaign, None);
    });
}

/// Steps run by the daemon's queue, which owns the bench.
#[derive(Debug)]
struct QueueRunner {
    cmd: mpsc::Sender<Cmd>,
    /// Aborted (no further step starts), and the step's run on the bench.
    current: Mutex<(bool, Option<i64>)>,
}

impl QueueRunner {
    async fn run(&self, store: &Store, checked: Checked) -> anyhow::Result<StepEnd> {
        if self.lock().0 {
            return Err(AbortedBeforeStart.into());
        }
        let (reply, answer) = oneshot::channel();
        let enqueue = Cmd::Enqueue {
            checked: Box::new(checked),
            priority: STEP_PRIORITY,
            now: false,
            reply,
        };
        let gone = || anyhow::anyhow!("the daemon is shutting down");
        self.cmd.send(enqueue).await.map_err(|_| gone())?;
        let run_id = answer.await.map_err(|_| gone())??.id;
        self.lock().1 = Some(run_id);
        let run = loop {
            let run = store.run(run_id).await?;
            if run.status.is_final() {
                break run;
            }
            tokio::time::sleep(POLL).await;
        };
        self.lock().1 = None;
        let completed = run.status == RunStatus::Completed;
        Ok(StepEnd {
            run_id,
            status: run.status,
            analysis_error: (completed && run.results.is_none())
                .then(|| "the run stored no results".to_string()),
            results: run.results,
            elapsed_s: seconds_between(run.started_at.as_deref(), run.finished_at.as_deref()),
            reason: run.status_reason,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (bool, Option<i64>)> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl StepRunner for QueueRunner {
    fn execute<'a>(&'a self, store: &'a Store, checked: Checked) -> StepFuture<'a> {
        Box::pin(self.run(store, checked))
    }

    fn abort(&self, _reason: StopReason) {
        let mut cur = self.lock();
        cur.0 = true;
        if let Some(run_id) = cur.1 {
            let (reply, _) = oneshot::channel();
            let _ = self.cmd.try_send(Cmd::Abort { run_id, reply });
        }
    }
}

/// Seconds from `start` to `end` (RFC 3339), 0 when either is missing.
fn seconds_between(start: Option<&str>, end: Option<&str>) -> f64 {
    match (start.and_then(parse_time), end.and_then(parse_time)) {
        (Some(a), Some(b)) => (b - a).num_milliseconds() as f64 / 1e3,
        _ => 0.0,
    }
}
