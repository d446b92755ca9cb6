//! Stored comparisons against the schema the service publishes: a campaign's (written by
//! `campaign::analyse`) and one of `POST /api/comparisons` (written by `bench_daemon`'s
//! `CompareJob`), as `GET /api/runs/{id}` lists them (`StoredComparison`: friction's
//! `StoredOptions` and `ComparisonTable`) and as the POST answers (`Compared`), checked by the
//! validator the run record's test uses (jsonschema-rs); a wrong-typed record is caught.

use crate::daemon::Daemon;
use crate::live_schema::{schema_python, validate_as};
use crate::util::{bench, db_in, stderr, stdout};
use serde_json::{Value, json};

#[test]
fn stored_comparisons_validate_against_the_published_schema() {
    let Some(python) = schema_python() else {
        return;
    };
    let _slot = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let o = bench(&[
        "characterise",
        "--sim",
        "--models",
        "coulomb_viscous,stribeck_exp",
        "--db",
        &db,
    ]);
    let out = stdout(&o);
    let first = out.lines().next().unwrap_or_default();
    let id: i64 = match first.strip_prefix("campaign ").map(str::parse) {
        Some(Ok(id)) => id,
        _ => panic!("{out}\n{}", stderr(&o)),
    };
    let d = Daemon::in_process(&["--sim"], std::path::Path::new(&db));
    let c = d.json(&format!("/api/campaigns/{id}"));
    let run_of = |step: &str| {
        let s = c["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == step);
        s.and_then(|s| s["run_id"].as_i64())
            .unwrap_or_else(|| panic!("no {step} run: {c}"))
    };
    let (sweep, validation) = (run_of("sweep"), run_of("validation"));
    // A comparison of the daemon's: its models start from the campaign's stored fits.
    let body = json!({"estimate": [sweep], "validate": [validation],
        "models": ["coulomb_viscous", "stribeck_exp=none"], "max_iters": 20});
    let r = d.req("POST", "/api/comparisons", Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    let answer = r.json();
    let record = d.json(&format!("/api/runs/{validation}"));
    let stored = record["comparisons"].as_array().unwrap().clone();
    assert_eq!(
        stored.len(),
        2,
        "the campaign's and the daemon's: {stored:?}"
    );
    assert_eq!(stored[0]["options"]["campaign"], id, "{}", stored[0]);
    assert_eq!(stored[1]["id"], answer["comparison_id"]);
    assert!(
        stored[1]["options"]["start_from"]["coulomb_viscous"][0]["set_id"].is_i64(),
        "the daemon's fit started from the campaign's set: {}",
        stored[1]["options"]
    );
    assert_eq!(stored[1]["table"]["rows"], answer["rows"]);
    let doc = d.json("/api/openapi.json");
    let checks = [
        ("StoredComparison", stored.clone()),
        ("Compared", vec![answer.clone()]),
        ("RunRecord", vec![record]),
    ];
    for (name, values) in &checks {
        let bad = validate_as(&python, &doc, name, values, dir.path());
        assert!(
            bad.is_empty(),
            "answers outside {name}:\n{}",
            bad.join("\n")
        );
    }
    // The checker sees wrong ones: options without their replay, a score as text, a row's
    // verdict of an unknown status; an answer without the stored comparison's id.
    let mut wrong = stored.clone();
    wrong[0]["options"]
        .as_object_mut()
        .unwrap()
        .remove("replay");
    wrong[1]["table"]["rows"][0]["validation"]["all"] = json!("small");
    wrong[1]["table"]["rows"][0]["fit"]["verdict"]["status"] = json!("fine");
    let found = validate_as(&python, &doc, "StoredComparison", &wrong, dir.path());
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("replay"), "{found:?}");
    assert!(
        found[1].contains("small") && found[1].contains("fine"),
        "{found:?}"
    );
    let mut answer: Value = answer;
    answer.as_object_mut().unwrap().remove("comparison_id");
    let found = validate_as(&python, &doc, "Compared", &[answer], dir.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("comparison_id"), "{found:?}");
}
