//! Resume over REST and on restart: `POST /api/runs/{id}/resume` continues a run a killed
//! `bench serve --sim` left interrupted; with `[queue] auto_resume = true` the restarted daemon
//! does it itself (once the drive reads healthy and disabled), then lets the queue go on.

use crate::daemon::Daemon;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// 4 trials of 0.4 s (settle + measure).
fn sweep(name: &str) -> Value {
    json!({"kind": "constant_velocity_sweep", "name": name, "params": {
        "velocities": [0.5, 1.0], "directions": "both", "settle_s": 0.2,
        "measure_s": 0.2, "repeats": 1}})
}

/// Polls `GET /api/runs` until a run continues `id`; returns it.
fn continuation_of(d: &Daemon, id: i64) -> i64 {
    let t0 = Instant::now();
    loop {
        for r in d.json("/api/runs?limit=20")["runs"].as_array().unwrap() {
            let run = d.json(&format!("/api/runs/{}", r["id"]));
            if run["continues"] == id {
                return run["id"].as_i64().unwrap();
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "run {id} was never resumed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn log_has(run: &Value, log: &str, needle: &str) -> bool {
    run[log]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["reason"].as_str().unwrap_or("").contains(needle))
}

#[test]
fn a_run_a_killed_daemon_left_is_resumed_over_rest_and_refused_twice() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let id = {
        let d = Daemon::start(&db, "127.0.0.1:0", &[]);
        let r = d.req("POST", "/api/runs?start=now", Some(&sweep("killed")));
        assert_eq!(r.status, 201, "{}", r.text());
        d.wait_live_samples(500);
        r.json()["id"].as_i64().unwrap()
        // Dropped: SIGKILL.
    };
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    assert_eq!(d.json(&format!("/api/runs/{id}"))["status"], "interrupted");
    let r = d.req("POST", &format!("/api/runs/{id}/resume"), None);
    assert_eq!(r.status, 201, "{}", r.text());
    let next = r.json()["id"].as_i64().unwrap();
    let run = d.wait_final(next, Duration::from_secs(30));
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["continues"], id);
    assert!(
        log_has(&run, "run_log", &format!("continues run {id}")),
        "{run}"
    );
    assert_eq!(
        run["results"]["positive"].as_array().unwrap().len(),
        2,
        "{run}"
    );
    let first = d.json(&format!("/api/runs/{id}"));
    assert!(
        log_has(&first, "run_log", "started by a client at 127.0.0.1"),
        "{first}"
    );
    assert!(
        log_has(&first, "run_log", &format!("resumed as run {next}")),
        "{first}"
    );
    // Twice: refused, naming the continuation; a completed run: refused; nothing created.
    let total = d.runs_total();
    let again = d.req("POST", &format!("/api/runs/{id}/resume"), None);
    assert_eq!(again.status, 409, "{}", again.text());
    assert!(again.text().contains(&format!("continued by run {next}")));
    assert_eq!(
        d.req("POST", &format!("/api/runs/{next}/resume"), None)
            .status,
        409
    );
    assert_eq!(d.req("POST", "/api/runs/999/resume", None).status, 404);
    assert_eq!(d.runs_total(), total);
}

fn auto_resume_config(dir: &Path) -> String {
    let text = std::fs::read_to_string(format!(
        "{}/../bench-daemon/config/sim.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let path = dir.join("bench.toml");
    std::fs::write(&path, format!("{text}\n[queue]\nauto_resume = true\n")).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn with_auto_resume_the_restarted_daemon_resumes_the_run_and_the_queue_goes_on() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let config = auto_resume_config(dir.path());
    let bench = ["--sim", "--config", config.as_str()];
    let (id, behind) = {
        let d = Daemon::start_on(&bench, &db, "127.0.0.1:0", &[]);
        let r = d.req("POST", "/api/runs", Some(&sweep("night")));
        assert_eq!(r.status, 201, "{}", r.text());
        let later = d.req("POST", "/api/runs", Some(&sweep("after")));
        d.wait_live_samples(500);
        (
            r.json()["id"].as_i64().unwrap(),
            later.json()["id"].as_i64().unwrap(),
        )
    };
    let d = Daemon::start_on(&bench, &db, "127.0.0.1:0", &[]);
    let next = continuation_of(&d, id);
    let run = d.wait_final(next, Duration::from_secs(30));
    assert_eq!(run["status"], "completed", "{run}");
    assert!(
        log_has(&run, "run_log", "auto_resume") && log_has(&run, "run_log", "healthy and disabled"),
        "{}",
        run["run_log"]
    );
    // The queue was not paused by an operator: the run behind follows.
    let after = d.wait_final(behind, Duration::from_secs(30));
    assert_eq!(after["status"], "completed", "{after}");
    assert!(
        log_has(&after, "run_log", "queued by a client at"),
        "{after}"
    );
    assert!(
        log_has(&after, "run_log", "started by the queue"),
        "{after}"
    );
}
