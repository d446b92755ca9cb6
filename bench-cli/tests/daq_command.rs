//! The loop's torque command through the DAQ's DAC (`[daq.drive_command]`): a short sweep on
//! the simulated drive whose torque input is the emulated T7's DAC0 (the T7 in its own `bench
//! sim` process, so the test can look at both devices mid-run). The plant follows the plan
//! through the DAC, the drive's Modbus torque setpoint is never written, and the run ends
//! with the DAC read back at its zero-torque voltage.

use crate::cli_sim::start_sim;
use crate::daq_enable::{ANALOG, config};
use crate::daq_safe::SHORT_SWEEP;
use crate::util::*;

/// DAC0 over the emulated T7's Modbus map \[V\].
fn dac0(ep: &serde_json::Value) -> f64 {
    let (rt, mut t7) = t7_client(ep);
    rt.block_on(t7.read_dac(0)).unwrap()
}

/// A signal of the simulated drive's Modbus map, as `bench probe` reads it.
pub(crate) fn drive_signal(ep: &serde_json::Value, name: &str) -> f64 {
    let profile = format!("{}/../profiles/sim-drive.toml", env!("CARGO_MANIFEST_DIR"));
    let tcp = ep["tcp"].as_str().unwrap();
    let o = bench(&["probe", "--profile", &profile, "--tcp", tcp]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    v.pointer(&format!("/signals/{name}/value"))
        .and_then(serde_json::Value::as_f64)
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

/// The completed short sweep `id` in `db` with both its speeds held within 2 % by whichever
/// loop closes them (the daemon's through a torque input, the drive's on a speed input).
pub(crate) fn both_speeds_held(db: &str, id: i64) -> serde_json::Value {
    let run = show(db, id);
    assert_eq!(run["status"], "completed", "{run}");
    let points = run["results"]["positive"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{points:?}");
    for p in points {
        let (want, got) = (
            p["setpoint_rad_s"].as_f64().unwrap(),
            p["velocity_rad_s"].as_f64().unwrap(),
        );
        assert!((got - want).abs() < 0.02 * want, "{p}");
    }
    run
}

#[test]
fn a_sweep_commanded_through_the_dac_follows_its_plan() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (mut sim, ep) = start_sim(&["--daq", "t7", "--daq-options", ANALOG]);
    let cfg = config(dir.path(), &ep);
    let spec = dir.path().join("sweep.json");
    std::fs::write(&spec, SHORT_SWEEP).unwrap();
    let spec = spec.to_str().unwrap();
    let (mut child, _out, id) = spawn_run(&["run", spec, "--config", &cfg, "--db", &db]);
    // A second into the run (2 kHz scans): the first speed's settling.
    wait_for_samples(&db, id, 2000);
    let volts = dac0(&ep);
    let setpoint = drive_signal(&ep, "torque_cmd");
    assert!(child.wait().unwrap().success(), "the run should complete");
    // Turning at 0.5 rad/s takes the friction's torque (about 0.3 N m at 1 N m/V).
    assert!((volts - 2.5).abs() > 0.05, "DAC0 {volts} V mid-run");
    assert_eq!(
        setpoint, 0.0,
        "the drive's Modbus torque setpoint was written"
    );
    let run = both_speeds_held(&db, id);
    for p in run["results"]["positive"].as_array().unwrap() {
        assert_eq!(p["stick_slip"], false, "{p}");
    }
    let log = run["run_log"].to_string();
    assert!(log.contains("torque command through DAC0"), "{log}");
    assert!(
        log.contains("outputs read back at the end: DAC0 2.5 V, DIO2 low"),
        "{log}"
    );
    let _ = sim.kill();
    let _ = sim.wait();
}
