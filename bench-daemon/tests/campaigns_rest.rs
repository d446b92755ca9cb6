//! Characterisation campaigns over REST on `bench serve --sim`: a campaign recorded by
//! `bench characterise --sim` (a budget too small for its second step, so it is cheap and ends
//! `failed` after its first) is listed, read with its steps' runs, and its report served as
//! HTML; unknown ids are 404 and bad queries 400, naming the field.

use crate::daemon::Daemon;
use crate::util::{bench, db_in, stderr, stdout};

/// A short campaign in `db`; its id.
fn short_campaign(db: &str) -> i64 {
    let o = bench(&[
        "characterise",
        "--sim",
        "--models",
        "coulomb_viscous",
        "--budget-min",
        "0.5",
        "--db",
        db,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let first = text.lines().next().unwrap();
    first.strip_prefix("campaign ").unwrap().parse().unwrap()
}

#[test]
fn campaigns_are_listed_read_and_their_report_served_as_html() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let id = short_campaign(&db);
    let d = Daemon::start(std::path::Path::new(&db), "127.0.0.1:0", &[]);
    let list = d.json("/api/campaigns");
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], id);
    let c = d.json(&format!("/api/campaigns/{id}"));
    assert_eq!(c["status"], "failed");
    assert!(
        c["reason"].as_str().unwrap().contains("--budget-min"),
        "{c}"
    );
    assert_eq!(c["steps"][0]["name"], "breakaway");
    assert_eq!(c["request"]["models"][0], "coulomb_viscous");
    // Each step's run is a run of the daemon's store.
    let run = c["steps"][0]["run_id"].as_i64().unwrap();
    let r = d.json(&format!("/api/runs/{run}"));
    assert_eq!(r["id"], run);
    // ... and links back to its campaign.
    assert_eq!(
        r["campaign"],
        serde_json::json!({"id": id, "step": "breakaway"})
    );
    let r = d.get(&format!("/api/campaigns/{id}/report"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.headers
            .to_ascii_lowercase()
            .contains("content-type: text/html")
    );
    let html = r.text();
    assert!(
        html.contains("<html") && html.contains("breakaway"),
        "{html}"
    );
}

#[test]
fn unknown_campaigns_are_404_and_bad_queries_400_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    assert_eq!(d.json("/api/campaigns"), serde_json::json!([]));
    for path in [
        "/api/campaigns/999",
        "/api/campaigns/abc",
        "/api/campaigns/999/report",
    ] {
        let r = d.get(path);
        assert_eq!(r.status, 404, "{path}: {}", r.text());
        assert_eq!(r.json()["field"], "id", "{path}");
    }
    for (q, field) in [("limit=0", "limit"), ("limit=x", "limit"), ("top=3", "top")] {
        let r = d.get(&format!("/api/campaigns?{q}"));
        assert_eq!(r.status, 400, "{q}: {}", r.text());
        assert_eq!(r.json()["field"], field, "{q}");
    }
}

/// `POST /api/campaigns` starts a campaign on the daemon's own bench: its steps are runs of the
/// queue, so the e-stop reaches them and ends the campaign `stopped` with the drive confirmed
/// disabled. Bad bodies are refused naming the field, creating nothing; a second campaign, or
/// one on a latched e-stop, is 409.
#[test]
fn a_campaign_posted_runs_its_steps_through_the_queue_and_the_estop_stops_it() {
    use serde_json::json;
    use std::time::{Duration, Instant};
    let _bench = crate::util::one_bench_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(&dir.path().join("runs.db"), "127.0.0.1:0", &[]);
    for (body, status, field) in [
        (json!({"models": ["nope"]}), 422, "models"),
        (json!({"models": []}), 400, "models"),
        (json!({"budget_min": 0}), 400, "budget_min"),
        (json!({"budget_min": 5000}), 400, "budget_min"),
    ] {
        let r = d.req("POST", "/api/campaigns", Some(&body));
        assert_eq!(r.status, status, "{body}: {}", r.text());
        assert_eq!(r.json()["field"], field, "{body}: {}", r.text());
    }
    let r = d.req("POST", "/api/campaigns", Some(&json!({"budget_mins": 5})));
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(d.json("/api/campaigns"), json!([]));
    assert_eq!(d.runs_total(), 0);

    let body = json!({"models": ["coulomb_viscous"], "budget_min": 10});
    let r = d.req("POST", "/api/campaigns", Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    assert_eq!(r.json()["status"], "running");
    let again = d.req("POST", "/api/campaigns", Some(&body));
    assert_eq!(again.status, 409, "{}", again.text());
    assert!(again.text().contains(&format!("campaign {id} is running")));
    // Its first step (the breakaway ramps) is a run on the bench, moving.
    let t0 = Instant::now();
    let run = loop {
        let bench = d.json("/api/bench");
        if let (Some(run), true) = (
            bench["run_id"].as_i64(),
            bench["live"]["samples"].as_u64() > Some(100),
        ) {
            break run;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no step started: {bench}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(d.json(&format!("/api/runs/{run}"))["kind"], "torque_ramp");
    let e = d.req("POST", "/api/estop", None);
    assert_eq!(e.status, 200, "{}", e.text());
    assert_eq!(e.json()["aborted_run"], run);
    let stopped = d.wait_final(run, Duration::from_secs(10));
    assert_eq!(stopped["reason_code"], "estop", "{stopped}");
    let t0 = Instant::now();
    let c = loop {
        let c = d.json(&format!("/api/campaigns/{id}"));
        if c["status"] != "running" {
            break c;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{c}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(c["status"], "stopped", "{c}");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("step breakaway: run") && reason.contains("e-stop"),
        "{c}"
    );
    assert_eq!(c["steps"][0]["run_id"], run, "{c}");
    // Nothing else moved: one run, aborted; the latch refuses a new campaign.
    assert_eq!(d.runs_total(), 1);
    let r = d.req("POST", "/api/campaigns", Some(&body));
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("e-stop"), "{}", r.text());
    // The audit log has the request that started it.
    let audit = d.json("/api/audit");
    assert!(
        audit
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["method"] == "POST" && e["path"] == "/api/campaigns" && e["status"] == 201),
        "{audit}"
    );
}
