//! The scheduler task: it alone owns the run queue, the schedule and the e-stop latch, persists
//! them in the run store (migration 0003) at every change, and starts the runs one at a time.
//! HTTP handlers send it a [`Cmd`] with a oneshot reply; it publishes a [`QueueView`] on a
//! `watch` channel and a `queue`/`run` event on every change.
//!
//! Queue order: a new run goes after every waiting run of the same or higher priority (FIFO
//! within a priority); `PUT /api/queue {"order"}` sets the order explicitly. When the bench is
//! free, not paused and the e-stop not latched, the first item starts.
//!
//! Schedule entries fire at `next_run_at` (RFC 3339 UTC): their specs are checked again
//! against the limits and enqueued with the entry's priority; a `nightly` entry then moves
//! one day on, a `weekly` one seven, a one-off one becomes `done`.

use super::live::{Hub, decimation};
use super::pool::Pool;
use crate::config::Loaded;
use crate::control::{Control, Interlock, StopReason};
use crate::session::{self, Checked, Finished, Watchers};
use chrono::{DateTime, SecondsFormat, Utc};
use run_store::{QueueRow, Reason, ReasonCode, RunStatus, ScheduleEntry, Store};
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// Waiting runs a `queue` event lists (the rest are counted: `GET /api/queue` lists them all).
pub const EVENT_ITEMS: usize = 100;

/// A reply to a command.
pub type Reply<T> = oneshot::Sender<Result<T, SchedulerError>>;

/// Why the scheduler refused a command, in its own terms (the HTTP layer gives each its
/// status code).
#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    /// The command conflicts with the bench's or the queue's state.
    #[error("{0}")]
    Conflict(String),
    /// No such run or schedule entry.
    #[error("{message}")]
    NotFound {
        /// The field naming it.
        field: &'static str,
        /// What was not found.
        message: String,
    },
    /// A field of the command breaks a rule.
    #[error("{message}")]
    Invalid {
        /// The field, dotted.
        field: String,
        /// The rule broken, naming the field and the limit.
        message: String,
    },
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] run_store::Error),
    /// Creating or starting a run failed (input errors among them).
    #[error(transparent)]
    Run(#[from] anyhow::Error),
    /// No worker is free for the work now (try again shortly).
    #[error("{0}")]
    Unavailable(String),
}

impl From<super::pool::PoolError> for SchedulerError {
    fn from(e: super::pool::PoolError) -> SchedulerError {
        match e {
            super::pool::PoolError::Busy(m) => SchedulerError::Unavailable(m),
            super::pool::PoolError::Aborted(m) => SchedulerError::Run(anyhow::anyhow!(m)),
        }
    }
}

impl SchedulerError {
    fn invalid(field: &str, message: String) -> SchedulerError {
        SchedulerError::Invalid {
            field: field.into(),
            message,
        }
    }
}

/// A run created by [`Cmd::Enqueue`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Enqueued {
    /// The run.
    pub id: i64,
    /// `queued` or `running`.
    pub status: &'static str,
    /// 0 = running, 1 = next.
    pub position: usize,
    /// Estimated time until it ends \[s\].
    pub eta_s: f64,
}

/// The e-stop latch and the queue after [`Cmd::EStopReset`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Latch {
    /// Latched.
    pub estop: bool,
    /// The queue is paused.
    pub paused: bool,
}

/// What the queue does when a run fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    /// Start the next item anyway.
    #[default]
    Continue,
    /// Pause the queue.
    Stop,
}

impl OnFailure {
    /// Parses `continue` or `stop`.
    pub fn parse(text: &str) -> Option<OnFailure> {
        match text {
            "continue" => Some(OnFailure::Continue),
            "stop" => Some(OnFailure::Stop),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            OnFailure::Continue => "continue",
            OnFailure::Stop => "stop",
        }
    }
}

/// Requests to the scheduler.
#[derive(Debug)]
pub enum Cmd {
    /// Create a run of a checked spec; `now`: start it at once (409 if the bench is busy or
    /// the e-stop latched), else enqueue it with `priority`.
    Enqueue {
        /// The spec.
        checked: Box<Checked>,
        /// Queue priority (higher first).
        priority: i64,
        /// Start now.
        now: bool,
        /// The run created.
        reply: Reply<Enqueued>,
    },
    /// Finish the current segment, then end (a queued run is removed).
    Stop {
        /// The run.
        run_id: i64,
        /// Done.
        reply: Reply<()>,
    },
    /// Safe state now (a queued run is removed).
    Abort {
        /// The run.
        run_id: i64,
        /// Done.
        reply: Reply<()>,
    },
    /// Remove a waiting run from the queue.
    Remove {
        /// The run.
        run_id: i64,
        /// Done.
        reply: Reply<()>,
    },
    /// The interlock has latched the e-stop (and made the drive safe): persist the latch and
    /// its reason, pause the queue. Fire and forget: the e-stop never waits for the scheduler.
    EStopLatched {
        /// Why (persisted with the latch).
        reason: String,
    },
    /// Clear the e-stop latch (the queue stays paused).
    EStopReset {
        /// The latch and the queue after.
        reply: Reply<Latch>,
    },
    /// Edit the queue: all checked first, then applied together.
    Edit {
        /// New order of the waiting runs (a permutation of them).
        order: Option<Vec<i64>>,
        /// Pause or resume.
        paused: Option<bool>,
        /// The failure policy.
        on_failure: Option<OnFailure>,
        /// Done.
        reply: Reply<()>,
    },
    /// Add a schedule entry (its specs already checked).
    AddSchedule {
        /// `{"spec"}`, `{"batch"}` or `{"sweep"}`.
        body: Value,
        /// First time, RFC 3339 UTC.
        run_at: String,
        /// `nightly`, `weekly` or none.
        recurrence: Option<String>,
        /// Priority of its runs.
        priority: i64,
        /// The entry.
        reply: Reply<ScheduleEntry>,
    },
    /// Delete a schedule entry.
    DeleteSchedule {
        /// Entry id.
        id: i64,
        /// Done.
        reply: Reply<()>,
    },
}

/// The running run as the API shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RunningView {
    /// Run id.
    pub run_id: i64,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Its estimated duration \[s\].
    pub estimate_s: f64,
    /// Lockstep model ids (the columns of the live `outputs`).
    pub models: Vec<String>,
}

/// A waiting run as the API shows it.
#[derive(Clone, Debug, Serialize)]
pub struct ItemView {
    /// Run id.
    pub run_id: i64,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Priority.
    pub priority: i64,
    /// Its estimated duration \[s\].
    pub estimate_s: f64,
}

/// What the scheduler publishes after every change.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueView {
    /// Paused: nothing new starts.
    pub paused: bool,
    /// Failure policy.
    pub on_failure: OnFailure,
    /// The e-stop is latched.
    pub estop: bool,
    /// The running run.
    pub running: Option<RunningView>,
    /// Waiting runs, in order.
    pub items: Vec<ItemView>,
    /// The schedule.
    pub schedule: Vec<ScheduleEntry>,
    /// Whether the devices answered (false after a run failed; true with the in-process sim
    /// or after a run that was not failed).
    pub connected: bool,
    /// Runs this scheduler saw end other than completed, by reason code.
    pub stops: std::collections::BTreeMap<ReasonCode, u64>,
}

impl QueueView {
    /// The `GET /api/queue` answer; `t` is the running run's time \[s\]. `starts_in_s` is the
    /// estimated wait before an item starts (the running run's remaining estimate plus the
    /// estimates of the items before it), `eta_s` the estimated time until it ends. `limit`
    /// lists only the first items (`waiting` counts them all, `truncated` says some are left
    /// out): a queue of 100 000 runs is not sent whole to every live client at every change.
    pub fn to_json(&self, t: f64, limit: Option<usize>) -> Value {
        let mut at = self
            .running
            .as_ref()
            .map_or(0.0, |r| (r.estimate_s - t).max(0.0));
        let shown = limit.unwrap_or(usize::MAX).min(self.items.len());
        let items: Vec<Value> = self.items[..shown]
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let starts = at;
                at += i.estimate_s;
                json!({
                    "run_id": i.run_id, "kind": i.kind, "name": i.name, "priority": i.priority,
                    "position": k + 1, "estimate_s": i.estimate_s, "starts_in_s": starts,
                    "eta_s": at,
                })
            })
            .collect();
        at += self.items[shown..]
            .iter()
            .map(|i| i.estimate_s)
            .sum::<f64>();
        json!({
            "waiting": self.items.len(),
            "truncated": shown < self.items.len(),
            "paused": self.paused,
            "on_failure": self.on_failure,
            "estop": self.estop,
            "running": self.running.as_ref().map(|r| json!({
                "run_id": r.run_id, "kind": r.kind, "name": r.name, "estimate_s": r.estimate_s,
                "remaining_s": (r.estimate_s - t).max(0.0),
            })),
            "items": items,
            "eta_total_s": at,
        })
    }
}

/// A waiting run.
#[derive(Debug)]
struct Item {
    run_id: i64,
    priority: i64,
    /// Its persisted sort key (strictly increasing along the queue).
    key: i64,
    checked: Checked,
}

impl Item {
    fn row(&self) -> QueueRow {
        QueueRow {
            run_id: self.run_id,
            priority: self.priority,
            position: self.key,
        }
    }
}

/// Spacing of the sort keys when the queue is numbered afresh: room for a million runs to be
/// put between two neighbours before the queue has to be rewritten.
const KEY_GAP: i64 = 1 << 20;

/// Sort keys for `count` runs put between the keys `before` and `after` (`None`: the queue's
/// end), or `None` when there is no room and the queue must be numbered afresh.
fn keys_between(before: Option<i64>, after: Option<i64>, count: usize) -> Option<Vec<i64>> {
    let n = i64::try_from(count).ok()?;
    match (before, after) {
        (None, None) => Some((0..n).map(|k| k * KEY_GAP).collect()),
        (Some(a), None) => (1..=n)
            .map(|k| a.checked_add(k.checked_mul(KEY_GAP)?))
            .collect(),
        (None, Some(b)) => (0..n)
            .map(|k| b.checked_sub((n - k).checked_mul(KEY_GAP)?))
            .collect(),
        (Some(a), Some(b)) => {
            let room = i128::from(b) - i128::from(a);
            (room > i128::from(n)).then(|| {
                (1..=n)
                    .map(|k| (i128::from(a) + room * i128::from(k) / i128::from(n + 1)) as i64)
                    .collect()
            })
        }
    }
}

/// The running run.
#[derive(Debug)]
struct Running {
    view: RunningView,
    control: Arc<Control>,
    /// Ended on the operator's request (stop, abort, e-stop): not a failure for `on_failure`.
    requested: bool,
    handle: JoinHandle<anyhow::Result<Finished>>,
}

/// The scheduler task's state (it owns all of it).
#[derive(Debug)]
pub struct Scheduler {
    /// The run store (queue and schedule rows, run records).
    store: Store,
    /// The bench.
    loaded: Arc<Loaded>,
    /// Live channels handed to each run; events go out here.
    hub: Hub,
    /// Waiting runs, in order.
    items: Vec<Item>,
    /// The running run.
    running: Option<Running>,
    paused: bool,
    on_failure: OnFailure,
    estop: bool,
    schedule: Vec<ScheduleEntry>,
    connected: bool,
    /// Runs that ended other than completed, by reason code.
    stops: std::collections::BTreeMap<ReasonCode, u64>,
    /// The e-stop latch and the running loop's abort, shared with the HTTP layer.
    interlock: Arc<Interlock>,
    /// Where due schedule entries are expanded (off this task).
    pool: Pool,
    /// Where the view goes.
    view: watch::Sender<QueueView>,
    /// What "now" is for the schedule.
    clock: Clock,
}

/// The scheduler's time of day: the wall clock, or the wall clock moved on by an offset
/// that tests advance by days (tokio's paused time cannot stand in: the run store's pool
/// timeouts run on tokio's clock and would expire at the first jump).
#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// `Utc::now()`: schedules follow the bench PC's clock.
    #[default]
    Wall,
    /// `Utc::now()` plus an offset in milliseconds, moved by [`Clock::advance`].
    Shifted(Arc<std::sync::atomic::AtomicI64>),
}

impl Clock {
    /// A clock that starts at the wall clock and moves on when told.
    pub fn shifted() -> Clock {
        Clock::Shifted(Arc::default())
    }

    /// Moves a shifted clock on by `d` (the wall clock cannot be moved).
    pub fn advance(&self, d: std::time::Duration) {
        if let Clock::Shifted(ms) = self {
            let d = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
            ms.fetch_add(d, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// The time now.
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Clock::Wall => Utc::now(),
            Clock::Shifted(ms) => {
                Utc::now()
                    + chrono::Duration::milliseconds(ms.load(std::sync::atomic::Ordering::SeqCst))
            }
        }
    }
}

enum Wake {
    Cmd(Option<Cmd>),
    Done(Result<anyhow::Result<Finished>, tokio::task::JoinError>),
    Tick,
    Shutdown,
}

impl Scheduler {
    /// Restores the queue, settings and schedule from the store. Runs left `queued` are
    /// checked again (one that no longer passes the limits is marked failed with the reason).
    pub async fn restore(
        store: Store,
        loaded: Arc<Loaded>,
        hub: Hub,
        connected: bool,
        interlock: Arc<Interlock>,
        pool: Pool,
    ) -> anyhow::Result<(Scheduler, watch::Receiver<QueueView>)> {
        let rows = store.queue_rows().await?;
        let queued = store
            .list_runs(&run_store::RunFilter {
                status: Some(RunStatus::Queued),
                bench: Some(store.bench_scope().to_string()),
                limit: 10_000,
                ..run_store::RunFilter::default()
            })
            .await?;
        // Queue order first, then queued runs missing from it (oldest first).
        let mut order: Vec<QueueRow> = rows
            .iter()
            .filter(|r| queued.runs.iter().any(|q| q.id == r.run_id))
            .copied()
            .collect();
        let mut rest: Vec<i64> = queued
            .runs
            .iter()
            .map(|r| r.id)
            .filter(|id| !rows.iter().any(|r| r.run_id == *id))
            .collect();
        rest.sort_unstable();
        order.extend(rest.into_iter().map(|run_id| QueueRow {
            run_id,
            priority: 0,
            position: 0,
        }));
        let mut items = Vec::new();
        for row in order {
            let run = store.run(row.run_id).await?;
            let checked = session::same_bench(&run.bench_config, &loaded)
                .and_then(|()| {
                    experiments::Spec::from_value(run.spec.clone()).map_err(|e| e.to_string())
                })
                .and_then(|s| session::check_spec(s, &loaded).map_err(|e| e.0));
            match checked {
                Ok(checked) => items.push(Item {
                    run_id: row.run_id,
                    priority: row.priority,
                    key: 0,
                    checked,
                }),
                Err(e) => {
                    let reason = Reason::new(
                        ReasonCode::NotStarted,
                        format!("not restored into the queue: {e}"),
                    );
                    tracing::warn!("run {}: {reason}", row.run_id);
                    store
                        .finish_run(row.run_id, RunStatus::Failed, Some(&reason))
                        .await?;
                }
            }
        }
        let setting = |v: Option<String>| v.as_deref() == Some("true");
        // After an unclean stop the queue comes back paused: nothing moves the bench before an
        // operator has looked at it.
        let paused = setting(store.queue_setting("paused").await?)
            || !store.interrupted_at_open().is_empty();
        let estop = setting(store.queue_setting("estop").await?);
        let on_failure = store
            .queue_setting("on_failure")
            .await?
            .as_deref()
            .and_then(OnFailure::parse)
            .unwrap_or_default();
        let schedule = store.schedules().await?;
        let (view, rx) = watch::channel(QueueView::default());
        let mut s = Scheduler {
            store,
            loaded,
            hub,
            items,
            running: None,
            paused,
            on_failure,
            estop,
            schedule,
            connected,
            stops: Default::default(),
            interlock,
            pool,
            view,
            clock: Clock::Wall,
        };
        s.persist_whole_queue().await?;
        s.publish();
        Ok((s, rx))
    }

    /// Serves commands until `shutdown` turns true; then aborts the running run and waits for
    /// it to reach its safe state and be closed.
    /// The same scheduler on another clock.
    pub fn with_clock(mut self, clock: Clock) -> Scheduler {
        self.clock = clock;
        self
    }

    pub async fn run(mut self, mut cmds: mpsc::Receiver<Cmd>, mut shutdown: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut more_due = false;
        loop {
            if let Err(e) = self.start_next().await {
                tracing::error!("could not start the next run: {e:#}");
            }
            // In this order: the daemon stopping, a run ending and commands come before the
            // schedule's next due entry.
            let wake = tokio::select! {
                biased;
                r = shutdown.wait_for(|s| *s) => { let _ = r; Wake::Shutdown }
                done = wait(&mut self.running) => Wake::Done(done),
                cmd = cmds.recv() => Wake::Cmd(cmd),
                _ = tick.tick() => Wake::Tick,
                () = std::future::ready(()), if more_due => Wake::Tick,
            };
            match wake {
                Wake::Cmd(Some(cmd)) => self.handle(cmd).await,
                Wake::Cmd(None) | Wake::Shutdown => break,
                Wake::Done(done) => self.finished(done).await,
                Wake::Tick => more_due = self.fire_due().await,
            }
        }
        if let Some(r) = &self.running {
            r.control.abort(StopReason::DaemonShutdown);
            let done = wait(&mut self.running).await;
            self.finished(done).await;
        }
    }

    async fn handle(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Enqueue {
                checked,
                priority,
                now,
                reply,
            } => {
                let _ = reply.send(self.enqueue(*checked, priority, now).await);
            }
            Cmd::Stop { run_id, reply } => {
                let r = self.end(run_id, false).await;
                let _ = reply.send(r);
            }
            Cmd::Abort { run_id, reply } => {
                let r = self.end(run_id, true).await;
                let _ = reply.send(r);
            }
            Cmd::Remove { run_id, reply } => {
                let r = if self
                    .running
                    .as_ref()
                    .is_some_and(|r| r.view.run_id == run_id)
                {
                    Err(SchedulerError::Conflict(format!(
                        "run {run_id} is running, not waiting: use POST /api/runs/{run_id}/abort"
                    )))
                } else if self.items.iter().any(|i| i.run_id == run_id) {
                    self.remove(run_id).await
                } else {
                    Err(self.not_in_queue(run_id).await)
                };
                let _ = reply.send(r);
            }
            Cmd::EStopLatched { reason } => {
                self.estop = true;
                self.paused = true;
                if let Some(r) = self.running.as_mut() {
                    r.control.abort(StopReason::EStop(reason.clone()));
                    r.requested = true;
                }
                if let Err(e) = self.persist_settings().await {
                    tracing::error!("persisting the e-stop: {e}");
                }
                if let Err(e) = self.store.set_queue_setting("estop_reason", &reason).await {
                    tracing::error!("persisting the e-stop reason: {e}");
                }
                self.changed();
            }
            Cmd::EStopReset { reply } => {
                self.estop = false;
                self.interlock.reset();
                let r = self.persist_settings().await.map(|()| Latch {
                    estop: false,
                    paused: self.paused,
                });
                self.changed();
                let _ = reply.send(r);
            }
            Cmd::Edit {
                order,
                paused,
                on_failure,
                reply,
            } => {
                let _ = reply.send(self.edit(order, paused, on_failure).await);
            }
            Cmd::AddSchedule {
                body,
                run_at,
                recurrence,
                priority,
                reply,
            } => {
                let r = self
                    .store
                    .add_schedule(&body, &run_at, recurrence.as_deref(), priority)
                    .await
                    .map_err(SchedulerError::Store);
                if r.is_ok() {
                    self.reload_schedule().await;
                }
                let _ = reply.send(r);
            }
            Cmd::DeleteSchedule { id, reply } => {
                let r = match self.store.delete_schedule(id).await {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(SchedulerError::NotFound {
                        field: "id",
                        message: format!("schedule entry {id} not found"),
                    }),
                    Err(e) => Err(SchedulerError::Store(e)),
                };
                if r.is_ok() {
                    self.reload_schedule().await;
                }
                let _ = reply.send(r);
            }
        }
    }

    async fn enqueue(
        &mut self,
        checked: Checked,
        priority: i64,
        now: bool,
    ) -> Result<Enqueued, SchedulerError> {
        if now {
            if self.estop {
                return Err(SchedulerError::Conflict(
                    "the e-stop is latched: POST /api/estop/reset first".into(),
                ));
            }
            if let Some(r) = &self.running {
                return Err(SchedulerError::Conflict(format!(
                    "the bench is busy: run {} is running (enqueue without start=now)",
                    r.view.run_id
                )));
            }
        }
        let run_id = session::create(&self.store, &self.loaded, &checked)
            .await
            .map_err(SchedulerError::Run)?;
        let item = Item {
            run_id,
            priority,
            key: 0,
            checked,
        };
        let estimate = item.checked.plan.estimate_duration();
        if now {
            if let Err(e) = self.start(item).await {
                let reason = Reason::new(ReasonCode::NotStarted, format!("could not start: {e:#}"));
                let _ = self
                    .store
                    .finish_run(run_id, RunStatus::Failed, Some(&reason))
                    .await;
                self.hub
                    .event("run", json!({"run_id": run_id, "status": "failed"}));
                self.changed();
                return Err(SchedulerError::Run(e));
            }
            self.changed();
            return Ok(Enqueued {
                id: run_id,
                status: "running",
                position: 0,
                eta_s: estimate,
            });
        }
        let at = self
            .insert_waiting(vec![item], priority)
            .await
            .map_err(SchedulerError::Store)?;
        self.changed();
        let t = self.hub.status.borrow().t;
        let ahead = self.items[..=at].iter();
        let eta = self
            .running
            .as_ref()
            .map_or(0.0, |r| (r.view.estimate_s - t).max(0.0))
            + ahead
                .map(|i| i.checked.plan.estimate_duration())
                .sum::<f64>();
        Ok(Enqueued {
            id: run_id,
            status: "queued",
            position: at + 1,
            eta_s: eta,
        })
    }

    /// Creates a run for each of `specs` and queues them together (one queue write, one
    /// event); returns the last run created and the errors met.
    async fn enqueue_all(
        &mut self,
        specs: Vec<Checked>,
        priority: i64,
    ) -> (Option<i64>, Vec<String>) {
        let ids = match session::create_all(&self.store, &self.loaded, &specs).await {
            Ok(ids) => ids,
            Err(e) => return (None, vec![format!("{e:#}")]),
        };
        let items: Vec<Item> = ids
            .iter()
            .zip(specs)
            .map(|(&run_id, checked)| Item {
                run_id,
                priority,
                key: 0,
                checked,
            })
            .collect();
        let mut errors = Vec::new();
        if let Err(e) = self.insert_waiting(items, priority).await {
            errors.push(format!("persisting the queue: {e}"));
        }
        self.changed();
        (ids.last().copied(), errors)
    }

    /// Puts `items` (all of `priority`) after every waiting run of the same or higher
    /// priority and persists just them (the whole queue only when it has to be numbered
    /// afresh); returns where the first went.
    async fn insert_waiting(
        &mut self,
        mut items: Vec<Item>,
        priority: i64,
    ) -> Result<usize, run_store::Error> {
        let at = self
            .items
            .iter()
            .position(|i| i.priority < priority)
            .unwrap_or(self.items.len());
        let before = at.checked_sub(1).map(|k| self.items[k].key);
        let after = self.items.get(at).map(|i| i.key);
        let keys = keys_between(before, after, items.len());
        for (item, key) in items.iter_mut().zip(keys.iter().flatten()) {
            item.key = *key;
        }
        let rows: Vec<QueueRow> = items.iter().map(Item::row).collect();
        self.items.splice(at..at, items);
        match keys {
            Some(_) => self.store.add_queue_rows(&rows).await?,
            None => self.persist_whole_queue().await?,
        }
        Ok(at)
    }

    /// Stop (`abort` false) or abort the run `run_id`: running → ask the loop; waiting →
    /// removed from the queue.
    async fn end(&mut self, run_id: i64, abort: bool) -> Result<(), SchedulerError> {
        if let Some(r) = self.running.as_mut().filter(|r| r.view.run_id == run_id) {
            if abort {
                r.control
                    .abort(StopReason::OperatorAbort("abort requested".into()));
            } else {
                r.control
                    .stop(StopReason::OperatorStop("stop requested".into()));
            }
            r.requested = true;
            return Ok(());
        }
        if self.items.iter().any(|i| i.run_id == run_id) {
            return self.remove(run_id).await;
        }
        Err(self.not_in_queue(run_id).await)
    }

    async fn not_in_queue(&self, run_id: i64) -> SchedulerError {
        match self.store.run(run_id).await {
            Ok(run) => SchedulerError::Conflict(format!(
                "run {run_id} is neither running nor waiting (status {})",
                run.status
            )),
            Err(e) => SchedulerError::Store(e),
        }
    }

    async fn remove(&mut self, run_id: i64) -> Result<(), SchedulerError> {
        self.items.retain(|i| i.run_id != run_id);
        self.store
            .remove_queue_row(run_id)
            .await
            .map_err(SchedulerError::Store)?;
        self.store
            .finish_run(
                run_id,
                RunStatus::Aborted,
                Some(&Reason::new(
                    ReasonCode::RemovedFromQueue,
                    "removed from the queue",
                )),
            )
            .await
            .map_err(SchedulerError::Store)?;
        self.hub
            .event("run", json!({"run_id": run_id, "status": "aborted"}));
        self.changed();
        Ok(())
    }

    async fn edit(
        &mut self,
        order: Option<Vec<i64>>,
        paused: Option<bool>,
        on_failure: Option<OnFailure>,
    ) -> Result<(), SchedulerError> {
        if let Some(order) = &order {
            let mut want: Vec<i64> = self.items.iter().map(|i| i.run_id).collect();
            let mut got = order.clone();
            want.sort_unstable();
            got.sort_unstable();
            if want != got {
                return Err(SchedulerError::invalid(
                    "order",
                    format!(
                        "order must list every waiting run exactly once: {want:?} (got {order:?})"
                    ),
                ));
            }
        }
        if paused == Some(false) && self.estop {
            return Err(SchedulerError::Conflict(
                "the e-stop is latched: POST /api/estop/reset before resuming the queue".into(),
            ));
        }
        if let Some(order) = order {
            let mut by_id: std::collections::HashMap<i64, Item> = std::mem::take(&mut self.items)
                .into_iter()
                .map(|i| (i.run_id, i))
                .collect();
            self.items = order.iter().filter_map(|id| by_id.remove(id)).collect();
            self.persist_whole_queue()
                .await
                .map_err(SchedulerError::Store)?;
        }
        if let Some(p) = paused {
            self.paused = p;
        }
        if let Some(f) = on_failure {
            self.on_failure = f;
        }
        self.persist_settings().await?;
        self.changed();
        Ok(())
    }

    async fn start_next(&mut self) -> anyhow::Result<()> {
        if self.running.is_some()
            || self.paused
            || self.estop
            || self.interlock.is_latched()
            || self.items.is_empty()
        {
            return Ok(());
        }
        let item = self.items.remove(0);
        self.store.remove_queue_row(item.run_id).await?;
        let run_id = item.run_id;
        if let Err(e) = self.start(item).await {
            let _ = self
                .store
                .finish_run(
                    run_id,
                    RunStatus::Failed,
                    Some(&Reason::new(ReasonCode::NotStarted, format!("{e:#}"))),
                )
                .await;
            self.hub
                .event("run", json!({"run_id": run_id, "status": "failed"}));
        }
        self.changed();
        Ok(())
    }

    /// Starts `item` on the bench.
    async fn start(&mut self, item: Item) -> anyhow::Result<()> {
        let run = self.store.run(item.run_id).await?;
        let control = Arc::new(Control::new());
        let watchers = Watchers {
            control: control.clone(),
            status: self.hub.status.clone(),
            live: Some((
                self.hub.frames.clone(),
                decimation(item.checked.plan.period_s()),
            )),
            created: None,
        };
        let (store, loaded, checked, id) = (
            self.store.clone(),
            self.loaded.clone(),
            item.checked.clone(),
            item.run_id,
        );
        self.interlock.attach(id, control.clone());
        let handle = tokio::spawn(async move {
            session::execute_run(&store, &loaded, &checked, id, watchers).await
        });
        self.running = Some(Running {
            view: RunningView {
                run_id: item.run_id,
                kind: run.kind,
                name: run.name,
                estimate_s: item.checked.plan.estimate_duration(),
                models: run.models,
            },
            control,
            requested: false,
            handle,
        });
        self.hub
            .event("run", json!({"run_id": item.run_id, "status": "running"}));
        Ok(())
    }

    /// The running run ended.
    async fn finished(&mut self, done: Result<anyhow::Result<Finished>, tokio::task::JoinError>) {
        let Some(r) = self.running.take() else { return };
        let id = r.view.run_id;
        self.interlock.detach(id);
        let status = match done {
            Ok(Ok(f)) => {
                if let Some(s) = f.report.safe_state_s {
                    tracing::info!(
                        "run {id} {}: drive disabled {:.0} µs after the stop decision",
                        f.status,
                        s * 1e6
                    );
                }
                f.status
            }
            Ok(Err(e)) => {
                self.mark_failed(id, Reason::new(ReasonCode::Other, format!("{e:#}")))
                    .await
            }
            Err(e) => {
                let reason = Reason::new(ReasonCode::Panic, format!("the run task ended: {e}"));
                self.mark_failed(id, reason).await
            }
        };
        self.connected = status != RunStatus::Failed;
        let code = self.reason_code(id).await;
        if let Some(c) = code {
            *self.stops.entry(c).or_default() += 1;
        }
        // A drive fault pauses the queue whatever the policy: the next run would meet the
        // latched fault, and only an operator clears it.
        let drive_fault = code == Some(ReasonCode::DriveFault);
        if drive_fault
            || status != RunStatus::Completed && !r.requested && self.on_failure == OnFailure::Stop
        {
            self.paused = true;
            if let Err(e) = self.persist_settings().await {
                tracing::error!("{e}");
            }
        }
        self.hub
            .event("run", json!({"run_id": id, "status": status}));
        self.changed();
    }

    /// The stored code of why run `id` ended (`None`: completed, or unreadable).
    async fn reason_code(&self, id: i64) -> Option<ReasonCode> {
        self.store
            .run(id)
            .await
            .ok()
            .and_then(|run| run.reason_code)
    }

    async fn mark_failed(&self, id: i64, reason: Reason) -> RunStatus {
        tracing::warn!("run {id} failed: {reason}");
        match self.store.run(id).await {
            Ok(run) if run.status.is_final() => run.status,
            _ => {
                let _ = self
                    .store
                    .finish_run(id, RunStatus::Failed, Some(&reason))
                    .await;
                RunStatus::Failed
            }
        }
    }

    /// Fires the schedule entries that are due.
    /// Fires the first schedule entry that is due; returns whether more are (they fire on the
    /// next turns, after the commands waiting meanwhile: a hundred due sweeps of a thousand
    /// runs each do not keep a start or an abort waiting).
    async fn fire_due(&mut self) -> bool {
        let now = self.clock.now();
        let mut due = self
            .schedule
            .iter()
            .filter(|e| e.state == "pending")
            .filter(|e| {
                e.next_run_at
                    .as_deref()
                    .and_then(parse_time)
                    .is_some_and(|t| t <= now)
            });
        let Some(first) = due.next().cloned() else {
            return false;
        };
        let more = due.next().is_some();
        self.fire(first, now).await;
        self.reload_schedule().await;
        more
    }

    /// Enqueues the runs of schedule entry `e` and moves it on (or marks it done or failed).
    async fn fire(&mut self, e: ScheduleEntry, now: DateTime<Utc>) {
        let mut last = None;
        let mut state = "pending";
        let (body, loaded) = (e.body.clone(), self.loaded.clone());
        match self.pool.run_waiting(move || expand(&body, &loaded)).await {
            Ok(specs) => {
                let (last_id, errors) = self.enqueue_all(specs, e.priority).await;
                last = last_id;
                for err in &errors {
                    tracing::warn!("schedule {}: {err}", e.id);
                }
                if !errors.is_empty() {
                    state = "failed";
                }
            }
            Err(err) => {
                tracing::warn!("schedule {}: {}", e.id, err);
                state = "failed";
            }
        }
        let next = match e.recurrence.as_deref() {
            Some(rule) => {
                let due = e.next_run_at.as_deref().and_then(parse_time).unwrap_or(now);
                state = "pending";
                Some(format_time(next_occurrence(due, now, rule)))
            }
            None => {
                if state == "pending" {
                    state = "done";
                }
                None
            }
        };
        if let Err(err) = self
            .store
            .update_schedule(e.id, state, next.as_deref(), last)
            .await
        {
            tracing::error!("schedule {}: {err}", e.id);
        }
    }

    async fn reload_schedule(&mut self) {
        match self.store.schedules().await {
            Ok(s) => self.schedule = s,
            Err(e) => tracing::error!("reading the schedule: {e}"),
        }
        self.changed();
    }

    /// Numbers the queue afresh and rewrites all of it (at restore and after a reorder).
    async fn persist_whole_queue(&mut self) -> Result<(), run_store::Error> {
        for (k, item) in (0..).zip(self.items.iter_mut()) {
            item.key = k * KEY_GAP;
        }
        let rows: Vec<QueueRow> = self.items.iter().map(Item::row).collect();
        self.store.set_queue_rows(&rows).await
    }

    async fn persist_settings(&self) -> Result<(), SchedulerError> {
        for (k, v) in [
            ("paused", self.paused.to_string()),
            ("estop", self.estop.to_string()),
            ("on_failure", self.on_failure.as_str().to_string()),
        ] {
            self.store
                .set_queue_setting(k, &v)
                .await
                .map_err(SchedulerError::Store)?;
        }
        Ok(())
    }

    fn publish(&self) {
        self.view.send_replace(QueueView {
            paused: self.paused,
            on_failure: self.on_failure,
            estop: self.estop,
            running: self.running.as_ref().map(|r| r.view.clone()),
            items: self
                .items
                .iter()
                .map(|i| ItemView {
                    run_id: i.run_id,
                    kind: i.checked.plan.kind.clone(),
                    name: i.checked.plan.name.clone(),
                    priority: i.priority,
                    estimate_s: i.checked.plan.estimate_duration(),
                })
                .collect(),
            schedule: self.schedule.clone(),
            connected: self.connected,
            stops: self.stops.clone(),
        });
    }

    /// Publishes the view and a `queue` event.
    fn changed(&self) {
        self.publish();
        let t = self.hub.status.borrow().t;
        let event = self.view.borrow().to_json(t, Some(EVENT_ITEMS));
        self.hub.event("queue", event);
    }
}

async fn wait(
    running: &mut Option<Running>,
) -> Result<anyhow::Result<Finished>, tokio::task::JoinError> {
    match running {
        Some(r) => (&mut r.handle).await,
        None => std::future::pending().await,
    }
}

/// Parses an RFC 3339 time.
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The first occurrence of a recurring entry after `now`: whole days (`nightly`) or weeks
/// (`weekly`) after the time it was due, so it keeps its time of day and a daemon that was
/// down for days fires once, not once per missed night.
pub fn next_occurrence(due: DateTime<Utc>, now: DateTime<Utc>, rule: &str) -> DateTime<Utc> {
    let step = chrono::Duration::days(if rule == "weekly" { 7 } else { 1 });
    let mut t = due;
    while t <= now {
        t += step;
    }
    t
}

/// RFC 3339 UTC with milliseconds, as the store writes times.
pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The specs of a schedule body, each checked against the limits: `{"spec": S}`,
/// `{"batch": [S, ...]}` or `{"sweep": {"spec": S, "param": PATH, "values": [...]}}`. PATH is
/// dotted with optional indices into the spec document, e.g. `params.velocities`,
/// `params.settle_s` or `params.velocities.to`; each value replaces what is there (missing
/// object keys are created). Errors name the batch index or sweep value and the field.
pub fn expand(body: &Value, loaded: &Loaded) -> Result<Vec<Checked>, SchedulerError> {
    let mut out = Vec::new();
    expand_each(body, loaded, |c| {
        out.push(c);
        Ok(())
    })?;
    Ok(out)
}

/// Checks every spec of a schedule body as [`expand`] does, holding one plan at a time.
pub fn validate(body: &Value, loaded: &Loaded) -> Result<(), SchedulerError> {
    expand_each(body, loaded, |c| {
        drop(c);
        Ok(())
    })
}

/// Calls `each` with every checked spec of a schedule body, in order.
fn expand_each(
    body: &Value,
    loaded: &Loaded,
    mut each: impl FnMut(Checked) -> Result<(), SchedulerError>,
) -> Result<(), SchedulerError> {
    if let Some(spec) = body.get("spec") {
        return each(check_value(spec, loaded, "spec")?);
    }
    if let Some(batch) = body.get("batch") {
        let Some(list) = batch
            .as_array()
            .filter(|l| !l.is_empty() && l.len() <= MAX_EXPANDED)
        else {
            return Err(SchedulerError::invalid(
                "batch",
                format!("batch must be a list of 1 to {MAX_EXPANDED} spec documents"),
            ));
        };
        let mut total = Total::new(loaded, "batch");
        for (k, s) in list.iter().enumerate() {
            each(total.add(check_value(s, loaded, &format!("batch[{k}]"))?)?)?;
        }
        return Ok(());
    }
    if let Some(sweep) = body.get("sweep") {
        let spec = sweep
            .get("spec")
            .ok_or_else(|| SchedulerError::invalid("sweep.spec", "sweep needs a spec".into()))?;
        let param = sweep.get("param").and_then(Value::as_str).ok_or_else(|| {
            SchedulerError::invalid(
                "sweep.param",
                "sweep.param must be a path such as \"params.velocities\"".into(),
            )
        })?;
        let Some(values) = sweep
            .get("values")
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty() && l.len() <= MAX_EXPANDED)
        else {
            return Err(SchedulerError::invalid(
                "sweep.values",
                format!("sweep.values must be a list of 1 to {MAX_EXPANDED} values"),
            ));
        };
        let mut total = Total::new(loaded, "sweep.values");
        for (k, v) in values.iter().enumerate() {
            let mut doc = spec.clone();
            set_path(&mut doc, param, v.clone()).map_err(|e| {
                SchedulerError::invalid("sweep.param", format!("sweep.param {param}: {e}"))
            })?;
            name_by_value(&mut doc, param, v);
            let label = format!("sweep.values[{k}]");
            each(total.add(check_value(&doc, loaded, &label)?)?)?;
        }
        return Ok(());
    }
    Err(SchedulerError::invalid(
        "spec",
        "a schedule entry needs one of \"spec\", \"batch\" or \"sweep\"".into(),
    ))
}

/// Names a sweep's run by its swept value, e.g. "quick sweep (velocities = [0.2])", so that
/// the runs of one sweep can be told apart in every list.
fn name_by_value(doc: &mut Value, param: &str, value: &Value) {
    const SHOWN: usize = 60;
    let Some(obj) = doc.as_object_mut() else {
        return;
    };
    let base = match obj.get("name").and_then(Value::as_str) {
        Some(name) => name.to_string(),
        None => obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("run")
            .to_string(),
    };
    let mut shown = value.to_string();
    if shown.chars().count() > SHOWN {
        shown = shown.chars().take(SHOWN).chain("…".chars()).collect();
    }
    let key = param.rsplit('.').next().unwrap_or(param);
    obj.insert("name".into(), json!(format!("{base} ({key} = {shown})")));
}

/// Most specs a batch or sweep expands to.
pub const MAX_EXPANDED: usize = 1000;

/// How many plans' worth of segments (the bench's per-plan cap) a batch or sweep may hold.
pub const EXPANDED_PLANS: usize = 2;

/// The segments of a batch or sweep together, capped at [`EXPANDED_PLANS`] times the bench's
/// per-plan segment cap: every expanded plan is held at once (and then queued), so the cap on
/// one plan alone would not bound them.
struct Total {
    segments: usize,
    cap: usize,
    field: &'static str,
}

impl Total {
    fn new(loaded: &Loaded, field: &'static str) -> Total {
        Total {
            segments: 0,
            cap: EXPANDED_PLANS * loaded.config.limits.max_plan_segments as usize,
            field,
        }
    }

    fn add(&mut self, checked: Checked) -> Result<Checked, SchedulerError> {
        self.segments += checked.plan.segments.len();
        if self.segments > self.cap {
            return Err(SchedulerError::invalid(
                self.field,
                format!(
                    "{}: the plans together have over {} segments, the cap ({EXPANDED_PLANS} \
                     times limits.max_plan_segments): split the entry",
                    self.field, self.cap
                ),
            ));
        }
        Ok(checked)
    }
}

/// Sets `value` at a dotted path with optional `[i]` indices (`params.velocities[2]`).
pub fn set_path(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, rest) = part.split_once('[').unwrap_or((part, ""));
        if key.is_empty() && rest.is_empty() {
            return Err("empty path segment".into());
        }
        if !key.is_empty() {
            steps.push(Err(key.to_string()));
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let n: usize = idx
                .strip_suffix(']')
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| format!("bad index [{idx}"))?;
            steps.push(Ok(n));
        }
    }
    let mut at = doc;
    for step in steps {
        at = match step {
            Err(key) => {
                if at.is_null() {
                    *at = json!({});
                }
                at.as_object_mut()
                    .ok_or_else(|| format!("{key}: not inside an object"))?
                    .entry(key)
                    .or_insert(Value::Null)
            }
            Ok(n) => at
                .as_array_mut()
                .and_then(|a| a.get_mut(n))
                .ok_or_else(|| format!("index {n} is not in a list"))?,
        };
    }
    *at = value;
    Ok(())
}

/// Checks a spec document against the bench limits; `prefix` (e.g. `batch[2]`) is put before
/// the field in errors. 422 naming the field for a value beyond a limit or breaking a rule.
pub fn check_value(v: &Value, loaded: &Loaded, prefix: &str) -> Result<Checked, SchedulerError> {
    let join = |field: &str| {
        if prefix.is_empty() || prefix == "spec" {
            field.to_string()
        } else {
            format!("{prefix}.{field}")
        }
    };
    let label = |msg: String| {
        if prefix.is_empty() || prefix == "spec" {
            msg
        } else {
            format!("{prefix}: {msg}")
        }
    };
    if !v.is_object() {
        return Err(SchedulerError::invalid(
            if prefix.is_empty() { "spec" } else { prefix },
            label("a spec document must be a JSON object {\"kind\", \"name\", \"params\"}".into()),
        ));
    }
    let spec_err = |e: experiments::Error| {
        let field = match &e {
            experiments::Error::Limit { field, .. } | experiments::Error::Invalid { field, .. } => {
                join(field)
            }
            experiments::Error::Parse(msg) => join(&parse_field(msg)),
            _ => join("spec"),
        };
        SchedulerError::Invalid {
            field,
            message: label(e.to_string()),
        }
    };
    let spec = experiments::Spec::from_value(v.clone()).map_err(spec_err)?;
    spec.plan(&loaded.config.limits).map_err(spec_err)?;
    session::check_spec(spec, loaded).map_err(|e| SchedulerError::Invalid {
        field: join("spec"),
        message: label(e.0),
    })
}

/// The field a spec parse error is about: `kind` for an unknown kind, `params.X` for an
/// unknown parameter, the named field for serde's unknown/missing-field messages, else
/// `params` or `spec`.
fn parse_field(msg: &str) -> String {
    let msg = msg.strip_prefix("spec: ").unwrap_or(msg);
    if msg.starts_with("unknown kind") {
        return "kind".into();
    }
    let (prefix, rest) = match msg.strip_prefix("params: ") {
        Some(rest) => ("params.", rest),
        None => ("", msg),
    };
    let quoted = ["unknown field `", "missing field `"]
        .iter()
        .find_map(|p| rest.split_once(p))
        .and_then(|(_, after)| after.split_once('`'))
        .map(|(name, _)| name);
    match (quoted, prefix) {
        (Some(name), _) => format!("{prefix}{name}"),
        (None, "params.") => "params".into(),
        (None, _) => "spec".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_set_keys_and_indices() {
        let mut doc = json!({"kind": "k", "params": {"v": [1, 2, 3]}});
        set_path(&mut doc, "params.v[1]", json!(9)).unwrap();
        set_path(&mut doc, "params.new.inner", json!(true)).unwrap();
        assert_eq!(doc["params"]["v"], json!([1, 9, 3]));
        assert_eq!(doc["params"]["new"]["inner"], json!(true));
        assert!(set_path(&mut doc, "params.v[7]", json!(0)).is_err());
        assert!(set_path(&mut doc, "kind.x", json!(0)).is_err());
        assert!(set_path(&mut doc, "", json!(0)).is_err());
    }

    #[test]
    fn a_recurring_entry_keeps_its_time_of_day_and_fires_once_after_downtime() {
        let t = |s: &str| parse_time(s).unwrap();
        let due = t("2026-11-20T22:00:00Z");
        // (now, rule, next): fired on time → the next night or week; the daemon was down three
        // nights → one run now and the next one tonight, not one per missed night.
        let cases = [
            (
                "2026-11-20T22:00:00.200Z",
                "nightly",
                "2026-11-21T22:00:00Z",
            ),
            ("2026-11-20T22:00:00.200Z", "weekly", "2026-11-27T22:00:00Z"),
            ("2026-11-23T09:30:00Z", "nightly", "2026-11-23T22:00:00Z"),
            ("2026-11-23T09:30:00Z", "weekly", "2026-11-27T22:00:00Z"),
        ];
        for (now, rule, next) in cases {
            assert_eq!(next_occurrence(due, t(now), rule), t(next), "{now} {rule}");
        }
    }

    #[test]
    fn queue_eta_adds_the_running_remainder() {
        let view = QueueView {
            running: Some(RunningView {
                run_id: 1,
                kind: "k".into(),
                name: "n".into(),
                estimate_s: 10.0,
                models: vec![],
            }),
            items: vec![ItemView {
                run_id: 2,
                kind: "k".into(),
                name: "n".into(),
                priority: 0,
                estimate_s: 5.0,
            }],
            ..QueueView::default()
        };
        let j = view.to_json(4.0, None);
        assert_eq!(j["items"][0]["starts_in_s"], json!(6.0));
        assert_eq!(j["items"][0]["eta_s"], json!(11.0));
        assert_eq!(j["eta_total_s"], json!(11.0));
    }

    #[test]
    fn keys_go_between_their_neighbours_or_ask_for_a_renumbering() {
        use super::{KEY_GAP, keys_between};
        assert_eq!(
            keys_between(None, None, 3),
            Some(vec![0, KEY_GAP, 2 * KEY_GAP])
        );
        assert_eq!(
            keys_between(Some(5), None, 2),
            Some(vec![5 + KEY_GAP, 5 + 2 * KEY_GAP])
        );
        assert_eq!(
            keys_between(None, Some(0), 2),
            Some(vec![-2 * KEY_GAP, -KEY_GAP])
        );
        assert_eq!(keys_between(Some(0), Some(10), 4), Some(vec![2, 4, 6, 8]));
        assert_eq!(keys_between(Some(0), Some(4), 4), None, "no room: renumber");
        assert_eq!(
            keys_between(Some(i64::MAX - 1), None, 1),
            None,
            "overflow: renumber"
        );
    }

    #[test]
    fn a_limited_listing_counts_every_run() {
        let item = |run_id| ItemView {
            run_id,
            kind: "k".into(),
            name: "n".into(),
            priority: 0,
            estimate_s: 2.0,
        };
        let view = QueueView {
            items: (1..=250).map(item).collect(),
            ..QueueView::default()
        };
        let j = view.to_json(0.0, Some(super::EVENT_ITEMS));
        assert_eq!(j["items"].as_array().unwrap().len(), 100);
        assert_eq!(
            (j["waiting"].clone(), j["truncated"].clone()),
            (json!(250), json!(true))
        );
        assert_eq!(j["eta_total_s"], json!(500.0));
        assert_eq!(j["items"][99]["eta_s"], json!(200.0));
    }

    /// The scheduler in-process on a clock the test moves on by days (the scheduler looks at
    /// it every 250 ms).
    mod days {
        use super::*;
        use std::time::Duration;

        const HOUR: Duration = Duration::from_secs(3600);

        struct Fixture {
            _dir: tempfile::TempDir,
            store: Store,
            cmd: mpsc::Sender<Cmd>,
            view: watch::Receiver<QueueView>,
            stop: watch::Sender<bool>,
            task: tokio::task::JoinHandle<()>,
            clock: Clock,
        }

        /// A scheduler over `store` (a new one if none) with no bench connected, its queue
        /// paused: nothing runs, everything is queued.
        async fn start(store: Option<(tempfile::TempDir, Store)>) -> Fixture {
            let (dir, store) = match store {
                Some(s) => s,
                None => {
                    let dir = tempfile::tempdir().unwrap();
                    let store = Store::open(dir.path().join("runs.db")).await.unwrap();
                    (dir, store)
                }
            };
            let loaded = Arc::new(Loaded::sim("127.0.0.1:1"));
            let store = store.for_bench(&loaded.config.bench_id);
            let interlock = Arc::new(Interlock::new(loaded.clone(), false));
            let (s, view) = Scheduler::restore(
                store.clone(),
                loaded,
                Hub::new(),
                false,
                interlock,
                Pool::default(),
            )
            .await
            .unwrap();
            let clock = Clock::shifted();
            let (cmd, rx) = mpsc::channel(16);
            let (stop, stopped) = watch::channel(false);
            let task = tokio::spawn(s.with_clock(clock.clone()).run(rx, stopped));
            let f = Fixture {
                _dir: dir,
                store,
                cmd,
                view,
                stop,
                task,
                clock,
            };
            f.ask(|reply| Cmd::Edit {
                order: None,
                paused: Some(true),
                on_failure: None,
                reply,
            })
            .await
            .unwrap();
            f
        }

        impl Fixture {
            async fn ask<T>(
                &self,
                make: impl FnOnce(Reply<T>) -> Cmd,
            ) -> Result<T, SchedulerError> {
                let (tx, rx) = oneshot::channel();
                self.cmd.send(make(tx)).await.unwrap();
                rx.await.unwrap()
            }

            /// The waiting runs as (run id, priority), in queue order.
            fn queued(&self) -> Vec<(i64, i64)> {
                let view = self.view.borrow();
                view.items.iter().map(|i| (i.run_id, i.priority)).collect()
            }

            async fn runs(&self) -> Vec<i64> {
                let page = self
                    .store
                    .list_runs(&run_store::RunFilter {
                        limit: 1000,
                        ..run_store::RunFilter::default()
                    })
                    .await
                    .unwrap();
                let mut ids: Vec<i64> = page.runs.iter().map(|r| r.id).collect();
                ids.sort_unstable();
                ids
            }

            /// Moves the scheduler's clock on by `d`, then waits (a few ticks) for `n` runs.
            async fn after(&self, d: Duration, n: usize) -> Vec<i64> {
                self.clock.advance(d);
                tokio::time::sleep(Duration::from_millis(600)).await;
                for _ in 0..40 {
                    let runs = self.runs().await;
                    if runs.len() >= n {
                        return runs;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                self.runs().await
            }

            async fn stop(self) -> (tempfile::TempDir, Store) {
                self.stop.send_replace(true);
                self.task.await.unwrap();
                (self._dir, self.store)
            }
        }

        fn sweep() -> Value {
            serde_json::from_str(include_str!(
                "../../../experiments/specs/constant_velocity_sweep.json"
            ))
            .unwrap()
        }

        #[tokio::test]
        async fn a_nightly_entry_queues_its_run_each_night_and_not_before() {
            let f = start(None).await;
            let run_at = format_time(f.clock.now() + chrono::Duration::days(1));
            let entry = f
                .ask(|reply| Cmd::AddSchedule {
                    body: json!({"spec": sweep()}),
                    run_at: run_at.clone(),
                    recurrence: Some("nightly".into()),
                    priority: 5,
                    reply,
                })
                .await
                .unwrap();
            assert_eq!(entry.state, "pending");
            assert_eq!(
                f.after(23 * HOUR, 0).await,
                Vec::<i64>::new(),
                "not before its time"
            );
            let first = f.after(2 * HOUR, 1).await;
            assert_eq!(first.len(), 1, "one run the first night");
            let second = f.after(24 * HOUR, 2).await;
            assert_eq!(second.len(), 2, "one more the next night");
            let view = f.view.borrow().clone();
            assert!(view.paused && view.running.is_none());
            assert_eq!(f.queued(), [(second[0], 5), (second[1], 5)]);
            let entry = &view.schedule[0];
            assert_eq!(entry.state, "pending");
            assert_eq!(entry.last_run_id, Some(second[1]));
            f.stop().await;
        }

        #[tokio::test]
        async fn a_restart_brings_the_queue_back_in_order_and_paused() {
            let f = start(None).await;
            for priority in [1, 9, 5] {
                f.ask(|reply| Cmd::Enqueue {
                    checked: Box::new(
                        crate::session::check_spec(
                            experiments::Spec::from_value(sweep()).unwrap(),
                            &Loaded::sim("127.0.0.1:1"),
                        )
                        .unwrap(),
                    ),
                    priority,
                    now: false,
                    reply,
                })
                .await
                .unwrap();
            }
            let before = f.queued();
            assert_eq!(before.iter().map(|x| x.1).collect::<Vec<_>>(), [9, 5, 1]);
            let store = f.stop().await;
            let g = start(Some(store)).await;
            let after = g.queued();
            assert_eq!(after, before);
            assert!(g.view.borrow().paused);
            g.stop().await;
        }

        #[tokio::test]
        async fn an_entry_whose_spec_no_longer_plans_fails_and_queues_nothing() {
            let f = start(None).await;
            let mut bad = sweep();
            bad["params"]["velocities"] = json!([1.0, 25.0]);
            let entry = f
                .ask(|reply| Cmd::AddSchedule {
                    body: json!({"spec": bad}),
                    run_at: format_time(f.clock.now() + chrono::Duration::hours(1)),
                    recurrence: None,
                    priority: 0,
                    reply,
                })
                .await
                .unwrap();
            f.clock.advance(2 * HOUR);
            let mut state = String::new();
            for _ in 0..40 {
                state = f.store.schedules().await.unwrap()[0].state.clone();
                if state != "pending" {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            assert_eq!((entry.id, state.as_str()), (entry.id, "failed"));
            assert!(f.runs().await.is_empty());
            f.stop().await;
        }
    }
}
