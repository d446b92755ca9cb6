//! The schedule: entries added and deleted, and each due entry fired in turn — its specs
//! checked again, or its campaign started (`campaign.rs`), off this task; then its runs
//! enqueued with its priority — the entry moved on (nightly, weekly) or closed (done, failed),
//! with why it could not (`last_error`).

use super::campaign::{CampaignStarter, fire_campaign};
use super::clock::{format_time, next_occurrence, parse_time};
use super::cmd::Recurrence;
use super::plans::ScheduleBody;
use super::waiting::create_runs;
use super::{Scheduler, SchedulerError};
use crate::pool::Pool;
use bench_daemon::config::Loaded;
use bench_daemon::session::Checked;
use chrono::{DateTime, Utc};
use run_store::{Fired, Reason, ReasonCode, RunStatus, ScheduleEntry, Store};
use std::sync::Arc;

/// How far in the past a new entry's `run_at` may lie without `start_if_past`: a form filled
/// in a minute ago, a clock a little behind. Further back is a mistake (a wrong year, a.m. for
/// p.m.) that would start moving the bench the moment it is accepted.
pub const PAST_GRACE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

impl Scheduler {
    /// Refuses a first time `run_at` more than [`PAST_GRACE`] before now unless the request
    /// says `start_if_past`.
    pub(super) fn refuse_past(
        &self,
        run_at: &str,
        start_if_past: bool,
    ) -> Result<(), SchedulerError> {
        let now = self.clock.now();
        let Some(at) = parse_time(run_at) else {
            return Err(SchedulerError::invalid(
                "run_at",
                format!("run_at ({run_at:?}) must be an RFC 3339 time"),
            ));
        };
        if start_if_past || at >= now - PAST_GRACE {
            return Ok(());
        }
        Err(SchedulerError::invalid(
            "run_at",
            format!(
                "run_at ({run_at}) is {} before now ({}): an entry that far in the past would \
                 start moving the bench at once. Give a time to come, or \"start_if_past\": true \
                 to start it now",
                ago(now - at),
                format_time(now)
            ),
        ))
    }

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

    /// Starts firing the first schedule entry that is due and not firing yet; returns whether
    /// more are (they fire on the next turns, after the commands waiting meanwhile). Its specs
    /// are checked again, or its campaign started, off this task ([`prepare`]): the scheduler
    /// answers every command meanwhile, however long a sweep of a thousand values takes to
    /// plan on a loaded PC. [`Scheduler::fired`] takes the result.
    pub(super) fn fire_due(&mut self) -> bool {
        let now = self.clock.now();
        let mut due = self
            .schedule
            .iter()
            .filter(|e| e.state == "pending" && !self.firing.contains(&e.id))
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
        self.firing.insert(first.id);
        let job = prepare(
            first,
            now,
            Firer {
                store: self.store.clone(),
                loaded: self.loaded.clone(),
                pool: self.pool.clone(),
                campaigns: self.campaigns.clone(),
            },
        );
        let back = self.firings.0.clone();
        tokio::spawn(async move {
            let _ = back.send(job.await);
        });
        more
    }

    /// An entry's firing came back: its runs queued (unless it was deleted meanwhile), the
    /// entry moved on (or marked done or failed).
    pub(super) async fn fired(&mut self, firing: Firing) {
        let Firing {
            entry: e,
            now,
            what,
        } = firing;
        self.firing.remove(&e.id);
        if !self.schedule.iter().any(|x| x.id == e.id) {
            tracing::info!("schedule {}: deleted while it fired; nothing queued", e.id);
            if let Prepared::Runs(Ok(runs)) = what {
                let why = format!("schedule entry {} was deleted as it fired", e.id);
                let reason = Reason::new(ReasonCode::RemovedFromQueue, why);
                for (id, _) in runs {
                    let _ = self
                        .store
                        .finish_run(id, RunStatus::Aborted, Some(&reason))
                        .await;
                }
            }
            return;
        }
        let fired = match what {
            Prepared::Runs(Ok(runs)) => self.enqueue_runs(&e, runs).await,
            Prepared::Runs(Err(err)) => {
                tracing::warn!("schedule {}: {}", e.id, err);
                Fired {
                    error: Some(err),
                    ..Fired::default()
                }
            }
            Prepared::Campaign(fired) => fired,
        };
        let rule = Recurrence::parse(e.recurrence.as_deref());
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
        self.reload_schedule().await;
    }

    /// Queues the runs created for entry `e`.
    async fn enqueue_runs(&mut self, e: &ScheduleEntry, runs: Vec<(i64, Checked)>) -> Fired {
        let (last, errors) = self.enqueue_created(runs, e.priority).await;
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

/// `d` in the largest whole unit that says it (days, hours, minutes or seconds).
fn ago(d: chrono::TimeDelta) -> String {
    let s = d.num_seconds();
    match s {
        s if s >= 2 * 86_400 => format!("{} days", s / 86_400),
        s if s >= 2 * 3600 => format!("{} hours", s / 3600),
        s if s >= 120 => format!("{} minutes", s / 60),
        s => format!("{s} s"),
    }
}

/// A due entry, fired off the scheduler's task, and what came of it.
#[derive(Debug)]
pub(super) struct Firing {
    entry: ScheduleEntry,
    /// The scheduler's time when it fired.
    now: DateTime<Utc>,
    what: Prepared,
}

/// What firing an entry off the task gave.
#[derive(Debug)]
enum Prepared {
    /// Its runs, their specs checked again and their records created (or why not).
    Runs(Result<Vec<(i64, Checked)>, String>),
    /// Its campaign started, or why it did not.
    Campaign(Fired),
}

/// What firing entry `e` needs, off the scheduler's task: its specs checked again on the pool
/// (waiting for a worker however long) and its runs created, or its campaign started.
pub(super) struct Firer {
    pub store: Store,
    pub loaded: Arc<Loaded>,
    pub pool: Pool,
    pub campaigns: Option<Arc<dyn CampaignStarter>>,
}

async fn prepare(e: ScheduleEntry, now: DateTime<Utc>, with: Firer) -> Firing {
    let Firer {
        store,
        loaded,
        pool,
        campaigns,
    } = with;
    let what = match ScheduleBody::from_stored(&e.body) {
        Ok(ScheduleBody::Campaign(c)) => Prepared::Campaign(fire_campaign(&e, &c, campaigns).await),
        Ok(body) => {
            let checking = loaded.clone();
            match pool.run_waiting(move || body.expand(&checking)).await {
                Ok(specs) => {
                    let by = format!(
                        "queued by schedule entry {} ({})",
                        e.id,
                        e.recurrence.as_deref().unwrap_or("once")
                    );
                    Prepared::Runs(create_runs(&store, &loaded, specs, &by).await)
                }
                Err(err) => Prepared::Runs(Err(err.to_string())),
            }
        }
        Err(m) => Prepared::Runs(Err(SchedulerError::invalid("body", m).to_string())),
    };
    Firing {
        entry: e,
        now,
        what,
    }
}
