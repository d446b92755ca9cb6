//! Plan inputs refused whatever their size: measure windows shorter than a control period,
//! params that are not an object.

use experiments::{BenchLimits, Error, Spec};
use serde_json::json;

#[test]
fn measure_windows_shorter_than_a_control_period_are_refused() {
    let lim = BenchLimits::sim_default();
    let cases = [
        (
            "constant_velocity_sweep",
            json!({"measure_s": 5e-4}),
            "params.measure_s",
        ),
        (
            "presliding",
            json!({"step_hold_s": 5e-4}),
            "params.step_hold_s",
        ),
        (
            "presliding",
            json!({"parts": ["ramp"], "ramp_rate_rad_s": 19.0, "ramp_distance_rad": 0.01}),
            "params.ramp_rate_rad_s",
        ),
        (
            "breakaway_staircase",
            json!({"dwell_s": 5e-4}),
            "params.dwell_s",
        ),
        (
            "frictional_lag",
            json!({"chirp": {"omega0_rad_s": 0.5, "omega1_rad_s": 10.0, "duration_s": 5e-4}}),
            "params.chirp.duration_s",
        ),
        (
            "validation_profile",
            json!({"pieces": [{"hold": {"duration_s": 5e-4}}]}),
            "params.pieces[0].hold.duration_s",
        ),
        (
            "dwell_time",
            json!({"rate_nm_s": 1000.0}),
            "params.rate_nm_s",
        ),
        (
            "frictional_lag",
            json!({"omegas_rad_s": [2.0, 1e5], "cycles": 1, "chirp": null}),
            "params.omegas_rad_s[1]",
        ),
        (
            "presliding",
            json!({"parts": ["reversals"], "reversals_rad": [0.0]}),
            "params.reversals_rate_rad_s",
        ),
    ];
    for (kind, params, field) in cases {
        let err = Spec::from_value(json!({"kind": kind, "params": params}))
            .unwrap()
            .plan(&lim)
            .unwrap_err();
        match &err {
            Error::Invalid { field: f, .. } => assert_eq!(f, field, "{kind}: {err}"),
            other => panic!("{kind}: {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("one control period (0.001 s)") || msg.contains("5 control periods"),
            "{kind}: {msg}"
        );
    }
    // One period exactly is one sample: accepted.
    Spec::from_value(json!({"kind": "constant_velocity_sweep",
        "params": {"velocities": [0.1], "measure_s": 1e-3, "repeats": 1}}))
    .unwrap()
    .plan(&lim)
    .unwrap();
}

#[test]
fn params_must_be_an_object() {
    for params in [json!([]), json!([1, 2]), json!(5), json!("x")] {
        let err = Spec::from_value(json!({"kind": "prbs", "params": params})).unwrap_err();
        match &err {
            Error::Invalid { field, .. } => assert_eq!(field, "params", "{err}"),
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string()
                .ends_with("must be a JSON object of named parameters"),
            "{err}"
        );
    }
    assert_eq!(
        Spec::from_value(json!({"kind": "prbs", "params": []}))
            .unwrap_err()
            .to_string(),
        "params (an array) must be a JSON object of named parameters"
    );
    // Missing or null params are the defaults.
    Spec::from_value(json!({"kind": "prbs", "params": null})).unwrap();
    Spec::from_value(json!({"kind": "prbs"})).unwrap();
}
