//! Validation errors name the field and the limit; JSON and TOML parse the same.

use experiments::{BenchLimits, Error, LimitKind, Spec};

fn plan_err(json: &str) -> Error {
    Spec::from_json(json)
        .unwrap()
        .plan(&BenchLimits::sim_default())
        .unwrap_err()
}

#[test]
fn velocity_beyond_the_limit_names_the_element() {
    let lim = BenchLimits {
        velocity_rad_s: 10.0,
        ..BenchLimits::sim_default()
    };
    let err = Spec::from_json(r#"{"kind":"constant_velocity_sweep","name":"x","params":{"velocities":[1,2,5,12],"settle_s":0.5,"measure_s":0.5}}"#)
        .unwrap()
        .plan(&lim)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "params.velocities[3] (12 rad/s) exceeds the velocity limit (10 rad/s)"
    );
    assert!(matches!(
        err,
        Error::Limit {
            which: LimitKind::Velocity,
            ..
        }
    ));
}

#[test]
fn torque_amplitudes_beyond_the_limit_name_field_and_limit() {
    let cases = [
        (
            r#"{"kind":"presliding","params":{"parts":["sine"],"sine_amplitude_nm":3}}"#,
            "params.sine_amplitude_nm (3 N m) exceeds the torque limit (2 N m)",
        ),
        (
            r#"{"kind":"presliding","params":{"parts":["step"],"step_torque_nm":-2.5}}"#,
            "params.step_torque_nm (-2.5) must be > 0",
        ),
        (
            r#"{"kind":"torque_ramp","params":{"max_torque_nm":5}}"#,
            "params.max_torque_nm (5 N m) exceeds the torque limit (2 N m)",
        ),
        (
            r#"{"kind":"breakaway_staircase","params":{"step_nm":2.5}}"#,
            "params.step_nm (2.5 N m) exceeds the torque limit (2 N m)",
        ),
        (
            r#"{"kind":"validation_profile","params":{"samples":{"mode":"torque","t_s":[0,1,2],"value":[0,1.5,2.5]}}}"#,
            "params.samples.value[2] (2.5 N m) exceeds the torque limit (2 N m)",
        ),
    ];
    for (json, msg) in cases {
        assert_eq!(plan_err(json).to_string(), msg, "{json}");
    }
}

#[test]
fn travel_beyond_the_position_window_is_rejected() {
    let err = plan_err(
        r#"{"kind":"frictional_lag","params":{"mean_rad_s":10,"amplitude_rad_s":5,"omegas_rad_s":[1],"chirp":null}}"#,
    );
    let s = err.to_string();
    assert!(
        s.starts_with("params.omegas_rad_s[0]: travel over 5 cycles ("),
        "{s}"
    );
    assert!(s.ends_with("exceeds the position window (±50 rad)"), "{s}");
    // One direction only: the guard follows the nominal position across segments.
    let err = plan_err(
        r#"{"kind":"constant_velocity_sweep","params":{"velocities":[5],"directions":"positive","settle_s":1,"measure_s":2,"repeats":4}}"#,
    );
    let s = err.to_string();
    assert!(s.starts_with("segment 'measure +5 rad/s #3' ("), "{s}");
    assert!(s.ends_with("exceeds the position window (±50 rad)"), "{s}");
    let err = plan_err(r#"{"kind":"prbs","params":{"position_amplitude_rad":1,"bit_s":0.05}}"#);
    assert_eq!(
        err.to_string(),
        "params.position_amplitude_rad: swing 2 × amplitude per bit_s (40 rad/s) exceeds the velocity limit (20 rad/s)"
    );
}

#[test]
fn rules_unknown_fields_and_kinds_are_named() {
    assert_eq!(
        plan_err(r#"{"kind":"torque_ramp","params":{"repeats":0}}"#).to_string(),
        "params.repeats (0) must be >= 1"
    );
    assert_eq!(
        plan_err(r#"{"kind":"torque_ramp","params":{"rates_nm_s":[1,-2]}}"#).to_string(),
        "params.rates_nm_s[1] (-2) must be > 0"
    );
    assert_eq!(
        plan_err(r#"{"kind":"frictional_lag","params":{"amplitude_rad_s":2}}"#).to_string(),
        "params.amplitude_rad_s (2) must be <= mean_rad_s (1) so the motion stays unidirectional"
    );
    let e = Spec::from_json(r#"{"kind":"torque_ramp","params":{"rate_nm_s":[1]}}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `rate_nm_s`"), "{e}");
    let e = Spec::from_json(r#"{"kind":"constant_velocity_sweep","params":{"velocities":{"from":0.1,"to":1,"step":0.1,"count":3}}}"#).unwrap_err().to_string();
    assert!(e.contains("velocities"), "{e}");
    let e = Spec::from_json(r#"{"kind":"torque_ramps"}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown kind 'torque_ramps'") && e.contains("torque_ramp,"),
        "{e}"
    );
    let e = Spec::from_json(r#"{"kind":"torque_ramp","nmae":"x"}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `nmae`"), "{e}");
    let bad = BenchLimits {
        period_s: 0.0,
        ..BenchLimits::sim_default()
    };
    let e = Spec::from_json(r#"{"kind":"prbs"}"#)
        .unwrap()
        .plan(&bad)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "bench limit period_s (0) must be finite and > 0");
}

#[test]
fn missing_params_take_their_defaults() {
    let spec = Spec::from_json(r#"{"kind":"breakaway_staircase"}"#).unwrap();
    assert_eq!(spec.name, "breakaway_staircase");
    let p = spec.to_value();
    assert_eq!(p["params"]["step_nm"], 0.005);
    assert_eq!(p["params"]["repeats"], 5);
    let partial =
        Spec::from_json(r#"{"kind":"breakaway_staircase","params":{"repeats":2}}"#).unwrap();
    assert_eq!(partial.to_value()["params"]["step_nm"], 0.005);
    assert_eq!(partial.to_value()["params"]["repeats"], 2);
    // Every kind's defaults are paper-faithful and valid on the simulated bench.
    for k in experiments::Kind::NAMES {
        let spec = Spec::from_json(&format!(r#"{{"kind":"{k}"}}"#)).unwrap();
        spec.plan(&BenchLimits::sim_default())
            .unwrap_or_else(|e| panic!("{k}: {e}"));
    }
}

#[test]
fn toml_and_json_forms_parse_the_same() {
    let json = r#"{"kind": "constant_velocity_sweep", "name": "sweep",
        "params": {"velocities": {"from": 0.1, "to": 1.0, "step": 0.1}, "directions": "positive", "repeats": 2}}"#;
    let toml = r#"
kind = "constant_velocity_sweep"
name = "sweep"

[params]
directions = "positive"
repeats = 2
velocities = { from = 0.1, to = 1.0, step = 0.1 }
"#;
    let a = Spec::from_json(json).unwrap();
    let b = Spec::from_toml(toml).unwrap();
    assert_eq!(a, b);
    let lim = BenchLimits::sim_default();
    assert_eq!(a.plan(&lim).unwrap(), b.plan(&lim).unwrap());
    // Every example spec, rewritten as TOML, parses to the same spec.
    for entry in std::fs::read_dir(crate::util::specs_dir()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let as_toml = toml::to_string(&strip_nulls(value)).unwrap();
        assert_eq!(
            Spec::from_json(&text).unwrap(),
            Spec::from_toml(&as_toml).unwrap(),
            "{}",
            path.display()
        );
    }
    // Round trip through the spec's own JSON (defaults written out).
    let again = Spec::from_value(a.to_value()).unwrap();
    assert_eq!(again, a);
}

/// TOML has no null: an absent key means the default (null) for `Option` fields.
fn strip_nulls(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => serde_json::Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.into_iter().map(strip_nulls).collect())
        }
        other => other,
    }
}

#[test]
fn the_catalogue_lists_every_kind_with_its_defaults() {
    let c = experiments::catalogue();
    let kinds: Vec<&str> = c
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, experiments::Kind::NAMES);
    assert_eq!(c[3]["defaults"]["rates_nm_s"][0], 0.05);
    assert_eq!(c[0]["defaults"]["velocities"]["step"], 0.003);
}

#[test]
fn the_catalogue_documents_every_parameter_with_its_unit_in_declaration_order() {
    let c = experiments::catalogue();
    for k in c.as_array().unwrap() {
        let kind = k["kind"].as_str().unwrap();
        let description = k["description"].as_str().unwrap();
        assert!(
            description.len() > 40
                && description.starts_with(char::is_uppercase)
                && !description.contains('\n'),
            "{kind}: description {description:?}"
        );
        let params = k["params"].as_array().unwrap();
        let names: Vec<&str> = params.iter().map(|p| p["name"].as_str().unwrap()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        let mut fields: Vec<&str> = k["defaults"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort_unstable();
        assert_eq!(sorted, fields, "{kind}: documented params != fields");
        for p in params {
            let name = p["name"].as_str().unwrap();
            let doc = p["description"].as_str().unwrap();
            assert!(
                !doc.is_empty() && !doc.contains("\\["),
                "{kind}.{name}: {doc:?}"
            );
            assert_eq!(p["default"], k["defaults"][name], "{kind}.{name}");
            assert!(!p["type"].is_null(), "{kind}.{name}: no type");
            // A unit suffix in the name and the unit in the doc must agree.
            let unit = p["unit"].as_str().unwrap();
            let by_suffix = [
                ("_nm_s", "N m/s"),
                ("_rad_s", "rad/s"),
                ("_nm", "N m"),
                ("_rad", "rad"),
                ("_hz", "Hz"),
                ("_s", "s"),
            ]
            .iter()
            .find(|(suffix, _)| name.ends_with(suffix))
            .map(|(_, u)| *u);
            if let Some(expected) = by_suffix {
                assert_eq!(unit, expected, "{kind}.{name}: doc unit vs name");
            }
        }
    }
    // Declaration order, not alphabetical.
    let ramp = &c[3]["params"];
    assert_eq!(ramp[0]["name"], "rates_nm_s");
    assert_eq!(ramp[5]["name"], "rest_s");
    assert_eq!(ramp[0]["type"], "array");
    assert_eq!(ramp[1]["type"], serde_json::json!(["number", "null"]));
    assert_eq!(
        ramp[2]["choices"],
        serde_json::json!(["both", "positive", "negative"])
    );
    assert_eq!(ramp[4]["unit"], "encoder counts");
    let prbs = &c[6]["params"];
    assert_eq!(
        prbs[0]["choices"],
        serde_json::json!(["position", "velocity"])
    );
    assert_eq!(c[0]["params"][0]["unit"], "rad/s");
}
