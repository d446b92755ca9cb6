//! Every scan of the emulated T7's stream recorded as a sample on the DAQ's clock (2 kHz scans
//! under a 1 kHz loop: two samples a tick, half a millisecond apart), and the quadrature
//! counter as the loop's position with `[daq.position] source = "counter"`.

use crate::util::*;

/// A short sweep (one speed each way) run through `config`; its samples as CSV columns
/// (t, x, v, torque_sensor) and the run.
fn short_run(dir: &tempfile::TempDir, config: &str) -> (Vec<[f64; 4]>, serde_json::Value) {
    let db = db_in(dir);
    let spec = dir.path().join("short.json");
    std::fs::write(
        &spec,
        r#"{"kind": "constant_velocity_sweep", "name": "short",
            "params": {"velocities": [0.5], "directions": "both", "settle_s": 0.5,
                       "measure_s": 0.5, "repeats": 1}}"#,
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    let o = bench(&[
        "run", spec, "--sim", "--db", &db, "--config", config, "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    let id = out["run_id"].as_i64().unwrap();
    let text = export_csv(&db, id);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let cols = [col("t"), col("x"), col("v"), col("torque_sensor")];
    let rows = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            cols.map(|c| f[c].parse::<f64>().unwrap())
        })
        .collect();
    (rows, show(&db, id))
}

fn shipped() -> String {
    format!(
        "{}/../bench-daemon/config/sim-daq.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn every_scan_is_recorded_on_the_daq_clock_two_a_tick_at_2_khz_under_a_1_khz_loop() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let (rows, run) = short_run(&dir, &shipped());
    assert_eq!(rows.len() as i64, run["sample_count"].as_i64().unwrap());
    let span = rows.last().unwrap()[0] - rows[0][0];
    // Ticks are 1 ms apart; scans 0.5 ms.
    let per_ms = rows.len() as f64 / (span * 1e3);
    assert!(
        (per_ms - 2.0).abs() < 0.02,
        "{per_ms} samples per ms over {span} s"
    );
    let mut dt: Vec<f64> = rows.windows(2).map(|w| w[1][0] - w[0][0]).collect();
    dt.sort_by(f64::total_cmp);
    let median = dt[dt.len() / 2];
    assert!((median - 0.5e-3).abs() < 1e-6, "median step {median} s");
    assert!(dt[0] > 0.0, "time goes forward at every scan: {}", dt[0]);
    assert!(rows.iter().all(|r| r.iter().all(|v| v.is_finite())));
    // The stream's provenance, with the run.
    let p = &run["bench_config"]["daq_stream"];
    assert_eq!(p["scan_rate_hz"], 2000.0, "{run}");
    assert_eq!(p["samples_per_packet"], 2);
    assert_eq!(p["resolution_index"], 0);
    assert_eq!(p["torque"]["range_v"], 10.0);
    assert_eq!(p["device"], "LabJack T7");
    assert!(run["run_log"].to_string().contains("0 skipped"));
}

#[test]
fn the_counter_is_the_loops_position_when_it_is_the_source() {
    let _slot = bench_slot();
    let dir = tempfile::tempdir().unwrap();
    // Twice the encoder's counts per revolution: the counter reads half the drive's angle,
    // so the recorded position says which of the two the loop took.
    let text = std::fs::read_to_string(shipped()).unwrap().replace(
        "source = \"drive\"",
        "source = \"counter\"\ncounts_per_rev = 262144",
    );
    let cfg = dir.path().join("bench.toml");
    std::fs::write(&cfg, text).unwrap();
    let (rows, run) = short_run(&dir, cfg.to_str().unwrap());
    let (x_max, x_min) = rows
        .iter()
        .fold((f64::MIN, f64::MAX), |(a, b), r| (a.max(r[1]), b.min(r[1])));
    // Out at 0.5 rad/s and back (the drive's velocity, integrated): the counter's span is
    // half the way out.
    let out: f64 = rows
        .windows(2)
        .map(|w| (0.5 * (w[0][2] + w[1][2])).max(0.0) * (w[1][0] - w[0][0]))
        .sum();
    let ratio = (x_max - x_min) / out;
    assert!(
        (ratio - 0.5).abs() < 0.05,
        "counter span / drive's angle = {ratio}"
    );
    let log = run["run_log"].to_string();
    assert!(
        log.contains("position from the DAQ's quadrature counter"),
        "{log}"
    );
}
