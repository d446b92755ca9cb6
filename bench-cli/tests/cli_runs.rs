//! `bench runs list|show|export` and `bench perf storage` on a real run database.

use crate::util::{bench, stderr, stdout};
use run_store::{
    Batch, Finish, NewRun, Recorder, RecorderConfig, RunStatus, Sample, Store, TimingStats,
};
use serde_json::Value;
use std::path::Path;

/// Writes two runs into a fresh database: a completed `torque_ramp` with 3 samples, 2 models,
/// timing and results, and an aborted `prbs` run without samples. Returns their ids.
fn fill(path: &Path) -> (i64, i64) {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Store::open(path).await.unwrap();
        let run = NewRun {
            kind: "torque_ramp".into(),
            name: "ramp A".into(),
            spec: serde_json::json!({"kind": "torque_ramp", "name": "ramp A", "params": {}}),
            software_version: "0.1.0".into(),
            models: vec!["lugre".into(), "dahl".into()],
            period_s: Some(1e-3),
            ..NewRun::default()
        };
        let id = store.create_run(&run).await.unwrap();
        let recorder = Recorder::start(&store, id, RecorderConfig::default())
            .await
            .unwrap();
        let mut b = Batch::with_capacity(0, 3, 2);
        for k in 0..3 {
            let s = Sample {
                t: k as f64 * 1e-3,
                x: k as f64,
                v: 0.5,
                ..Sample::default()
            };
            b.push(s, &[0.25 * k as f64, -1.0]);
        }
        recorder.sender().try_send(b).unwrap();
        let timing = TimingStats {
            period_error_p50_us: Some(2.0),
            period_error_p99_us: Some(17.5),
            period_error_max_us: Some(40.0),
            overruns: 0,
            period_error_p999_us: Some(30.0),
            tick_work_p50_us: Some(120.0),
        };
        recorder
            .close(Finish::completed(Some(timing)))
            .await
            .unwrap();
        store
            .save_results(
                id,
                &serde_json::json!({"breakaway": [{"rate": 0.5, "torque": 0.61}]}),
            )
            .await
            .unwrap();
        let other = store
            .create_run(&NewRun {
                kind: "prbs".into(),
                name: "p".into(),
                ..NewRun::default()
            })
            .await
            .unwrap();
        store
            .finish_run(
                other,
                RunStatus::Aborted,
                Some(&run_store::Reason::new(
                    run_store::ReasonCode::OperatorAbort,
                    "operator abort",
                )),
            )
            .await
            .unwrap();
        store.close().await;
        (id, other)
    })
}

#[test]
fn runs_list_show_and_export_read_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let (id, other) = fill(&db);
    let db = db.to_str().unwrap();

    let o = bench(&["runs", "list", "--db", db, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(page["total"], 2);
    assert_eq!(page["runs"][0]["id"], other);
    assert_eq!(page["runs"][0]["status"], "aborted");
    assert_eq!(page["runs"][1]["sample_count"], 3);
    let o = bench(&["runs", "list", "--db", db, "--status", "completed"]);
    let text = stdout(&o);
    assert!(text.contains("ramp A") && !text.contains("prbs"), "{text}");

    let id_s = id.to_string();
    let o = bench(&["runs", "show", &id_s, "--db", db, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(run["status"], "completed");
    assert_eq!(run["timing"]["period_error_p99_us"], 17.5);
    assert_eq!(run["results"]["breakaway"][0]["torque"], 0.61);
    let text = stdout(&bench(&["runs", "show", &id_s, "--db", db]));
    assert!(text.contains("status:           completed"), "{text}");
    assert!(text.contains("p99 17.5 us"), "{text}");

    let out = dir.path().join("run.csv");
    let o = bench(&[
        "runs",
        "export",
        &id_s,
        "--format",
        "csv",
        "--out",
        out.to_str().unwrap(),
        "--db",
        db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags,lugre,dahl\n\
         0,0,0,0.5,0,0,0,0,0,0,-1\n\
         1,0.001,1,0.5,0,0,0,0,0,0.25,-1\n\
         2,0.002,2,0.5,0,0,0,0,0,0.5,-1\n"
    );
    let o = bench(&["runs", "export", &id_s, "--format", "json", "--db", db]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["rows"][2],
        serde_json::json!([2, 0.002, 2.0, 0.5, 0.0, 0.0, 0.0, 0, 0, 0.5, -1.0])
    );
}

#[test]
fn unknown_runs_missing_databases_and_bad_filters_exit_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    fill(&db);
    let db = db.to_str().unwrap();
    for args in [
        vec!["runs", "show", "999", "--db", db],
        vec!["runs", "export", "999", "--format", "csv", "--db", db],
    ] {
        let o = bench(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("run 999 not found"), "{}", stderr(&o));
    }
    let missing = dir.path().join("nope.db");
    let o = bench(&["runs", "list", "--db", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no run database at"), "{}", stderr(&o));
    assert!(!missing.exists(), "listing must not create a database");
    let o = bench(&["runs", "list", "--db", db, "--status", "done"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--status: unknown run status 'done'"),
        "{}",
        stderr(&o)
    );
    let o = bench(&["runs", "list", "--db", db, "--since", "last week"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("since (last week)"), "{}", stderr(&o));
    let o = bench(&["runs", "list", "--db", db, "--bench", "bench 2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--bench: 'bench 2' must be 1 to 64 letters, digits"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn perf_storage_reports_samples_per_second() {
    let o = bench(&[
        "perf",
        "storage",
        "--json",
        "--samples",
        "20000",
        "--models",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["samples"], 20000);
    assert!(doc["samples_per_s"].as_f64().unwrap() > 0.0);
    assert!(doc["db_bytes"].as_u64().unwrap() >= 20000 * 56);
}

/// Issue 28's benchmark of accounting: `bench perf audit` fills a store through the product's
/// own writes (runs, tag edits with their audit entries) and reports every figure.
#[test]
fn perf_audit_tags_its_runs_and_reports_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let db = path.to_str().unwrap();
    let o = bench(&[
        "perf",
        "audit",
        "--json",
        "--runs",
        "2000",
        "--repeats",
        "20",
        "--db",
        db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["runs"], 2000);
    assert_eq!(
        doc["tagged"],
        serde_json::json!({"good": 20, "suspect": 100})
    );
    for key in ["audit_append_ms", "tag_edit_ms", "list_ms"] {
        assert!(doc[key]["p99"].as_f64().unwrap() > 0.0, "{key}: {doc}");
    }
    // The store it leaves answers `bench runs list --tag` with exactly the tagged runs.
    let o = bench(&["runs", "list", "--db", db, "--tag", "good", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(page["total"], 20, "{page}");
    // The edits are in the audit log: a tag edit per tagged run, plus the timed ones.
    let o = bench(&["audit", "--db", db, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let log: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(log.as_array().unwrap().len() >= 100 + 20 + 20, "{log}");
    // An existing file is refused and left alone.
    let o = bench(&["perf", "audit", "--runs", "10", "--db", db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--db"), "{}", stderr(&o));
}

/// Issue 28: tags and notes after the run (`bench runs tag`, `bench runs note`), `runs list
/// --tag`, the audit log of the edits with their old values (`bench audit`), and `bench runs
/// diff`.
#[test]
fn tags_notes_audit_and_diff_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let (ramp, prbs) = fill(&path);
    let db = path.to_str().unwrap();
    let json = |args: &[&str]| -> Value {
        let o = bench(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let ramp_s = ramp.to_string();
    let a = json(&[
        "runs", "tag", &ramp_s, "+good", "+night", "--db", db, "--json",
    ]);
    assert_eq!(a["tags"], serde_json::json!(["good", "night"]));
    let a = json(&[
        "runs",
        "tag",
        &ramp_s,
        "-night",
        "+regreased",
        "--db",
        db,
        "--json",
    ]);
    assert_eq!(a["tags"], serde_json::json!(["good", "regreased"]));
    let a = json(&[
        "runs",
        "note",
        &ramp_s,
        "bearing re-greased",
        "--db",
        db,
        "--json",
    ]);
    assert_eq!(a["notes"], "bearing re-greased");
    let run = json(&["runs", "show", &ramp_s, "--db", db, "--json"]);
    assert_eq!(
        (run["tags"].clone(), run["notes"].clone()),
        (a["tags"].clone(), a["notes"].clone())
    );
    // A bad tag: exit 2 naming it, nothing changed.
    let o = bench(&["runs", "tag", &ramp_s, "+two words", "--db", db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("tag 'two words'"), "{}", stderr(&o));
    let list = json(&["runs", "list", "--tag", "good", "--db", db, "--json"]);
    assert_eq!(
        (list["total"].as_i64(), list["runs"][0]["id"].as_i64()),
        (Some(1), Some(ramp))
    );
    assert_eq!(
        json(&["runs", "list", "--tag", "absent", "--db", db, "--json"])["total"],
        0
    );
    // Each edit in the audit log, newest first, with the old value.
    let log = json(&["audit", "--db", db, "--json"]);
    let log = log.as_array().unwrap();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(log[0]["method"], "bench runs note");
    let detail: Value = serde_json::from_str(log[0]["detail"].as_str().unwrap()).unwrap();
    assert_eq!(detail["before"]["notes"], Value::Null);
    assert_eq!(detail["after"]["notes"], "bearing re-greased");
    assert_eq!(
        (log[2]["run_id"].as_i64(), log[2]["remote"].as_str()),
        (Some(ramp), Some("cli"))
    );
    // What changed between the two runs, by path.
    let d = json(&[
        "runs",
        "diff",
        &ramp_s,
        &prbs.to_string(),
        "--db",
        db,
        "--json",
    ]);
    let whats: Vec<&str> = d["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["what"].as_str().unwrap())
        .collect();
    // The prbs run has no spec at all: the spec differs whole.
    assert_eq!(whats, ["software_version", "kind", "spec"]);
    let o = bench(&["runs", "diff", &ramp_s, &ramp_s, "--db", db]);
    assert!(stdout(&o).contains("no difference"), "{}", stdout(&o));
    let o = bench(&["runs", "diff", &ramp_s, "999", "--db", db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // The same over REST (the run page's "Compare with…"); a run that does not exist is named.
    let daemon = crate::daemon::Daemon::in_process(&["--sim"], &path);
    let rest = daemon.req("GET", &format!("/api/runs/{ramp}/diff?with={prbs}"), None);
    assert_eq!((rest.status, rest.json()), (200, d));
    let r = daemon.req("GET", &format!("/api/runs/{ramp}/diff?with=999"), None);
    assert_eq!((r.status, &r.json()["field"]), (404, &Value::from("with")));
    let r = daemon.req("GET", &format!("/api/runs/{ramp}/diff"), None);
    assert_eq!(r.status, 400, "{}", r.text());
}
