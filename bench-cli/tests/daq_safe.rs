//! A drive on the DAQ's analog outputs (`[daq.drive_command]`: DAC0 its torque input, DIO2 its
//! enable) on the in-process simulated bench: made safe and the T7's watchdog armed at
//! connect, both read back; the line raised with the drive; at the end the safe state lowers
//! it and the run's log shows both outputs read back safe.

use crate::util::*;

const DRIVE_COMMAND: &str = "
[daq.drive_command]
dac = 0
center_v = 2.5
nm_per_v = 1.0
enable_dio = 2
watchdog_s = 1
";

/// A sweep of two speeds one way, about 5 s: five of the DAQ watchdog's periods, so the run
/// completes only if the daemon feeds the watchdog.
pub(crate) const SHORT_SWEEP: &str = r#"{
  "kind": "constant_velocity_sweep",
  "name": "two speeds",
  "params": {"velocities": [0.5, 1.0], "directions": "positive",
             "settle_s": 1.0, "measure_s": 1.0, "repeats": 1}
}"#;

/// The shipped sim-daq.toml with `extra` appended, written to `dir/name`; its path.
pub(crate) fn sim_daq_with(dir: &std::path::Path, name: &str, extra: &str) -> String {
    let shipped = format!(
        "{}/../bench-daemon/config/sim-daq.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let path = dir.join(name);
    std::fs::write(&path, std::fs::read_to_string(shipped).unwrap() + extra).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_run_on_a_dac_commanded_drive_ends_with_the_dac_at_zero_torque_and_the_line_low() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = sim_daq_with(dir.path(), "analog.toml", DRIVE_COMMAND);
    let spec = dir.path().join("sweep.json");
    std::fs::write(&spec, SHORT_SWEEP).unwrap();
    let spec = spec.to_str().unwrap();
    let o = bench(&[
        "run", spec, "--sim", "--config", &cfg, "--db", &db, "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    // A completed run logs no safe-state line (only a stop that is not the plan's end does, as
    // on a Modbus drive); it records the confirmation as `safe_state_s`, as every run does.
    assert!(
        out["safe_state_s"].is_number(),
        "drive disable confirmed: {out}"
    );
    let run = show(&db, out["run_id"].as_i64().unwrap());
    let log = run["run_log"].to_string();
    for says in [
        "DAQ outputs to the drive: DAC0 2.5 V (zero torque), enable line DIO2 low, read back; \
         the DAQ's watchdog armed and read back: 1 s",
        "outputs read back at the end: DAC0 2.5 V, DIO2 low",
    ] {
        assert!(log.contains(says), "{says} not in {log}");
    }
}
