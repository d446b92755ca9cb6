//! The Modbus torque sensor zeroed before each run: on an emulated sensor reading 0.05 N m at
//! zero torque, the daemon reads the zero at rest, writes the profile's `tare` sequence over
//! Modbus, and the sweep then lies on the truth (without the tare every point would be off by
//! the offset, over 10 % of the slowest point's torque); the run records the zero it read.

use crate::devices::{assert_sweep_on_the_truth, device_sweep};
use crate::util::{SimProcess, bench_slot, config_for, db_in};

/// The emulated sensor's offset \[N m\].
const OFFSET_NM: f64 = 0.05;

/// The zero each sensor of run `id` recorded, by the sensor's name.
fn zeros(db: &str, id: i64) -> Vec<(String, Option<f64>)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = run_store::Store::open(db).await.unwrap();
        let sensors = store.run_sensors(id).await.unwrap();
        store.close().await;
        sensors.into_iter().map(|s| (s.sensor, s.zero)).collect()
    })
}

#[test]
fn the_sensor_is_tared_before_the_run_and_its_zero_recorded() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let params = format!(r#"{{"sensor_offset_nm": {OFFSET_NM}}}"#);
    let sim = SimProcess::start_with(&["--params", &params]);
    let cfg = config_for(dir.path(), &sim.tcp);
    // 20 readings, one per sample of the simulated sensor (its 1 kHz poll group).
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replacen("[sensor]\n", "[sensor]\nzero_reads = 20\n", 1);
    std::fs::write(&cfg, text).unwrap();
    let run = device_sweep(&cfg, &db, "tared");
    assert_sweep_on_the_truth(&run, "tared");
    let id = run["id"].as_i64().unwrap();
    let zeros = zeros(&db, id);
    assert_eq!(zeros.len(), 1, "{zeros:?}");
    assert_eq!(zeros[0].0, "sensor");
    let zero = zeros[0].1.expect("the sensor's zero is recorded");
    // Readings of 2 mN m noise at 1 mN m resolution; the bound is five of one sample's σ,
    // which holds however many of the readings share a sample of the sensor.
    assert!((zero - OFFSET_NM).abs() < 0.01, "zero {zero}");
    let log = run["run_log"].to_string();
    assert!(log.contains("torque sensor zero 0.0"), "{log}");
    assert!(log.contains("(mean of 20 readings 1 ms apart"), "{log}");
    assert!(log.contains("tare written, then it reads"), "{log}");
}
