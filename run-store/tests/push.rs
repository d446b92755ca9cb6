//! Push from a bench's store to a lab's: every finished run once, byte for byte, verified by
//! checksum; parameter sets and comparisons with their run ids translated; queue settings and
//! schedules scoped per bench in a shared store.

use crate::util::{Engine, batch, new_run, same, sample, temp_store};
use run_store::{
    Finish, NewComparison, PushOptions, Reason, ReasonCode, Recorder, RecorderConfig, RunStatus,
    SampleQuery, Store,
};

/// A bench store with three finished runs (two recorded, one failed before recording), one
/// queued run, a parameter set and a comparison.
async fn bench_store(store: &Store, bench: &str) -> Vec<i64> {
    let mut ids = Vec::new();
    for (k, n) in [(0_u64, 2_500_u64), (1, 9_000)] {
        let mut run = new_run("torque_ramp", &["lugre", "dahl"]);
        run.bench_config = serde_json::json!({"bench_id": bench, "period_s": 0.001});
        let id = store.create_run(&run).await.unwrap();
        let rec = Recorder::start(store, id, RecorderConfig::default())
            .await
            .unwrap();
        for first in (0..n).step_by(500) {
            rec.sender().send(batch(first, 500, 2)).await.unwrap();
        }
        rec.close(Finish::completed(None)).await.unwrap();
        store
            .save_results(id, &serde_json::json!({"breakaway": [1.5 + k as f64]}))
            .await
            .unwrap();
        ids.push(id);
    }
    let failed = store.create_run(&new_run("prbs", &[])).await.unwrap();
    store
        .finish_run(
            failed,
            RunStatus::Failed,
            Some(&Reason::new(ReasonCode::DriveFault, "drive fault")),
        )
        .await
        .unwrap();
    ids.push(failed);
    store.create_run(&new_run("prbs", &[])).await.unwrap(); // queued: not pushed
    store
        .add_parameter_set(
            "fitted",
            "lugre",
            &serde_json::json!({"fc": 1.0}),
            &serde_json::json!({"runs": [ids[1]]}),
        )
        .await
        .unwrap();
    store
        .add_comparison(&NewComparison {
            estimate_runs: vec![ids[0]],
            validate_runs: vec![ids[1]],
            models: vec!["lugre".into()],
            options: serde_json::json!({}),
            table: serde_json::json!({"rows": []}),
        })
        .await
        .unwrap();
    ids
}

async fn pushes_every_finished_run_once_with_equal_checksums(engine: Engine) {
    let (_b, bench) = temp_store(Engine::Sqlite).await;
    let (_l, lab) = temp_store(engine).await;
    // The lab already holds a run of another bench: ids there differ from the bench's.
    let other = lab.create_run(&new_run("prbs", &[])).await.unwrap();
    let ids = bench_store(&bench, "rig-a").await;
    // Tags and notes written after the run go with it.
    let edit = run_store::Annotation {
        add: vec!["good".into()],
        notes: Some("re-greased".into()),
        ..Default::default()
    };
    bench
        .annotate(ids[1], &edit, run_store::AuditEntry::default())
        .await
        .unwrap();

    let report = bench.push(&lab, &PushOptions::default()).await.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(
        report.pushed.iter().map(|r| r.id).collect::<Vec<_>>(),
        ids,
        "finished runs only, in id order"
    );
    assert_eq!(report.samples, 2_500 + 9_000);
    assert_eq!(report.parameter_sets.pushed, 1);
    assert_eq!(report.comparisons.pushed, 1);
    for r in &report.pushed {
        let there = r.target_id.unwrap();
        assert_ne!(there, other);
        let (a, b) = (
            bench.run(r.id).await.unwrap(),
            lab.run(there).await.unwrap(),
        );
        assert_eq!((&b.uuid, &b.bench_id), (&a.uuid, &a.bench_id));
        assert_eq!((&b.tags, &b.notes), (&a.tags, &a.notes));
        assert_eq!(
            (
                b.status,
                &b.created_at,
                &b.finished_at,
                &b.interruption_log,
                &b.results
            ),
            (
                a.status,
                &a.created_at,
                &a.finished_at,
                &a.interruption_log,
                &a.results
            )
        );
        assert_eq!(b.sample_count, a.sample_count);
        let checksum = r.checksum.clone().unwrap();
        assert_eq!(bench.sample_checksum(r.id).await.unwrap(), checksum);
        assert_eq!(lab.sample_checksum(there).await.unwrap(), checksum);
        let set = lab.samples(there, &SampleQuery::default()).await.unwrap();
        assert_eq!(set.samples.len() as u64, a.sample_count);
        for (i, s) in set.samples.iter().enumerate() {
            assert!(same(s, &sample(i as u64)), "sample {i} of run {there}");
        }
        if a.sample_count > 0 {
            assert_eq!(set.models, ["lugre", "dahl"]);
            assert_eq!(
                set.outputs_at(7),
                [crate::util::output(7, 0), crate::util::output(7, 1)]
            );
        }
    }
    // The lab's comparison and parameter set name the lab's run ids.
    let lab_id = |bench_id: i64| {
        report
            .pushed
            .iter()
            .find(|r| r.id == bench_id)
            .and_then(|r| r.target_id)
            .unwrap()
    };
    let c = lab.comparisons_for_run(lab_id(ids[0])).await.unwrap();
    assert_eq!(
        (c[0].estimate_runs.clone(), c[0].validate_runs.clone()),
        (vec![lab_id(ids[0])], vec![lab_id(ids[1])])
    );
    let set = lab.parameter_set_by_name("fitted").await.unwrap();
    assert_eq!(set.provenance["runs"], serde_json::json!([lab_id(ids[1])]));
    assert_eq!(
        set.provenance["pushed_from"]["runs"],
        serde_json::json!([ids[1]])
    );

    // Again: nothing is copied twice.
    let again = bench.push(&lab, &PushOptions::default()).await.unwrap();
    assert!(again.pushed.is_empty() && again.failed.is_empty());
    assert_eq!(again.skipped.len(), 3);
    assert_eq!(
        (again.parameter_sets.pushed, again.comparisons.pushed),
        (0, 0)
    );
    let all = lab
        .list_runs(&run_store::RunFilter {
            bench: Some("rig-a".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(all.total, 2, "the two recorded runs carry the bench id");
    assert_eq!(lab.parameter_sets(None).await.unwrap().len(), 1);

    // --since after every run: nothing to consider.
    let later = PushOptions {
        since: Some("2999-01-01".into()),
    };
    let none = bench.push(&lab, &later).await.unwrap();
    assert!(none.pushed.is_empty() && none.skipped.is_empty());
    let bad = PushOptions {
        since: Some("yesterday".into()),
    };
    assert_eq!(
        bench.push(&lab, &bad).await.unwrap_err().to_string(),
        "since (yesterday) is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC)"
    );
}

async fn queue_settings_and_schedules_are_each_benchs_own(engine: Engine) {
    let (_l, shared) = temp_store(engine).await;
    let (a, b) = (shared.for_bench("rig-a"), shared.for_bench("rig-b"));
    a.set_queue_setting("estop", "true").await.unwrap();
    assert_eq!(
        a.queue_setting("estop").await.unwrap().as_deref(),
        Some("true")
    );
    assert_eq!(b.queue_setting("estop").await.unwrap(), None);
    let body = serde_json::json!({"spec": {"kind": "prbs"}});
    let entry = a
        .add_schedule(&body, "2026-12-01T00:00:00Z", None, 0)
        .await
        .unwrap();
    assert_eq!(a.schedules().await.unwrap().len(), 1);
    assert!(b.schedules().await.unwrap().is_empty());
    assert!(
        !b.delete_schedule(entry.id).await.unwrap(),
        "not b's to delete"
    );
    // Queue rows hold each bench's own runs.
    let mut run = new_run("prbs", &[]);
    run.bench_config = serde_json::json!({"bench_id": "rig-a"});
    let ra = a.create_run(&run).await.unwrap();
    run.bench_config = serde_json::json!({"bench_id": "rig-b"});
    let rb = b.create_run(&run).await.unwrap();
    let row = |run_id| run_store::QueueRow {
        run_id,
        priority: 0,
        position: 0,
    };
    a.set_queue_rows(&[row(ra)]).await.unwrap();
    b.set_queue_rows(&[row(rb)]).await.unwrap();
    a.set_queue_rows(&[row(ra)]).await.unwrap();
    assert_eq!(a.queue_rows().await.unwrap(), [row(ra)]);
    assert_eq!(
        b.queue_rows().await.unwrap(),
        [row(rb)],
        "a's rewrite kept b's queue"
    );
}

crate::on_both_engines!(
    pushes_every_finished_run_once_with_equal_checksums,
    queue_settings_and_schedules_are_each_benchs_own,
);
