//! `[archive]` (issue 42): `bench serve` moves the samples of old runs into the archive by
//! itself at the configured time of day, and the audit log says what it moved.

use crate::cli_archive::record;
use crate::daemon::Daemon;
use run_store::{AuditFilter, Store};
use std::time::{Duration, Instant};

/// How long the test waits for the pass before it fails (a guard, not a measurement).
const PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn bench_serve_archives_finished_runs_at_its_time_of_day_and_audits_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let run = record(db.to_str().unwrap());
    // The pass is due three seconds from now (UTC): the test is about wall-clock time.
    let at = (chrono::Utc::now() + chrono::Duration::seconds(3)).format("%H:%M:%S");
    let config = dir.path().join("bench.toml");
    let text = format!(
        "{}\n[archive]\nto = \"nightly\"\nafter_days = 0\nat = \"{at}\"\n",
        bench_daemon::config::SIM_TOML
    );
    std::fs::write(&config, text).unwrap();
    let daemon = Daemon::in_process(&["--sim", "--config", config.to_str().unwrap()], &db);

    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open(db.to_str().unwrap())).unwrap();
    let t0 = Instant::now();
    let archive = loop {
        if let Some(a) = rt.block_on(store.archive_of(run)).unwrap() {
            break a;
        }
        assert!(t0.elapsed() < PATIENCE, "run {run} was not archived");
        std::thread::sleep(Duration::from_millis(100));
    };
    // `to` is relative to the config file.
    let root = dir.path().join("nightly");
    assert!(
        archive.path.starts_with(root.to_str().unwrap()),
        "{}",
        archive.path
    );
    assert!(std::path::Path::new(&archive.path).is_file());
    assert_eq!(archive.rows, 5_000);

    // The run's samples are now read from the file, through the daemon.
    let samples = daemon.json(&format!("/api/runs/{run}/samples?every=10"));
    assert_eq!(
        samples["t"].as_array().map(Vec::len),
        Some(500),
        "{samples:.200}"
    );

    let log = rt
        .block_on(store.audit_log(&AuditFilter::default()))
        .unwrap();
    let pass = log
        .iter()
        .find(|e| e.method == "ARCHIVE")
        .expect("the pass in the audit log");
    assert_eq!(pass.status, 200);
    assert_eq!(pass.path, root.display().to_string());
    let detail: serde_json::Value = serde_json::from_str(pass.detail.as_deref().unwrap()).unwrap();
    assert_eq!(detail["runs"], serde_json::json!([run]));
    assert_eq!(detail["rows"], 5_000);
    rt.block_on(store.close());
}

#[test]
fn a_wrong_time_of_day_is_refused_naming_the_field() {
    let text = format!(
        "{}\n[archive]\nto = \"a\"\nafter_days = 9\nat = \"3 am\"\n",
        bench_daemon::config::SIM_TOML
    );
    let e = bench_daemon::config::BenchConfig::parse(&text, "bench.toml").unwrap_err();
    assert!(e.to_string().contains("[archive] at = \"3 am\""), "{e}");
}
