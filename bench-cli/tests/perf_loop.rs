//! `bench perf loop` and `bench perf serve` against the simulated bench: every key of the
//! loop's report, and the floor that cyclictest measures beside the loop (`--floor`).

use crate::util::{bench, stderr, stdout};
use std::process::Command;

#[test]
fn perf_loop_reports_every_key() {
    let _bench = crate::util::bench_slot();
    let o = bench(&[
        "perf",
        "loop",
        "--sim",
        "--rate",
        "500",
        "--seconds",
        "1",
        "--models",
        "lugre,gms",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["rate_hz"], 500.0);
    assert!(v["achieved_hz"].as_f64().unwrap() > 0.0);
    for k in ["p50", "p99", "max"] {
        assert!(v["period_error_us"][k].is_number(), "{v}");
    }
    assert!(v["overruns"].is_u64());
    assert_eq!(v["status"], "completed");
    // Against the simulated bench alone the loop takes a CPU of its own when there are two.
    let mask = rustix::thread::sched_getaffinity(None).unwrap();
    let cpus = (0..rustix::thread::CpuSet::MAX_CPU).filter(|&c| mask.is_set(c));
    assert_eq!(v["loop_cpu"].is_u64(), cpus.count() >= 2, "{v}");
}

/// Through the emulated DAQ the report counts the stream's scans as numbers: at 2 kHz, 2000
/// scans a second of the run and the zero's scans before it (0.1 s), none skipped.
#[test]
fn perf_loop_counts_the_daq_streams_scans() {
    let _bench = crate::util::bench_slot();
    let config = format!(
        "{}/../bench-daemon/config/sim-daq.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = bench(&[
        "perf",
        "loop",
        "--sim",
        "--config",
        &config,
        "--seconds",
        "1",
        "--models",
        "lugre",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let d = &v["daq_stream"];
    let scans = d["scans"].as_u64().unwrap_or_else(|| panic!("{v}")) as f64;
    let run_s = v["seconds"].as_f64().unwrap();
    let (least, most) = (0.95 * 2000.0 * run_s, 1.05 * 2000.0 * (run_s + 0.5));
    assert!((least..=most).contains(&scans), "{v}");
    assert_eq!(d["skipped_scans"], 0, "{v}");
    assert_eq!(d["recoveries"], 0, "{v}");
    assert!(d["max_backlog_bytes"].is_u64(), "{v}");
}

#[test]
fn perf_loop_floor_sits_beside_the_loop() {
    // Without cyclictest on PATH: refused naming the package, before any bench starts.
    let empty = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["perf", "loop", "--sim", "--floor", "--seconds", "2"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("rt-tests"), "{}", stderr(&o));
    if !cyclictest_found() {
        eprintln!("skipped the floor run: no cyclictest on PATH (Debian's rt-tests)");
        return;
    }
    let _bench = crate::util::bench_slot();
    let o = bench(&[
        "perf",
        "loop",
        "--sim",
        "--floor",
        "--seconds",
        "2",
        "--models",
        "lugre",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_rows(&v, &v["floor"], &v["loop"]);
    // The floor ran as long as the run's plan (at least the 2 s asked for, at 1 kHz).
    assert!(v["floor"]["samples"].as_u64().unwrap() >= 2000, "{v}");
    assert!(v["loop"]["samples"].as_u64().unwrap() > 0, "{v}");
    let ratio = v["late_ratio"].as_f64().unwrap();
    let late = |row: &str| v[row]["late"].as_u64().unwrap() as f64;
    assert_eq!(ratio, late("loop") / late("floor").max(1.0), "{v}");
}

/// A floor row and a loop row of `v`: percentiles in order, late wake-ups within the samples.
fn assert_rows(v: &serde_json::Value, floor: &serde_json::Value, looped: &serde_json::Value) {
    for (row, f) in [("floor", floor), ("loop", looped)] {
        let num = |k: &str| f[k].as_f64().unwrap_or_else(|| panic!("{row}.{k}: {v}"));
        let (p50, p99, p999, max) = (num("p50_us"), num("p99_us"), num("p999_us"), num("max_us"));
        assert!(p50.is_finite() && max.is_finite(), "{row}: {v}");
        assert!(
            0.0 <= p50 && p50 <= p99 && p99 <= p999 && p999 <= max,
            "{row}: {v}"
        );
        assert!(
            f["late"].as_u64().unwrap() <= f["samples"].as_u64().unwrap(),
            "{v}"
        );
    }
}

/// cyclictest on PATH (Debian's rt-tests)?
fn cyclictest_found() -> bool {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .any(|d| d.join("cyclictest").is_file())
}

#[test]
fn perf_serve_floor_sits_beside_the_quiet_and_the_loaded_run() {
    if !cyclictest_found() {
        eprintln!("skipped: no cyclictest on PATH (Debian's rt-tests)");
        return;
    }
    let _bench = crate::util::bench_slot();
    let o = bench(&[
        "perf",
        "serve",
        "--floor",
        "--seconds",
        "0.5",
        "--live-clients",
        "2",
        "--rest-workers",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The floor ran as long as a run (0.5 s settling and 0.5 s measuring at 1 kHz).
    assert!(v["floor"]["samples"].as_u64().unwrap() >= 1000, "{v}");
    for run in ["quiet", "loaded"] {
        let r = &v[run];
        assert_eq!(r["status"], "completed", "{v}");
        assert_rows(&v, &v["floor"], &r["loop"]);
        // The run's own tick work sets its budget: the period less it.
        let budget = r["budget_us"].as_f64().unwrap();
        assert!(0.0 < budget && budget <= 1000.0, "{v}");
        assert_eq!(r["loop"]["samples"], r["samples"], "{v}");
        assert_eq!(r["loop"]["late"], r["overruns"], "{v}");
        assert!(r["late_ratio"].as_f64().unwrap() >= 0.0, "{v}");
    }
}
