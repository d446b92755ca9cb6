//! The queue: runs created and enqueued (one or a schedule entry's many), reordered, removed,
//! paused, and the settings persisted at every change.

use super::order::{fresh_keys, keys_between};
use super::{Enqueued, EnqueuedStatus, Item, OnFailure, Scheduler, SchedulerError};
use bench_daemon::config::Loaded;
use bench_daemon::control::StopReason;
use bench_daemon::session::{self, Checked};
use run_store::{QueueRow, Reason, ReasonCode, RunStatus, Store};

/// The runs left `queued` by the last daemon, in queue order (then oldest first), each checked
/// again: one that no longer passes the bench's limits is marked failed with the reason.
pub(super) async fn restored_items(store: &Store, loaded: &Loaded) -> anyhow::Result<Vec<Item>> {
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
        let checked = session::same_bench(&run.bench_config, loaded)
            .and_then(|()| {
                experiments::Spec::from_value(run.spec.clone()).map_err(|e| e.to_string())
            })
            .and_then(|s| session::check_spec(s, loaded).map_err(|e| e.0));
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
    Ok(items)
}

impl Scheduler {
    /// Refuses a start now while the e-stop is latched or a run is going (`hint`: what to do
    /// instead, after the busy message).
    pub(super) fn free_now(&self, hint: &str) -> Result<(), SchedulerError> {
        if self.estop {
            return Err(SchedulerError::Conflict(
                "the e-stop is latched: POST /api/estop/reset first".into(),
            ));
        }
        match &self.running {
            Some(r) => Err(SchedulerError::Conflict(format!(
                "the bench is busy: run {} is running{hint}",
                r.view.run_id
            ))),
            None => Ok(()),
        }
    }

    pub(super) async fn enqueue(
        &mut self,
        checked: Checked,
        priority: i64,
        now: bool,
    ) -> Result<Enqueued, SchedulerError> {
        if now {
            self.free_now(" (enqueue without start=now)")?;
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
                self.run_event(run_id, RunStatus::Failed);
                self.changed();
                return Err(SchedulerError::Run(e));
            }
            self.changed();
            return Ok(Enqueued {
                id: run_id,
                status: EnqueuedStatus::Running,
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
            status: EnqueuedStatus::Queued,
            position: at + 1,
            eta_s: eta,
        })
    }

    /// Queues runs already created (a schedule entry's, [`create_runs`]) together: one queue
    /// write, one event; returns the last run and the errors met.
    pub(super) async fn enqueue_created(
        &mut self,
        runs: Vec<(i64, Checked)>,
        priority: i64,
    ) -> (Option<i64>, Vec<String>) {
        let last = runs.last().map(|(id, _)| *id);
        let items: Vec<Item> = runs
            .into_iter()
            .map(|(run_id, checked)| Item {
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
        (last, errors)
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
    pub(super) async fn end(&mut self, run_id: i64, abort: bool) -> Result<(), SchedulerError> {
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
        self.run_event(run_id, RunStatus::Aborted);
        self.changed();
        Ok(())
    }

    pub(super) async fn edit(
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

    /// Removes a waiting run (a running one is aborted, not removed).
    pub(super) async fn remove_waiting(&mut self, run_id: i64) -> Result<(), SchedulerError> {
        if self
            .running
            .as_ref()
            .is_some_and(|r| r.view.run_id == run_id)
        {
            return Err(SchedulerError::Conflict(format!(
                "run {run_id} is running, not waiting: use POST /api/runs/{run_id}/abort"
            )));
        }
        if self.items.iter().any(|i| i.run_id == run_id) {
            return self.remove(run_id).await;
        }
        Err(self.not_in_queue(run_id).await)
    }

    /// Numbers the queue afresh and rewrites all of it (at restore and after a reorder).
    pub(super) async fn persist_whole_queue(&mut self) -> Result<(), run_store::Error> {
        let keys = fresh_keys(self.items.len());
        for (item, key) in self.items.iter_mut().zip(keys) {
            item.key = key;
        }
        let rows: Vec<QueueRow> = self.items.iter().map(Item::row).collect();
        self.store.set_queue_rows(&rows).await
    }

    pub(super) async fn persist_settings(&self) -> Result<(), SchedulerError> {
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
}

/// Runs created per store transaction when a schedule entry fires: the store's one write
/// connection is free between them for the recorder, the audit log and every other request
/// (a thousand runs in one transaction held it for over half a second on a quiet PC).
const CREATED_PER_TRANSACTION: usize = 25;

/// Creates a `queued` run for each of `specs` off the scheduler's task, a few per transaction,
/// with who queued them in their logs. All or none: when a part fails, the runs already
/// created are marked failed (`not_started`), so that none waits outside the queue.
pub(super) async fn create_runs(
    store: &Store,
    loaded: &Loaded,
    specs: Vec<Checked>,
    queued_by: &str,
) -> Result<Vec<(i64, Checked)>, String> {
    let mut ids = Vec::with_capacity(specs.len());
    for part in specs.chunks(CREATED_PER_TRANSACTION) {
        let created = async {
            let made = session::create_all(store, loaded, part).await?;
            // Who queued them (a run started later says "started by the queue").
            store.append_note_to_all(&made, queued_by).await?;
            anyhow::Ok(made)
        };
        match created.await {
            Ok(made) => ids.extend(made),
            Err(e) => {
                let why = format!("{e:#}");
                let reason = Reason::new(ReasonCode::NotStarted, format!("not queued: {why}"));
                for &id in &ids {
                    let _ = store.finish_run(id, RunStatus::Failed, Some(&reason)).await;
                }
                return Err(why);
            }
        }
    }
    Ok(ids.into_iter().zip(specs).collect())
}
