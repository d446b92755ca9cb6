//! `given.speed`: the speed between samples of a velocity replay, linear (the default) or
//! carrying the recorded displacement.

use super::super::{Given, Table};
use super::{Options, Replay, Segment, Speed, excitation_velocity, fit, fit_table};
use super::{options_from_given, residuals_with};
use crate::identify::FitError;
use crate::registry;
use serde_json::{Value, json};

/// A stiff LuGre (`sigma0` 4e4 N/m): half a micrometre of displacement error is 0.02 N.
fn truth() -> Value {
    json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3})
}

/// Presliding reversals (2 to 20 µm) recorded with the position exact and the speed a noisy
/// estimate (20 µm/s of noise against peaks of 25 to 250 µm/s), whose integral drifts from the
/// position.
fn recorded() -> Segment {
    let mut m = registry::entry("lugre").unwrap().build(truth()).unwrap();
    Segment::sample_velocity_driven(
        "s",
        m.as_mut(),
        excitation_velocity,
        1e-3,
        6000,
        10,
        0.002,
        2e-5,
        7,
    )
}

fn mse(r: &[Vec<f64>]) -> f64 {
    let all: Vec<f64> = r.iter().flatten().copied().collect();
    all.iter().map(|x| x * x).sum::<f64>() / all.len() as f64
}

fn given(v: Value) -> Given {
    let Value::Object(m) = v else { unreachable!() };
    m
}

/// The key is read, defaults to linear, and a bad value or a torque replay is refused naming
/// `given.speed`.
#[test]
fn the_speed_key_is_read_and_checked() {
    let o = options_from_given("lugre", &given(json!({"fit": ["fc"]})), &[], false).unwrap();
    assert_eq!(o.speed, Speed::Linear);
    let g = given(json!({"fit": ["fc"], "speed": "displacement"}));
    let o = options_from_given("lugre", &g, &[], false).unwrap();
    assert_eq!(o.speed, Speed::Displacement);
    for bad in [
        json!({"fit": ["fc"], "speed": "cubic"}),
        json!({"fit": ["fc"], "speed": "displacement", "replay": "torque"}),
    ] {
        match options_from_given("lugre", &given(bad.clone()), &[], false) {
            Err(FitError::Setting { field, .. }) => assert_eq!(field, "given.speed", "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

/// On the recorded data the displacement replay drives the true model by the angle the
/// encoder read: it leaves less than the linear replay, the report says which replay it used,
/// and a fit of the stiffness on it lands nearer the truth.
#[test]
fn the_displacement_replay_follows_the_recorded_position() {
    let s = recorded();
    let segs = std::slice::from_ref(&s);
    let lin =
        mse(&residuals_with("lugre", &truth(), segs, Replay::Velocity, Speed::Linear).unwrap());
    let disp = mse(&residuals_with(
        "lugre",
        &truth(),
        segs,
        Replay::Velocity,
        Speed::Displacement,
    )
    .unwrap());
    assert!(
        disp < 0.5 * lin,
        "displacement {disp:.3e}, linear {lin:.3e}"
    );

    let col = |n: &str, c: &[f64]| (n.to_string(), c.to_vec());
    let table = Table::new(vec![
        col("t", &s.t),
        col("x", &s.x),
        col("v", &s.v),
        col("friction", &s.friction),
    ])
    .unwrap();
    let r = fit_table(
        "lugre",
        &table,
        &given(json!({"fit": [], "params": truth(), "speed": "displacement"})),
    )
    .unwrap();
    assert_eq!(r.details["settings"]["speed"], "displacement");

    let sigma0 = |speed| {
        let mut params = truth();
        params["sigma0"] = json!(1e4);
        let opts = Options {
            params,
            speed,
            ..Options::new("lugre", &["sigma0"])
        };
        fit(segs, &opts).unwrap().params["sigma0"].as_f64().unwrap()
    };
    // Linear: 3.993e4 (-0.17 %); displacement: 4.0007e4 (+0.02 %).
    let err = |s: f64| (s / 4e4 - 1.0).abs();
    let (lin, disp) = (sigma0(Speed::Linear), sigma0(Speed::Displacement));
    eprintln!("sigma0: linear {lin:.4e}, displacement {disp:.4e} (truth 4e4)");
    assert!(
        err(disp) < 0.5 * err(lin),
        "linear {lin}, displacement {disp}"
    );
}
