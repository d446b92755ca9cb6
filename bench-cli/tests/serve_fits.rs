//! `bench serve --sim` with a slow fit: listed with its progress while it runs, cancelled by
//! DELETE storing nothing, stopped at its time limit.

use crate::daemon::Daemon;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A database holding the simulated bench's quick presliding run (recorded in simulated time).
fn db_with_a_presliding_run(dir: &tempfile::TempDir) -> (std::path::PathBuf, i64) {
    let db = dir.path().join("runs.db");
    let id = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = run_store::Store::open(&db).await.unwrap();
        let id =
            crate::util::record_sim_run(&store, "presliding.json", &bench_sim::default_truth())
                .await
                .id;
        store.close().await;
        id
    });
    (db, id)
}

/// A global search long enough to be watched: LuGre by AEP, 200 candidates a generation.
fn slow_fit(run: i64, timeout_s: Option<f64>) -> Value {
    let mut body = json!({"model": "lugre", "procedure": "aep", "run": run,
        "given": {"generations": 100000, "population": 200,
                  "fit": ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"]}});
    if let Some(t) = timeout_s {
        body["timeout_s"] = json!(t);
    }
    body
}

#[test]
fn a_fit_in_progress_is_listed_with_its_progress_and_cancelled_by_delete_storing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, run) = db_with_a_presliding_run(&dir);
    let d = Daemon::in_process(&["--sim"], &db);
    let addr = d.addr.clone();
    let poster = std::thread::spawn(move || {
        let body = slow_fit(run, None).to_string();
        crate::daemon::request(&addr, "POST", "/api/fits", Some(body.as_bytes()), None)
    });
    // Listed, with iterations counting up.
    let t0 = Instant::now();
    let fit = loop {
        let list = d.json("/api/fits");
        if let Some(f) = list["fits"].as_array().and_then(|a| a.first())
            && f["progress"]["iter"].as_u64().unwrap_or(0) >= 1
        {
            break f.clone();
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "{list}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        fit["what"]
            .as_str()
            .unwrap()
            .starts_with("fit --model lugre --procedure aep"),
        "{fit}"
    );
    assert_eq!(fit["timeout_s"], 600.0);
    let id = fit["id"].as_u64().unwrap();
    let r = d.req("DELETE", &format!("/api/fits/{id}"), None);
    assert_eq!((r.status, r.json()["cancelled"].as_u64()), (200, Some(id)));
    let answer = poster.join().unwrap();
    assert_eq!(answer.status, 409, "{}", answer.text());
    assert!(answer.text().contains("cancelled"), "{}", answer.text());
    // Nothing stored, nothing left running, and an unknown fit is a 404.
    assert_eq!(d.json("/api/parameter-sets"), json!([]));
    assert_eq!(d.json("/api/fits"), json!({"fits": []}));
    assert_eq!(
        d.req("DELETE", &format!("/api/fits/{id}"), None).status,
        404
    );
    assert_eq!(d.req("DELETE", "/api/fits/x", None).status, 422);
}

#[test]
fn a_fit_stops_at_its_time_limit_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (db, run) = db_with_a_presliding_run(&dir);
    let d = Daemon::in_process(&["--sim"], &db);
    let r = d.req("POST", "/api/fits", Some(&slow_fit(run, Some(0.5))));
    assert_eq!(r.status, 201, "{}", r.text());
    let report = &r.json()["report"];
    // It ended on its limit, not on convergence (the fit without a limit runs far longer).
    assert_eq!(report["termination"], "timeout", "{report}");
    let bad = d.req("POST", "/api/fits", Some(&slow_fit(run, Some(-1.0))));
    assert_eq!(
        (bad.status, bad.json()["field"].as_str()),
        (422, Some("timeout_s"))
    );
}
