//! `bench run` and `bench perf loop` end to end against the simulated bench over real Modbus
//! TCP: every kind runs and its analysis agrees with the bench's true friction; faults end
//! runs in the right status with their samples kept.

use crate::util::{
    SimProcess, bench, config_for, db_in, export_csv, show, spawn_run, spec, stderr, stdout,
    wait_for_samples,
};
use std::path::Path;
use std::process::Command;

/// Runs a spec against `--sim --virtual-time` (the simulated plant in simulated time, through
/// the daemon's control loop); returns (exit code, the `--json` outcome, stderr).
fn run_sim(spec_path: &str, db: &str, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let mut args = vec![
        "run",
        spec_path,
        "--sim",
        "--virtual-time",
        "--db",
        db,
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = bench(&args);
    let out = stdout(&o);
    let json = out
        .lines()
        .find(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("outcome JSON"))
        .unwrap_or(serde_json::Value::Null);
    (o.status.code().unwrap_or(-1), json, stderr(&o))
}

/// Runs a quick spec to completion and checks what every run must have.
fn completed(kind: &str) -> (serde_json::Value, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (code, out, err) = run_sim(&spec(&format!("{kind}.json")), &db, &[]);
    assert_eq!(code, 0, "{kind}: {err}\n{out}");
    assert_eq!(out["status"], "completed");
    assert!(out["analysis_error"].is_null(), "{out}");
    let id = out["run_id"].as_i64().unwrap();
    let run = show(&db, id);
    assert_eq!(run["status"], "completed");
    assert_eq!(run["kind"], kind);
    assert!(run["sample_count"].as_i64().unwrap() > 1000, "{run}");
    assert_eq!(run["results"]["kind"], kind);
    assert!(run["timing"]["period_error_p99_us"].is_number(), "{run}");
    assert!(
        out["safe_state_s"].is_number(),
        "drive disable confirmed: {out}"
    );
    // Spec, configuration and profiles are stored with the run.
    assert_eq!(run["spec"]["kind"], kind);
    assert!(run["bench_config"]["limits"]["torque_nm"].is_number());
    assert!(
        run["device_profiles"]["drive"]
            .as_str()
            .unwrap()
            .contains("[[signal]]")
    );
    // Lockstep model outputs are exported beside the measurements.
    let text = export_csv(&db, id);
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("lugre") && header.contains("gms:x_plant"),
        "{header}"
    );
    let rows = text.lines().count() - 1;
    assert_eq!(rows as i64, run["sample_count"].as_i64().unwrap());
    exports_with_units(&db, id, &text, &run);
    (out, run)
}

/// `--units` adds one comment line to the CSV; Parquet has the CSV's column names, each
/// field's unit, and the run, spec, units and software version as file metadata.
fn exports_with_units(db: &str, id: i64, csv: &str, run: &serde_json::Value) {
    let with = bench(&[
        "runs",
        "export",
        &id.to_string(),
        "--format",
        "csv",
        "--units",
        "--db",
        db,
    ]);
    let with = stdout(&with);
    let (line, rest) = with.split_once('\n').unwrap();
    assert_eq!(rest, csv, "--units changes nothing but its first line");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let units: Vec<&str> = line.strip_prefix("# units: ").unwrap().split(',').collect();
    assert_eq!(units.len(), header.len(), "{line}");
    assert_eq!(&units[..4], ["1", "s", "rad", "rad/s"]);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.parquet");
    let o = bench(&[
        "runs",
        "export",
        &id.to_string(),
        "--format",
        "parquet",
        "--out",
        path.to_str().unwrap(),
        "--db",
        db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = std::fs::File::open(&path).unwrap();
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let names: Vec<&str> = builder
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(names, header, "Parquet columns are named as the CSV's");
    for (f, unit) in builder.schema().fields().iter().zip(&units) {
        assert_eq!(
            f.metadata().get("unit").map(String::as_str),
            Some(*unit),
            "{}",
            f.name()
        );
    }
    let meta = builder.metadata().file_metadata();
    assert_eq!(meta.num_rows(), run["sample_count"].as_i64().unwrap());
    let kv: std::collections::HashMap<String, String> = meta
        .key_value_metadata()
        .unwrap()
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let stored: serde_json::Value = serde_json::from_str(&kv["frictionbench.run"]).unwrap();
    assert_eq!(stored["id"], id);
    let spec: serde_json::Value = serde_json::from_str(&kv["frictionbench.spec"]).unwrap();
    assert_eq!(spec, run["spec"]);
    let by_col: serde_json::Value = serde_json::from_str(&kv["frictionbench.units"]).unwrap();
    assert_eq!(by_col["torque_sensor"], "N m");
    assert_eq!(by_col["gms:x_plant"], "rad");
    assert_eq!(
        kv["frictionbench.software_version"],
        run["software_version"].as_str().unwrap()
    );
}

fn truth() -> Box<dyn friction::FrictionModel> {
    friction::registry::build_model(&bench_sim::default_truth()).unwrap()
}

#[test]
fn sweep_stribeck_points_lie_on_the_true_steady_state_curve() {
    let (_, run) = completed("constant_velocity_sweep");
    let model = truth();
    let res = &run["results"];
    let mut n = 0;
    for side in ["positive", "negative"] {
        for p in res[side].as_array().unwrap() {
            // Points in stick-slip are flagged, not points of the curve.
            if p["stick_slip"] == true {
                continue;
            }
            let v = p["velocity_rad_s"].as_f64().unwrap();
            let mean = p["mean_torque_nm"].as_f64().unwrap();
            let std = p["std_torque_nm"].as_f64().unwrap();
            let expected = model.steady_state(v).unwrap();
            // Sensor noise is 2 mN m (std) on a 1 mN m quantum; allow 3 std of one reading
            // plus 1 % for the velocity ripple of the drive's PI.
            let tol = 3.0 * std + 0.01 * expected.abs();
            assert!(
                (mean - expected).abs() <= tol,
                "{side} v = {v}: measured {mean} N m, truth {expected} N m (tol {tol})"
            );
            n += 1;
        }
    }
    assert!(n >= 8, "{res}");
}

/// The breakaways the simulated plant itself shows under the run's own torque commands,
/// replayed tick by tick (same times, same values) with no Modbus in between and read the way
/// the analysis reads the run: per ramp segment, the motor torque when the encoder first
/// moved more than `counts` from where the segment started. Replaying the recorded commands
/// (rather than re-deriving the rests from the plan) carries the friction's memory from one
/// ramp to the next exactly as the run left it.
fn replayed_breakaways(db: &str, id: i64, counts: u32) -> Vec<Option<f64>> {
    use bench_sim::{Action, Mode, Sim, SimParams};
    let o = bench(&[
        "runs",
        "export",
        &id.to_string(),
        "--format",
        "json",
        "--db",
        db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cols: Vec<String> = serde_json::from_value(e["columns"].clone()).unwrap();
    let col = |name: &str| cols.iter().position(|c| c == name).unwrap();
    let (ct, cu, cs) = (col("t"), col("u_cmd"), col("segment"));
    let rows = e["rows"].as_array().unwrap();
    let num = |r: &serde_json::Value, c: usize| r[c].as_f64().unwrap();
    let params = SimParams {
        watchdog_s: 0.0,
        sensor_noise_nm: 0.0,
        ..SimParams::default()
    };
    let threshold = f64::from(counts) * params.rad_per_count();
    let mut sim = Sim::new(params, &bench_sim::default_truth()).unwrap();
    sim.apply(Action::SetMode(Mode::Torque));
    sim.apply(Action::Enable);
    // (segment, position, motor torque) at every tick, read before its command, as recorded.
    let mut ticks = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let fb = sim.feedback();
        ticks.push((num(r, cs) as i64, fb.position_rad, fb.motor_torque_nm));
        sim.apply(Action::Torque(num(r, cu)));
        let dt = rows.get(i + 1).map_or(1e-3, |n| num(n, ct) - num(r, ct));
        sim.advance(dt);
    }
    let segments = ticks.last().map_or(0, |t| t.0 + 1);
    // The plan alternates ramp, rest: ramps are the even segments.
    (0..segments)
        .step_by(2)
        .map(|seg| {
            let first = ticks.iter().position(|t| t.0 == seg)?;
            let end = ticks.iter().rposition(|t| t.0 == seg)?;
            // The tick that fired the stop belongs to the next segment (as in the analysis);
            // the plant, still sliding, may cross a tick later in the replay than on the bus
            // (commands land between ticks there): look two ticks further, at the ramp's
            // last torque.
            let last = (end + 3).min(ticks.len() - 1);
            let x0 = ticks[first].1;
            let hit = (first..=last).find(|&i| (ticks[i].1 - x0).abs() > threshold)?;
            Some(ticks[hit.min(end)].2)
        })
        .collect()
}

#[test]
fn ramp_breakaway_torques_match_the_true_plant() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (code, out, err) = run_sim(&spec("torque_ramp.json"), &db, &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    let id = out["run_id"].as_i64().unwrap();
    let run = show(&db, id);
    let counts = run["spec"]["params"]["motion_counts"].as_u64().unwrap() as u32;
    let ramps = run["results"]["ramps"].as_array().unwrap();
    assert_eq!(ramps.len(), 10, "{ramps:?}");
    let truth = replayed_breakaways(&db, id, counts);
    assert_eq!(truth.len(), ramps.len(), "{truth:?}");
    let mut table = String::new();
    let mut bad = 0;
    for (r, expected) in ramps.iter().zip(truth) {
        let rate = r["rate_nm_s"].as_f64().unwrap();
        let measured = r["breakaway"]["detected_torque_nm"].as_f64().unwrap();
        let Some(expected) = expected else {
            bad += 1;
            table += &format!("rate {rate:+}: measured {measured:.4} N m, plant did not move\n");
            continue;
        };
        // Two control periods of ramp (the tick of the stop and feedback delay) and 1 %.
        let tol = 0.01 * expected.abs() + 2.0 * rate.abs() * 1e-3;
        let ok = (measured - expected).abs() <= tol;
        bad += usize::from(!ok);
        table += &format!(
            "rate {rate:+}: measured {measured:.4} N m, true plant {expected:.4} N m (tol {tol:.4}){}\n",
            if ok { "" } else { "  <- off" }
        );
    }
    assert_eq!(bad, 0, "\n{table}");
    // Breakaway from rest (the first ramp of each direction) is the truth's own fs per side.
    let fs = [(0, 1.5), (1, -1.35)];
    for (i, level) in fs {
        let m = ramps[i]["breakaway"]["detected_torque_nm"]
            .as_f64()
            .unwrap();
        assert!(
            (m - level).abs() < 0.03 * level.abs(),
            "ramp {i}: {m} vs fs {level}"
        );
    }
}

/// Displacement amplitude of the simulated plant itself under `amplitude sin(2 pi f t)`, read
/// through its encoder at 1 kHz and fitted as the analysis does (sine + offset + drift), over
/// the last `cycles - 1` cycles.
fn true_sine_amplitude(amplitude: f64, frequency_hz: f64, cycles: u32) -> f64 {
    use bench_sim::{Action, Mode, Sim, SimParams};
    let params = SimParams {
        watchdog_s: 0.0,
        ..SimParams::default()
    };
    let step = params.step_s;
    let mut sim = Sim::new(params, &bench_sim::default_truth()).unwrap();
    sim.apply(Action::SetMode(Mode::Torque));
    sim.apply(Action::Enable);
    let (ts, w) = (1e-3, std::f64::consts::TAU * frequency_hz);
    let n = (f64::from(cycles) / frequency_hz / ts).round() as usize;
    let skip = (1.0 / frequency_hz / ts).round() as usize;
    let (mut t, mut x) = (Vec::new(), Vec::new());
    for k in 0..n {
        let tk = k as f64 * ts;
        sim.apply(Action::Torque(amplitude * (w * tk).sin()));
        for _ in 0..(ts / step).round() as usize {
            sim.step(step);
        }
        if k >= skip {
            t.push(tk);
            x.push(sim.feedback().position_rad);
        }
    }
    // Normal equations of x = a sin + b cos + c + d t.
    let rows: Vec<[f64; 4]> = t
        .iter()
        .map(|&tk| [(w * tk).sin(), (w * tk).cos(), 1.0, tk])
        .collect();
    let mut m = [[0.0; 5]; 4];
    for (r, &xi) in rows.iter().zip(&x) {
        for i in 0..4 {
            for j in 0..4 {
                m[i][j] += r[i] * r[j];
            }
            m[i][4] += r[i] * xi;
        }
    }
    for c in 0..4 {
        let p = (c..4)
            .max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))
            .unwrap();
        m.swap(c, p);
        let pivot = m[c];
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, px) in row.iter_mut().zip(&pivot).skip(c) {
                    *x -= f * px;
                }
            }
        }
    }
    let (a, b) = (m[0][4] / m[0][0], m[1][4] / m[1][1]);
    a.hypot(b)
}

#[test]
fn presliding_sine_gives_the_true_stiffness() {
    let (_, run) = completed("presliding");
    let p = &run["spec"]["params"];
    let sine = &run["results"]["sine"];
    assert_eq!(sine["resolved"], true, "{sine}");
    let amplitude = p["sine_amplitude_nm"].as_f64().unwrap();
    let measured = sine["stiffness_nm_rad"].as_f64().unwrap();
    let theta = true_sine_amplitude(
        amplitude,
        p["sine_frequency_hz"].as_f64().unwrap(),
        p["sine_cycles"].as_u64().unwrap() as u32,
    );
    let expected = amplitude / theta;
    // The amplitude spans a handful of encoder counts: 10 % covers the quantisation.
    assert!(
        (measured - expected).abs() <= 0.1 * expected,
        "presliding stiffness: measured {measured} N m/rad, true plant {expected} N m/rad"
    );
}

#[test]
fn frictional_lag_runs_end_to_end() {
    completed("frictional_lag");
}

#[test]
fn staircase_dwell_prbs_and_validation_run_end_to_end() {
    for kind in [
        "breakaway_staircase",
        "dwell_time",
        "prbs",
        "validation_profile",
    ] {
        completed(kind);
    }
}

#[test]
fn a_spec_beyond_the_limits_is_rejected_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"kind": "constant_velocity_sweep", "params": {"velocities": [1, 25]}}"#,
    )
    .unwrap();
    let o = bench(&["run", bad.to_str().unwrap(), "--sim", "--db", &db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("params.velocities[1] (25 rad/s) exceeds the velocity limit (20 rad/s)"),
        "{}",
        stderr(&o)
    );
    // Nothing was created: not even the database.
    assert!(!Path::new(&db).exists());
}

#[test]
fn a_limit_breach_aborts_the_run_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    // A bench whose velocity limit is 1 rad/s, and a ramp whose motion stop never fires
    // (threshold far beyond the travel): after breakaway the rotor accelerates until the
    // measured velocity trips the limit (+10 % margin). The plan itself is within limits.
    let cfg = config_for(dir.path(), "127.0.0.1:5020")
        .display()
        .to_string();
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("velocity_rad_s = 20.0", "velocity_rad_s = 1.0");
    std::fs::write(&cfg, text).unwrap();
    let s = dir.path().join("runaway.json");
    std::fs::write(
        &s,
        r#"{"kind": "torque_ramp", "name": "runaway",
            "params": {"rates_nm_s": [1.0], "directions": "positive", "repeats": 1,
                       "motion_counts": 1000000}}"#,
    )
    .unwrap();
    let (code, out, err) = run_sim(s.to_str().unwrap(), &db, &["--config", &cfg]);
    assert_eq!(code, 3, "{err}\n{out}");
    assert_eq!(out["status"], "aborted");
    let reason = out["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("limit breach: measured velocity"),
        "{reason}"
    );
    assert_eq!(out["outcome"]["reason_code"], "limit_breach");
    assert!(err.contains(reason), "{err}");
    let run = show(&db, out["run_id"].as_i64().unwrap());
    assert_eq!(run["status"], "aborted");
    assert_eq!(run["status_reason"], reason);
    assert_eq!(run["reason_code"], "limit_breach");
    let log = run["interruption_log"].to_string();
    assert!(
        log.contains("limit breach") && log.contains("drive disabled"),
        "{log}"
    );
    assert!(run["sample_count"].as_i64().unwrap() > 100);
    // The run's limits are the file's, stored with it.
    assert_eq!(run["bench_config"]["limits"]["velocity_rad_s"], 1.0);
    // The drive confirmed torque off (how fast is a figure of `bench perf loop`, not a test).
    assert!(out["safe_state_s"].as_f64().unwrap() > 0.0, "{out}");
}

#[test]
fn a_killed_daemon_leaves_an_interrupted_run_with_its_committed_samples() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (mut child, _out, id) = spawn_run(&[
        "run",
        &spec("constant_velocity_sweep.json"),
        "--sim",
        "--db",
        &db,
    ]);
    wait_for_samples(&db, id, 2000);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // No live process records it: readers report it interrupted at once.
    let dead = show(&db, id);
    assert_eq!(dead["status"], "interrupted", "{dead}");
    assert!(
        dead["status_reason"]
            .as_str()
            .unwrap()
            .contains("ended without closing it"),
        "{dead}"
    );
    let committed = dead["sample_count"].as_i64().unwrap();
    assert!(committed >= 2000);
    // The next recording process stores that; its samples stay queryable.
    let bad = dir.path().join("rest.json");
    std::fs::write(
        &bad,
        r#"{"kind": "breakaway_staircase", "params": {"repeats": 1, "directions": "positive"}}"#,
    )
    .unwrap();
    let (code, _, err) = run_sim(bad.to_str().unwrap(), &db, &[]);
    assert_eq!(code, 0, "{err}");
    let run = show(&db, id);
    assert_eq!(run["status"], "interrupted");
    assert_eq!(run["sample_count"].as_i64().unwrap(), committed);
    let csv = bench(&[
        "runs",
        "export",
        &id.to_string(),
        "--format",
        "csv",
        "--db",
        &db,
    ]);
    assert_eq!(stdout(&csv).lines().count() as i64 - 1, committed);
}

#[test]
fn ctrl_c_aborts_the_run_and_disables_the_drive() {
    let _bench = crate::util::bench_slot();
    let sim = SimProcess::start();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = config_for(dir.path(), &sim.tcp);
    let (mut child, _out, id) = spawn_run(&[
        "run",
        &spec("constant_velocity_sweep.json"),
        "--config",
        cfg.to_str().unwrap(),
        "--db",
        &db,
    ]);
    wait_for_samples(&db, id, 500);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(child.wait().unwrap().code(), Some(3));
    let run = show(&db, id);
    assert_eq!(run["status"], "aborted");
    assert_eq!(run["status_reason"], "SIGINT");
    assert_eq!(run["reason_code"], "daemon_signal");
    // The daemon disabled the drive itself (no watchdog fault): ready to switch on.
    let sw = sim.statusword();
    assert_eq!(sw & 0x6F, 0x21, "statusword {sw:#06x}");
}

#[test]
fn a_missing_database_directory_and_an_oversized_spec_are_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo").join("runs.db");
    let db = missing.display().to_string();
    let spec = crate::util::spec("torque_ramp.json");
    for cmd in [
        vec!["run", &spec, "--sim", "--db", &db],
        vec!["serve", "--sim", "--listen", "127.0.0.1:0", "--db", &db],
    ] {
        let o = crate::util::bench(&cmd);
        let err = crate::util::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains("typo") && err.contains("--create"), "{err}");
        assert!(
            !missing.parent().unwrap().exists(),
            "{cmd:?} created the directory"
        );
    }
    // A spec file over 1 MiB: refused naming the cap, before it is parsed.
    let big = dir.path().join("big.json");
    let pad = " ".repeat(1 << 20);
    std::fs::write(&big, format!("{{\"kind\": \"torque_ramp\"{pad}}}")).unwrap();
    let o = crate::util::bench(&["run", big.to_str().unwrap(), "--sim", "--db", &db]);
    let err = crate::util::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1048576") && err.contains("spec file"),
        "{err}"
    );
}

#[test]
fn create_makes_the_missing_database_directory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new").join("runs.db");
    let spec = crate::util::spec("torque_ramp.json");
    let o = crate::util::bench(&[
        "run",
        &spec,
        "--sim",
        "--virtual-time",
        "--create",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    assert!(db.exists());
}
