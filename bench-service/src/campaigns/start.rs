//! `POST /api/campaigns` (operator): a characterisation campaign started on the daemon's bench.
//! The daemon owns the bench through its queue, so each step's run is enqueued like any run
//! (ahead of the waiting ones) and the campaign waits for its end: the e-stop, the live stream,
//! the run pages, the audit and the limits apply to the steps as to every run.

use super::super::body::Json;
use super::super::error::{Answer, ApiError, ApiResult, Created};
use super::super::scheduler::clock::parse_time;
use super::super::scheduler::{CampaignStarter, Cmd, StartFuture};
use super::super::state::{AppState, ask};
use axum::extract::State;
use bench_daemon::control::StopReason;
use bench_daemon::session::Checked;
use campaign::{
    AbortedBeforeStart, BenchHandle, Request, StartCampaign, StepEnd, StepFuture, StepRunner,
};
use run_store::{RunStatus, Store};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Queue priority of a campaign's steps: ahead of the runs users queue.
pub const STEP_PRIORITY: i64 = 1_000_000;

/// How often a waiting step's run is read back.
const POLL: Duration = Duration::from_millis(200);

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
    let (id, request) = begin(&state, &body).await?;
    Ok(Answer(Started {
        id,
        status: "running",
        budget_min: request.budget_min,
    }))
}

/// Starts the campaign `body` asks for on the daemon's bench, as `POST /api/campaigns` and a
/// due schedule entry both do: refused (nothing created) when the body breaks a rule, a
/// campaign is running, the e-stop is latched or the queue paused.
pub async fn begin(state: &AppState, body: &StartCampaign) -> Result<(i64, Request), ApiError> {
    let request = body
        .request()
        .map_err(|e| ApiError::bad_request(Some(e.field), e.to_string()))?;
    refuse_if_not_ready(state)?;
    ask(state, |reply| Cmd::CampaignReserve { reply }).await?;
    let id = match create(state, &request).await {
        Ok(id) => id,
        Err(e) => {
            let _ = state.cmd.send(Cmd::CampaignEnded).await;
            return Err(e);
        }
    };
    let runner = Arc::new(QueueRunner {
        cmd: state.cmd.clone(),
        current: Mutex::new((false, None)),
    });
    let named = Cmd::CampaignStarted {
        id,
        runner: runner.clone(),
    };
    let _ = state.cmd.send(named).await;
    spawn(state.clone(), id, runner);
    Ok((id, request))
}

/// Due `{"campaign"}` schedule entries start their campaign through `begin`, as
/// `POST /api/campaigns` does.
#[derive(Debug)]
pub struct Scheduled(pub AppState);

impl CampaignStarter for Scheduled {
    fn start<'a>(&'a self, body: &'a StartCampaign) -> StartFuture<'a> {
        Box::pin(async move {
            begin(&self.0, body)
                .await
                .map(|(id, _)| id)
                .map_err(|e| e.error)
        })
    }
}

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
fn spawn(state: AppState, id: i64, runner: Arc<QueueRunner>) {
    tokio::spawn(async move {
        let bench = BenchHandle::with_runner((*state.loaded).clone(), Box::new(runner));
        let done = campaign::run(&state.store, &bench, id, state.db_path.clone()).await;
        match done {
            Ok(c) => tracing::info!("campaign {id}: {}", c.status.as_str()),
            Err(e) => tracing::warn!("campaign {id}: {e:#}"),
        }
        let _ = state.cmd.send(Cmd::CampaignEnded).await;
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
        let aborted = {
            let mut cur = self.lock();
            cur.1 = Some(run_id);
            cur.0
        };
        if aborted {
            // Stopped while the step was being queued: it goes (no further step starts).
            self.abort_run(run_id);
        }
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

    /// Aborts run `run_id` as `POST /api/runs/{id}/abort` does (a waiting one is dequeued).
    fn abort_run(&self, run_id: i64) {
        let (reply, _) = oneshot::channel();
        if self.cmd.try_send(Cmd::Abort { run_id, reply }).is_err() {
            tracing::error!("run {run_id}: the abort could not reach the scheduler");
        }
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
        let run = {
            let mut cur = self.lock();
            cur.0 = true;
            cur.1
        };
        if let Some(run_id) = run {
            self.abort_run(run_id);
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
