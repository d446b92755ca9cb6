//! A drive commanded by an analog *velocity* input (`[daq.drive_command] mode = "velocity"`):
//! DAC0 of the emulated T7 is the simulated drive's speed setpoint, the drive closes its own
//! speed loop on it, and the daemon writes the speed the plan asks as a voltage. The T7 runs
//! in its own `bench sim` process, so the test can look at both devices mid-run.

use crate::cli_sim::start_sim;
use crate::daq_command::{both_speeds_held, drive_signal};
use crate::daq_enable::config;
use crate::daq_safe::{SHORT_SWEEP, sim_daq_with};
use crate::util::*;

/// The emulated T7 wired as [`velocity_config`] says: DAC0 on the drive's analog speed
/// input, 10 rad/s per V around 2.5 V, DIO2 on its enable.
const ANALOG_VELOCITY: &str = r#"{"analog_command": {"center_v": 2.5, "mode": "velocity",
    "rad_s_per_v": 10.0, "enable_dio": 2}}"#;

/// [`config`] with the DAC on the drive's speed input: 2.5 V ± 20 rad/s / 10 rad/s per V
/// spans 0.5..=4.5 V, inside the T7's 0..5 V.
fn velocity_config(dir: &std::path::Path, ep: &serde_json::Value) -> String {
    let path = config(dir, ep);
    let text = std::fs::read_to_string(&path).unwrap();
    let torque = "center_v = 2.5\nnm_per_v = 1.0\n";
    assert!(text.contains(torque), "{text}");
    let text = text.replace(
        torque,
        "mode = \"velocity\"\ncenter_v = 2.5\nrad_s_per_v = 10.0\n",
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_sweep_through_the_drives_analog_speed_input_follows_its_plan() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let (mut sim, ep) = start_sim(&["--daq", "t7", "--daq-options", ANALOG_VELOCITY]);
    let cfg = velocity_config(dir.path(), &ep);
    let spec = dir.path().join("sweep.json");
    std::fs::write(&spec, SHORT_SWEEP).unwrap();
    let spec = spec.to_str().unwrap();
    let (mut child, _out, id) = spawn_run(&["run", spec, "--config", &cfg, "--db", &db]);
    // A second into the run (2 kHz scans): the first speed, 0.5 rad/s, is 2.55 V.
    wait_for_samples(&db, id, 2000);
    let (rt, mut t7) = t7_client(&ep);
    let volts = rt.block_on(t7.read_dac(0)).unwrap();
    drop(t7);
    let setpoint = drive_signal(&ep, "velocity_cmd");
    assert!(child.wait().unwrap().success(), "the run should complete");
    assert!((volts - 2.55).abs() < 1e-4, "DAC0 {volts} V mid-run");
    assert_eq!(
        setpoint, 0.0,
        "the drive's Modbus velocity setpoint was written"
    );
    let run = both_speeds_held(&db, id);
    let log = run["run_log"].to_string();
    for says in [
        "DAQ outputs to the drive: DAC0 2.5 V (zero speed), enable line DIO2 low",
        "velocity command through DAC0 (2.5 V at zero speed, 10 rad/s per V)",
        "outputs read back at the end: DAC0 2.5 V, DIO2 low",
    ] {
        assert!(log.contains(says), "{says} not in {log}");
    }
    // After the run: the DAC at its zero-speed voltage, the drive's setpoint at 0 rad/s.
    let (rt, mut t7) = t7_client(&ep);
    assert_eq!(rt.block_on(t7.read_dac(0)).unwrap(), 2.5);
    let _ = sim.kill();
    let _ = sim.wait();
}

/// A torque segment has no mode on a drive that takes speed only: refused before the drive
/// is enabled, naming the segment, in the safe state.
#[test]
fn a_torque_segment_is_refused_on_an_analog_speed_input() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = sim_daq_with(
        dir.path(),
        "velocity.toml",
        "\n[daq.drive_command]\ndac = 0\nmode = \"velocity\"\ncenter_v = 2.5\n\
         rad_s_per_v = 10.0\nenable_dio = 2\n",
    );
    let spec = spec("breakaway_staircase.json");
    let o = bench(&["run", &spec, "--sim", "--config", &cfg, "--db", &db]);
    assert!(!o.status.success(), "the run should be refused");
    let err = stderr(&o);
    assert!(
        err.contains("runs in the drive's torque mode, which this bench does not have"),
        "{err}"
    );
}
