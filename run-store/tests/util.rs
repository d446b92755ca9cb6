//! Test helpers: a temp store, a run, and deterministic samples.

use run_store::{Batch, NewRun, Sample, Store};
use tempfile::TempDir;

/// A fresh store in its own temp dir (kept alive by the returned `TempDir`).
pub async fn temp_store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("runs.db")).await.unwrap();
    (dir, store)
}

/// A run description with the given kind and lockstep models.
pub fn new_run(kind: &str, models: &[&str]) -> NewRun {
    NewRun {
        kind: kind.into(),
        name: format!("{kind} test"),
        spec: serde_json::json!({"kind": kind, "name": "t", "params": {"rate": 0.5}}),
        bench_config: serde_json::json!({"period_s": 0.001, "limits": {"torque": 2.0}}),
        device_profiles: serde_json::json!({"drive": "sim-drive"}),
        software_version: "0.1.0-test".into(),
        operator_note: Some("note".into()),
        models: models.iter().map(|m| m.to_string()).collect(),
        period_s: Some(0.001),
    }
}

/// Sample `k` of a 1 kHz run: every channel distinct and not round in binary.
pub fn sample(k: u64) -> Sample {
    let t = k as f64 * 1e-3;
    Sample {
        t,
        x: if k == 3 {
            -0.0
        } else {
            (0.7 * t).sin() * 1e-3 + 1.0 / 3.0
        },
        v: (0.7 * t).cos() * 0.7e-3,
        u_cmd: 0.1 * k as f64 + 0.123_456_789,
        torque_motor: -(k as f64) / 7.0,
        torque_sensor: if k % 97 == 5 {
            f64::NAN
        } else {
            k as f64 * 1e-9 - 2.5
        },
        segment: (k / 1000) as u32,
        flags: (k % 3) as u32,
    }
}

/// Output of model `m` at sample `k`.
pub fn output(k: u64, m: usize) -> f64 {
    (k as f64 + 1.0) * 0.01 * (m as f64 + 1.0) + 1e-12
}

/// Samples `first..first + n` with `models` outputs each.
pub fn batch(first: u64, n: u64, models: usize) -> Batch {
    let mut b = Batch::with_capacity(first, n as usize, models);
    for k in first..first + n {
        let outs: Vec<f64> = (0..models).map(|m| output(k, m)).collect();
        b.push(sample(k), &outs);
    }
    b
}

/// Bit-for-bit equality of every channel (NaN and -0.0 included).
pub fn same(a: &Sample, b: &Sample) -> bool {
    let ch =
        |s: &Sample| [s.t, s.x, s.v, s.u_cmd, s.torque_motor, s.torque_sensor].map(f64::to_bits);
    ch(a) == ch(b) && a.segment == b.segment && a.flags == b.flags
}
