//! The schedule: entries added and deleted, and each due entry fired in turn — its specs
//! checked again off this task and enqueued with its priority, or its campaign started
//! (`campaign.rs`) — the entry moved on (nightly, weekly) or closed (done, failed), with why it
//! could not (`last_error`).

use super::clock::{format_time, next_occurrence, parse_time};
use super::cmd::Recurrence;
use super::plans::ScheduleBody;
use super::{Scheduler, SchedulerError};
use chrono::{DateTime, Utc};
use run_store::{Fired, ScheduleEntry};

impl Scheduler {
    /// Adds an entry (its specs checked by the caller).
    pub(super) async fn add_schedule(
        &mut self,
        body: &ScheduleBody,
        run_at: &str,
        recurrence: Option<Recurrence>,
        priority: i64,
    ) -> Result<ScheduleEntry, SchedulerError> {
        let rule = recurrence.map(Recurrence::as_str);
        let entry = self
            .store
            .add_schedule(&body.stored(), run_at, rule, priority)
            .await?;
        self.reload_schedule().await;
        Ok(entry)
    }

    /// Deletes entry `id`.
    pub(super) async fn delete_schedule(&mut self, id: i64) -> Result<(), SchedulerError> {
        if !self.store.delete_schedule(id).await? {
            return Err(SchedulerError::NotFound {
                field: "id",
                message: format!("schedule entry {id} not found"),
            });
        }
        self.reload_schedule().await;
        Ok(())
    }

    /// Fires the first schedule entry that is due; returns whether more are (they fire on the
    /// next turns, after the commands waiting meanwhile: a hundred due sweeps of a thousand
    /// runs each do not keep a start or an abort waiting).
    pub(super) async fn fire_due(&mut self) -> bool {
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

    /// Enqueues the runs of schedule entry `e` (or starts its campaign) and moves it on (or
    /// marks it done or failed).
    async fn fire(&mut self, e: ScheduleEntry, now: DateTime<Utc>) {
        let fired = match ScheduleBody::from_stored(&e.body) {
            Ok(ScheduleBody::Campaign(c)) => self.fire_campaign(&e, &c).await,
            _ => self.fire_runs(&e).await,
        };
        let rule = match e.recurrence.as_deref() {
            Some("nightly") => Some(Recurrence::Nightly),
            Some("weekly") => Some(Recurrence::Weekly),
            _ => None,
        };
        let (state, next) = match rule {
            Some(rule) => {
                let due = e.next_run_at.as_deref().and_then(parse_time).unwrap_or(now);
                (
                    "pending",
                    Some(format_time(next_occurrence(due, now, rule))),
                )
            }
            None if fired.error.is_some() => ("failed", None),
            None => ("done", None),
        };
        if let Err(err) = self
            .store
            .update_schedule(e.id, state, next.as_deref(), &fired)
            .await
        {
            tracing::error!("schedule {}: {err}", e.id);
        }
    }

    /// Enqueues the runs of entry `e`, its specs checked again off this task.
    async fn fire_runs(&mut self, e: &ScheduleEntry) -> Fired {
        let (body, loaded) = (e.body.clone(), self.loaded.clone());
        let expand = move || {
            let body =
                ScheduleBody::from_stored(&body).map_err(|m| SchedulerError::invalid("body", m))?;
            body.expand(&loaded)
        };
        let specs = match self.pool.run_waiting(expand).await {
            Ok(specs) => specs,
            Err(err) => {
                tracing::warn!("schedule {}: {}", e.id, err);
                return Fired {
                    error: Some(err.to_string()),
                    ..Fired::default()
                };
            }
        };
        let by = format!(
            "queued by schedule entry {} ({})",
            e.id,
            e.recurrence.as_deref().unwrap_or("once")
        );
        let (last, errors) = self.enqueue_all(specs, e.priority, &by).await;
        for err in &errors {
            tracing::warn!("schedule {}: {err}", e.id);
        }
        Fired {
            run_id: last,
            campaign_id: None,
            error: (!errors.is_empty()).then(|| {
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
        }
    }

    async fn reload_schedule(&mut self) {
        match self.store.schedules().await {
            Ok(s) => self.schedule = s,
            Err(e) => tracing::error!("reading the schedule: {e}"),
        }
        self.changed();
    }
}
