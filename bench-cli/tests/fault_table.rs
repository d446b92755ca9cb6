//! The fail-safe fault table: each fault a bench can meet, injected into a standalone
//! `bench sim` that a bench.toml points at (over Modbus TCP, and over RTU on a pty), against
//! a real `bench run` / `bench serve` process. Every row asserts the run's status and reason,
//! the drive's state read back over Modbus afterwards, and that every sample committed before
//! the fault is still stored. Each row prints a `FAULT-TABLE` line (fault → time to the end of
//! the run → the safe state the run's log reports → samples kept); run with `--nocapture` to
//! read the table.

use crate::daemon::Daemon;
use crate::util::{
    SimProcess, bench, bench_slot, config_for, db_in, show, spawn_run, spec, stderr, stdout,
    wait_for_samples,
};
use serde_json::{Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// CiA 402 statusword: "ready to switch on" (the daemon disabled the drive itself).
const READY_TO_SWITCH_ON: u64 = 0x21;
/// Statusword fault bit (the drive's own watchdog or a trip).
const FAULT_BIT: u64 = 0x08;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Wire {
    Tcp,
    Rtu,
}

/// A standalone simulated bench, a bench.toml pointing at it and a run database.
pub(crate) struct Bench {
    pub(crate) sim: SimProcess,
    _dir: tempfile::TempDir,
    pub(crate) db: String,
    pub(crate) cfg: PathBuf,
    wire: Wire,
    /// The full sweep (hours long: only a fault or a signal ends it).
    pub(crate) spec: String,
}

impl Bench {
    pub(crate) fn new(wire: Wire) -> Bench {
        let sim = match wire {
            Wire::Tcp => SimProcess::start(),
            Wire::Rtu => SimProcess::start_with(&["--rtu", "--baud", "921600"]),
        };
        let dir = tempfile::tempdir().unwrap();
        let db = db_in(&dir);
        let cfg = config_for(dir.path(), &sim.tcp);
        if wire == Wire::Rtu {
            // Both devices on the pty at 921 600 baud; a period the line can carry.
            let pty = sim.rtu.clone().expect("bench sim --rtu prints its pty");
            let text = std::fs::read_to_string(&cfg)
                .unwrap()
                .replace(
                    &format!("tcp = \"{}\"", sim.tcp),
                    &format!("serial = \"{pty}\"\nbaud = 921600"),
                )
                .replace("period_s = 0.001", "period_s = 0.02")
                .replace(
                    "sensor_stall_s = 0.05",
                    "sensor_stall_s = 0.1\ndrive_stall_s = 0.1",
                );
            std::fs::write(&cfg, text).unwrap();
        }
        Bench {
            sim,
            _dir: dir,
            db,
            cfg,
            wire,
            spec: spec("constant_velocity_sweep-full.json"),
        }
    }

    fn name(&self) -> &'static str {
        match self.wire {
            Wire::Tcp => "TCP",
            Wire::Rtu => "RTU",
        }
    }

    /// `bench run` of the full sweep.
    fn spawn_run(&self) -> (Child, i64) {
        let (child, _out, id) = spawn_run(&self.run_args());
        (child, id)
    }

    fn run_args(&self) -> Vec<&str> {
        vec![
            "run",
            &self.spec,
            "--config",
            self.cfg.to_str().unwrap(),
            "--db",
            &self.db,
        ]
    }

    /// Samples to wait for before the fault (about 1.5 s of running).
    fn warm(&self) -> i64 {
        match self.wire {
            Wire::Tcp => 1500,
            Wire::Rtu => 75,
        }
    }

    fn fault_reset(&self) {
        let o = bench(&["fault-reset", "--config", self.cfg.to_str().unwrap()]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    }
}

/// Waits for the child's exit; returns (exit code, stderr, seconds since `t0`).
fn finish(mut child: Child, t0: Instant) -> (Option<i32>, String, f64) {
    let status = child.wait().unwrap();
    let took = t0.elapsed().as_secs_f64();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.code(), err, took)
}

/// The run log's safe-state line.
fn safe_line(run: &Value) -> String {
    run["interruption_log"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["reason"].as_str())
        .find(|r| r.starts_with("drive disabled") || r.starts_with("drive safe state"))
        .unwrap_or("(no safe-state line)")
        .to_string()
}

fn row(bench: &Bench, fault: &str, took_s: f64, run: &Value, before: i64) {
    eprintln!(
        "FAULT-TABLE | {} | {fault} | {:.0} ms to the end of the run | {} | {} samples kept ({} committed before the fault) | {}",
        bench.name(),
        took_s * 1e3,
        safe_line(run),
        run["sample_count"],
        before,
        run["status_reason"].as_str().unwrap_or("")
    );
}

/// Injects `fault` into a running run; asserts it fails (exit 1) with `reason`; returns the
/// run record.
fn fails_on(bench: &mut Bench, fault: &str, reason: &str) -> (Value, i64, f64) {
    let (child, id) = bench.spawn_run();
    let before = wait_for_samples(&bench.db, id, bench.warm());
    let t0 = Instant::now();
    bench.sim.fault(fault);
    let (code, err, took) = finish(child, t0);
    assert_eq!(code, Some(1), "{fault}: {err}");
    let run = show(&bench.db, id);
    assert_eq!(run["status"], "failed", "{fault}: {run}");
    let got = run["status_reason"].as_str().unwrap();
    assert!(got.starts_with(reason), "{fault}: {got}");
    assert!(run["sample_count"].as_i64().unwrap() >= before, "{run}");
    row(bench, fault, took, &run, before);
    (run, before, took)
}

/// The drive reads back disabled by the daemon (not by its watchdog).
pub(crate) fn disabled_by_the_daemon(bench: &Bench, run: &Value) {
    let sw = bench.sim.statusword();
    assert_eq!(sw & 0x6F, READY_TO_SWITCH_ON, "statusword {sw:#06x}");
    assert!(
        safe_line(run).starts_with("drive disabled, confirmed by its status"),
        "{run}"
    );
}

/// The daemon could not reach the drive: its watchdog removed torque (fault bit latched).
fn disabled_by_the_watchdog(bench: &mut Bench) {
    // Wall-clock time on purpose: the drive's watchdog runs on its own clock in the simulator's
    // process, and the injected faults keep its status unreadable until they are cleared.
    std::thread::sleep(Duration::from_millis(400));
    bench.sim.fault("{}");
    let sw = bench.sim.statusword();
    assert_ne!(
        sw & 0x6F,
        0x27,
        "statusword {sw:#06x}: still operation enabled"
    );
    assert_eq!(
        sw & FAULT_BIT,
        FAULT_BIT,
        "statusword {sw:#06x}: watchdog fault expected"
    );
    bench.fault_reset();
}

fn sensor_drive_and_link_faults(wire: Wire) {
    let _slot = bench_slot();
    let mut b = Bench::new(wire);
    // The sensor goes silent while the drive answers: its own budget and stall watch end the
    // run within sensor_stall_s + one timeout.
    let (run, _, took) = fails_on(
        &mut b,
        r#"{"unit": 2, "silence": true}"#,
        "comms fault: torque sensor",
    );
    assert!(took < 2.0, "{took} s");
    b.sim.fault("{}");
    disabled_by_the_daemon(&b, &run);
    // A stuck sensor answers with stale values: its heartbeat stops.
    let (run, _, _) = fails_on(&mut b, r#"{"stuck_unit": 2}"#, "torque sensor stall");
    b.sim.fault("{}");
    disabled_by_the_daemon(&b, &run);
    // A silent drive: the safe state cannot be confirmed, the watchdog removes torque.
    let (run, _, _) = fails_on(
        &mut b,
        r#"{"unit": 1, "silence": true}"#,
        "comms fault: drive",
    );
    assert!(safe_line(&run).contains("UNCONFIRMED"), "{run}");
    disabled_by_the_watchdog(&mut b);
    // A dead line.
    fails_on(&mut b, r#"{"disconnect": true}"#, "comms fault");
    disabled_by_the_watchdog(&mut b);
}

#[test]
fn sensor_drive_and_link_faults_over_tcp() {
    sensor_drive_and_link_faults(Wire::Tcp);
}

#[test]
fn sensor_drive_and_link_faults_over_rtu() {
    sensor_drive_and_link_faults(Wire::Rtu);
}

fn a_drive_trip_is_cleared_only_by_an_operator(wire: Wire) {
    let _slot = bench_slot();
    let mut b = Bench::new(wire);
    let (run, _, _) = fails_on(&mut b, r#"{"trip": true}"#, "drive fault");
    assert_eq!(b.sim.statusword() & FAULT_BIT, FAULT_BIT);
    assert!(
        safe_line(&run).starts_with("drive disabled, confirmed"),
        "{run}"
    );
    // The next run meets the latched fault and moves nothing.
    let o = bench(&b.run_args());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("latched fault"), "{}", stderr(&o));
    assert_eq!(
        b.sim.statusword() & FAULT_BIT,
        FAULT_BIT,
        "a run cleared the fault"
    );
    // The operator's reset clears it; the drive stays disabled.
    b.fault_reset();
    let sw = b.sim.statusword();
    assert_eq!(sw & (FAULT_BIT | 0x04), 0, "statusword {sw:#06x}");
    // Signals end runs into the confirmed safe state.
    for signal in ["TERM", "HUP"] {
        let (child, id) = b.spawn_run();
        let before = wait_for_samples(&b.db, id, b.warm());
        let t0 = Instant::now();
        kill(&child, signal);
        let (code, err, took) = finish(child, t0);
        assert_eq!(code, Some(3), "{err}");
        let run = show(&b.db, id);
        assert_eq!(run["status"], "aborted");
        assert_eq!(run["status_reason"], format!("SIG{signal}"));
        disabled_by_the_daemon(&b, &run);
        row(&b, &format!("SIG{signal} of bench run"), took, &run, before);
    }
}

#[test]
fn a_drive_trip_is_cleared_only_by_an_operator_over_tcp() {
    a_drive_trip_is_cleared_only_by_an_operator(Wire::Tcp);
}

#[test]
fn a_drive_trip_is_cleared_only_by_an_operator_over_rtu() {
    a_drive_trip_is_cleared_only_by_an_operator(Wire::Rtu);
}

fn kill(child: &Child, signal: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn one_percent_corrupted_crcs_are_survived_over_rtu() {
    let _slot = bench_slot();
    let mut b = Bench::new(Wire::Rtu);
    let (child, id) = b.spawn_run();
    wait_for_samples(&b.db, id, 25);
    b.sim.fault(r#"{"corrupt_every": 100}"#);
    let before = show(&b.db, id)["sample_count"].as_i64().unwrap();
    // 4 s at 50 Hz with 2 replies per tick: about 4 corrupted replies.
    wait_for_samples(&b.db, id, before + 200);
    let t0 = Instant::now();
    kill(&child, "INT");
    let (code, err, took) = finish(child, t0);
    assert_eq!(
        code,
        Some(3),
        "survived until the operator stopped it: {err}"
    );
    let run = show(&b.db, id);
    assert_eq!(run["status_reason"], "SIGINT");
    let noted = run["interruption_log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["reason"]
                .as_str()
                .unwrap_or("")
                .starts_with("comms fault")
        })
        .count();
    assert!(noted >= 1, "no corrupted reply was noted: {run}");
    disabled_by_the_daemon(&b, &run);
    row(
        &b,
        &format!("1 % corrupted CRCs ({noted} tolerated)"),
        took,
        &run,
        before,
    );
}

#[test]
fn a_killed_run_is_reported_interrupted_and_the_drive_watchdog_removes_torque() {
    let _slot = bench_slot();
    let mut b = Bench::new(Wire::Tcp);
    let (mut child, id) = b.spawn_run();
    let before = wait_for_samples(&b.db, id, b.warm());
    child.kill().unwrap(); // SIGKILL: nothing of the daemon runs any more
    child.wait().unwrap();
    let run = show(&b.db, id);
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(run["sample_count"].as_i64().unwrap() >= before);
    disabled_by_the_watchdog(&mut b);
    row(&b, "SIGKILL of bench run", f64::NAN, &run, before);
}

#[test]
fn a_panic_in_a_model_step_fails_the_run_into_the_safe_state() {
    let _slot = bench_slot();
    let b = Bench::new(Wire::Tcp);
    let mut child = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(b.run_args())
        .env("FRICTIONBENCH_TEST_PANIC_IN_MODEL_STEP_AT_S", "4.0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let id: i64 = line.trim().strip_prefix("run ").unwrap().parse().unwrap();
    let before = wait_for_samples(&b.db, id, 1000);
    let t0 = Instant::now();
    let (code, err, took) = finish(child, t0);
    assert_eq!(code, Some(1), "{err}");
    let run = show(&b.db, id);
    assert_eq!(run["status"], "failed");
    let reason = run["status_reason"].as_str().unwrap();
    assert!(reason.starts_with("panic in the control loop"), "{reason}");
    assert!(
        reason.contains("injected panic in a model step"),
        "{reason}"
    );
    assert!(run["sample_count"].as_i64().unwrap() >= before, "{run}");
    disabled_by_the_daemon(&b, &run);
    row(
        &b,
        "panic in a model step (at t = 4 s; time from the first 1000 samples)",
        took,
        &run,
        before,
    );
}

#[test]
fn a_recorder_that_cannot_write_stops_the_run() {
    let _slot = bench_slot();
    let b = Bench::new(Wire::Tcp);
    let (child, id) = b.spawn_run();
    let before = wait_for_samples(&b.db, id, b.warm());
    // Another process holds the database's write lock past the recorder's 5 s busy timeout
    // (its first commit waits from within 0.1 s of the lock), then lets it go.
    let python = std::env::var("FRICTIONBENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut locker = Command::new(python)
        .args([
            "-c",
            "import sqlite3, sys, time\n\
             c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
             c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(8)\n\
             c.execute('ROLLBACK')",
            &b.db,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(locker.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "locked");
    let t0 = Instant::now();
    let (code, err, took) = finish(child, t0);
    locker.wait().unwrap();
    assert_eq!(code, Some(1), "{err}");
    let run = show(&b.db, id);
    assert_eq!(run["status"], "failed", "{run}");
    let reason = run["status_reason"].as_str().unwrap();
    assert!(reason.starts_with("recording failed"), "{reason}");
    assert!(
        safe_line(&run).starts_with("drive disabled, confirmed by its status"),
        "the safe-state line is kept once the store takes writes again: {run}"
    );
    assert!(run["sample_count"].as_i64().unwrap() >= before);
    let sw = b.sim.statusword();
    assert_eq!(sw & 0x6F, READY_TO_SWITCH_ON, "statusword {sw:#06x}");
    row(
        &b,
        "recorder cannot write (database locked)",
        took,
        &run,
        before,
    );
}

#[test]
fn a_second_controller_is_refused_and_sends_nothing() {
    let _slot = bench_slot();
    let b = Bench::new(Wire::Tcp);
    let (first, id) = b.spawn_run();
    let before = wait_for_samples(&b.db, id, b.warm());
    let o = bench(&b.run_args());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("pid {} (bench run", first.id())) && err.contains("one controller"),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "no run was created: {}", stdout(&o));
    // The first run goes on undisturbed.
    wait_for_samples(&b.db, id, before + 1000);
    kill(&first, "INT");
    let (code, err, _) = finish(first, Instant::now());
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(show(&b.db, id)["status_reason"], "SIGINT");
    let list = bench(&["runs", "list", "--db", &b.db, "--json"]);
    let list: Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(
        list["total"], 1,
        "the refused controller created no run: {list}"
    );
}

/// Enables the drive over raw Modbus TCP (CiA 402: shutdown, switch on, enable operation), as
/// another tool on the bench might.
fn enable_drive_behind_the_daemons_back(tcp: &str) {
    let drive = bench_sim::shipped(false).unwrap();
    let cw = drive
        .role(protocols::Role::ControlWord)
        .unwrap()
        .address
        .to_be_bytes();
    let mut s = std::net::TcpStream::connect(tcp).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for (k, value) in [6u16, 7, 15].into_iter().enumerate() {
        let v = value.to_be_bytes();
        let frame = [0, k as u8, 0, 0, 0, 6, 1, 6, cw[0], cw[1], v[0], v[1]];
        std::io::Write::write_all(&mut s, &frame).unwrap();
        let mut echo = [0u8; 12];
        s.read_exact(&mut echo).unwrap();
        assert_eq!(echo[7], 6, "write reply {echo:02X?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_estop_confirms_the_drive_disabled_with_and_without_a_loop() {
    let _slot = bench_slot();
    let b = Bench::new(Wire::Tcp);
    let cfg = b.cfg.to_str().unwrap();
    let daemon = Daemon::start_on(
        &["--config", cfg],
        std::path::Path::new(&b.db),
        "127.0.0.1:0",
        &[],
    );
    // With a loop: the run is aborted and the answer says the drive read back disabled.
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(&b.spec).unwrap()).unwrap();
    let r = daemon.req("POST", "/api/runs", Some(&spec));
    assert!(r.status < 300, "{}", r.status);
    let id = r.json()["id"].as_i64().unwrap();
    let before = wait_for_samples(&b.db, id, 1000);
    let t0 = Instant::now();
    let r = daemon.req(
        "POST",
        "/api/estop",
        Some(&json!({"reason": "fault table"})),
    );
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(r.status, 200);
    let e = r.json();
    assert_eq!(e["aborted_run"], id, "{e}");
    assert_eq!(e["safe_state"]["confirmed"], true, "{e}");
    let run = daemon.wait_final(id, Duration::from_secs(10));
    assert_eq!(run["status"], "aborted");
    assert_eq!(run["status_reason"], "e-stop: fault table");
    assert!(run["sample_count"].as_i64().unwrap() >= before);
    disabled_by_the_daemon(&b, &run);
    row(&b, "e-stop with a loop", took, &run, before);
    // Without a loop: a drive enabled by someone else is disabled by the e-stop itself.
    enable_drive_behind_the_daemons_back(&b.sim.tcp);
    assert_eq!(
        b.sim.statusword() & 0x6F,
        0x27,
        "enabled behind the daemon's back"
    );
    let t0 = Instant::now();
    let e = daemon.req("POST", "/api/estop", None).json();
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(e["aborted_run"], Value::Null, "{e}");
    assert_eq!(e["safe_state"]["confirmed"], true, "{e}");
    let sw = b.sim.statusword();
    assert_eq!(sw & 0x6F, READY_TO_SWITCH_ON, "statusword {sw:#06x}");
    eprintln!(
        "FAULT-TABLE | TCP | e-stop without a loop | {:.1} ms request to answer | {} | - |",
        took * 1e3,
        e["safe_state"]["detail"]
    );
    // The latch holds: the queue is paused and no run starts.
    let q = daemon.json("/api/queue");
    assert_eq!(
        (q["estop"].as_bool(), q["paused"].as_bool()),
        (Some(true), Some(true)),
        "{q}"
    );
}

#[test]
fn a_real_drive_profile_without_a_watchdog_or_verification_is_refused_before_anything_moves() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = config_for(dir.path(), "127.0.0.1:9");
    let oriental = format!(
        "{}/../profiles/oriental-az.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("\"builtin:sim-drive\"", &format!("\"{oriental}\""));
    std::fs::write(&cfg, &text).unwrap();
    let run = |expect: &str| {
        let o = bench(&[
            "run",
            &spec("torque_ramp.json"),
            "--config",
            cfg.to_str().unwrap(),
            "--db",
            &db,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(expect), "{}", stderr(&o));
        assert!(stdout(&o).is_empty(), "no run was created");
    };
    run("not verified against the vendor's manual");
    std::fs::write(
        &cfg,
        text.replace("[safety]", "[safety]\nallow_unverified = true"),
    )
    .unwrap();
    run("maps no communication watchdog (role watchdog_timeout)");
}
