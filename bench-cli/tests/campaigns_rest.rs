//! Characterisation campaigns over REST on `bench serve --sim`: a campaign recorded by
//! `bench characterise --sim` (a budget too small for its second step, so it is cheap and ends
//! `failed` after its first) is listed, read with its steps' runs, and its report served as
//! HTML; unknown ids are 404 and bad queries 400, naming the field.

use crate::daemon::Daemon;
use crate::util::{bench, db_in, stderr, stdout};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The run of the campaign step on the bench once it is moving (100 live samples); asserts it
/// is the first step's (the breakaway torque ramps).
fn first_step_moving(d: &Daemon) -> i64 {
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
    run
}

/// Asserts the audit log has a `POST path` answered `status`.
fn assert_audited(d: &Daemon, path: &str, status: u16) {
    let audit = d.json("/api/audit");
    let found = audit
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["method"] == "POST" && e["path"] == path && e["status"] == status);
    assert!(found, "POST {path} {status} not in {audit}");
}

/// Campaign `id` once it is no longer `running` (at most 10 s).
fn campaign_ended(d: &Daemon, id: i64) -> Value {
    let t0 = Instant::now();
    loop {
        let c = d.json(&format!("/api/campaigns/{id}"));
        if c["status"] != "running" {
            return c;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{c}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

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
    let d = Daemon::in_process(&["--sim"], std::path::Path::new(&db));
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
    assert_eq!(r["campaign"], json!({"id": id, "step": "breakaway"}));
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
    let d = Daemon::in_process(&["--sim"], &db);
    assert_eq!(d.json("/api/campaigns"), json!([]));
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
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
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
    let run = first_step_moving(&d);
    let e = d.req("POST", "/api/estop", None);
    assert_eq!(e.status, 200, "{}", e.text());
    assert_eq!(e.json()["aborted_run"], run);
    let stopped = d.wait_final(run, Duration::from_secs(10));
    assert_eq!(stopped["reason_code"], "estop", "{stopped}");
    let c = campaign_ended(&d, id);
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
    assert_audited(&d, "/api/campaigns", 201);
}

/// A `{"campaign"}` schedule entry due now starts its campaign as `POST /api/campaigns` does:
/// its first step runs on the bench. While it runs, a second due entry cannot start one: nothing
/// moves and the entry says why. `POST /api/campaigns/{id}/stop` aborts the step's run and ends
/// the campaign `stopped`; stopping it again is 409 naming its status, an unknown one 404.
#[test]
fn a_scheduled_campaign_starts_and_the_stop_endpoint_ends_it_stopped() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let body = json!({"campaign": {"models": ["coulomb_viscous"], "budget_min": 10.0}});
    let r = d.req("POST", "/api/schedule", Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    let entry = r.json()["id"].as_i64().unwrap();
    assert_eq!(r.json()["campaign"], body["campaign"]);
    let run = first_step_moving(&d);
    let e = scheduled(&d, entry, |e| e["last_campaign_id"].is_i64());
    assert_eq!(
        (&e["state"], &e["last_error"]),
        (&json!("done"), &Value::Null)
    );
    let id = e["last_campaign_id"].as_i64().unwrap();
    assert_eq!(d.json(&format!("/api/campaigns/{id}"))["status"], "running");

    let again = json!({"campaign": {}, "recurrence": "nightly"});
    let r = d.req("POST", "/api/schedule", Some(&again));
    assert_eq!(r.status, 201, "{}", r.text());
    let busy = r.json()["id"].as_i64().unwrap();
    let e = scheduled(&d, busy, |e| e["last_error"].is_string());
    let why = e["last_error"].as_str().unwrap();
    assert!(why.contains(&format!("campaign {id} is running")), "{e}");
    assert_eq!(e["state"], "pending", "a nightly entry tries again: {e}");
    assert_ne!(e["next_run_at"], e["run_at"], "{e}");
    assert_eq!(e["last_campaign_id"], Value::Null);

    let r = d.req("POST", &format!("/api/campaigns/{id}/stop"), None);
    assert_eq!(r.status, 200, "{}", r.text());
    let c = r.json();
    assert_eq!(c["status"], "stopped", "{c}");
    assert_eq!(c["steps"][0]["run_id"], run, "{c}");
    let stopped = d.wait_final(run, Duration::from_secs(10));
    assert_eq!(stopped["status"], "aborted", "{stopped}");
    // Nothing else ran or waits; the slot is free again.
    assert_eq!(d.runs_total(), 1);
    assert_eq!(d.json("/api/queue")["waiting"], 0);
    let r = d.req("POST", &format!("/api/campaigns/{id}/stop"), None);
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(
        r.text().contains(&format!("campaign {id} is stopped")),
        "{}",
        r.text()
    );
    let r = d.req("POST", "/api/campaigns/999/stop", None);
    assert_eq!(
        (r.status, r.json()["field"].clone()),
        (404, json!("id")),
        "{}",
        r.text()
    );
    assert_audited(&d, &format!("/api/campaigns/{id}/stop"), 200);
}

/// Schedule entry `id` once `done(entry)` holds (at most 10 s).
fn scheduled(d: &Daemon, id: i64, done: impl Fn(&Value) -> bool) -> Value {
    let t0 = Instant::now();
    loop {
        let list = d.json("/api/schedule");
        let e = list
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .cloned();
        let e = e.unwrap_or_else(|| panic!("no entry {id}: {list}"));
        if done(&e) {
            return e;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{e}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Bad `{"campaign"}` entries are refused naming the field, storing nothing; a due one on a
/// paused queue starts nothing and says so.
#[test]
fn bad_campaign_entries_are_refused_and_a_paused_queue_starts_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let spec = json!({"kind": "torque_ramp"});
    for (body, status, field) in [
        (
            json!({"campaign": {"models": ["nope"]}}),
            422,
            "campaign.models",
        ),
        (json!({"campaign": {"models": []}}), 422, "campaign.models"),
        (
            json!({"campaign": {"budget_min": 0}}),
            422,
            "campaign.budget_min",
        ),
        (
            json!({"campaign": {"budget_min": 5000}}),
            422,
            "campaign.budget_min",
        ),
        (
            json!({"campaign": {"budget_mins": 5}}),
            422,
            "campaign.budget_mins",
        ),
        (json!({"campaign": {}, "spec": spec}), 422, "spec"),
        (
            json!({"campaign": {}, "recurrence": "hourly"}),
            422,
            "recurrence",
        ),
        (json!({"campaign": {}, "run_at": "tonight"}), 422, "run_at"),
    ] {
        let r = d.req("POST", "/api/schedule", Some(&body));
        assert_eq!(r.status, status, "{body}: {}", r.text());
        assert_eq!(r.json()["field"], field, "{body}: {}", r.text());
    }
    assert_eq!(d.json("/api/schedule"), json!([]));
    let doc = d.json("/api/openapi.json");
    assert!(doc["paths"]["/api/campaigns/{id}/stop"]["post"].is_object());
    assert!(
        doc.to_string().contains("\"campaign\""),
        "the schedule body has campaign"
    );

    let r = d.req("PUT", "/api/queue", Some(&json!({"paused": true})));
    assert_eq!(r.status, 200, "{}", r.text());
    let r = d.req("POST", "/api/schedule", Some(&json!({"campaign": {}})));
    assert_eq!(r.status, 201, "{}", r.text());
    let e = scheduled(&d, r.json()["id"].as_i64().unwrap(), |e| {
        e["state"] != "pending"
    });
    assert_eq!(e["state"], "failed", "a one-off that could not start: {e}");
    assert!(e["last_error"].as_str().unwrap().contains("paused"), "{e}");
    assert_eq!(d.json("/api/campaigns"), json!([]));
    assert_eq!(d.runs_total(), 0);
}

/// A campaign the daemon was running when it was killed is `interrupted` at the next start,
/// its reason naming the command that continues it.
#[test]
fn a_campaign_running_when_the_daemon_was_killed_is_interrupted_at_restart() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    let body = json!({"models": ["coulomb_viscous"], "budget_min": 10});
    let r = d.req("POST", "/api/campaigns", Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    first_step_moving(&d);
    drop(d); // SIGKILL
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    let c = d.json(&format!("/api/campaigns/{id}"));
    assert_eq!(c["status"], "interrupted", "{c}");
    let reason = c["reason"].as_str().unwrap();
    assert!(reason.contains("bench characterise --config"), "{c}");
    assert!(reason.contains(&format!("--resume {id}")), "{c}");
    let r = d.req("POST", &format!("/api/campaigns/{id}/stop"), None);
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("is interrupted"), "{}", r.text());
}
