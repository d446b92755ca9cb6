//! A sweep read through the emulated T7's stream (`sim-daq.toml`) against the same sweep read
//! through the Modbus torque sensor (`sim.toml`): every point within 1 %, the zero and the
//! stream's provenance in the run's log. The Modbus sweep runs in virtual time (the same plant
//! and sensor behind Modbus TCP, stepped by the run's clock); the DAQ's stream is
//! hardware-timed, so its sweep runs in real time: three of the quick sweep's speeds (one in
//! its Stribeck fall, one past it, its fastest) in both directions, 12 s rather than its 32 s.

use crate::util::*;

/// Three speeds of `experiments/specs/constant_velocity_sweep.json`, with its timing.
const SWEEP: &str = r#"{"kind": "constant_velocity_sweep", "name": "daq against modbus",
    "params": {"velocities": [0.05, 0.3, 2.0], "directions": "both", "settle_s": 1.0,
    "measure_s": 1.0, "repeats": 1}}"#;

fn sweep(config: Option<&str>, dir: &std::path::Path, db: &str) -> serde_json::Value {
    let spec = dir.join("sweep.json");
    std::fs::write(&spec, SWEEP).unwrap();
    let spec = spec.to_str().unwrap();
    let mut args = vec!["run", spec, "--sim", "--db", db, "--json"];
    match config {
        Some(c) => args.extend(["--config", c]),
        None => args.push("--virtual-time"),
    }
    let o = bench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap()
}

#[test]
fn a_sweep_through_the_daq_is_within_1_percent_of_the_modbus_sensor() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = format!(
        "{}/../bench-daemon/config/sim-daq.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let daq = sweep(Some(&cfg), dir.path(), &db);
    let modbus = sweep(None, dir.path(), &db);
    for side in ["positive", "negative"] {
        let (a, b) = (&daq["results"][side], &modbus["results"][side]);
        let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
        assert_eq!((a.len(), b.len()), (3, 3), "{side}");
        for (x, y) in a.iter().zip(b) {
            let (tx, ty) = (
                x["mean_torque_nm"].as_f64().unwrap(),
                y["mean_torque_nm"].as_f64().unwrap(),
            );
            let err = (tx - ty) / ty;
            assert!(
                err.abs() < 0.01,
                "{side} {}: {tx} vs {ty}",
                x["setpoint_rad_s"]
            );
        }
    }
    let run = show(&db, daq["run_id"].as_i64().unwrap());
    let log = run["run_log"].to_string();
    assert!(log.contains("DAQ LabJack T7: stream 2000 Hz"), "{log}");
    assert!(log.contains("DAQ torque zero"), "{log}");
    assert!(log.contains("0 skipped"), "{log}");
}
