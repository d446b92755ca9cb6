//! The queue over REST on `bench serve --sim`: it and the schedule survive a restart, a timed
//! entry runs at its time, and a large queue is listed in part, kept in order and comes back
//! paused after a kill.

use crate::cli_serve::tiny;
use crate::daemon::Daemon;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[test]
fn queue_and_schedule_survive_a_restart_and_a_timed_entry_runs_at_its_time() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let (a, b, entry) = {
        let d = Daemon::start(&db, "127.0.0.1:0", &[]);
        let q = d.req(
            "PUT",
            "/api/queue",
            Some(&json!({"paused": true, "on_failure": "stop"})),
        );
        assert_eq!(q.status, 200);
        let a = d.req("POST", "/api/runs", Some(&tiny("a", 0.5))).json();
        let b = d
            .req("POST", "/api/runs?priority=5", Some(&tiny("b", 0.5)))
            .json();
        assert_eq!(
            (a["status"].as_str(), b["position"].as_i64()),
            (Some("queued"), Some(1))
        );
        let sweep = json!({"run_at": "2031-01-01T02:00:00Z", "recurrence": "nightly", "priority": 2,
            "sweep": {"spec": tiny("sweep", 0.5), "param": "params.velocities", "values": [[0.2], [0.4]]}});
        let r = d.req("POST", "/api/schedule", Some(&sweep));
        assert_eq!(r.status, 201, "{}", r.text());
        let entry = r.json();
        assert_eq!(entry["next_run_at"], "2031-01-01T02:00:00.000Z");
        (a["id"].as_i64().unwrap(), b["id"].as_i64().unwrap(), entry)
        // Dropped: killed (SIGKILL), no graceful shutdown.
    };
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    let q = d.json("/api/queue");
    assert_eq!(q["paused"], true);
    assert_eq!(q["on_failure"], "stop");
    let order: Vec<(i64, i64)> = q["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["run_id"].as_i64().unwrap(),
                i["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(order, [(b, 5), (a, 0)]);
    assert!(q["eta_total_s"].as_f64().unwrap() >= 1.6, "{q}");
    let sched = d.json("/api/schedule");
    assert_eq!(sched.as_array().unwrap().len(), 1);
    assert_eq!(sched[0]["id"], entry["id"]);
    assert_eq!(sched[0]["recurrence"], "nightly");
    assert_eq!(sched[0]["next_run_at"], entry["next_run_at"]);
    assert_eq!(sched[0]["sweep"]["values"], json!([[0.2], [0.4]]));

    // An entry a few seconds ahead; then resume: b, a, then the timed one.
    let run_at = chrono::Utc::now() + chrono::Duration::seconds(3);
    let run_at = run_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let r = d.req(
        "POST",
        "/api/schedule",
        Some(&json!({"run_at": run_at, "spec": tiny("timed", 0.3)})),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let timed = r.json()["id"].as_i64().unwrap();
    assert_eq!(
        d.req("PUT", "/api/queue", Some(&json!({"paused": false})))
            .status,
        200
    );
    let ra = d.wait_final(a, Duration::from_secs(30));
    let rb = d.wait_final(b, Duration::from_secs(30));
    assert_eq!(
        (ra["status"].as_str(), rb["status"].as_str()),
        (Some("completed"), Some("completed"))
    );
    assert!(
        rb["started_at"].as_str() < ra["started_at"].as_str(),
        "priority 5 first"
    );
    let t0 = Instant::now();
    let last = loop {
        let s = d.json("/api/schedule");
        let e = s
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == timed)
            .unwrap()
            .clone();
        if e["state"] == "done" {
            break e["last_run_id"].as_i64().unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "{e}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let run = d.wait_final(last, Duration::from_secs(30));
    assert_eq!(run["status"], "completed");
    assert_eq!(run["name"], "timed");
    // Its run log says which entry queued it, then that the queue started it.
    let log: Vec<&str> = run["run_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    let queued = format!("queued by schedule entry {timed} (once)");
    assert_eq!(
        log[..2],
        [queued.as_str(), "started by the queue"],
        "{log:?}"
    );
    assert!(
        run["created_at"].as_str().unwrap() >= run_at.as_str(),
        "{} < {run_at}",
        run["created_at"]
    );
    // The nightly entry is still waiting for 2031.
    let s = d.json("/api/schedule");
    assert_eq!(s[0]["state"], "pending");
}

/// The waiting run ids, in queue order (all of them).
fn queue_ids(d: &Daemon) -> Vec<i64> {
    d.json("/api/queue")["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["run_id"].as_i64().unwrap())
        .collect()
}

#[test]
fn a_large_queue_is_listed_in_part_kept_in_order_and_comes_back_paused_after_a_kill() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let (before, running) = {
        let d = Daemon::start(&db, "127.0.0.1:0", &[]);
        assert_eq!(
            d.req("PUT", "/api/queue", Some(&json!({"paused": true})))
                .status,
            200
        );
        let values: Vec<Value> = (0..300).map(|k| json!([0.2 + 1e-3 * k as f64])).collect();
        let sweep = json!({"sweep": {"spec": tiny("sweep", 0.5), "param": "params.velocities",
            "values": values}});
        let r = d.req("POST", "/api/schedule", Some(&sweep));
        assert_eq!(r.status, 201, "{}", r.text());
        let t0 = Instant::now();
        while d.json("/api/queue?limit=5")["waiting"] != 300 {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the sweep was not queued"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let part = d.json("/api/queue?limit=5");
        assert_eq!(part["items"].as_array().unwrap().len(), 5);
        assert_eq!(part["truncated"], true);
        let whole = d.json("/api/queue");
        assert_eq!(whole["items"].as_array().unwrap().len(), 300);
        assert_eq!(whole["truncated"], false);
        let eta = |q: &Value| q["eta_total_s"].as_f64().unwrap();
        assert!(
            (eta(&part) - eta(&whole)).abs() < 1e-6 * eta(&whole) && eta(&whole) > 300.0 * 0.8,
            "the ETA counts every run: {} vs {}",
            eta(&part),
            eta(&whole)
        );
        let bad = d.get("/api/queue?limit=many");
        assert_eq!(bad.status, 400);
        assert_eq!(bad.json()["field"], "limit");

        // A run ahead of them all, one taken out of the middle.
        let first = d
            .req("POST", "/api/runs?priority=5", Some(&tiny("first", 30.0)))
            .json();
        assert_eq!(first["position"], 1);
        let ids = queue_ids(&d);
        let gone = ids[10];
        assert_eq!(
            d.req("DELETE", &format!("/api/queue/{gone}"), None).status,
            204
        );
        // Resume: `first` starts; the daemon is killed while it runs.
        assert_eq!(
            d.req("PUT", "/api/queue", Some(&json!({"paused": false})))
                .status,
            200
        );
        d.wait_live_samples(100);
        let before = queue_ids(&d);
        assert_eq!(before.len(), 299);
        assert!(!before.contains(&gone));
        (before, first["id"].as_i64().unwrap())
        // Dropped: SIGKILL, no graceful shutdown.
    };
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    let q = d.json("/api/queue");
    assert_eq!(q["paused"], true, "an unclean stop leaves the queue paused");
    assert_eq!(queue_ids(&d), before, "the order survives the kill");
    let run = d.json(&format!("/api/runs/{running}"));
    assert_eq!(run["status"], "interrupted", "{run}");
    // A negative: the test waits, on purpose, longer than a queued run takes to start on a
    // quiet daemon, then checks that none started.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        d.json("/api/bench")["busy"],
        false,
        "nothing starts by itself"
    );
}
