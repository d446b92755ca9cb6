//! The scheduler in-process on a clock the test moves on by days (the scheduler looks at it
//! every 250 ms).

use super::*;
use crate::hub::Hub;
use crate::pool::Pool;
use bench_daemon::config::Loaded;
use bench_daemon::control::Interlock;
use clock::format_time;
use run_store::Store;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

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
    async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Cmd) -> Result<T, SchedulerError> {
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
            body: ScheduleBody::Spec(SpecDoc(sweep())),
            run_at: run_at.clone(),
            recurrence: Some(Recurrence::Nightly),
            priority: 5,
            start_if_past: false,
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
                bench_daemon::session::check_spec(
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
            body: ScheduleBody::Spec(SpecDoc(bad)),
            run_at: format_time(f.clock.now() + chrono::Duration::hours(1)),
            recurrence: None,
            priority: 0,
            start_if_past: false,
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

#[tokio::test]
async fn an_entry_in_the_past_is_refused_naming_run_at_unless_asked_to_start() {
    let f = start(None).await;
    let add = |run_at: String, start_if_past: bool| {
        f.ask(move |reply| Cmd::AddSchedule {
            body: ScheduleBody::Spec(SpecDoc(sweep())),
            run_at,
            recurrence: None,
            priority: 0,
            start_if_past,
            reply,
        })
    };
    let year_ago = format_time(f.clock.now() - chrono::Duration::days(365));
    let e = add(year_ago.clone(), false).await.unwrap_err();
    match &e {
        SchedulerError::Invalid { field, message } => {
            assert_eq!(field, "run_at");
            assert!(message.contains("365 days before now"), "{message}");
            assert!(message.contains("start_if_past"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Within the grace: a form filled half a minute ago.
    let just_now = format_time(f.clock.now() - chrono::Duration::seconds(30));
    add(just_now, false).await.unwrap();
    assert_eq!(
        f.store.schedules().await.unwrap().len(),
        1,
        "nothing stored for the refused one"
    );
    add(year_ago, true).await.unwrap();
    assert_eq!(f.store.schedules().await.unwrap().len(), 2);
    f.stop().await;
}

/// A run that cannot reach the bench ends failed for a comms fault: the scheduler counts the
/// stop by the code the loop gave it, and the store holds the same code.
#[tokio::test]
async fn a_failed_run_is_counted_by_the_loops_reason() {
    let f = start(None).await;
    let loaded = Loaded::sim("127.0.0.1:1");
    let checked = bench_daemon::session::check_spec(
        experiments::Spec::from_value(json!({"kind": "torque_ramp"})).unwrap(),
        &loaded,
    )
    .unwrap();
    let run = f
        .ask(|reply| Cmd::Enqueue {
            checked: Box::new(checked),
            priority: 0,
            now: true,
            reply,
        })
        .await
        .unwrap();
    let mut view = f.view.clone();
    let seen = view
        .wait_for(|v| v.running.is_none() && !v.stops.is_empty())
        .await
        .unwrap()
        .clone();
    assert_eq!(
        seen.stops.into_iter().collect::<Vec<_>>(),
        vec![(run_store::ReasonCode::CommsFault, 1)]
    );
    assert!(!seen.connected);
    let stored = f.store.run(run.id).await.unwrap();
    assert_eq!(stored.status, run_store::RunStatus::Failed);
    assert_eq!(stored.reason_code, Some(run_store::ReasonCode::CommsFault));
    f.stop().await;
}
