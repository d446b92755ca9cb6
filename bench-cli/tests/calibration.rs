//! The torque sensors' calibration records (`bench sensors`, `GET /api/sensors`): every flag
//! checked by name; a run on the DAQ bench records its zero and the calibration it used (or
//! that there is none); an overdue calibration refuses the run naming the sensor and the date,
//! unless `[safety] allow_overdue_calibration`, and then the run records that it ran overdue.

use crate::daemon::Daemon;
use crate::util::*;
use std::path::Path;

const SENSOR: &str = "daq.measured_torque";

fn sim_daq() -> String {
    format!(
        "{}/../bench-daemon/config/sim-daq.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `bench sensors calibrate` on the simulated DAQ bench with `extra` flags (the dates and more).
fn calibrate(config: &str, db: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "sensors",
        "calibrate",
        "--sim",
        "--config",
        config,
        "--db",
        db,
        "--sensor",
    ];
    if !extra.contains(&"--sensor") {
        args.push(SENSOR);
    } else {
        args.pop();
    }
    args.extend(extra);
    bench(&args)
}

fn good(sensitivity: &str, calibrated: &str, due: &str) -> Vec<String> {
    [
        "--sensitivity",
        sensitivity,
        "--offset",
        "0.002",
        "--certificate",
        "DKD-K-12345",
        "--calibrated",
        calibrated,
        "--due",
        due,
        "--by",
        "ada",
    ]
    .map(String::from)
    .to_vec()
}

/// A short ramp on the DAQ bench.
fn run(dir: &Path, config: &str, db: &str) -> std::process::Output {
    let spec = dir.join("ramp.json");
    std::fs::write(
        &spec,
        r#"{"kind": "torque_ramp", "name": "short ramp", "params": {"rates_nm_s": [5.0],
            "directions": "positive", "repeats": 1, "motion_counts": 400, "rest_s": 0.1}}"#,
    )
    .unwrap();
    let spec = spec.display().to_string();
    bench(&[
        "run", &spec, "--sim", "--config", config, "--db", db, "--json",
    ])
}

fn run_id(o: &std::process::Output) -> i64 {
    assert!(o.status.success(), "{}", stderr(o));
    let v: serde_json::Value = serde_json::from_str(stdout(o).lines().last().unwrap()).unwrap();
    v["run_id"].as_i64().unwrap()
}

#[test]
fn every_flag_is_checked_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = sim_daq();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--sensitivity", "0"],
            "--sensitivity: 0 must be finite and > 0",
        ),
        (&["--offset", "inf"], "--offset: inf must be finite"),
        (&["--certificate", " "], "--certificate: must not be empty"),
        (
            &["--calibrated", "2026-13-01"],
            "--calibrated: \"2026-13-01\" is not a date",
        ),
        (
            &["--due", "2025-01-01"],
            "--due: 2025-01-01 must come after --calibrated",
        ),
        (
            &["--sensor", "sensor"],
            "--sensor: \"sensor\" is no sensor of this bench: it has daq.measured_torque",
        ),
    ];
    for (spoil, says) in cases {
        let mut flags = good("0.5", "2026-01-10", "2027-01-10");
        let at = flags.iter().position(|f| f == spoil[0]);
        match at {
            Some(i) => flags[i + 1] = spoil[1].to_string(),
            None => flags.extend(spoil.iter().map(|s| s.to_string())),
        }
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let o = calibrate(&cfg, &db, &flags);
        assert_eq!(o.status.code(), Some(2), "{spoil:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{spoil:?}: {}", stderr(&o));
    }
}

#[test]
fn runs_record_their_zero_and_calibration_and_an_overdue_one_refuses() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = sim_daq();

    // No calibration on record: the run goes, and says so.
    let first = run_id(&run(dir.path(), &cfg, &db));

    // Calibrated long ago, due in the past: refused before anything is created or moves.
    let flags = good("0.5", "2020-01-10", "2020-07-01");
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let o = calibrate(&cfg, &db, &flags);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(dir.path(), &cfg, &db);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains("sensor daq.measured_torque") && said.contains("was due 2020-07-01"),
        "{said}"
    );

    // Allowed by the bench: it runs, and records that it ran overdue.
    let text = std::fs::read_to_string(&cfg).unwrap();
    let allowing = dir.path().join("allowing.toml");
    std::fs::write(
        &allowing,
        text.replace("[safety]\n", "[safety]\nallow_overdue_calibration = true\n"),
    )
    .unwrap();
    let allowing = allowing.display().to_string();
    let second = run_id(&run(dir.path(), &allowing, &db));

    let daemon = Daemon::in_process(&["--sim", "--config", &cfg], Path::new(&db));
    let sensors = |id: i64| daemon.json(&format!("/api/runs/{id}"))["sensors"].clone();
    let s1 = sensors(first);
    assert_eq!(s1[0]["sensor"], SENSOR, "{s1}");
    assert_eq!(s1[0]["note"], "no calibration on record", "{s1}");
    assert!(s1[0]["calibration_id"].is_null(), "{s1}");
    // The emulated amplifier reads 0 V at rest, within its noise.
    let zero = s1[0]["zero"].as_f64().expect("the zero is recorded");
    assert!(zero.abs() < 0.01, "{s1}");
    let s2 = sensors(second);
    assert_eq!(s2[0]["overdue"], true, "{s2}");
    assert!(s2[0]["calibration_id"].is_i64(), "{s2}");
    assert!(
        s2[0]["note"]
            .as_str()
            .unwrap()
            .contains("overdue since 2020-07-01")
    );

    let all = daemon.json("/api/sensors");
    let s = &all["sensors"][0];
    assert_eq!(s["name"], SENSOR, "{all}");
    assert_eq!(
        (s["sensitivity_unit"].as_str(), s["offset_unit"].as_str()),
        (Some("N m/V"), Some("V"))
    );
    assert_eq!(s["calibration"]["certificate"], "DKD-K-12345", "{all}");
    assert_eq!(s["calibration"]["recorded_by"], "ada", "{all}");
    assert_eq!(s["overdue"], true, "{all}");
    let zeros: Vec<i64> = s["zeros"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z["run_id"].as_i64().unwrap())
        .collect();
    assert_eq!(zeros, [second, first], "{all}");
    assert_eq!(s["drift"]["runs"], 2, "{all}");
    assert!(s["drift"]["spread"].as_f64().unwrap() >= 0.0, "{all}");

    // The command line shows the same, in the bench's units.
    let o = bench(&["sensors", "list", "--sim", "--config", &cfg, "--db", &db]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("sensitivity 0.5 N m/V, offset 0.002 V"),
        "{text}"
    );
    assert!(text.contains("OVERDUE by"), "{text}");
    assert!(text.contains("zero over 2 runs"), "{text}");
}
