//! `bench perf loop` against the simulated bench: every key of its report, and the floor that
//! cyclictest measures beside the loop (`--floor`).

use crate::util::{bench, stderr, stdout};
use std::process::Command;

#[test]
fn perf_loop_reports_every_key() {
    let _bench = crate::util::one_bench_at_a_time();
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
    let found = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .any(|d| d.join("cyclictest").is_file());
    if !found {
        eprintln!("skipped the floor run: no cyclictest on PATH (Debian's rt-tests)");
        return;
    }
    let _bench = crate::util::one_bench_at_a_time();
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
    for row in ["floor", "loop"] {
        let f = &v[row];
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
    // The floor ran as long as the run's plan (at least the 2 s asked for, at 1 kHz).
    assert!(v["floor"]["samples"].as_u64().unwrap() >= 2000, "{v}");
    assert!(v["loop"]["samples"].as_u64().unwrap() > 0, "{v}");
    let ratio = v["late_ratio"].as_f64().unwrap();
    let late = |row: &str| v[row]["late"].as_u64().unwrap() as f64;
    assert_eq!(ratio, late("loop") / late("floor").max(1.0), "{v}");
}
