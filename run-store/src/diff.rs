//! What changed on the bench between two runs (`bench runs diff A B`): the spec, the bench
//! configuration, the device profiles (by checksum, with the lines that differ), the lockstep
//! parameter sets, the software version and the bench id. Pure: two [`Run`]s in, a list out.

use crate::types::Run;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// One difference: where, and the value in each run (`null` where a run has none).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// What differs, as a dotted path (`spec.params.velocities`, `profile.drive`).
    pub what: String,
    /// The value in the first run.
    pub a: Value,
    /// The value in the second run.
    pub b: Value,
}

/// A device profile's text, by its SHA-256.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfileSum {
    /// The device (`drive`, `sensor`).
    pub device: String,
    /// SHA-256 of the profile text in the first run (`None`: no such profile).
    pub a: Option<String>,
    /// Likewise in the second run.
    pub b: Option<String>,
}

/// Every difference between runs `a` and `b`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunDiff {
    /// The first run's id.
    pub a: i64,
    /// The second run's id.
    pub b: i64,
    /// The differences, in the order: identity, spec, bench configuration, lockstep, profiles.
    pub differences: Vec<Difference>,
    /// Each device profile's checksum in both runs (same or not).
    pub profiles: Vec<ProfileSum>,
}

/// Configuration keys that are the lockstep's (diffed under `lockstep.`).
const LOCKSTEP_KEYS: [&str; 3] = ["lockstep", "lockstep_resolved", "lockstep_sets"];

/// Compares two runs.
pub fn diff_runs(a: &Run, b: &Run) -> RunDiff {
    let mut out = Vec::new();
    for (what, va, vb) in [
        ("software_version", &a.software_version, &b.software_version),
        ("bench_id", &a.bench_id, &b.bench_id),
        ("kind", &a.kind, &b.kind),
    ] {
        if va != vb {
            out.push(Difference {
                what: what.into(),
                a: va.as_str().into(),
                b: vb.as_str().into(),
            });
        }
    }
    json_diff("spec", &a.spec, &b.spec, &mut out);
    let (cfg_a, lock_a) = split_lockstep(&a.bench_config);
    let (cfg_b, lock_b) = split_lockstep(&b.bench_config);
    json_diff("bench_config", &cfg_a, &cfg_b, &mut out);
    json_diff("lockstep", &lock_a, &lock_b, &mut out);
    let profiles = profile_sums(&a.device_profiles, &b.device_profiles);
    for p in &profiles {
        if p.a != p.b {
            out.push(Difference {
                what: format!("profile.{}", p.device),
                a: text_of(&a.device_profiles, &p.device),
                b: text_of(&b.device_profiles, &p.device),
            });
        }
    }
    RunDiff {
        a: a.id,
        b: b.id,
        differences: out,
        profiles,
    }
}

/// The configuration without its lockstep keys, and those keys alone.
fn split_lockstep(cfg: &Value) -> (Value, Value) {
    let mut rest = cfg.clone();
    let mut lock = serde_json::Map::new();
    if let Some(o) = rest.as_object_mut() {
        for k in LOCKSTEP_KEYS {
            if let Some(v) = o.remove(k) {
                lock.insert(k.to_string(), v);
            }
        }
    }
    (rest, Value::Object(lock))
}

/// Differences of two JSON values under `path`: objects key by key, anything else whole.
fn json_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(oa), Value::Object(ob)) => {
            let mut keys: Vec<&String> = oa.keys().chain(ob.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let child = format!("{path}.{k}");
                let (va, vb) = (oa.get(k), ob.get(k));
                json_diff(
                    &child,
                    va.unwrap_or(&Value::Null),
                    vb.unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        _ if a != b => out.push(Difference {
            what: path.into(),
            a: a.clone(),
            b: b.clone(),
        }),
        _ => {}
    }
}

/// SHA-256 of each device's profile text in either run.
fn profile_sums(a: &Value, b: &Value) -> Vec<ProfileSum> {
    let devices = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut all = devices(a);
    all.extend(devices(b));
    all.sort();
    all.dedup();
    all.into_iter()
        .map(|device| ProfileSum {
            a: checksum(a.get(&device)),
            b: checksum(b.get(&device)),
            device,
        })
        .collect()
}

fn checksum(v: Option<&Value>) -> Option<String> {
    let text = match v? {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let digest = Sha256::digest(text.as_bytes());
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

/// The lines of a profile that the other run's profile lacks are what a reader needs; the
/// whole text is kept so a client can show any diff it likes.
fn text_of(profiles: &Value, device: &str) -> Value {
    profiles.get(device).cloned().unwrap_or(Value::Null)
}

/// Lines of `a` not in `b` and lines of `b` not in `a` (a profile's changed settings).
pub fn changed_lines(a: &str, b: &str) -> (Vec<String>, Vec<String>) {
    let only = |x: &str, y: &str| -> Vec<String> {
        let others: std::collections::HashSet<&str> = y.lines().collect();
        x.lines()
            .filter(|l| !others.contains(l) && !l.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    (only(a, b), only(b, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(id: i64, spec: Value, cfg: Value, drive: &str, version: &str) -> Run {
        serde_json::from_value(json!({
            "id": id, "uuid": "", "bench_id": "b1", "kind": "torque_ramp", "name": "r",
            "status": "completed", "status_reason": null, "created_at": "", "started_at": null,
            "finished_at": null, "spec": spec, "bench_config": cfg,
            "device_profiles": {"drive": drive, "sensor": "unit = 2"},
            "software_version": version, "notes": null, "models": [], "period_s": 0.001,
            "timing": {"period_error_p50_us": null, "period_error_p99_us": null,
                       "period_error_max_us": null, "overruns": 0},
            "dropped_batches": 0, "dropped_samples": 0, "sample_count": 0,
            "interruption_log": [], "results": null
        }))
        .unwrap()
    }

    #[test]
    fn differences_are_named_by_path_with_both_values() {
        let a = run(
            1,
            json!({"kind": "torque_ramp", "params": {"rates": [1, 2], "rest_s": 0.5}}),
            json!({"limits": {"torque_nm": 2.0}, "lockstep_sets": [{"set": 3}]}),
            "scale = 1\nunit = 1\n",
            "0.1.0",
        );
        let b = run(
            2,
            json!({"kind": "torque_ramp", "params": {"rates": [1, 3], "rest_s": 0.5}}),
            json!({"limits": {"torque_nm": 2.5}, "lockstep_sets": [{"set": 4}]}),
            "scale = 2\nunit = 1\n",
            "0.1.1",
        );
        let d = diff_runs(&a, &b);
        let whats: Vec<&str> = d.differences.iter().map(|x| x.what.as_str()).collect();
        assert_eq!(
            whats,
            [
                "software_version",
                "spec.params.rates",
                "bench_config.limits.torque_nm",
                "lockstep.lockstep_sets",
                "profile.drive"
            ]
        );
        assert_eq!(d.differences[2].a, json!(2.0));
        assert_eq!(d.differences[2].b, json!(2.5));
        let drive = &d.profiles[0];
        assert_eq!(drive.device, "drive");
        assert_ne!(drive.a, drive.b);
        assert_eq!(
            d.profiles[1].a, d.profiles[1].b,
            "the sensor profile is the same"
        );
        assert_eq!(
            changed_lines("scale = 1\nunit = 1\n", "scale = 2\nunit = 1\n"),
            (vec!["scale = 1".to_string()], vec!["scale = 2".to_string()])
        );
        assert!(diff_runs(&a, &a).differences.is_empty());
    }
}
