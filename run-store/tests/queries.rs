//! Listing runs with filters and paging; a run's record and results; parameter sets.

use crate::util::{Engine, new_run, temp_store};
use run_store::{Error, Reason, ReasonCode, RunFilter, RunStatus};

async fn list_runs_filters_by_kind_status_and_date_and_pages_newest_first(engine: Engine) {
    let (_dir, store) = temp_store(engine).await;
    let mut ids = Vec::new();
    for (i, kind) in [
        "torque_ramp",
        "prbs",
        "torque_ramp",
        "dwell_time",
        "torque_ramp",
    ]
    .iter()
    .enumerate()
    {
        let id = store.create_run(&new_run(kind, &[])).await.unwrap();
        if i % 2 == 1 {
            store
                .finish_run(
                    id,
                    RunStatus::Failed,
                    Some(&Reason::new(ReasonCode::CommsFault, "drive disconnected")),
                )
                .await
                .unwrap();
        }
        ids.push(id);
    }
    let all = store.list_runs(&RunFilter::default()).await.unwrap();
    assert_eq!(all.total, 5);
    let listed: Vec<i64> = all.runs.iter().map(|r| r.id).collect();
    let newest_first: Vec<i64> = ids.iter().rev().copied().collect();
    assert_eq!(listed, newest_first);

    let ramps = store
        .list_runs(&RunFilter {
            kind: Some("torque_ramp".into()),
            ..RunFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(ramps.total, 3);
    assert!(ramps.runs.iter().all(|r| r.kind == "torque_ramp"));

    let failed = store
        .list_runs(&RunFilter {
            status: Some(RunStatus::Failed),
            ..RunFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(
        failed.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        [ids[3], ids[1]]
    );

    let page = store
        .list_runs(&RunFilter {
            limit: 2,
            offset: 2,
            ..RunFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(page.total, 5);
    assert_eq!(
        page.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        [ids[2], ids[1]]
    );

    let future = RunFilter {
        since: Some("2999-01-01".into()),
        ..RunFilter::default()
    };
    assert_eq!(store.list_runs(&future).await.unwrap().total, 0);
    let past = RunFilter {
        since: Some("2000-01-01T00:00:00Z".into()),
        until: Some("2999-01-01".into()),
        ..RunFilter::default()
    };
    assert_eq!(store.list_runs(&past).await.unwrap().total, 5);
    let bad = RunFilter {
        since: Some("yesterday".into()),
        ..RunFilter::default()
    };
    let err = store.list_runs(&bad).await.unwrap_err();
    assert!(
        matches!(err, Error::InvalidInput { field: "since", .. }),
        "{err}"
    );
}

async fn a_run_record_keeps_its_snapshots_and_results(engine: Engine) {
    let (_dir, store) = temp_store(engine).await;
    let new = new_run("constant_velocity_sweep", &["lugre"]);
    let id = store.create_run(&new).await.unwrap();
    let run = store.run(id).await.unwrap();
    assert_eq!(run.status, RunStatus::Queued);
    assert_eq!(run.spec, new.spec);
    assert_eq!(run.bench_config, new.bench_config);
    assert_eq!(run.device_profiles, new.device_profiles);
    assert_eq!(run.software_version, "0.1.0-test");
    assert_eq!(run.notes.as_deref(), Some("note"));
    assert_eq!(run.models, ["lugre"]);
    assert_eq!(run.results, None);
    let analysis = serde_json::json!({"stribeck_points": [{"v": 0.1, "torque": 0.52, "n": 800}]});
    store.save_results(id, &analysis).await.unwrap();
    assert_eq!(store.run(id).await.unwrap().results, Some(analysis));
    assert!(matches!(
        store.run(id + 100).await,
        Err(Error::RunNotFound { .. })
    ));
    assert!(
        store
            .save_results(id + 100, &serde_json::json!({}))
            .await
            .is_err()
    );
    assert!(
        store
            .finish_run(id, RunStatus::Running, None)
            .await
            .is_err()
    );

    let p = serde_json::json!({"fc": 0.3, "fs": 0.5});
    let prov = serde_json::json!({"runs": [id], "method": "lm"});
    let ps = store
        .add_parameter_set("bench A", "lugre", &p, &prov)
        .await
        .unwrap();
    store
        .add_parameter_set("other", "dahl", &p, &prov)
        .await
        .unwrap();
    let sets = store.parameter_sets(Some("lugre")).await.unwrap();
    assert_eq!(sets.len(), 1);
    assert_eq!(
        (
            sets[0].id,
            sets[0].params.clone(),
            sets[0].provenance.clone()
        ),
        (ps, p, prov)
    );
    assert_eq!(store.parameter_sets(None).await.unwrap().len(), 2);
}

/// Each run carries the `bench_id` of its configuration snapshot (none before benches had
/// one), and runs filter by it.
async fn runs_carry_the_bench_id_of_their_snapshot_and_filter_by_it(engine: Engine) {
    let (_dir, store) = temp_store(engine).await;
    let on = |bench: Option<&str>| {
        let mut r = new_run("prbs", &[]);
        if let Some(b) = bench {
            r.bench_config["bench_id"] = serde_json::json!(b);
        }
        r
    };
    let a = store.create_run(&on(Some("bench-a"))).await.unwrap();
    let b = store.create_run(&on(Some("bench-b"))).await.unwrap();
    let old = store.create_run(&on(None)).await.unwrap();
    assert_eq!(store.run(a).await.unwrap().bench_id, "bench-a");
    assert_eq!(store.run(old).await.unwrap().bench_id, "");
    let of = |bench: &str| {
        let filter = RunFilter {
            bench: Some(bench.into()),
            ..RunFilter::default()
        };
        let store = &store;
        async move { store.list_runs(&filter).await.unwrap() }
    };
    let page = of("bench-b").await;
    assert_eq!((page.total, page.runs[0].id), (1, b));
    assert_eq!(page.runs[0].bench_id, "bench-b");
    assert_eq!(of("bench-c").await.total, 0);
    let all = store.list_runs(&RunFilter::default()).await.unwrap();
    assert_eq!(all.total, 3);
}

crate::on_both_engines!(
    list_runs_filters_by_kind_status_and_date_and_pages_newest_first,
    a_run_record_keeps_its_snapshots_and_results,
    runs_carry_the_bench_id_of_their_snapshot_and_filter_by_it,
);
