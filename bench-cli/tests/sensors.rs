//! The shipped torque-sensor profiles on their emulations over RTU: the sweep measured through
//! each lies on the truth, and a sensor falling silent mid-run fails the run with torque off.

use crate::devices::{assert_sweep_on_the_truth, device_sweep, sweep_in};
use crate::util::{SimProcess, db_in, show, spawn_run, wait_for_samples};

/// The sweep measured through each shipped sensor profile on its emulation: the
/// simulated drive on Modbus TCP, the sensor on an RTU line at its own baud rate and moved to
/// unit 2 (real sensors and drives both ship at 1), read through the profile's own scaling (the
/// ATO's 0.01 N m counts; the transmitter's counts with the decimal places its status register
/// reports, 3 on the emulation). The points lie on the truth as with the simulated sensor.
/// `stall_s`: the bench's `sensor_stall_s` for this sensor (it has no heartbeat, so a stall is
/// an unchanged reading). Then the sensor falls silent mid-run.
fn sweep_through_a_sensor(file: &str, baud: &str, stall_s: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let profile = format!("{}/../profiles/{file}", env!("CARGO_MANIFEST_DIR"));
    let mut sim = SimProcess::start_with(&[
        "--rtu",
        "--baud",
        baud,
        "--sensor-profile",
        &profile,
        "--sensor-unit",
        "2",
    ]);
    let pty = sim.rtu.clone().expect("bench sim --rtu prints its pty");
    let shipped = std::fs::read_to_string(format!(
        "{}/../bench-daemon/config/sim.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let text = shipped
        .replace(
            "tcp = \"127.0.0.1:5020\"",
            &format!("tcp = \"{}\"", sim.tcp),
        )
        .replace(
            &format!(
                "profile = \"builtin:sim-torque-sensor\"\ntcp = \"{}\"",
                sim.tcp
            ),
            &format!("profile = \"{profile}\"\nserial = \"{pty}\"\nbaud = {baud}\nunit = 2"),
        )
        .replace("period_s = 0.001", "period_s = 0.1")
        .replace(
            "sensor_stall_s = 0.05",
            &format!("sensor_stall_s = {stall_s}"),
        )
        .replace("[safety]\n", "[safety]\nallow_unverified = true\n");
    assert!(text.contains(&format!("serial = \"{pty}\"")), "{text}");
    let cfg = dir.path().join("bench.toml");
    std::fs::write(&cfg, text).unwrap();
    let run = device_sweep(&cfg, &db, file);
    assert_sweep_on_the_truth(&run, file);
    // No tare sequence in these profiles: the zero is read at rest, nothing is written.
    let log = run["run_log"].to_string();
    assert!(log.contains("no tare sequence: nothing written"), "{log}");

    // The sensor falls silent mid-run: its comms-error budget fails the run and torque is off:
    // the daemon disables the drive, or, on the slow transmitter line (each silent read costs
    // a timeout, and the loop writes no command meanwhile), the drive's 0.25 s watchdog does.
    let sweep = sweep_in(dir.path());
    let args = [
        "run",
        &sweep,
        "--config",
        cfg.to_str().unwrap(),
        "--db",
        &db,
    ];
    let (mut child, _out, id) = spawn_run(&args);
    wait_for_samples(&db, id, 10);
    sim.fault(r#"{"unit": 2, "silence": true}"#);
    assert_eq!(child.wait().unwrap().code(), Some(1), "{file}");
    let run = show(&db, id);
    let reason = run["status_reason"].as_str().unwrap();
    assert!(reason.starts_with("comms fault: torque sensor"), "{reason}");
    sim.fault("{}");
    let sw = sim.statusword();
    assert_eq!(
        sw & 0x04,
        0,
        "{file}: operation enabled: statusword {sw:#06x}"
    );
    eprintln!("{file}: silent mid-run: {reason}; drive statusword {sw:#06x}");
}

#[test]
fn the_sweep_through_the_emulated_ato_torque_sensor_over_rtu() {
    // 0.01 N m counts: at a steady torque the reading holds one value for seconds, which an
    // unchanged-reading stall check takes for a stuck sensor; off (a silent sensor still
    // fails the run through its comms-error budget).
    sweep_through_a_sensor("ato-rotary-torque-sensor.toml", "38400", "0.0");
}

#[test]
fn the_sweep_through_the_emulated_weighing_transmitter_over_rtu() {
    // At 10 Hz, a reading at rest can repeat its 0.001 N m count: the check is off here too.
    sweep_through_a_sensor("generic-weighing-transmitter.toml", "9600", "0.0");
}
