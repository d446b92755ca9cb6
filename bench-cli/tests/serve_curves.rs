//! `POST /api/curves`: the steady-state curve the dashboard draws is the friction crate's own.

use crate::daemon::Daemon;
use serde_json::{Value, json};

/// The friction crate's steady state of `model` with `params` at `v`.
fn crate_value(model: &str, params: &Value, v: f64) -> Option<f64> {
    let spec = friction::registry::ModelSpec {
        model: model.into(),
        params: params.clone(),
    };
    friction::registry::build_model(&spec)
        .unwrap()
        .steady_state(v)
}

#[test]
fn curves_are_the_models_steady_state_and_bad_input_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let cases = [
        (
            "stribeck_lorentz",
            json!({"fc": 0.2, "fs": 0.35, "vs": 0.05, "fv": 0.01, "negative": {"fc": 0.25}}),
        ),
        (
            "lugre",
            json!({"fc": 0.3, "fs": 0.5, "vs": 0.1, "sigma2": 0.02}),
        ),
    ];
    for (model, params) in cases {
        let r = d.req(
            "POST",
            "/api/curves",
            Some(
                &json!({"model": model, "params": params, "v": {"from": -1.0, "to": 1.0, "n": 41}}),
            ),
        );
        assert_eq!(r.status, 200, "{}", r.text());
        let body = r.json();
        let (v, f) = (
            body["v"].as_array().unwrap(),
            body["friction"].as_array().unwrap(),
        );
        assert_eq!((v.len(), f.len()), (41, 41));
        for (x, y) in v.iter().zip(f) {
            let x = x.as_f64().unwrap();
            // serde_json reads a float to within an ulp or so: compare to 1e-12.
            let (got, want) = (y.as_f64().unwrap(), crate_value(model, &params, x).unwrap());
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{model} at v = {x}: {got} vs {want}"
            );
        }
        // The negative set is used below zero: not an odd mirror of the positive side.
        if model == "stribeck_lorentz" {
            let at = |x: f64| {
                f[v.iter().position(|y| y.as_f64() == Some(x)).unwrap()]
                    .as_f64()
                    .unwrap()
            };
            assert!(
                (at(-1.0) + at(1.0)).abs() > 0.04,
                "{} {}",
                at(-1.0),
                at(1.0)
            );
        }
    }
    let list = d.req(
        "POST",
        "/api/curves",
        Some(&json!({"model": "coulomb_viscous", "params": {"fc": 1.0, "fv": 2.0}, "v": [0.5, -0.5]})),
    );
    assert_eq!(list.status, 200, "{}", list.text());
    assert_eq!(list.json()["friction"], json!([2.0, -2.0]));
    for (body, field) in [
        (json!({"model": "nope", "v": [1.0]}), "model"),
        (
            json!({"model": "lugre", "params": {"fc": "x"}, "v": [1.0]}),
            "params",
        ),
        (
            json!({"model": "lugre", "v": {"from": 0.0, "to": 1.0, "n": 1}}),
            "v.n",
        ),
    ] {
        let r = d.req("POST", "/api/curves", Some(&body));
        assert_eq!(r.status, 422, "{body}: {}", r.text());
        assert_eq!(r.json()["field"], field, "{body}: {}", r.text());
    }
}
