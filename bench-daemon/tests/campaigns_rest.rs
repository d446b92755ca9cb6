//! Characterisation campaigns over REST on `bench serve --sim`: a campaign recorded by
//! `bench characterise --sim` (a budget too small for its second step, so it is cheap and ends
//! `failed` after its first) is listed, read with its steps' runs, and its report served as
//! HTML; unknown ids are 404 and bad queries 400, naming the field.

use crate::cli_serve::Daemon;
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
