//! A lab of many benches on a real PostgreSQL server (the throwaway cluster of
//! `scripts/pg-cluster.sh`, `$FRICTIONBENCH_TEST_PG`): simulated benches recording into it at
//! once, a push killed midway and run again, and the read-only lab view.

use crate::daemon::Daemon;
use crate::util::{bench, bench_slot, stderr, stdout};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A new database in the test cluster (its URL), or `None` when no cluster is configured
/// (then the test says so and passes, unless `$FRICTIONBENCH_REQUIRE_PG` is set).
pub(crate) fn fresh_database() -> Option<String> {
    let Ok(admin) = std::env::var("FRICTIONBENCH_TEST_PG") else {
        assert!(
            std::env::var_os("FRICTIONBENCH_REQUIRE_PG").is_none(),
            "FRICTIONBENCH_TEST_PG is not set (scripts/pg-cluster.sh start DIR prints it)"
        );
        eprintln!("skipped: FRICTIONBENCH_TEST_PG is not set (scripts/pg-cluster.sh)");
        return None;
    };
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("lab_{}_{n}", std::process::id());
    psql(&admin, &format!("CREATE DATABASE {name}"));
    let (base, query) = admin.split_once('?').unwrap_or((&admin, ""));
    let server = base.rsplit_once('/').unwrap().0;
    Some(format!("{server}/{name}?{query}"))
}

/// Runs one SQL statement with `psql`; returns its unaligned output.
fn psql(url: &str, sql: &str) -> String {
    let o = Command::new("psql")
        .args([url, "-Atqc", sql])
        .output()
        .expect("psql (Debian's postgresql-client)");
    assert!(o.status.success(), "psql {sql}: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// The JSON a successful command printed.
pub(crate) fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).expect("JSON")
}

/// `bench runs list --db DB --json`'s runs.
fn runs(db: &str) -> Vec<Value> {
    let v = json(&bench(&[
        "runs", "list", "--db", db, "--json", "--limit", "1000",
    ]));
    v["runs"].as_array().unwrap().clone()
}

/// `bench runs show ID --json --checksum`.
fn show_with_checksum(db: &str, id: i64) -> Value {
    json(&bench(&[
        "runs",
        "show",
        &id.to_string(),
        "--db",
        db,
        "--json",
        "--checksum",
    ]))
}

/// Every sample of run `id` is present: the exported indices are 0, 1, ... sample_count - 1.
fn assert_every_sample_present(db: &str, id: i64, count: u64) {
    let o = bench(&[
        "runs",
        "export",
        &id.to_string(),
        "--db",
        db,
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let idx: Vec<u64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(idx.len() as u64, count, "run {id}: rows");
    assert!(
        idx.iter().enumerate().all(|(i, k)| *k == i as u64),
        "run {id}: a gap in the sample indices"
    );
}

/// A torque ramp of a few seconds: one rate, both directions.
fn short_ramp(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let spec = dir.path().join("ramp.json");
    std::fs::write(
        &spec,
        r#"{"kind": "torque_ramp", "name": "lab ramp", "params": {"rates_nm_s": [3.0],
            "directions": "both", "repeats": 1, "motion_counts": 400, "rest_s": 0.3}}"#,
    )
    .unwrap();
    spec
}

#[test]
fn four_simulated_benches_record_into_one_postgres_at_once_without_a_dropped_batch() {
    let Some(db) = fresh_database() else { return };
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let spec = short_ramp(&dir);
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_bench"))
                .args(["run", spec.to_str().unwrap(), "--sim", "--db", &db])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "bench run: {}", stderr(&o));
    }
    let list = runs(&db);
    assert_eq!(list.len(), 4);
    for r in &list {
        let id = r["id"].as_i64().unwrap();
        let run = crate::util::show(&db, id);
        assert_eq!(run["status"], "completed", "run {id}");
        assert_eq!(run["bench_id"], "sim");
        assert_eq!(run["dropped_batches"], 0, "run {id} dropped batches");
        let count = run["sample_count"].as_u64().unwrap();
        assert!(count > 1000, "run {id}: {count} samples");
        assert_every_sample_present(&db, id, count);
    }
}

/// A bench database of `runs` runs of `samples` samples each (the recorder's own writes, via
/// `bench perf storage` and `bench runs push` between SQLite files).
fn bench_database(dir: &tempfile::TempDir, runs: usize, samples: u64) -> String {
    let db = dir.path().join("bench.db").display().to_string();
    for k in 0..runs {
        let one = dir.path().join(format!("one-{k}.db")).display().to_string();
        let n = samples.to_string();
        let made = bench(&[
            "perf",
            "storage",
            "--db",
            &one,
            "--samples",
            &n,
            "--models",
            "1",
        ]);
        assert!(made.status.success(), "{}", stderr(&made));
        if k == 0 {
            std::fs::rename(&one, &db).unwrap();
            continue;
        }
        let o = bench(&["runs", "push", "--db", &one, "--to", &db]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    db
}

#[test]
fn a_push_killed_midway_and_run_again_copies_each_run_once_with_equal_checksums() {
    let Some(lab) = fresh_database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let runs_n = 6;
    let bench_db = bench_database(&dir, runs_n, 600_000);
    // The lab's schema first, so the first copied run can be watched for.
    assert!(runs(&lab).is_empty());

    let mut push = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["runs", "push", "--db", &bench_db, "--to", &lab])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while psql(&lab, "SELECT count(*) FROM runs") == "0" {
        assert!(t0.elapsed() < Duration::from_secs(60), "no run copied");
        std::thread::sleep(Duration::from_millis(5));
    }
    push.kill().unwrap(); // SIGKILL
    push.wait().unwrap();
    let copied_before = psql(&lab, "SELECT count(*) FROM runs")
        .parse::<usize>()
        .unwrap();
    eprintln!("killed after {copied_before} of {runs_n} runs");
    assert!(
        copied_before < runs_n,
        "the push finished before it was killed"
    );

    let o = bench(&["runs", "push", "--db", &bench_db, "--to", &lab, "--json"]);
    let report = json(&o);
    let count = |k: &str| report[k].as_array().unwrap().len();
    assert_eq!(count("failed"), 0, "{report}");
    assert_eq!(count("pushed") + count("skipped"), runs_n);
    assert_eq!(count("skipped"), copied_before);
    // Once more: nothing to copy.
    let again = json(&bench(&[
        "runs", "push", "--db", &bench_db, "--to", &lab, "--json",
    ]));
    assert_eq!(again["pushed"].as_array().unwrap().len(), 0);
    assert_eq!(again["skipped"].as_array().unwrap().len(), runs_n);

    let in_lab = runs(&lab);
    assert_eq!(in_lab.len(), runs_n, "each run once");
    let mut uuids = BTreeSet::new();
    for (here, there) in runs(&bench_db).iter().zip(&in_lab) {
        let a = show_with_checksum(&bench_db, here["id"].as_i64().unwrap());
        let b = show_with_checksum(&lab, there["id"].as_i64().unwrap());
        assert_eq!(a["uuid"], b["uuid"]);
        assert_eq!(a["sample_count"], 600_000);
        assert_eq!(b["sample_count"], 600_000);
        assert_eq!(
            a["sample_checksum"], b["sample_checksum"],
            "run {}",
            a["uuid"]
        );
        assert_eq!(there["bench_id"], a["bench_id"]);
        uuids.insert(b["uuid"].as_str().unwrap().to_string());
    }
    assert_eq!(uuids.len(), runs_n);
}

#[test]
fn the_lab_view_serves_every_benchs_runs_read_only() {
    let Some(lab) = fresh_database() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Two benches' stores, one run each, pushed into the lab: each bench a bench.toml naming
    // the bench, its devices the simulated plant in simulated time (`util::SimBench`).
    for bench_id in ["rig-a", "rig-b"] {
        let sub = dir.path().join(bench_id);
        std::fs::create_dir(&sub).unwrap();
        let config = crate::util::config_for(&sub, "127.0.0.1:5020");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, format!("bench_id = \"{bench_id}\"\n{text}")).unwrap();
        let db = sub.join("runs.db").display().to_string();
        let bench_on = crate::util::SimBench {
            loaded: bench_daemon::config::Loaded::from_file(&config).unwrap(),
            ..crate::util::SimBench::default()
        };
        let spec = std::fs::read_to_string(crate::util::spec("torque_ramp.json")).unwrap();
        bench_on.run_into(&db, &spec, "completed");
        let o = bench(&["runs", "push", "--db", &db, "--to", &lab]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let d = Daemon::in_process(&["--lab"], std::path::Path::new(&lab));
    let listed = d.get("/api/runs").json();
    let benches: BTreeSet<&str> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["bench_id"].as_str().unwrap())
        .collect();
    assert_eq!(benches, BTreeSet::from(["rig-a", "rig-b"]));
    assert_eq!(d.get("/api/runs?bench=rig-b").json()["total"], 1);
    let id = listed["runs"][0]["id"].as_i64().unwrap();
    let samples = d.get(&format!("/api/runs/{id}/samples?every=100"));
    assert_eq!(samples.status, 200);
    assert_eq!(d.get("/api/bench").json()["lab"], true);
    let before = psql(&lab, "SELECT count(*) FROM runs");
    for (method, path, body) in [
        (
            "POST",
            "/api/runs",
            Some(serde_json::json!({"spec": {"kind": "prbs"}})),
        ),
        ("POST", "/api/estop", None),
        ("PUT", "/api/queue", Some(serde_json::json!({"order": []}))),
        (
            "POST",
            "/api/fits",
            Some(serde_json::json!({"model": "lugre"})),
        ),
    ] {
        let r = d.req(method, path, body.as_ref());
        assert_eq!(r.status, 409, "{method} {path}: {}", r.text());
        assert!(r.text().contains("lab view"), "{}", r.text());
    }
    assert_eq!(
        psql(&lab, "SELECT count(*) FROM runs"),
        before,
        "nothing changed"
    );
}
