//! The heartbeat: with `[lab]` in bench.toml, `bench serve` upserts this bench's row in the
//! lab store every `heartbeat_s` (its state, the running run and its progress, the last
//! run's stop reason), so the lab's Fleet page shows it; three missed beats mark it stale.
//!
//! One task owns the lab connection. It reads only what the service already publishes (the
//! scheduler's queue view, the loop's status, the e-stop latch) and this bench's own store,
//! never waits on the loop or a handler, and gives every attempt a bounded time: a lab that
//! is down or slow costs a logged warning, never a late sample or a slow request.

use super::hub::Hub;
use super::scheduler::QueueView;
use bench_daemon::config::LabConfig;
use bench_daemon::control::Interlock;
use run_store::{BenchState, Heartbeat, RunStatus, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The longest one beat (connecting included) may take: two periods, but at least
/// [`MIN_ATTEMPT`] (a short period must still leave time to connect) and at most this; past it
/// the attempt is dropped and the next one is due a period later.
const MAX_ATTEMPT: Duration = Duration::from_secs(10);
/// See [`MAX_ATTEMPT`].
const MIN_ATTEMPT: Duration = Duration::from_secs(2);

/// What the heartbeat reads, all of it published by other owners.
#[derive(Clone, Debug)]
pub struct Sources {
    /// The bench's `bench_id`.
    pub bench_id: String,
    /// The scheduler's queue view (the running run, the e-stop, whether the devices answered).
    pub view: watch::Receiver<QueueView>,
    /// The loop's status (phase, run time).
    pub hub: Hub,
    /// The e-stop latch, which is set before the scheduler hears of it.
    pub interlock: Arc<Interlock>,
    /// The bench's own store (its last run's stop reason).
    pub store: Store,
}

/// Spawns the heartbeat task until `shutdown` turns true.
pub fn start(lab: &LabConfig, sources: Sources, shutdown: watch::Receiver<bool>) {
    tokio::spawn(run(lab.clone(), sources, shutdown));
}

async fn run(lab: LabConfig, sources: Sources, mut shutdown: watch::Receiver<bool>) {
    let period = Duration::from_secs_f64(lab.heartbeat_s);
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut lab_store: Option<Store> = None;
    let mut failing = false;
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.wait_for(|stop| *stop) => break,
        }
        let attempt = beat(&lab, &sources, &mut lab_store);
        let within = (period * 2).clamp(MIN_ATTEMPT, MAX_ATTEMPT);
        let outcome = match tokio::time::timeout(within, attempt).await {
            Ok(result) => result,
            Err(_) => Err(format!("no answer within {:.1} s", within.as_secs_f64())),
        };
        match outcome {
            Ok(()) if failing => {
                tracing::info!("heartbeat to the lab store written again");
                failing = false;
            }
            Ok(()) => {}
            Err(e) => {
                if !failing {
                    tracing::warn!("heartbeat to the lab store failed (retried every beat): {e}");
                }
                failing = true;
                // Connect afresh next time: the old pool may be what is broken.
                lab_store = None;
            }
        }
    }
    if let Some(store) = lab_store {
        store.close().await;
    }
}

/// One heartbeat: connects if need be, then upserts the row.
async fn beat(lab: &LabConfig, sources: &Sources, store: &mut Option<Store>) -> Result<(), String> {
    let last = sources
        .store
        .last_stop(&sources.bench_id)
        .await
        .map_err(|e| format!("the bench's own store: {e}"))?;
    let state = {
        let view = sources.view.borrow();
        let status = sources.hub.status.borrow();
        let estop = view.estop || sources.interlock.is_latched();
        bench_state(&view, status.phase, status.t, estop, last.as_ref())
    };
    let heartbeat = Heartbeat {
        bench_id: sources.bench_id.clone(),
        state,
        last_stop_reason: last.map(|(_, why)| why),
        heartbeat_s: lab.heartbeat_s,
    };
    if store.is_none() {
        let opened = Store::open_existing(lab.url.as_str()).await;
        *store = Some(opened.map_err(|e| format!("[lab] url: {e}"))?);
    }
    let Some(lab_store) = store else {
        return Err("BUG: no lab store after opening it".into());
    };
    lab_store
        .put_heartbeat(&heartbeat)
        .await
        .map_err(|e| e.to_string())
}

/// The bench's state from the scheduler's view, the loop's phase and run time `t` \[s\], the
/// e-stop latch and how its last run ended.
pub fn bench_state(
    view: &QueueView,
    phase: &str,
    t: f64,
    estop: bool,
    last: Option<&(RunStatus, String)>,
) -> BenchState {
    if estop {
        return BenchState::Faulted {
            reason: "e-stop latched".into(),
        };
    }
    let Some(run) = &view.running else {
        // The scheduler counts the devices lost after a failed run (and unknown before the
        // first one): faulted only with that failure to show.
        return match last {
            Some((RunStatus::Failed, why)) if !view.connected => BenchState::Faulted {
                reason: format!("the last run failed: {why}"),
            },
            _ => BenchState::Idle,
        };
    };
    if phase == "suspended" {
        return BenchState::Suspended;
    }
    let progress = match run.estimate_s > 0.0 && t.is_finite() {
        true => (t / run.estimate_s).clamp(0.0, 1.0),
        false => 0.0,
    };
    BenchState::Running {
        run_id: run.run_id,
        run_name: run.name.clone(),
        progress,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::RunningView;

    fn running(estimate_s: f64) -> QueueView {
        QueueView {
            connected: true,
            running: Some(RunningView {
                run_id: 4,
                kind: "torque_ramp".into(),
                name: "ramp".into(),
                estimate_s,
                models: vec![],
            }),
            ..QueueView::default()
        }
    }

    #[test]
    fn the_state_follows_the_view_the_phase_and_the_latch() {
        let idle = QueueView {
            connected: true,
            ..QueueView::default()
        };
        assert_eq!(
            bench_state(&idle, "done", 3.0, false, None),
            BenchState::Idle
        );
        assert_eq!(
            bench_state(&running(8.0), "running", 2.0, false, None),
            BenchState::Running {
                run_id: 4,
                run_name: "ramp".into(),
                progress: 0.25
            }
        );
        // Past its estimate it stays at 1; with no estimate at 0.
        let over = bench_state(&running(8.0), "running", 20.0, false, None);
        assert!(matches!(over, BenchState::Running { progress: 1.0, .. }));
        let none = bench_state(&running(0.0), "running", 2.0, false, None);
        assert!(matches!(none, BenchState::Running { progress: 0.0, .. }));
        assert_eq!(
            bench_state(&running(8.0), "suspended", 2.0, false, None),
            BenchState::Suspended
        );
        assert_eq!(
            bench_state(&running(8.0), "running", 2.0, true, None),
            BenchState::Faulted {
                reason: "e-stop latched".into()
            }
        );
        let failed = (RunStatus::Failed, "drive timeout".to_string());
        let lost = bench_state(&QueueView::default(), "done", 0.0, false, Some(&failed));
        assert_eq!(
            lost,
            BenchState::Faulted {
                reason: "the last run failed: drive timeout".into()
            }
        );
        // Not yet connected (a real bench before its first run), or connected again: idle.
        assert_eq!(
            bench_state(&QueueView::default(), "", 0.0, false, None),
            BenchState::Idle
        );
        let ok = (RunStatus::Aborted, "operator".to_string());
        assert_eq!(
            bench_state(&idle, "done", 0.0, false, Some(&failed)),
            BenchState::Idle
        );
        assert_eq!(
            bench_state(&QueueView::default(), "done", 0.0, false, Some(&ok)),
            BenchState::Idle
        );
    }
}
