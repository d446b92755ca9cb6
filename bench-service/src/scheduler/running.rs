//! The run on the bench: the next waiting run started when the bench is free, stopped or
//! aborted on request or by the e-stop latch, and its end recorded (a drive fault, or a
//! failure under `on_failure = stop`, pauses the queue).

use super::ended::RunEnd;
use super::{Item, Latch, OnFailure, Running, RunningView, Scheduler, SchedulerError};
use crate::hub::decimation;
use bench_daemon::control::{Control, StopReason};
use bench_daemon::session::{self, Finished, Watchers};
use run_store::{Reason, ReasonCode, RunStatus};
use std::sync::Arc;

impl Scheduler {
    pub(super) async fn start_next(&mut self) -> anyhow::Result<()> {
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
        if let Err(e) = self
            .store
            .append_note(run_id, None, "started by the queue")
            .await
        {
            tracing::warn!("run {run_id}: 'started by the queue' not logged: {e}");
        }
        if let Err(e) = self.start(item).await {
            let _ = self
                .store
                .finish_run(
                    run_id,
                    RunStatus::Failed,
                    Some(&Reason::new(ReasonCode::NotStarted, format!("{e:#}"))),
                )
                .await;
            self.run_event(run_id, RunStatus::Failed);
        }
        self.changed();
        Ok(())
    }

    /// Starts `item` on the bench.
    pub(super) async fn start(&mut self, item: Item) -> anyhow::Result<()> {
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
        self.run_event(item.run_id, RunStatus::Running);
        Ok(())
    }

    /// The running run ended.
    pub(super) async fn finished(
        &mut self,
        done: Result<anyhow::Result<Finished>, tokio::task::JoinError>,
    ) {
        let Some(r) = self.running.take() else { return };
        let id = r.view.run_id;
        self.interlock.detach(id);
        let end = self.end_of(id, done).await;
        let status = end.status();
        self.connected = status != RunStatus::Failed;
        let code = end.code();
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
        self.run_event(id, status);
        self.changed();
    }

    /// How run `id` ended: the loop's outcome, or (the session gave none: it ended before the
    /// loop, or its task died) failed for why, recorded here.
    async fn end_of(
        &self,
        id: i64,
        done: Result<anyhow::Result<Finished>, tokio::task::JoinError>,
    ) -> RunEnd {
        let reason = match done {
            Ok(Ok(f)) => {
                if let Some(s) = f.report.safe_state_s {
                    tracing::info!(
                        "run {id} {}: drive disabled {:.0} µs after the stop decision",
                        f.status,
                        s * 1e6
                    );
                }
                return RunEnd::of(&f.report.outcome);
            }
            Ok(Err(e)) => Reason::new(ReasonCode::Other, format!("{e:#}")),
            Err(e) => Reason::new(ReasonCode::Panic, format!("the run task ended: {e}")),
        };
        if let Ok(run) = self.store.run(id).await {
            let stored = run
                .reason_code
                .zip(run.status_reason)
                .map(|(c, t)| Reason::new(c, t));
            if let Some(end) = RunEnd::already(run.status, stored, reason.clone()) {
                tracing::warn!("run {id} ({}): {reason}", run.status);
                return end;
            }
        }
        tracing::warn!("run {id} failed: {reason}");
        if let Err(e) = self
            .store
            .finish_run(id, RunStatus::Failed, Some(&reason))
            .await
        {
            tracing::error!("run {id}: its failure not stored: {e}");
        }
        RunEnd::Failed(reason)
    }

    /// The interlock has latched the e-stop: the running run is aborted (its drive is already
    /// safe), the latch and its reason persisted, the queue paused.
    pub(super) async fn estop_latched(&mut self, reason: String) {
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

    /// Clears the e-stop latch; the queue stays paused.
    pub(super) async fn estop_reset(&mut self) -> Result<Latch, SchedulerError> {
        self.estop = false;
        self.interlock.reset();
        let r = self.persist_settings().await.map(|()| Latch {
            estop: false,
            paused: self.paused,
        });
        self.changed();
        r
    }
}

/// The running run's end (never, with none running).
pub(super) async fn wait(
    running: &mut Option<Running>,
) -> Result<anyhow::Result<Finished>, tokio::task::JoinError> {
    match running {
        Some(r) => (&mut r.handle).await,
        None => std::future::pending().await,
    }
}
