//! Real drives out of the box (issue 18), end to end over Modbus RTU on a pty: each shipped real
//! drive profile emulated by `bench sim --drive-profile FILE` with the device's own behaviour
//! (its status bits, its enable, disable and fault-reset sequences, its mode values, units,
//! scaling and word order), and a sweep run against it with a bench.toml whose
//! `[drive]` points at the profile, checked against the simulated truth; then a drive trip
//! mid-run, the refusal to run on the latched fault, and the operator's reset through the
//! profile's own `fault_reset` sequence.
//!
//! These tests do not take a `bench_slot`: their loops run at 10 Hz over RTU (20 ms
//! over TCP) with timeouts of 100 ms and more, and each has its own emulation, pty and
//! database, so one beside a 1 kHz bench keeps its margins. The drives at 115 200 baud have a
//! test per scenario ([`the_delta_asda_a2_sweep_and_a_trip_over_rtu`] and its siblings), run with the other RTU tests
//! after the rest of the suite; the TCP runs run beside the rest.

use crate::daemon::Daemon;
use crate::util::{
    SimProcess, bench, db_in, show, spawn_run, stderr, stdout, truth_model, wait_for_samples,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The RTU line the emulated drives are reached on (both profiles' own rate).
const BAUD: &str = "115200";

/// The sweep every device test runs: three speeds in both directions that each drive and
/// sensor resolves at a 10 Hz control period (speeds are judged over windows of 20 encoder
/// counts, two of them in the 1 s measurement: the Oriental's 1000 steps/rev flags every speed
/// below 0.5 rad/s as undecided), so every point must be held and lie on the truth. The
/// shipped quick sweep's eight speeds take 32 s a run; its Stribeck region is tested on the
/// simulated bench (cli_run, the dashboard's end-to-end tests).
const SWEEP: &str = r#"{"kind": "constant_velocity_sweep", "name": "device sweep",
    "params": {"velocities": [0.5, 1.0, 2.0], "directions": "both", "settle_s": 1.0,
    "measure_s": 1.0, "repeats": 1}}"#;

/// Writes [`SWEEP`] into `dir`; its path.
pub(crate) fn sweep_in(dir: &Path) -> String {
    let path = dir.join("sweep.json");
    std::fs::write(&path, SWEEP).unwrap();
    path.display().to_string()
}

/// A shipped drive profile and what its bench.toml must add (a drive without a mapped
/// watchdog needs the operator's consent).
struct Device {
    file: &'static str,
    extra_safety: &'static str,
    /// Its profile maps a communication watchdog (set at connect from bench.toml).
    watchdog: bool,
    /// The torque-ramp directions its torque command can take.
    ramp_directions: &'static str,
    /// Its position feedback's counts per revolution (bench.toml `encoder_counts_per_rev`).
    counts_per_rev: &'static str,
}

const DELTA: Device = Device {
    file: "delta-asda-a2.toml",
    extra_safety: "",
    watchdog: true,
    ramp_directions: "both",
    counts_per_rev: "100000",
};

/// The Delta ASDA-B2: the A2's parameters and behaviour, its own P3-02, no internal position
/// mode (the daemon closes the position loop in torque mode).
const DELTA_B2: Device = Device {
    file: "delta-asda-b2.toml",
    ..DELTA
};

const ORIENTAL: Device = Device {
    file: "oriental-az.toml",
    extra_safety: "allow_no_drive_watchdog = true\n",
    watchdog: false,
    // Its direct-data operating current is a magnitude (min 0): a negative torque command is
    // refused before the write, so the ramp runs forwards only.
    ramp_directions: "positive",
    counts_per_rev: "1000",
};

impl Device {
    fn profile(&self) -> String {
        format!("{}/../profiles/{}", env!("CARGO_MANIFEST_DIR"), self.file)
    }

    /// bench.toml for this drive and the simulated torque sensor, both on `pty`. The period is
    /// what the line carries: the Delta wants 10 ms of silence around every frame, so a tick
    /// of three transactions takes about 70 ms; 100 ms (10 Hz) leaves room. The watchdog is
    /// the Delta's shortest (whole seconds); unverified signals are allowed and logged.
    fn config(&self, dir: &Path, pty: &str) -> PathBuf {
        let link = format!("serial = \"{pty}\"\nbaud = {BAUD}");
        self.config_on(dir, &link, "0.1")
    }

    /// bench.toml for this drive and the simulated sensor on `link` (the `tcp = ...` or
    /// `serial = ...` lines of both devices) at control period `period_s`.
    fn config_on(&self, dir: &Path, link: &str, period_s: &str) -> PathBuf {
        let sim = std::fs::read_to_string(format!(
            "{}/../bench-daemon/config/sim.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let text = sim
            .replace(
                "profile = \"builtin:sim-drive\"",
                &format!("profile = \"{}\"", self.profile()),
            )
            .replace("tcp = \"127.0.0.1:5020\"", link)
            .replace("period_s = 0.001", &format!("period_s = {period_s}"))
            .replace(
                "encoder_counts_per_rev = 131072",
                &format!("encoder_counts_per_rev = {}", self.counts_per_rev),
            )
            .replace("watchdog_s = 0.25", "watchdog_s = 1.0")
            .replace(
                "sensor_stall_s = 0.05",
                "sensor_stall_s = 0.3\ndrive_stall_s = 0.3",
            )
            .replace(
                "[safety]\n",
                &format!("[safety]\nallow_unverified = true\n{}", self.extra_safety),
            );
        let path = dir.join("bench.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Its emulation on an RTU pty at the profile's rate, a run database and a bench.toml for
    /// both: `(dir, db, sim, pty, bench.toml)`.
    fn emulated(&self) -> (tempfile::TempDir, String, SimProcess, String, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let db = db_in(&dir);
        let sim =
            SimProcess::start_with(&["--rtu", "--baud", BAUD, "--drive-profile", &self.profile()]);
        let pty = sim.rtu.clone().expect("bench sim --rtu prints its pty");
        let cfg = self.config(dir.path(), &pty);
        (dir, db, sim, pty, cfg)
    }

    /// The drive's state as `bench probe` reads it through the profile: `{"enabled", "fault",
    /// "ready"}`.
    /// `bench probe [EXTRA] --profile FILE --serial PTY --baud BAUD`.
    fn probe(&self, pty: &str, extra: &[&str]) -> std::process::Output {
        let profile = self.profile();
        let mut args = vec!["probe"];
        args.extend(extra);
        args.extend(["--profile", &profile, "--serial", pty, "--baud", BAUD]);
        bench(&args)
    }

    /// The drive's status as a fresh `bench probe` reads it. A read that lost a frame on the
    /// line (a timeout or a CRC error: an emulated line whose fault was just cleared, a busy
    /// machine) is read again, up to three times; any other error fails at once.
    fn status(&self, pty: &str) -> Value {
        for attempt in 1..=3 {
            let o = self.probe(pty, &[]);
            assert!(o.status.success(), "{}", stderr(&o));
            let line: Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
            let errors = line["errors"].as_array().unwrap();
            if errors.is_empty() {
                return line["status"].clone();
            }
            let lost_frames = errors.iter().all(|e| e["kind"] == "link");
            assert!(lost_frames && attempt < 3, "{line}");
            eprintln!("{}: probe read again after {errors:?}", self.file);
        }
        unreachable!()
    }
}

/// `bench run` of [`SWEEP`] with bench.toml `cfg` into `db`; the run record.
pub(crate) fn device_sweep(cfg: &Path, db: &str, label: &str) -> Value {
    let sweep = sweep_in(cfg.parent().unwrap());
    let cfg = cfg.to_str().unwrap();
    let o = bench(&["run", &sweep, "--config", cfg, "--db", db, "--json"]);
    assert!(o.status.success(), "{label}: {}", stderr(&o));
    let id: i64 = stdout(&o).lines().next().unwrap()[4..].parse().unwrap();
    show(db, id)
}

/// A completed [`SWEEP`]: every point held its speed and lies within 3 % of the truth's
/// steady-state curve.
pub(crate) fn assert_sweep_on_the_truth(run: &Value, label: &str) {
    assert_eq!(run["status"], "completed", "{run}");
    for side in ["positive", "negative"] {
        let points = run["results"][side].as_array().unwrap();
        let held: Vec<&Value> = points.iter().filter(|p| p["stick_slip"] == false).collect();
        assert_eq!(held.len(), 3, "{label}: {side}: {points:?}");
        for p in held {
            let v = p["velocity_rad_s"].as_f64().unwrap();
            let f = p["mean_torque_nm"].as_f64().unwrap();
            let t = truth_model().steady_state(v).unwrap();
            let err = (f - t) / t;
            eprintln!(
                "{label} {side} v {v:+.4} rad/s: {f:.4} N m, truth {t:.4} ({:+.2} %)",
                100.0 * err
            );
            assert!(err.abs() < 0.03, "{label}: {p}");
        }
    }
}

/// A torque ramp at `rate` N m/s in the drive's own torque mode: the breakaway lies within 3 %
/// of the truth's static friction in each direction the drive's command can take. A tick
/// raises the command by rate × period, the resolution of the breakaway: 0.2 N m/s at 0.1 s
/// on RTU (0.02 N m a tick), 0.5 N m/s at 20 ms over TCP (0.01 N m).
fn ramp_on_the_truth(dir: &Path, cfg: &str, db: &str, device: &Device, rate: f64) {
    let label = device.file;
    let spec = dir.join("ramp.json");
    let directions = device.ramp_directions;
    // Breakaway is declared after about 0.02 rad of motion, in this encoder's counts.
    let counts = (device.counts_per_rev.parse::<f64>().unwrap() / 320.0)
        .round()
        .max(2.0);
    std::fs::write(
        &spec,
        format!(
            r#"{{"kind": "torque_ramp", "name": "device ramp", "params": {{"rates_nm_s": [{rate}],
            "directions": "{directions}", "repeats": 1, "motion_counts": {counts},
            "rest_s": 0.5}}}}"#
        ),
    )
    .unwrap();
    let o = bench(&[
        "run",
        spec.to_str().unwrap(),
        "--config",
        cfg,
        "--db",
        db,
        "--json",
    ]);
    assert!(o.status.success(), "{label}: {}", stderr(&o));
    let id: i64 = stdout(&o).lines().next().unwrap()[4..].parse().unwrap();
    let run = show(db, id);
    assert_eq!(run["status"], "completed", "{run}");
    for (side, d) in [("positive", 1.0), ("negative", -1.0)] {
        if directions != "both" && directions != side {
            continue;
        }
        let found = run["results"][side][0]["breakaway_torque_nm"].as_f64();
        let fs = truth_model().steady_state(d * 1e-9).unwrap();
        let found = found.unwrap_or_else(|| panic!("{label}: no {side} breakaway: {run}"));
        let err = (found - fs) / fs.abs();
        eprintln!(
            "{label} {side} breakaway {found:.4} N m, truth f_s {fs:.4} ({:+.2} %)",
            100.0 * err
        );
        assert!(err.abs() < 0.03, "{label}: {side}: {found} vs {fs}");
    }
}

fn sweep_and_a_trip(device: &Device) {
    let (dir, db, mut sim, pty, cfg) = device.emulated();
    let cfg = cfg.to_str().unwrap();
    assert_drive(
        device,
        &pty,
        false,
        false,
        "a fresh drive reads disabled and healthy",
    );

    // The sweep: every point held and on the truth's curve.
    let sweep = sweep_in(dir.path());
    let args = ["run", &sweep, "--config", cfg, "--db", &db, "--json"];
    let o = bench(&args);
    assert!(o.status.success(), "{}: {}", device.file, stderr(&o));
    let id: i64 = stdout(&o).lines().next().unwrap()[4..].parse().unwrap();
    let run = show(&db, id);
    assert_sweep_on_the_truth(&run, device.file);
    ramp_on_the_truth(dir.path(), cfg, &db, device, 0.2);
    // A check, not an interruption: the run log says it, the interruption log does not.
    let (log, notes) = (
        run["interruption_log"].to_string(),
        run["run_log"].to_string(),
    );
    assert!(
        notes.contains("ran with unverified drive profile signals"),
        "{notes}"
    );
    assert!(!log.contains("unverified"), "{log}");
    assert_eq!(
        device.status(&pty)["enabled"],
        false,
        "disabled after the run"
    );

    // A trip mid-run: the run fails, the drive reads faulted; no run moves it until the
    // operator's reset, which goes through the profile's own fault_reset sequence.
    // The reader stays open: a closed pipe would end the CLI quietly (exit 0).
    let (mut child, _out, id) = spawn_run(&args);
    wait_for_samples(&db, id, 10);
    sim.fault(r#"{"trip": true}"#);
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(1), "{}", device.file);
    let run = show(&db, id);
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["status_reason"]
            .as_str()
            .unwrap()
            .starts_with("drive fault"),
        "{run}"
    );
    assert_drive(device, &pty, false, true, "tripped");
    let o = bench(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("latched fault"), "{}", stderr(&o));
    let o = bench(&["fault-reset", "--config", cfg]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert_drive(
        device,
        &pty,
        false,
        false,
        "the reset cleared the fault and left the power stage off",
    );
}

/// `{"enabled", "fault"}` as `bench probe` reads them, against what is expected.
fn assert_drive(device: &Device, pty: &str, enabled: bool, fault: bool, what: &str) {
    let status = device.status(pty);
    assert_eq!(
        (&status["enabled"], &status["fault"]),
        (&Value::Bool(enabled), &Value::Bool(fault)),
        "{}: {what}: {status}",
        device.file
    );
}

/// The rows of the fault table that apply to each emulated drive, over RTU: a dead line
/// mid-run, the daemon killed mid-run, and the e-stop of `bench serve` with and without a run.
/// A drive with a communication watchdog (the Delta's P3-04, armed at connect) removes torque
/// itself once its master is gone; one without (the Oriental as profiled) keeps its last
/// command until the e-stop disables it: what `allow_no_drive_watchdog = true` accepts.
fn the_fault_subset(device: &Device) {
    let (dir, db, mut sim, pty, cfg) = device.emulated();
    let cfg = cfg.to_str().unwrap();
    let sweep = sweep_in(dir.path());
    let args = ["run", &sweep, "--config", cfg, "--db", &db];
    let reset = || {
        let o = bench(&["fault-reset", "--config", cfg]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    };
    // Past the watchdog's 1 s, with room for the line's own timeouts.
    let past_the_watchdog = || std::thread::sleep(std::time::Duration::from_millis(1600));

    // A dead line: the run fails on it; the daemon cannot confirm the safe state.
    let (mut child, _out, id) = spawn_run(&args);
    wait_for_samples(&db, id, 10);
    sim.fault(r#"{"disconnect": true}"#);
    assert_eq!(child.wait().unwrap().code(), Some(1), "{}", device.file);
    let run = show(&db, id);
    assert_eq!(run["status"], "failed", "{run}");
    // Both devices share the dead line: whichever the tick read first reports it.
    let reason = run["status_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("comms fault: drive")
            || reason.starts_with("comms fault: torque sensor"),
        "{reason}"
    );
    assert!(
        run["interruption_log"].to_string().contains("UNCONFIRMED"),
        "{run}"
    );
    past_the_watchdog();
    sim.fault("{}");
    if device.watchdog {
        assert_drive(device, &pty, false, true, "its watchdog tripped");
        reset();
        // The daemon killed mid-run: nothing of it runs; the drive's watchdog removes torque.
        let (mut child, _out, id) = spawn_run(&args);
        wait_for_samples(&db, id, 10);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(show(&db, id)["status"], "interrupted");
        past_the_watchdog();
        assert_drive(device, &pty, false, true, "its watchdog tripped");
        reset();
    } else {
        assert_drive(
            device,
            &pty,
            true,
            false,
            "no watchdog: still on its last command",
        );
    }

    // The e-stop without a run opens the link itself and disables whatever is enabled; then,
    // cleared, the e-stop of a running run.
    let daemon = Daemon::start_on(&["--config", cfg], Path::new(&db), "127.0.0.1:0", &[]);
    let e = daemon.req("POST", "/api/estop", None).json();
    assert_eq!(
        (&e["aborted_run"], &e["safe_state"]["confirmed"]),
        (&Value::Null, &Value::Bool(true)),
        "{e}"
    );
    assert_eq!(daemon.req("POST", "/api/estop/reset", None).status, 200);
    let r = daemon.req("PUT", "/api/queue", Some(&json!({"paused": false})));
    assert_eq!(r.status, 200, "{}", r.text());
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(&sweep).unwrap()).unwrap();
    let r = daemon.req("POST", "/api/runs", Some(&plan));
    assert!(r.status < 300, "{}: {}", r.status, r.text());
    let id = r.json()["id"].as_i64().unwrap();
    wait_for_samples(&db, id, 10);
    let reason = json!({"reason": "device fault subset"});
    let e = daemon.req("POST", "/api/estop", Some(&reason)).json();
    assert_eq!(
        (&e["aborted_run"], &e["safe_state"]["confirmed"]),
        (&json!(id), &Value::Bool(true)),
        "{e}; the run: {}",
        daemon.req("GET", &format!("/api/runs/{id}"), None).text()
    );
    let run = daemon.wait_final(id, std::time::Duration::from_secs(10));
    assert_eq!(run["status_reason"], "e-stop: device fault subset", "{run}");
    drop(daemon);
    assert_drive(device, &pty, false, false, "disabled by the e-stop");
}

/// The sweep and a torque ramp on each drive's emulation over Modbus TCP (as through an
/// RS-485 gateway), where no 10 ms silences bound the rate: a 20 ms control period.
#[test]
fn the_sweep_and_a_ramp_on_each_emulated_drive_over_tcp() {
    for device in [&DELTA, &DELTA_B2, &ORIENTAL] {
        let dir = tempfile::tempdir().unwrap();
        let db = db_in(&dir);
        let sim = SimProcess::start_with(&["--drive-profile", &device.profile()]);
        let link = format!("tcp = \"{}\"", sim.tcp);
        let cfg = device.config_on(dir.path(), &link, "0.02");
        let label = format!("{} over TCP", device.file);
        let run = device_sweep(&cfg, &db, &label);
        assert_sweep_on_the_truth(&run, &label);
        ramp_on_the_truth(dir.path(), cfg.to_str().unwrap(), &db, device, 0.5);
    }
}

// Each drive's scenarios over RTU at 115 200 baud, a test each. A silence of 0.3 ms ends an
// RTU frame there, and emulated lines side by side on a 2-core machine busy compiling or
// running browsers split each other's frames (timeouts, CRC errors): `scripts/test.sh` runs
// the tests named `rtu` last, on their own, four at a time, where the lines keep their timing
// side by side.

/// The fault subset on the emulated Delta ASDA-A2 over RTU.
#[test]
fn the_delta_asda_a2_fault_subset_over_rtu() {
    the_fault_subset(&DELTA);
}

/// The sweep and a trip on the emulated Delta ASDA-A2 over RTU.
#[test]
fn the_delta_asda_a2_sweep_and_a_trip_over_rtu() {
    sweep_and_a_trip(&DELTA);
}

/// The fault subset on the emulated Delta ASDA-B2 over RTU.
#[test]
fn the_delta_asda_b2_fault_subset_over_rtu() {
    the_fault_subset(&DELTA_B2);
}

/// The sweep and a trip on the emulated Delta ASDA-B2 over RTU.
#[test]
fn the_delta_asda_b2_sweep_and_a_trip_over_rtu() {
    sweep_and_a_trip(&DELTA_B2);
}

/// The fault subset on the emulated Oriental AZ over RTU.
#[test]
fn the_oriental_az_fault_subset_over_rtu() {
    the_fault_subset(&ORIENTAL);
}

/// The sweep and a trip on the emulated Oriental AZ over RTU.
#[test]
fn the_oriental_az_sweep_and_a_trip_over_rtu() {
    sweep_and_a_trip(&ORIENTAL);
}

/// `bench probe --check` before the first run: every item of the Delta's profile on its
/// emulation passes or is only to be looked at (its unverified signals, the EEPROM write-rate
/// limit, the settings written at connect); the Oriental's profile on the same device gets no
/// reply over RTU (it keeps only t3.5 between frames, the Delta needs 10 ms) and, through a
/// TCP gateway, fails on an address the Delta does not have and sees the Delta's
/// low-word-first values as swapped; a tripped drive fails the check until it is reset.
/// Nothing is written.
#[test]
fn probe_check_passes_the_right_profile_and_names_what_to_fix_in_a_wrong_one_over_rtu() {
    let mut sim =
        SimProcess::start_with(&["--rtu", "--baud", BAUD, "--drive-profile", &DELTA.profile()]);
    let pty = sim.rtu.clone().expect("bench sim --rtu prints its pty");
    let check = |device: &Device| device.probe(&pty, &["--check"]);
    let o = check(&DELTA);
    let text = stdout(&o);
    eprintln!("{text}");
    assert!(o.status.success(), "{text}{}", stderr(&o));
    assert!(text.contains("PASS  'Delta ASDA-A2' answers"), "{text}");
    assert!(text.contains("PASS  no fault reported"), "{text}");
    assert!(
        text.contains("PASS  communication watchdog comm_watchdog is off now"),
        "{text}"
    );
    assert!(
        text.contains("WARN  aux_function = 0; a run writes 5 at connect and reads it back"),
        "{text}"
    );
    assert!(
        text.contains("WARN  signals not verified against the manual: alarm_code"),
        "{text}"
    );
    assert!(text.contains("WARN  writes are limited to 50 Hz"), "{text}");
    assert!(text.ends_with(" 0 failed\n"), "{text}");

    let o = check(&ORIENTAL);
    let text = stdout(&o);
    eprintln!("{text}");
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("no reply within 100 ms"), "{text}");
    assert!(
        text.contains("no reply: check the unit id, the line (baud, parity, stop bits) and the silence the device needs between frames ([timing] inter_frame_gap_ms"),
        "{text}"
    );

    let gateway = ["--check", "--tcp", &sim.tcp];
    let o = bench(
        &[
            &["probe", "--profile", &ORIENTAL.profile()][..],
            &gateway[..],
        ]
        .concat(),
    );
    let text = stdout(&o);
    eprintln!("{text}");
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "FAIL  holding register 0x1802..0x1803: device exception: illegal data address"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "WARN  dd_position: raw 65536 with the profile's word order, 1 with the other"
        ),
        "{text}"
    );
    assert!(
        text.contains("WARN  the profile maps no communication watchdog"),
        "{text}"
    );

    sim.fault(r#"{"trip": true}"#);
    let o = check(&DELTA);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAIL  the drive reports a fault"),
        "{}",
        stdout(&o)
    );
}
