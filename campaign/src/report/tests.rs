//! The report's fitted curves are the models' own laws.

use super::steady_state_curve;
use serde_json::json;

/// A Lorentzian set keeps half its Stribeck excess at `v = vs` (an exponential law, the one
/// the report once hard-coded, keeps e⁻¹ of it); the negative overrides apply below zero.
#[test]
fn fitted_curve_is_the_models_own_law_on_both_sides() {
    let p = json!({"fc": 0.2, "fs": 0.4, "fv": 0.01, "vs": 0.05, "negative": {"fc": 0.3}});
    let at = |neg| steady_state_curve("stribeck_lorentz", &p, &[0.05], neg)[0];
    let (v, pos) = at(false);
    assert_eq!(v, 0.05);
    assert!(
        (pos - (0.2 + 0.2 * 0.5 + 0.01 * 0.05)).abs() < 1e-12,
        "{pos}"
    );
    let (_, neg) = at(true);
    assert!(
        (neg - (0.3 + 0.1 * 0.5 + 0.01 * 0.05)).abs() < 1e-12,
        "{neg}"
    );
}

/// A stored offset is the measurement's, not the model's; a set that does not build draws nothing.
#[test]
fn offset_is_dropped_and_a_bad_set_draws_nothing() {
    let p = json!({"fc": 0.2, "fv": 0.1, "offset": 5.0});
    let c = steady_state_curve("coulomb_viscous", &p, &[1.0, 2.0], false);
    assert_eq!(c.len(), 2);
    assert!((c[1].1 - 0.4).abs() < 1e-12, "{c:?}");
    assert!(steady_state_curve("no_such_model", &p, &[1.0], false).is_empty());
    assert!(steady_state_curve("coulomb_viscous", &json!({"fq": 1}), &[1.0], false).is_empty());
}
