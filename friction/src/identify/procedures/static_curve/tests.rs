//! Recovery of known curves, and values held by `given`.

use super::shape::{Shape, curve};
use super::*;

fn table(points: &[(f64, f64)]) -> Table {
    Table::new(vec![
        ("v".into(), points.iter().map(|p| p.0).collect()),
        ("friction".into(), points.iter().map(|p| p.1).collect()),
    ])
    .unwrap()
}

#[test]
fn noise_free_lorentz_curve_is_recovered_exactly() {
    let truth = [1.0, 1.5, 0.4, 2e-3, 0.0, 0.0];
    let pts: Vec<(f64, f64)> = (0..40)
        .map(|i| {
            let s = 1e-4 * 1.2f64.powi(i);
            (s, curve(Shape::Lorentz, &truth, s))
        })
        .collect();
    let r = fit("stribeck_lorentz", &table(&pts), &Given::new()).unwrap();
    for (n, t) in [("fc", 1.0), ("fs", 1.5), ("fv", 0.4), ("vs", 2e-3)] {
        let e = r.param(n).unwrap();
        assert!((e - t).abs() / t < 1e-6, "{n}: {e}");
    }
    assert!(r.params.get("delta").is_none());
}

#[test]
fn given_values_are_held_and_have_no_error() {
    let truth = [1.0, 1.5, 0.4, 1e-2, 2.0, 0.0];
    let pts: Vec<(f64, f64)> = (0..30)
        .map(|i| {
            let s = 1e-3 * 1.25f64.powi(i);
            (-s, -curve(Shape::Exp, &truth, s))
        })
        .collect();
    let mut given = Given::new();
    given.insert("delta".into(), serde_json::json!(2.0));
    let r = fit("hybrid", &table(&pts), &given).unwrap();
    assert!((r.param("vs").unwrap() - 1e-2).abs() < 1e-8);
    let mut given = Given::new();
    given.insert("fv".into(), serde_json::json!(0.4));
    let r = fit("stribeck_exp", &table(&pts), &given).unwrap();
    assert_eq!(r.negative_param("fv"), Some(0.4));
    assert!(r.std_errors["negative"].get("fv").is_none());
    assert!((r.negative_param("fc").unwrap() - 1.0).abs() < 1e-8);
}

#[test]
fn a_negative_given_holds_that_direction_only() {
    let (pos, neg) = (
        [1.0, 1.5, 0.4, 0.3, 2.0, 0.0],
        [0.8, 1.1, 0.4, 0.3, 2.0, 0.0],
    );
    let pts: Vec<(f64, f64)> = (0..30)
        .flat_map(|i| {
            let s = 0.05 * 1.15f64.powi(i);
            [
                (s, curve(Shape::Exp, &pos, s)),
                (-s, -curve(Shape::Exp, &neg, s)),
            ]
        })
        .collect();
    let given: Given = serde_json::from_value(serde_json::json!(
        {"fs": 1.5, "delta": 2.0, "negative": {"fs": 1.1}}
    ))
    .unwrap();
    let r = fit("stribeck_exp", &table(&pts), &given).unwrap();
    assert_eq!(
        (r.param("fs"), r.negative_param("fs")),
        (Some(1.5), Some(1.1))
    );
    assert!(r.std_errors.get("fs").is_none() && r.std_errors["negative"].get("fs").is_none());
    assert!(
        (r.negative_param("fc").unwrap() - 0.8).abs() < 1e-6,
        "{:?}",
        r.params
    );
    assert!(
        (r.negative_param("vs").unwrap() - 0.3).abs() < 1e-6,
        "{:?}",
        r.params
    );
    let bad: Given = serde_json::from_value(serde_json::json!({"negative": {"fs": "x"}})).unwrap();
    let e = fit("stribeck_exp", &table(&pts), &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("given.negative.fs"), "{e}");
}
