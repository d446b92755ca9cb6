//! The drive's enable line on the DAQ (`[daq.drive_command] enable_dio`), watched during the
//! run: the daemon reads the outputs back every quarter of `watchdog_s` (which also feeds the
//! T7's watchdog), and a line that reads other than it set stops the run as a comms fault,
//! ending in the confirmed safe state. The emulated T7 runs in its own `bench sim` process, so
//! the test can lower the line through its Modbus map as a watchdog or a restart would.

use crate::cli_sim::start_sim;
use crate::util::*;

/// The emulated T7 wired as [`config`] says: DAC0 on the drive's analog torque input, DIO2
/// on its enable.
pub(crate) const ANALOG: &str =
    r#"{"analog_command": {"center_v": 2.5, "nm_per_v": 1.0, "enable_dio": 2}}"#;

/// The shipped sim-daq.toml pointed at `bench sim`'s endpoints `ep`, the drive on the DAQ's
/// DIO2 and its watchdog at 1 s.
pub(crate) fn config(dir: &std::path::Path, ep: &serde_json::Value) -> String {
    let shipped = format!(
        "{}/../bench-daemon/config/sim-daq.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(shipped)
        .unwrap()
        .replace(
            "tcp = \"127.0.0.1:5020\"",
            &format!("tcp = {:?}", ep["tcp"].as_str().unwrap()),
        )
        .replace(
            "tcp = \"127.0.0.1:502\" ",
            &format!(
                "tcp = {:?}\nstream_tcp = {:?} ",
                ep["daq"]["modbus"].as_str().unwrap(),
                ep["daq"]["stream"].as_str().unwrap()
            ),
        );
    let text = text
        + "\n[daq.drive_command]\ndac = 0\ncenter_v = 2.5\nnm_per_v = 1.0\nenable_dio = 2\nwatchdog_s = 1\n";
    let path = dir.join("bench.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn an_enable_line_lowered_mid_run_stops_it_as_a_comms_fault_in_the_safe_state() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    // DAC0 wired to the drive, DIO2 not: the line lowered here is seen by the daemon's read
    // back alone (wired, the drive would disable and the judge would stop the run first).
    let dac_only = r#"{"analog_command": {"center_v": 2.5, "nm_per_v": 1.0}}"#;
    let (mut sim, ep) = start_sim(&["--daq", "t7", "--daq-options", dac_only]);
    let cfg = config(dir.path(), &ep);
    let spec = spec("constant_velocity_sweep.json");
    let (mut child, _out, id) = spawn_run(&["run", &spec, "--config", &cfg, "--db", &db]);
    // Two seconds into the run: the line is high, and the watchdog (1 s) has been fed.
    wait_for_samples(&db, id, 2000);
    let (rt, mut t7) = t7_client(&ep);
    rt.block_on(t7.set_dio(2, false)).unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run should fail");
    let run = show(&db, id);
    assert_eq!(run["status"], "failed", "{run}");
    let why = run["status_reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("enable line DIO2 reads low during the run"),
        "{why}"
    );
    let log = run.to_string();
    assert!(log.contains("drive disabled, confirmed"), "{log}");
    assert!(
        log.contains("outputs read back at the end: DAC0 2.5 V, DIO2 low"),
        "{log}"
    );
    let _ = sim.kill();
    let _ = sim.wait();
}
