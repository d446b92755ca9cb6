//! Notifications (`[[notify]]` in bench.toml): a run's end, the queue pausing, the e-stop
//! latching, told to webhooks and mail relays off the loop and off every request.
//!
//! ```text
//!  scheduler ── broadcast<Event> ──► watcher task (Watch: which events are news; reads the
//!                                     run's reason from the store) ── try_send ──►
//!  one bounded queue and one delivery task per [[notify]] entry ── POST / SMTP, retried with
//!                                     back-off, each attempt appended to the audit log
//! ```
//!
//! Nothing waits on a target: the scheduler's broadcast never blocks (a watcher that falls
//! behind loses events and logs how many), the watcher only `try_send`s (a full queue drops
//! the notice and logs it), and each delivery task has one target, so a dead one delays no
//! other.

mod calibration;
mod notice;
mod smtp;
mod trends;
mod watch;
mod webhook;

pub use notice::{CalibrationNotice, Notice, RunEnd, TrendNotice};
pub use watch::{Trigger, Watch};

use crate::hub::Hub;
use bench_daemon::config::{NotifyConfig, NotifyEvent};
use run_store::{AuditEntry, Store};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch as tokio_watch};

/// Notices waiting per target before new ones are dropped.
pub const QUEUE: usize = 64;
/// The longest one attempt may take (connect, send, answer) \[s\].
pub const ATTEMPT_S: u64 = 10;

/// Starts the watcher and one delivery task per entry (none without entries). `paused` and
/// `estop` are the queue as restored, so that a queue that comes back paused is not news. With
/// watched trends it also starts their watcher, marking what the store holds now as seen.
pub async fn start(
    entries: &[NotifyConfig],
    (bench_id, sensors): (&str, Vec<String>),
    hub: &Hub,
    store: Store,
    (paused, estop): (bool, bool),
    shutdown: tokio_watch::Receiver<bool>,
) {
    if entries.is_empty() {
        return;
    }
    let mut watched = Vec::new();
    let mut due = Vec::new();
    let targets: Vec<_> = entries
        .iter()
        .map(|entry| {
            let (tx, rx) = mpsc::channel(QUEUE);
            let task = Delivery {
                entry: entry.clone(),
                bench_id: bench_id.to_string(),
                store: store.clone(),
            };
            tokio::spawn(stop_with(shutdown.clone(), task.run(rx)));
            if let Some(days) = entry.calibration_due() {
                due.push((days, entry.target(), tx.clone()));
            }
            for t in &entry.trends {
                watched.push((t.clone(), entry.target(), tx.clone()));
            }
            (entry.events.clone(), entry.target(), tx)
        })
        .collect();
    if !watched.is_empty() {
        start_trends(bench_id, hub, store.clone(), watched, shutdown.clone()).await;
    }
    if !due.is_empty() {
        let watcher = calibration::DueWatcher {
            bench_id: bench_id.to_string(),
            sensors,
            store: store.clone(),
            watched: due,
        };
        let events = hub.events.subscribe();
        tokio::spawn(stop_with(shutdown.clone(), watcher.run(events)));
    }
    let watcher = Watcher {
        bench_id: bench_id.to_string(),
        store,
        watch: Watch::new(paused, estop),
        targets,
    };
    tokio::spawn(stop_with(shutdown, watcher.run(hub.events.subscribe())));
}

async fn start_trends(
    bench_id: &str,
    hub: &Hub,
    store: Store,
    watched: Vec<trends::Watched>,
    shutdown: tokio_watch::Receiver<bool>,
) {
    let mark = match store.newest_ids().await {
        Ok(mark) => mark,
        Err(e) => {
            tracing::error!("notifications: trends are not watched (the store: {e})");
            return;
        }
    };
    let watcher = trends::TrendWatcher {
        bench_id: bench_id.to_string(),
        store,
        watched,
        mark,
        told: Default::default(),
    };
    tokio::spawn(stop_with(shutdown, watcher.run(hub.events.subscribe())));
}

/// Runs `task` until it ends or shutdown is signalled (a notice still waiting is dropped).
/// Waits for a watcher's next check: its period's tick, or a run's end; false once the live
/// stream closes.
async fn next_check(
    tick: &mut tokio::time::Interval,
    events: &mut broadcast::Receiver<crate::hub::Event>,
) -> bool {
    loop {
        tokio::select! {
            _ = tick.tick() => return true,
            e = events.recv() => match e {
                Ok(e) if e.name != "run" => continue,
                Err(broadcast::error::RecvError::Closed) => return false,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => return true,
            },
        }
    }
}

async fn stop_with(mut shutdown: tokio_watch::Receiver<bool>, task: impl Future<Output = ()>) {
    tokio::select! {
        () = task => {}
        _ = shutdown.wait_for(|stop| *stop) => {}
    }
}

/// A target's events, its name (for logs) and its queue.
type Target = (Vec<NotifyEvent>, String, mpsc::Sender<Notice>);

/// Turns the scheduler's live events into notices and hands them to the targets that want
/// them.
struct Watcher {
    bench_id: String,
    store: Store,
    watch: Watch,
    targets: Vec<Target>,
}

impl Watcher {
    async fn run(mut self, mut events: broadcast::Receiver<crate::hub::Event>) {
        loop {
            let event = match events.recv().await {
                Ok(e) => e,
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!("notifications: {n} live events missed (the watcher lagged)");
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
            for trigger in self.watch.on_event(event.name, &event.data) {
                let notice = self.notice(trigger).await;
                self.hand_on(notice);
            }
        }
    }

    async fn notice(&self, trigger: Trigger) -> Notice {
        match trigger {
            Trigger::RunEnded(id) => {
                let end = match self.store.run(id).await {
                    Ok(run) => RunEnd {
                        run_id: id,
                        status: Some(run.status),
                        name: Some(run.name),
                        kind: Some(run.kind),
                        reason_code: run.reason_code,
                        reason: run.status_reason,
                    },
                    Err(e) => RunEnd {
                        run_id: id,
                        reason: Some(format!("(the run could not be read: {e})")),
                        ..RunEnd::default()
                    },
                };
                // A run that could not be read is told as failed rather than not at all.
                let failed = RunEnd {
                    status: Some(run_store::RunStatus::Failed),
                    ..end.clone()
                };
                Notice::run_end(&self.bench_id, end.clone())
                    .or_else(|| Notice::run_end(&self.bench_id, failed))
                    .expect("BUG: a failed run is always news")
            }
            Trigger::QueuePaused => Notice::queue_paused(&self.bench_id),
            Trigger::Estop => {
                let reason = self
                    .store
                    .queue_setting("estop_reason")
                    .await
                    .ok()
                    .flatten();
                Notice::estop(&self.bench_id, reason)
            }
        }
    }

    /// Queues `notice` for each target that wants its event, never waiting.
    fn hand_on(&self, notice: Notice) {
        for (events, target, tx) in &self.targets {
            if events.contains(&notice.event) {
                offer(target, tx, notice.clone());
            }
        }
    }
}

/// Queues `notice` for `target` without waiting: a full queue drops it, and says so.
fn offer(target: &str, tx: &mpsc::Sender<Notice>, notice: Notice) {
    if let Err(e) = tx.try_send(notice) {
        let (why, notice) = match e {
            mpsc::error::TrySendError::Full(n) => ("its queue is full", n),
            mpsc::error::TrySendError::Closed(n) => ("its task ended", n),
        };
        tracing::warn!("notification to {target} dropped ({why}): {}", notice.text);
    }
}

/// One target's delivery task: its notices in order, each retried with back-off.
struct Delivery {
    entry: NotifyConfig,
    bench_id: String,
    store: Store,
}

impl Delivery {
    async fn run(self, mut rx: mpsc::Receiver<Notice>) {
        while let Some(notice) = rx.recv().await {
            self.deliver(&notice).await;
        }
    }

    /// Up to `attempts` attempts, `backoff_before(n)` apart; each one audited.
    async fn deliver(&self, notice: &Notice) {
        for n in 1..=self.entry.attempts {
            if n > 1 {
                let wait = self.entry.backoff_before(n);
                tokio::time::sleep(Duration::from_secs_f64(wait)).await;
            }
            let answer =
                match tokio::time::timeout(Duration::from_secs(ATTEMPT_S), self.attempt(notice))
                    .await
                {
                    Ok(answer) => answer,
                    Err(_) => Err((0, format!("no answer within {ATTEMPT_S} s"))),
                };
            self.audit(notice, n, &answer).await;
            match answer {
                Ok(_) => return,
                Err((_, why)) if n == self.entry.attempts => tracing::warn!(
                    "notification {} to {} given up after {n} attempts: {why}",
                    notice.event.as_str(),
                    self.entry.target()
                ),
                Err(_) => {}
            }
        }
    }

    async fn attempt(&self, notice: &Notice) -> webhook::Answer {
        match (&self.entry.url, &self.entry.smtp) {
            (Some(url), _) => {
                let body = serde_json::to_string(notice).map_err(|e| (0, e.to_string()))?;
                webhook::post(url, body).await
            }
            (None, Some(relay)) => smtp::send(relay, notice).await,
            (None, None) => Err((0, "BUG: a [[notify]] entry without a target".into())),
        }
    }

    /// The attempt in the audit log: method `NOTIFY`, the target as its path, the status
    /// answered (HTTP or SMTP; 0 for none), delivered or not, the event and error as detail.
    async fn audit(&self, notice: &Notice, n: u32, answer: &webhook::Answer) {
        let (status, error) = match answer {
            Ok(code) => (*code, None),
            Err((code, why)) => (*code, Some(why.as_str())),
        };
        let detail = serde_json::json!({
            "event": notice.event,
            "attempt": n,
            "attempts": self.entry.attempts,
            "error": error,
        });
        let entry = AuditEntry {
            bench_id: self.bench_id.clone(),
            method: "NOTIFY".into(),
            path: self.entry.target(),
            run_id: notice.run_id,
            status: status.into(),
            allowed: answer.is_ok(),
            detail: Some(detail.to_string()),
            ..AuditEntry::default()
        };
        if let Err(e) = self.store.append_audit(&entry).await {
            tracing::error!("appending notification attempt to the audit log: {e}");
        }
    }
}
