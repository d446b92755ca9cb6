//! `bench trends` and `GET /api/trends` on stores of fitted runs (SQLite, and a lab's
//! PostgreSQL when the test cluster is configured): the points in time order with their
//! standard errors, runs and tags, the limits, the flagged point, and bad filters named.

use crate::daemon::Daemon;
use crate::lab::{fresh_database, json};
use crate::util::{bench, stderr, stdout};
use run_store::{Annotation, AuditEntry, NewRun, Store};
use serde_json::{Value, json};

/// Twelve runs of bench `b12`, one a day from 2026-02-01, each with a LuGre fit (fs 1.50 or
/// 1.52, the last 1.80) and the last tagged `good`; returns their ids.
fn fill(db: &str) -> Vec<i64> {
    fill_on(db, "b12")
}

/// [`fill`] on bench `bench`.
pub(crate) fn fill_on(db: &str, bench: &str) -> Vec<i64> {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Store::open(db).await.unwrap();
        let runs: Vec<(NewRun, String)> = (1..=12)
            .map(|d| {
                let run = NewRun {
                    kind: "constant_velocity_sweep".into(),
                    name: format!("night {d}"),
                    bench_config: json!({"bench_id": bench}),
                    software_version: "test".into(),
                    ..NewRun::default()
                };
                (run, format!("2026-02-{d:02}T22:00:00Z"))
            })
            .collect();
        let ids = store.create_runs_at(&runs).await.unwrap();
        for (k, &id) in ids.iter().enumerate() {
            let fs = if k == 11 {
                1.8
            } else {
                1.5 + 0.02 * (k % 2) as f64
            };
            let provenance =
                json!({"runs": [id], "fitted": {"fs": fs}, "std_errors": {"fs": 0.004}});
            store
                .add_parameter_set("fit", "lugre", &json!({"fs": fs, "fc": 1.0}), &provenance)
                .await
                .unwrap();
        }
        let good = Annotation {
            add: vec!["good".into()],
            ..Annotation::default()
        };
        store
            .annotate(ids[11], &good, AuditEntry::default())
            .await
            .unwrap();
        store.close().await;
        ids
    })
}

fn check_trend(doc: &Value, ids: &[i64]) {
    let points = doc["points"].as_array().unwrap();
    let runs: Vec<i64> = points
        .iter()
        .map(|p| p["run_id"].as_i64().unwrap())
        .collect();
    assert_eq!(runs, ids, "one point per run, in time order");
    assert_eq!(points[0]["std_error"], 0.004);
    assert_eq!(points[0]["at"], "2026-02-01T22:00:00.000Z");
    assert_eq!(points[11]["tags"], json!(["good"]));
    assert_eq!(points[11]["outside"], true);
    assert_eq!(doc["outside"], 1);
    let limits = &doc["series"][0]["limits"];
    assert_eq!(
        (
            limits["method"].as_str(),
            limits["baseline_points"].as_u64()
        ),
        (Some("sigma3"), Some(10))
    );
}

/// `bench trends --param fs --db DB ARGS...`.
fn trends(db: &str, args: &[&str]) -> std::process::Output {
    bench(&[&["trends", "--param", "fs", "--db", db], args].concat())
}

fn trends_on(db: &str) {
    let ids = fill(db);
    check_trend(&json(&trends(db, &["--model", "lugre", "--json"])), &ids);
    let o = trends(db, &["--bench", "b12"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.matches(" OUT ").count(), 1, "{text}");
    assert!(
        text.contains("1 of 12 points outside their limits"),
        "{text}"
    );
    // A 20 % band from the points up to the 2nd: nothing lies outside.
    let band = ["--json", "--band", "0.2", "--baseline-until", "2026-02-02"];
    let doc = json(&trends(
        db,
        &[&band[..], &["--until", "2026-02-28"]].concat(),
    ));
    let limits = &doc["series"][0]["limits"];
    assert_eq!(
        (doc["outside"].as_u64(), limits["baseline_points"].as_u64()),
        (Some(0), Some(2))
    );
    let o = trends(db, &["--since", "yesterday"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("since"), "{}", stderr(&o));
}

#[test]
fn bench_trends_prints_points_limits_and_flags_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    trends_on(&dir.path().join("runs.db").display().to_string());
}

#[test]
fn bench_trends_prints_points_limits_and_flags_on_postgres() {
    if let Some(lab) = fresh_database() {
        trends_on(&lab);
    }
}

#[test]
fn the_trends_route_answers_the_same_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let ids = fill(&db.display().to_string());
    let d = Daemon::in_process(&["--sim"], &db);
    check_trend(&d.json("/api/trends?param=fs&model=lugre&bench=b12"), &ids);
    let banded = d.json("/api/trends?param=fs&band=0.2&baseline_points=2&since=2026-02-02");
    assert_eq!(banded["points"].as_array().unwrap().len(), 11);
    let r = d.get("/api/trends?param=fs&since=2026-13-01");
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("since"), "{}", r.text());
    let doc = d.json("/api/openapi.json");
    assert!(doc["paths"]["/api/trends"]["get"].is_object());
}
