//! The fleet: one heartbeat row per bench, upserted; benches known only by their pushed runs;
//! staleness by the store's clock; the last push noted by `Store::push`.

use crate::on_both_engines;
use crate::util::{Engine, new_run, temp_store};
use run_store::{
    BenchState, Error, Heartbeat, PushOptions, Reason, ReasonCode, RunStatus, StateName, Store,
};
use std::time::{Duration, Instant};

fn beat(bench: &str, state: BenchState, heartbeat_s: f64) -> Heartbeat {
    Heartbeat {
        bench_id: bench.into(),
        state,
        last_stop_reason: Some("completed".into()),
        heartbeat_s,
    }
}

/// A finished run of `bench`, stopped for `reason`.
async fn failed_run(store: &Store, bench: &str, reason: &str) -> i64 {
    let mut run = new_run("prbs", &[]);
    run.bench_config = serde_json::json!({"bench_id": bench, "period_s": 0.001});
    let id = store.create_run(&run).await.unwrap();
    let why = Reason::new(ReasonCode::DriveFault, reason);
    store
        .finish_run(id, RunStatus::Failed, Some(&why))
        .await
        .unwrap();
    id
}

async fn heartbeats_are_upserted_one_row_per_bench(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    store
        .put_heartbeat(&beat("b1", BenchState::Idle, 3600.0))
        .await
        .unwrap();
    let running = BenchState::Running {
        run_id: 7,
        run_name: "night sweep".into(),
        progress: 0.25,
    };
    store
        .put_heartbeat(&beat("b1", running, 3600.0))
        .await
        .unwrap();
    let fault = BenchState::Faulted {
        reason: "e-stop latched".into(),
    };
    store.put_heartbeat(&beat("b2", fault, 2.0)).await.unwrap();
    failed_run(&store, "b3", "drive fault at t = 1.2 s").await;

    let fleet = store.fleet().await.unwrap();
    let ids: Vec<&str> = fleet.iter().map(|b| b.bench_id.as_str()).collect();
    assert_eq!(ids, ["b1", "b2", "b3"], "{fleet:?}");
    let b1 = &fleet[0];
    assert_eq!(b1.state, Some(StateName::Running));
    assert_eq!(
        (b1.run_id, b1.run_name.as_deref(), b1.progress),
        (Some(7), Some("night sweep"), Some(0.25))
    );
    assert!(!b1.stale, "{b1:?}");
    assert_eq!(b1.stale_after_s, Some(10800.0));
    assert!(b1.heartbeat_age_s.unwrap() < 3600.0, "{b1:?}");
    let b2 = &fleet[1];
    assert_eq!(b2.state, Some(StateName::Faulted));
    assert_eq!(b2.fault.as_deref(), Some("e-stop latched"));
    assert_eq!((b2.run_id, b2.progress), (None, None));
    // Known only by a run: no heartbeat, so stale, with its run's stop reason.
    let b3 = &fleet[2];
    assert_eq!((b3.state, b3.stale, b3.stale_after_s), (None, true, None));
    assert!(
        b3.last_stop_reason
            .as_deref()
            .unwrap()
            .contains("drive fault"),
        "{b3:?}"
    );
    let (status, why) = store.last_stop("b3").await.unwrap().unwrap();
    assert!(
        status == RunStatus::Failed && why.contains("drive fault"),
        "{why}"
    );
    assert_eq!(store.last_stop("b1").await.unwrap(), None);
    // Back to idle: the running run's fields are cleared.
    store
        .put_heartbeat(&beat("b1", BenchState::Idle, 3600.0))
        .await
        .unwrap();
    let b1 = store.fleet().await.unwrap().remove(0);
    assert_eq!((b1.state, b1.run_id), (Some(StateName::Idle), None));
}

async fn a_bench_without_a_fresh_heartbeat_is_stale(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    store
        .put_heartbeat(&beat("quiet", BenchState::Suspended, 0.01))
        .await
        .unwrap();
    // 3 × 10 ms by the store's clock: poll until then, at most 10 s.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let b = store.fleet().await.unwrap().remove(0);
        assert_eq!(b.state, Some(StateName::Suspended));
        if b.stale {
            assert!(b.heartbeat_age_s.unwrap() > 0.03, "{b:?}");
            break;
        }
        assert!(Instant::now() < deadline, "never stale: {b:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn a_bad_heartbeat_is_refused_naming_the_field(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let over = BenchState::Running {
        run_id: 1,
        run_name: "r".into(),
        progress: 1.5,
    };
    for (b, field) in [
        (beat("b", over, 5.0), "progress"),
        (beat("b", BenchState::Idle, 0.0), "heartbeat_s"),
        (beat("", BenchState::Idle, 5.0), "bench_id"),
    ] {
        match store.put_heartbeat(&b).await {
            Err(Error::InvalidInput { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{b:?}: {other:?}"),
        }
    }
    assert!(store.fleet().await.unwrap().is_empty());
}

async fn a_push_notes_when_each_bench_last_pushed(engine: Engine) {
    let (_bench_place, bench) = temp_store(Engine::Sqlite).await;
    let (_lab_place, lab) = temp_store(engine).await;
    failed_run(&bench, "rig-4", "drive fault").await;
    assert!(lab.fleet().await.unwrap().is_empty());
    bench.push(&lab, &PushOptions::default()).await.unwrap();
    let fleet = lab.fleet().await.unwrap();
    assert_eq!(fleet.len(), 1, "{fleet:?}");
    assert_eq!(fleet[0].bench_id, "rig-4");
    let first = fleet[0].last_push.clone().expect("last_push");
    // Pushed again with nothing new: still a push.
    bench.push(&lab, &PushOptions::default()).await.unwrap();
    let again = lab.fleet().await.unwrap().remove(0).last_push.unwrap();
    assert!(again >= first, "{again} < {first}");
}

on_both_engines!(
    heartbeats_are_upserted_one_row_per_bench,
    a_bench_without_a_fresh_heartbeat_is_stale,
    a_bad_heartbeat_is_refused_naming_the_field,
    a_push_notes_when_each_bench_last_pushed,
);
