//! The comparison's own tests: model choices, scores, ranking and the nesting rule.

use super::*;

#[test]
fn parses_model_choices() {
    let c = ModelChoice::parse("lugre=sigma0+fc").unwrap();
    assert_eq!(c.fit, ["sigma0", "fc"]);
    assert!(ModelChoice::parse("coulomb=none").unwrap().fit.is_empty());
    let all = ModelChoice::parse("lugre").unwrap().fit;
    for p in ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"] {
        assert!(all.iter().any(|a| a == p), "{all:?}");
    }
    assert!(!all.iter().any(|a| a == "vd"), "{all:?}");
    assert!(
        ModelChoice::parse("nope")
            .unwrap_err()
            .to_string()
            .contains("unknown model")
    );
}

#[test]
fn regimes_split_on_velocity_and_displacement() {
    let seg = Segment {
        source: "s".into(),
        t: vec![0.0, 1.0, 2.0, 3.0, 4.0],
        x: vec![0.0, 0.1, 0.3, 0.6, 0.55],
        v: vec![0.0, 0.1, 0.2, 0.3, -0.05],
        u: vec![0.0; 5],
        friction: vec![0.0; 5],
    };
    let r = Regimes {
        presliding_velocity: 0.15,
        presliding_displacement: None,
    };
    assert_eq!(r.presliding(&seg), [true, true, false, false, true]);
    let r = Regimes {
        presliding_velocity: 0.01,
        presliding_displacement: Some(0.25),
    };
    assert_eq!(r.presliding(&seg), [true, true, true, false, true]);
}

/// A sine sweep through zero of a Coulomb + viscous bench (fc 0.8/0.7, fv 0.05).
fn cv_segment(name: &str, phase: f64) -> Segment {
    let t: Vec<f64> = (0..4000).map(|i| i as f64 * 1e-3).collect();
    let v: Vec<f64> = t.iter().map(|t| 0.6 * (2.0 * t + phase).sin()).collect();
    let x: Vec<f64> = t
        .iter()
        .map(|t| 0.3 - 0.3 * (2.0 * t + phase).cos())
        .collect();
    let friction = v
        .iter()
        .map(|v| {
            if *v >= 0.0 {
                0.8 + 0.05 * v
            } else {
                -0.7 + 0.05 * v
            }
        })
        .collect();
    Segment {
        source: name.into(),
        u: vec![0.0; t.len()],
        t,
        x,
        v,
        friction,
    }
}

#[test]
fn a_model_is_never_ranked_below_a_model_it_contains() {
    let (est, val) = ([cv_segment("est", 0.3)], [cv_segment("val", 1.1)]);
    let cv = serde_json::json!({"fc": 0.8, "fv": 0.05, "negative": {"fc": 0.7, "fv": 0.05}});
    // The extrapolated static fit of a sweep that never held a speed below vs.
    let hump = serde_json::json!({"fc": 0.8, "fs": 25.9, "vs": 0.072, "delta": 0.88,
        "negative": {"fc": 0.7, "fs": 89437.0, "vs": 0.00086, "delta": 0.41}});
    let mut stribeck = hump.clone();
    stribeck["fv"] = 0.05.into();
    stribeck["negative"]["fv"] = 0.05.into();
    let mut lugre = hump;
    lugre["sigma2"] = 0.05.into();
    lugre["negative"]["sigma2"] = 0.05.into();
    lugre["sigma0"] = 5000.0.into();
    let choice = |m: &str, p: &Value| ModelChoice {
        model: m.into(),
        params: p.clone(),
        fit: Vec::new(),
    };
    let models = [
        choice("stribeck_exp", &stribeck),
        choice("lugre", &lugre),
        choice("coulomb_viscous", &cv),
    ];
    let opts = CompareOptions::default();
    let mut t = compare(&est, &val, &models, &opts).unwrap();
    let before = |m: &str| t.rows.iter().find(|r| r.model == m).unwrap().validation.all;
    let (cv_mse, stribeck_mse, lugre_mse) = (
        before("coulomb_viscous"),
        before("stribeck_exp"),
        before("lugre"),
    );
    assert!(stribeck_mse > 10.0 * cv_mse && lugre_mse > 10.0 * cv_mse);
    never_worse_than_contained(&mut t, &est, &val, &opts);
    let row = |m: &str| t.rows.iter().find(|r| r.model == m).unwrap();
    // Stribeck with fs = fc is the line exactly: the same score, not a worse one.
    let s = row("stribeck_exp");
    assert_eq!(s.validation.all, cv_mse);
    assert_eq!(s.params["fs"], 0.8);
    assert_eq!(s.params["negative"]["fs"], 0.7);
    assert_eq!(s.params["negative"]["fv"], 0.05);
    assert!(s.note.as_deref().unwrap().starts_with(CONTAINED_USED));
    // LuGre takes the line too, keeping its own presliding stiffness.
    let l = row("lugre");
    assert!(l.validation.all < lugre_mse / 10.0, "{:?}", l.validation);
    assert_eq!(
        (l.params["sigma0"].as_f64(), l.params["sigma2"].as_f64()),
        (Some(5000.0), Some(0.05))
    );
    assert_eq!(l.params["fs"], l.params["fc"]);
    assert!(
        l.note.as_deref().unwrap().contains("(coulomb_viscous)"),
        "{:?}",
        l.note
    );
    // The line and the Stribeck curve holding it share the first rank, the line first.
    let ranks: Vec<(&str, usize)> = t.rows.iter().map(|r| (r.model.as_str(), r.rank)).collect();
    assert_eq!(
        ranks,
        [("coulomb_viscous", 1), ("stribeck_exp", 1), ("lugre", 3)]
    );
    // The line itself is untouched.
    assert!(row("coulomb_viscous").note.is_none());
}

/// The validation data's first `validation_warmup_s` drive the replay but are not scored: a
/// Coulomb + viscous set wrong only there scores exactly as the true set on the rest.
#[test]
fn the_validation_warm_up_is_replayed_not_scored() {
    let (est, mut val) = ([cv_segment("est", 0.3)], [cv_segment("val", 1.1)]);
    // The measurement is off by 1 N m in the first second (1000 of 4000 samples).
    for f in val[0].friction.iter_mut().take(1000) {
        *f += 1.0;
    }
    let cv = serde_json::json!({"fc": 0.8, "fv": 0.05, "negative": {"fc": 0.7, "fv": 0.05}});
    let models = [ModelChoice {
        model: "coulomb_viscous".into(),
        params: cv,
        fit: Vec::new(),
    }];
    let all = compare(&est, &val, &models, &CompareOptions::default()).unwrap();
    let v = all.rows[0].validation;
    assert!((v.all - 0.25).abs() < 1e-9, "{v:?}");
    let opts = CompareOptions {
        validation_warmup_s: 1.0,
        ..CompareOptions::default()
    };
    let warm = compare(&est, &val, &models, &opts).unwrap();
    let v = warm.rows[0].validation;
    assert!(v.all < 1e-20, "{v:?}");
    assert_eq!(v.n_presliding + v.n_gross_sliding, 3000);
    // The estimation data are scored whole.
    assert_eq!(warm.rows[0].estimation, all.rows[0].estimation);
}
