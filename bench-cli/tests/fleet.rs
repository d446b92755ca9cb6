//! The fleet (issue 42 item 3): two benches with `[lab]` (each `bench serve --config` on its
//! own simulated devices, `bench sim` over Modbus TCP) heartbeat into one lab store on a real
//! PostgreSQL server, one running a short run and one idle; the lab view's
//! `GET /api/lab/benches` shows both with their states, and a bench that stops reporting turns
//! stale. Every wait polls with a deadline; nothing is timed.

use crate::cli_serve::tiny;
use crate::daemon::Daemon;
use crate::lab::fresh_database;
use crate::util::SimProcess;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A bench.toml in `dir`: the devices of `sim` named `bench_id`, heartbeating to `lab`.
/// (`--sim` would name every bench `sim`.)
fn bench_toml(dir: &Path, bench_id: &str, sim: &SimProcess, lab: &str) -> PathBuf {
    let path = dir.join(format!("{bench_id}.toml"));
    let devices = bench_daemon::config::SIM_TOML.replace("127.0.0.1:5020", &sim.tcp);
    let text = format!(
        "bench_id = \"{bench_id}\"\n{devices}\n[lab]\nurl = \"{lab}\"\nheartbeat_s = 0.2\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `bench serve --config` for `bench_id` on its own simulated devices, its store in `dir`.
fn bench_serve(dir: &Path, bench_id: &str, lab: &str) -> (Daemon, SimProcess) {
    let sim = SimProcess::start();
    let config = bench_toml(dir, bench_id, &sim, lab);
    let db = dir.join(format!("{bench_id}.db"));
    let daemon = Daemon::in_process(&["--config", config.to_str().unwrap()], &db);
    (daemon, sim)
}

/// Polls the lab's fleet until `bench`'s row satisfies `done` (at most 30 s); returns it.
fn wait_for(lab: &Daemon, bench: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let fleet = lab.json("/api/lab/benches");
        let row = fleet["benches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["bench_id"] == bench)
            .cloned();
        if let Some(row) = row.filter(|r| done(r)) {
            return row;
        }
        assert!(Instant::now() < deadline, "{bench} never {what}: {fleet}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_benches_heartbeat_to_one_lab_and_a_silent_one_turns_stale() {
    let Some(lab_url) = fresh_database() else {
        return;
    };
    let _slot = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    // The lab view first: it migrates the lab store the benches write into.
    let lab = Daemon::in_process(&["--lab"], Path::new(&lab_url));
    assert_eq!(
        lab.json("/api/lab/benches")["benches"],
        Value::Array(vec![])
    );
    let (busy, _busy_devices) = bench_serve(dir.path(), "rig-busy", &lab_url);
    let (idle, _idle_devices) = bench_serve(dir.path(), "rig-idle", &lab_url);

    let r = busy.req("POST", "/api/runs", Some(&tiny("fleet run", 2.0)));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    let running = wait_for(&lab, "rig-busy", "running", |b| b["state"] == "running");
    assert_eq!(running["run_id"], id);
    assert_eq!(running["run_name"], "fleet run");
    let progress = running["progress"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&progress), "{running}");
    assert_eq!(running["stale"], false);
    let stale_after = running["stale_after_s"].as_f64().unwrap();
    assert!((stale_after - 0.6).abs() < 1e-9, "{running}");

    let quiet = wait_for(&lab, "rig-idle", "idle", |b| b["state"] == "idle");
    assert_eq!(
        (&quiet["run_id"], &quiet["stale"]),
        (&Value::Null, &Value::Bool(false))
    );
    assert!(quiet["last_heartbeat"].is_string(), "{quiet}");

    // The run ends: idle again, its stop reason shown.
    let run = busy.wait_final(id, Duration::from_secs(60));
    assert_eq!(run["status"], "completed", "{run}");
    let done = wait_for(&lab, "rig-busy", "idle after its run", |b| {
        b["state"] == "idle" && !b["last_stop_reason"].is_null()
    });
    assert_eq!(done["run_name"], Value::Null);

    // rig-idle stops reporting: within 3 heartbeats it is stale, rig-busy still fresh.
    drop(idle);
    let silent = wait_for(&lab, "rig-idle", "stale", |b| b["stale"] == true);
    assert!(
        silent["heartbeat_age_s"].as_f64().unwrap() > 0.6,
        "{silent}"
    );
    let fleet = lab.json("/api/lab/benches");
    let ids: Vec<&str> = fleet["benches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["bench_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["rig-busy", "rig-idle"], "{fleet}");
    drop(busy);
}

#[test]
fn a_lab_that_does_not_answer_never_holds_up_the_bench() {
    let _slot = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    // A lab that takes connections and never answers: every heartbeat waits until its time is
    // up.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let config = dir.path().join("bench.toml");
    let text = format!(
        "{}\n[lab]\nurl = \"postgres://fb@{}/lab\"\nheartbeat_s = 0.05\n",
        bench_daemon::config::SIM_TOML,
        silent.local_addr().unwrap()
    );
    std::fs::write(&config, text).unwrap();
    let db = dir.path().join("runs.db");
    let d = Daemon::in_process(&["--sim", "--config", config.to_str().unwrap()], &db);
    let r = d.req("POST", "/api/runs", Some(&tiny("lab down", 0.5)));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    let run = d.wait_final(id, Duration::from_secs(60));
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["dropped_batches"], 0, "{run}");
    // Its own store answers the fleet request: this bench, which recorded there.
    let own = d.json("/api/lab/benches");
    assert_eq!(own["benches"][0]["bench_id"], "sim", "{own}");
    drop(silent);
}
