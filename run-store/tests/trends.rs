//! Summaries and trends: results and fits leave summary rows as they are stored, older stores
//! are back-filled when opened, pushes carry them to the lab; a trend is one point per fitted
//! run in time order with its standard error, run and tags, limits from a baseline and the
//! points outside flagged; drift finds tagged runs far from their bench's baseline.

use crate::on_both_engines;
use crate::util::{Engine, new_run, older_store, temp_store};
use run_store::{
    Annotation, AuditEntry, Band, Baseline, DriftQuery, PushOptions, RunStatus, Store, TrendQuery,
};
use serde_json::json;

/// Runs on `bench`, one a day from 2026-01-01, finished.
async fn runs_on(store: &Store, bench: &str, days: std::ops::Range<u32>) -> Vec<i64> {
    let runs: Vec<_> = days
        .map(|d| {
            let mut run = new_run("breakaway_staircase", &["lugre"]);
            run.bench_config = json!({"bench_id": bench});
            let day =
                chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() + chrono::Days::new(d.into());
            (run, format!("{day}T08:00:00Z"))
        })
        .collect();
    let ids = store.create_runs_at(&runs).await.unwrap();
    for &id in &ids {
        store
            .finish_run(id, RunStatus::Completed, None)
            .await
            .unwrap();
    }
    ids
}

/// A LuGre fit of run `run` with `fs` ± `se`.
async fn fit(store: &Store, run: i64, fs: f64, se: f64) -> i64 {
    let provenance = json!({"runs": [run], "fitted": {"fc": 1.0, "fs": fs},
                            "std_errors": {"fc": 0.01, "fs": se}});
    let params = json!({"fc": 1.0, "fs": fs, "vs": 0.01});
    store
        .add_parameter_set("fit", "lugre", &params, &provenance)
        .await
        .unwrap()
}

async fn tag(store: &Store, run: i64, tag: &str) {
    let edit = Annotation {
        add: vec![tag.into()],
        ..Annotation::default()
    };
    store
        .annotate(run, &edit, AuditEntry::default())
        .await
        .unwrap();
}

fn query(param: &str) -> TrendQuery {
    TrendQuery {
        param: param.into(),
        model: Some("lugre".into()),
        bench: None,
        since: None,
        until: None,
        baseline: Baseline::default(),
    }
}

async fn a_trend_is_one_point_per_fitted_run_in_time_order_with_flags(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let ids = runs_on(&store, "b12", 0..12).await;
    // Fitted out of time order; the baseline (first 10) alternates 1.50 / 1.52.
    for (k, &id) in ids.iter().enumerate().rev() {
        let fs = if k == 11 {
            1.8
        } else {
            1.50 + 0.02 * (k % 2) as f64
        };
        fit(&store, id, fs, 0.005).await;
    }
    // A refit of the first run: its newest set is the point.
    let refit = fit(&store, ids[0], 1.51, 0.004).await;
    tag(&store, ids[11], "good").await;
    tag(&store, ids[11], "after-bearing").await;
    let trend = store.trend(&query("fs")).await.unwrap();
    let runs: Vec<i64> = trend.points.iter().map(|p| p.run_id).collect();
    assert_eq!(runs, ids, "one point per run, in time order");
    let first = &trend.points[0];
    assert_eq!(
        (first.value, first.std_error, first.parameter_set_id),
        (1.51, Some(0.004), Some(refit))
    );
    assert_eq!(first.at, "2026-01-01T08:00:00.000Z");
    let last = &trend.points[11];
    assert_eq!(last.tags, ["after-bearing", "good"]);
    assert_eq!(last.outside, Some(true));
    assert_eq!(trend.outside, 1, "only the 1.8 lies outside mean ± 3σ");
    let limits = &trend.series[0].limits;
    assert_eq!(
        (limits.baseline_points, trend.series[0].bench_id.as_str()),
        (10, "b12")
    );
    assert!(limits.upper.unwrap() < 1.8 && limits.lower.unwrap() < 1.5);
    // A 1 % band around the baseline flags the 1.52s too (mean 1.511, band ± 0.0151).
    let mut q = query("fs");
    q.baseline.band = Band::Relative { fraction: 0.01 };
    q.since = Some("2026-01-02".into());
    q.until = Some("2026-01-11".into());
    let banded = store.trend(&q).await.unwrap();
    assert_eq!(banded.points.len(), 10, "since the 2nd, the 11th included");
    assert_eq!(
        banded
            .points
            .iter()
            .filter(|p| p.outside == Some(true))
            .count(),
        0
    );
    q.baseline = Baseline {
        until: Some("2026-01-02".into()),
        points: 1,
        band: Band::Sigma3,
    };
    let one = store.trend(&q).await.unwrap();
    assert_eq!(
        one.series[0].limits.lower, None,
        "one baseline point gives no σ"
    );
    assert_eq!(one.points[0].outside, None);
}

async fn measured_rows_come_from_the_results_and_bad_filters_name_their_field(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let ids = runs_on(&store, "b1", 0..2).await;
    for (k, &id) in ids.iter().enumerate() {
        let fs = 1.4 + 0.1 * k as f64;
        let analysis = json!({"kind": "breakaway_staircase",
            "positive": {"fs_nm": fs, "std_nm": 0.1, "n": 4}, "negative": null,
            "fs_nm": fs, "stairs": []});
        store.save_results(id, &analysis).await.unwrap();
    }
    // Results saved again replace the rows.
    store
        .save_results(
            ids[1],
            &json!({"kind": "breakaway_staircase", "positive": null,
            "negative": null, "fs_nm": 1.7, "stairs": []}),
        )
        .await
        .unwrap();
    let trend = store
        .trend(&TrendQuery {
            model: None,
            ..query("fs_nm")
        })
        .await
        .unwrap();
    let got: Vec<_> = trend
        .points
        .iter()
        .map(|p| (p.value, p.std_error, p.source.as_str()))
        .collect();
    assert_eq!(
        got,
        [(1.4, Some(0.05), "breakaway"), (1.7, None, "breakaway")]
    );
    // A sweep's curve: one series per position on it (the n-th velocity of every run).
    for &id in &ids {
        let point = |v: f64| {
            json!({"setpoint_rad_s": v, "velocity_rad_s": v,
            "mean_torque_nm": 1.0 + v, "std_torque_nm": 0.01, "n": 100})
        };
        let sweep = json!({"kind": "constant_velocity_sweep", "positive": [point(0.1), point(1.0)],
            "negative": []});
        store.save_results(id, &sweep).await.unwrap();
    }
    let curve = store
        .trend(&TrendQuery {
            model: None,
            ..query("steady_state_torque_nm")
        })
        .await
        .unwrap();
    let series: Vec<_> = curve
        .series
        .iter()
        .map(|s| (s.idx, s.points, s.limits.mean))
        .collect();
    assert_eq!(series, [(0, 2, Some(1.1)), (1, 2, Some(2.0))]);
    assert_eq!(curve.points[1].x, Some(1.0));
    let err = store
        .trend(&TrendQuery {
            since: Some("01/02/2026".into()),
            ..query("fs")
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("since"), "{err}");
    let err = store.trend(&query("")).await.unwrap_err();
    assert!(err.to_string().contains("param"), "{err}");
}

async fn an_older_store_is_back_filled_when_opened(engine: Engine) {
    let mut sql = Vec::new();
    for k in 1..=3 {
        sql.push(format!(
            "INSERT INTO runs (uuid, kind, name, spec, status, software_version, created_at,
                 bench_config)
             VALUES ('00000000-0000-4000-9000-00000000000{k}', 'breakaway_staircase', 'r', '{{}}',
                 'completed', 'old', '2026-03-0{k}T10:00:00.000Z', '{{\"bench_id\": \"old\"}}')"
        ));
        sql.push(format!(
            "INSERT INTO parameter_sets (uuid, name, model_id, params, provenance, created_at)
             VALUES ('00000000-0000-4000-8000-00000000000{k}', 'f', 'lugre', '{{\"fs\": 1.{k}}}',
                 '{{\"runs\": [{k}], \"fitted\": {{\"fs\": 1.{k}}}, \"std_errors\": {{\"fs\": 0.01}}}}',
                 '2026-03-0{k}T11:00:00.000Z')"
        ));
    }
    let (place, _older) = older_store(engine, "0015", &sql).await;
    let store = Store::open_existing(&place.location).await.unwrap();
    let trend = store.trend(&query("fs")).await.unwrap();
    let got: Vec<_> = trend
        .points
        .iter()
        .map(|p| (p.run_id, p.value, p.std_error))
        .collect();
    assert_eq!(
        got,
        [
            (1, 1.1, Some(0.01)),
            (2, 1.2, Some(0.01)),
            (3, 1.3, Some(0.01))
        ]
    );
    assert_eq!(trend.points[0].bench_id, "old");
    assert_eq!(
        store.backfill_summaries().await.unwrap(),
        0,
        "once is enough"
    );
}

async fn a_push_carries_the_summaries_under_the_labs_run_ids(engine: Engine) {
    let (_bench_place, bench) = temp_store(Engine::Sqlite).await;
    let (_lab_place, lab) = temp_store(engine).await;
    lab.create_run(&new_run("prbs", &[])).await.unwrap(); // the lab's ids differ
    let ids = runs_on(&bench, "b7", 0..3).await;
    for (k, &id) in ids.iter().enumerate() {
        fit(&bench, id, 1.5 + 0.01 * k as f64, 0.01).await;
    }
    tag(&bench, ids[2], "good").await;
    bench.push(&lab, &PushOptions::default()).await.unwrap();
    let trend = lab.trend(&query("fs")).await.unwrap();
    let values: Vec<f64> = trend.points.iter().map(|p| p.value).collect();
    assert_eq!(values, [1.5, 1.51, 1.52], "in the runs' time order");
    for (p, &id) in trend.points.iter().zip(&ids) {
        let uuid = bench.run(id).await.unwrap().uuid;
        assert_eq!(
            Some(p.run_id),
            lab.run_by_uuid(&uuid).await.unwrap(),
            "the lab's id"
        );
    }
    assert_eq!(trend.points[2].tags, ["good"]);
}

async fn drift_finds_tagged_runs_far_from_their_benchs_baseline(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    for (bench, base) in [("a", 1.0), ("b", 2.0)] {
        let ids = runs_on(&store, bench, 0..6).await;
        // Days 0-2 the baseline; then +4 %, +6 %, -10 %.
        let values = [base, base, base, base * 1.04, base * 1.06, base * 0.9];
        for (&id, &fs) in ids.iter().zip(&values) {
            fit(&store, id, fs, 0.01).await;
            tag(&store, id, "good").await;
        }
        store
            .annotate(
                ids[5],
                &Annotation {
                    remove: vec!["good".into()],
                    ..Annotation::default()
                },
                AuditEntry::default(),
            )
            .await
            .unwrap();
    }
    let q = DriftQuery {
        param: "fs".into(),
        model: "lugre".into(),
        tag: "good".into(),
        fraction: 0.05,
        baseline_since: "2026-01-01".into(),
        baseline_until: "2026-01-03".into(),
    };
    let found = store.drift(&q).await.unwrap();
    let got: Vec<_> = found
        .iter()
        .map(|d| (d.bench_id.as_str(), d.value, d.baseline_mean))
        .collect();
    assert_eq!(got, [("a", 1.06, 1.0), ("b", 2.12, 2.0)]);
    let err = store
        .drift(&DriftQuery {
            fraction: -1.0,
            ..q
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("fraction"), "{err}");
}

on_both_engines!(
    a_trend_is_one_point_per_fitted_run_in_time_order_with_flags,
    measured_rows_come_from_the_results_and_bad_filters_name_their_field,
    an_older_store_is_back_filled_when_opened,
    a_push_carries_the_summaries_under_the_labs_run_ids,
    drift_finds_tagged_runs_far_from_their_benchs_baseline,
);
