//! The scheduler task: it alone owns the run queue, the schedule and the e-stop latch, persists
//! them in the run store (migration 0003) at every change, and starts the runs one at a time.
//! HTTP handlers send it a [`Cmd`] with a oneshot reply; it publishes a [`QueueView`] on a
//! `watch` channel and a `queue`/`run` event on every change. It takes typed requests and
//! gives typed answers: it knows nothing of HTTP.
//!
//! Queue order: a new run goes after every waiting run of the same or higher priority (FIFO
//! within a priority); `PUT /api/queue {"order"}` sets the order explicitly. When the bench is
//! free, not paused and the e-stop not latched, the first item starts.
//!
//! Schedule entries fire at `next_run_at` (RFC 3339 UTC): their specs are checked again
//! against the limits (off this task: it never waits on the plan-check pool) and enqueued with
//! the entry's priority; a `nightly` entry then moves
//! one day on, a `weekly` one seven, a one-off one becomes `done`. A `campaign` entry starts its
//! characterisation campaign through the [`CampaignStarter`] it is given (as
//! `POST /api/campaigns` does); when one cannot start, the entry keeps why (`last_error`).
//!
//! - [`cmd`]: the requests and answers, [`error`] the refusals; [`view`]: what is published;
//! - [`plans`]: specs and schedule bodies checked against the bench;
//! - `waiting.rs`: the queue (enqueue, reorder, remove, settings); [`order`]: its sort keys;
//! - `running.rs`: the run on the bench (start, stop, its end, told as `ended.rs`'s typed
//!   `RunEnd`, never read back from the store); `resuming.rs`: a run's
//!   continuation started;
//! - `timetable.rs`: the schedule firing, `campaign.rs` a campaign entry's; [`clock`]: its
//!   time.

mod campaign;
pub mod clock;
pub mod cmd;
mod ended;
pub mod error;
pub mod order;
pub mod plans;
pub mod resuming;
mod running;
mod timetable;
pub mod view;
mod waiting;

pub use self::campaign::{CampaignStarter, CurrentCampaign, StartFuture};
pub use clock::Clock;
pub use cmd::{Cmd, Enqueued, EnqueuedStatus, Latch, OnFailure, Recurrence, Reply};
pub use error::SchedulerError;
pub use plans::{Planned, ScheduleBody, SpecDoc, Sweep, check_value};
pub use timetable::PAST_GRACE;
pub use view::{EVENT_ITEMS, ItemView, QueueListing, QueueView, RunEvent, RunningView};

use super::hub::Hub;
use super::pool::Pool;
use bench_daemon::config::Loaded;
use bench_daemon::control::{Control, Interlock, StopReason};
use bench_daemon::session::{Checked, Finished};
use run_store::{QueueRow, ReasonCode, RunStatus, ScheduleEntry, Store};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;
use timetable::Firing;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

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
    stops: BTreeMap<ReasonCode, u64>,
    /// The e-stop latch and the running loop's abort, shared with the HTTP layer.
    interlock: Arc<Interlock>,
    /// Where due schedule entries are expanded (off this task).
    pool: Pool,
    /// Where the view goes.
    view: watch::Sender<QueueView>,
    /// What "now" is for the schedule.
    clock: Clock,
    /// Starts the campaigns of due `campaign` entries (none: they are refused when due).
    campaigns: Option<Arc<dyn CampaignStarter>>,
    /// The campaign running on the bench, if any (one at a time).
    campaign: Option<CurrentCampaign>,
    /// Entries firing off this task now.
    firing: BTreeSet<i64>,
    /// Where their firings come back.
    firings: (
        mpsc::UnboundedSender<Firing>,
        mpsc::UnboundedReceiver<Firing>,
    ),
}

enum Wake {
    Cmd(Option<Cmd>),
    Done(Result<anyhow::Result<Finished>, tokio::task::JoinError>),
    Fired(Firing),
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
        let items = waiting::restored_items(&store, &loaded).await?;
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
            stops: BTreeMap::new(),
            interlock,
            pool,
            view,
            clock: Clock::Wall,
            campaigns: None,
            campaign: None,
            firing: BTreeSet::new(),
            firings: mpsc::unbounded_channel(),
        };
        s.persist_whole_queue().await?;
        s.publish();
        Ok((s, rx))
    }

    /// The same scheduler on another clock.
    pub fn with_clock(mut self, clock: Clock) -> Scheduler {
        self.clock = clock;
        self
    }

    /// The same scheduler starting due campaign entries with `starter`.
    pub fn with_campaigns(mut self, starter: Arc<dyn CampaignStarter>) -> Scheduler {
        self.campaigns = Some(starter);
        self
    }

    /// Serves commands until `shutdown` turns true; then aborts the running run and waits for
    /// it to reach its safe state and be closed.
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
                done = running::wait(&mut self.running) => Wake::Done(done),
                cmd = cmds.recv() => Wake::Cmd(cmd),
                Some(fired) = self.firings.1.recv() => Wake::Fired(fired),
                _ = tick.tick() => Wake::Tick,
                () = std::future::ready(()), if more_due => Wake::Tick,
            };
            match wake {
                Wake::Cmd(Some(cmd)) => self.handle(cmd).await,
                Wake::Cmd(None) | Wake::Shutdown => break,
                Wake::Done(done) => self.finished(done).await,
                Wake::Fired(fired) => self.fired(fired).await,
                Wake::Tick => more_due = self.fire_due(),
            }
        }
        if let Some(r) = &self.running {
            r.control.abort(StopReason::DaemonShutdown);
            let done = running::wait(&mut self.running).await;
            self.finished(done).await;
        }
        // Entries firing now end as they would have: their runs queued (a restart finds them
        // waiting, paused if it was unclean) and the entries moved on, never fired twice.
        while !self.firing.is_empty() {
            match self.firings.1.recv().await {
                Some(fired) => self.fired(fired).await,
                None => break,
            }
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
            Cmd::Resume { checked, by, reply } => {
                let _ = reply.send(self.resume(*checked, &by).await);
            }
            Cmd::Stop { run_id, reply } => {
                let _ = reply.send(self.end(run_id, false).await);
            }
            Cmd::Abort { run_id, reply } => {
                let _ = reply.send(self.end(run_id, true).await);
            }
            Cmd::Remove { run_id, reply } => {
                let _ = reply.send(self.remove_waiting(run_id).await);
            }
            Cmd::EStopLatched { reason } => self.estop_latched(reason).await,
            Cmd::EStopReset { reply } => {
                let _ = reply.send(self.estop_reset().await);
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
                start_if_past,
                reply,
            } => {
                let r = match self.refuse_past(&run_at, start_if_past) {
                    Ok(()) => {
                        self.add_schedule(&body, &run_at, recurrence, priority)
                            .await
                    }
                    Err(e) => Err(e),
                };
                let _ = reply.send(r);
            }
            Cmd::DeleteSchedule { id, reply } => {
                let _ = reply.send(self.delete_schedule(id).await);
            }
            Cmd::CampaignReserve { reply } => {
                let _ = reply.send(self.reserve_campaign());
            }
            Cmd::CampaignStarted { id, runner } => {
                self.campaign = Some(CurrentCampaign {
                    id: Some(id),
                    runner: Some(runner),
                });
            }
            Cmd::CampaignEnded => self.campaign = None,
            Cmd::CampaignCurrent { reply } => {
                let _ = reply.send(Ok(self.campaign.clone()));
            }
        }
    }

    /// Takes the campaign slot (while the record is created, its id is `None`).
    fn reserve_campaign(&mut self) -> Result<(), SchedulerError> {
        match &self.campaign {
            Some(CurrentCampaign { id: None, .. }) => Err(SchedulerError::Conflict(
                "a campaign is being started".into(),
            )),
            Some(CurrentCampaign { id: Some(id), .. }) => Err(SchedulerError::Conflict(format!(
                "campaign {id} is running"
            ))),
            None => {
                self.campaign = Some(CurrentCampaign {
                    id: None,
                    runner: None,
                });
                Ok(())
            }
        }
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
        let listing = self.view.borrow().listing(t, Some(EVENT_ITEMS));
        self.hub.event("queue", &listing);
    }

    /// Sends a `run` event: run `run_id` is now `status`.
    fn run_event(&self, run_id: i64, status: RunStatus) {
        self.hub.event("run", &RunEvent { run_id, status });
    }
}

#[cfg(test)]
mod tests;
