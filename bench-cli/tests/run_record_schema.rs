//! `GET /api/runs/{id}` against the schema the service publishes (`RunRecord` in
//! `GET /api/openapi.json`, what the dashboard's types are generated from): a completed run
//! with its analysis (two kinds), a run aborted while it moved and an imported recording,
//! checked by the independent validator the live stream's test uses (jsonschema-rs).

use crate::cli_import::{EXCEL_COLUMNS, excel_csv, simulated_rows};
use crate::daemon::Daemon;
use crate::live_schema::{schema_python, validate_as};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A sweep on the simulated bench (its travel within the position window).
fn sweep(name: &str, velocities: &[f64], measure_s: f64) -> Value {
    json!({"kind": "constant_velocity_sweep", "name": name, "params": {
        "velocities": velocities, "directions": "both",
        "settle_s": 0.3, "measure_s": measure_s, "repeats": 1}})
}

#[test]
fn run_records_validate_against_the_published_schema() {
    let Some(python) = schema_python() else {
        return;
    };
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let start = |spec: &Value| {
        let r = d.req("POST", "/api/runs?start=now", Some(spec));
        assert_eq!(r.status, 201, "{}", r.text());
        r.json()["id"].as_i64().unwrap()
    };
    let done = start(&sweep("record-schema", &[0.3, 0.6, 1.0], 0.3));
    let done = d.wait_final(done, Duration::from_secs(60));
    assert_eq!(done["status"], "completed");
    assert!(done["results"].is_object(), "the analysis is in the record");
    let ramp = start(
        &json!({"kind": "torque_ramp", "name": "record-schema-ramp", "params": {
        "rates_nm_s": [5.0], "directions": "positive", "repeats": 1,
        "motion_counts": 400, "rest_s": 0.1}}),
    );
    let ramp = d.wait_final(ramp, Duration::from_secs(60));
    assert_eq!(ramp["status"], "completed", "{ramp}");
    assert_eq!(ramp["results"]["kind"], "torque_ramp");
    let query = format!(
        "/api/runs/import?file=bench.csv&name=imported&columns={}",
        EXCEL_COLUMNS.replace(' ', "%20")
    );
    let csv = excel_csv(&simulated_rows());
    let r = crate::import_rest::post_file(&d, &query, "text/csv", csv.as_bytes(), None);
    assert_eq!(r.status, 201, "{}", r.text());
    let imported = r.json()["run_id"].as_i64().unwrap();
    // A long one, aborted once it runs: its reason and code set.
    let long = start(&sweep("record-schema-aborted", &[0.1, 0.2], 60.0));
    let t0 = Instant::now();
    while d.json(&format!("/api/runs/{long}"))["status"] != "running" {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        d.req("POST", &format!("/api/runs/{long}/abort"), None)
            .status,
        202
    );
    let aborted = d.wait_final(long, Duration::from_secs(60));
    assert_eq!(aborted["status"], "aborted");
    assert!(aborted["reason_code"].is_string(), "{aborted}");
    let records = [
        d.json(&format!("/api/runs/{}", done["id"])),
        d.json(&format!("/api/runs/{long}")),
        d.json(&format!("/api/runs/{}", ramp["id"])),
        d.json(&format!("/api/runs/{imported}")),
    ];
    assert_eq!(records[3]["results"]["kind"], "imported", "{}", records[3]);
    let doc = d.json("/api/openapi.json");
    let bad = validate_as(&python, &doc, "RunRecord", &records, dir.path());
    assert!(
        bad.is_empty(),
        "records outside RunRecord:\n{}",
        bad.join("\n")
    );
    // The checker sees a wrong one: a record without its chain, its timing a string.
    let mut wrong = records[0].clone();
    wrong.as_object_mut().unwrap().remove("chain");
    wrong["timing"] = json!("fast");
    let found = validate_as(&python, &doc, "RunRecord", &[wrong], dir.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("chain") && found[0].contains("timing"),
        "{found:?}"
    );
    // A sweep's analysis with a wrong-typed field, an import's spec without its source, a
    // kind's spec naming no kind the service has: each caught.
    let mut results = records[0].clone();
    results["results"]["positive"] = json!("many");
    let mut spec = records[3].clone();
    spec["spec"].as_object_mut().unwrap().remove("source");
    let mut kind = records[2].clone();
    kind["spec"]["kind"] = json!("torque_rampage");
    let found = validate_as(
        &python,
        &doc,
        "RunRecord",
        &[results, spec, kind],
        dir.path(),
    );
    assert_eq!(found.len(), 3, "{found:?}");
}
