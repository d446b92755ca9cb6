//! Every count, list and duration of every kind has a cap that its JSON Schema documents, and
//! the shipped specs fit the caps.

use crate::util::read_spec;
use experiments::{BenchLimits, Kind, caps};
use serde_json::{Value, json};

#[test]
fn the_shipped_specs_fit_the_caps() {
    let lim = BenchLimits::sim_default();
    let dir = crate::util::specs_dir();
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".json") {
            continue;
        }
        let plan = read_spec(&name)
            .plan(&lim)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            plan.segments.len() <= caps::MAX_PLAN_SEGMENTS as usize,
            "{name}"
        );
        assert!(plan.max_duration() <= caps::MAX_PLAN_DURATION_S, "{name}");
        n += 1;
    }
    assert!(n >= 2 * Kind::NAMES.len(), "{n} specs");
}

/// The schema node of a property, `$ref`s followed.
fn resolve<'a>(s: &'a Value, root: &'a Value) -> &'a Value {
    s["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .map(|name| &root["$defs"][name])
        .unwrap_or(s)
}

/// Every property of every object in `schema` (params, `$defs`, enum variants): `(path,
/// property schema)`.
fn properties(schema: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    if let Some(props) = schema["properties"].as_object() {
        for (k, v) in props {
            let p = format!("{path}.{k}");
            out.push((p.clone(), v.clone()));
            properties(v, &p, out);
        }
    }
    for key in ["oneOf", "anyOf"] {
        for member in schema[key].as_array().into_iter().flatten() {
            properties(member, path, out);
        }
    }
}

fn types(s: &Value) -> Vec<String> {
    match &s["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => vec![],
    }
}

#[test]
fn every_count_list_and_duration_has_its_cap_in_the_kinds_schema() {
    for name in Kind::NAMES {
        let schema = Kind::defaults(name).unwrap().params_schema();
        let mut props = Vec::new();
        properties(&schema, "params", &mut props);
        for (_, def) in schema["$defs"].as_object().into_iter().flatten() {
            properties(def, "params.(def)", &mut props);
        }
        for (path, prop) in &props {
            let prop = resolve(prop, &schema);
            let t = types(prop);
            let count = t.iter().any(|t| t == "integer") && !path.ends_with(".seed");
            // `_s` is seconds; `_rad_s`, `_nm_s` are rates (bounded through the durations
            // they give, checked against the bench's limits).
            let seconds =
                path.ends_with("_s") && !path.ends_with("rad_s") && !path.ends_with("nm_s");
            let duration = seconds && t.iter().any(|t| t == "number");
            if count || duration {
                assert!(prop["maximum"].is_number(), "{name} {path}: {prop}");
            }
            if t.iter().any(|t| t == "array") {
                assert!(prop["maxItems"].is_number(), "{name} {path}: {prop}");
                if seconds {
                    assert!(
                        prop["items"]["maximum"].is_number(),
                        "{name} {path}: {prop}"
                    );
                }
            }
        }
    }
    // The values are the crate's caps.
    let schema = |k: &str| Kind::defaults(k).unwrap().params_schema();
    let p = schema("prbs");
    assert_eq!(
        p["properties"]["periods"]["maximum"],
        json!(caps::MAX_REPEATS)
    );
    assert_eq!(p["properties"]["register_bits"]["maximum"], json!(16));
    assert_eq!(
        p["properties"]["bit_s"]["maximum"],
        json!(caps::MAX_SEGMENT_S)
    );
    let s = schema("constant_velocity_sweep");
    assert_eq!(s["properties"]["repeats"]["maximum"], json!(10_000));
    let v = resolve(&s["properties"]["velocities"], &s);
    let list = v["anyOf"]
        .as_array()
        .into_iter()
        .chain(v["oneOf"].as_array())
        .flatten()
        .find(|m| m["type"] == "array")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(list["maxItems"], json!(caps::MAX_LIST));
    let vp = schema("validation_profile");
    assert_eq!(
        vp["properties"]["pieces"]["maxItems"],
        json!(caps::MAX_LIST)
    );
    assert_eq!(
        resolve(&vp["$defs"]["Sampled"], &vp)["properties"]["t_s"]["maxItems"],
        json!(caps::MAX_SAMPLES)
    );
}
