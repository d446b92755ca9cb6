//! `[[suspend]]` end to end: `bench run` against `bench sim` over real Modbus TCP, the
//! simulated drive's temperature set on its stdin.

use crate::util::{SimProcess, config_for, db_in, show, spawn_run};

#[test]
fn a_warm_drive_on_bench_sim_pauses_the_run_over_modbus_and_a_long_pause_ends_it() {
    let _bench = crate::util::bench_slot();
    let mut sim = SimProcess::start();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cfg = config_for(dir.path(), &sim.tcp);
    let suspend = "\n[[suspend]]\nsignal = \"drive.temperature\"\nabove = 60\nhold_s = 0.5\n\
                   suspended_timeout_s = 2.5\n";
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(suspend);
    std::fs::write(&cfg, text).unwrap();
    let spec_path = dir.path().join("sweep.json");
    std::fs::write(
        &spec_path,
        r#"{"kind": "constant_velocity_sweep", "params": {"velocities": [0.5],
            "directions": "positive", "settle_s": 0.2, "measure_s": 0.2, "repeats": 1}}"#,
    )
    .unwrap();
    let args = [
        "run",
        spec_path.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
        "--db",
        &db,
    ];
    // Warm before the run: it pauses before its first segment, and stays paused past 2.5 s.
    sim.fault(r#"{"temperature_c": 75}"#);
    let (mut child, _out, id) = spawn_run(&args);
    assert_eq!(child.wait().unwrap().code(), Some(3), "aborted");
    let run = show(&db, id);
    assert_eq!(
        (&run["status"], &run["reason_code"]),
        (&"aborted".into(), &"suspended_timeout".into()),
        "{run}"
    );
    let log = run["interruption_log"].to_string();
    assert!(log.contains("drive.temperature > 60 read 75.0"), "{log}");
    assert!(log.contains("drive disabled, confirmed"), "{log}");
    // Cooled during the pause: the run goes on and completes.
    let (mut child, _out, id) = spawn_run(&args);
    // The pause is in the run's log while it lasts.
    let paused = (0..400).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(25));
        show(&db, id)["interruption_log"]
            .to_string()
            .contains("drive disabled, confirmed")
    });
    assert!(paused, "{}", show(&db, id));
    sim.fault(r#"{"temperature_c": 40}"#);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let run = show(&db, id);
    assert_eq!(run["status"], "completed", "{run}");
    let log = run["interruption_log"].to_string();
    assert!(log.contains("suspended before 'settle"), "{log}");
    assert!(log.contains("is measured from its start"), "{log}");
    let status = sim.statusword() & 0x6F;
    assert_ne!(status, 0x27, "the drive ends disabled ({status:#x})");
}
