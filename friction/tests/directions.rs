//! Friction that differs by direction and held-out validation (issue 43), on simulated
//! closed-loop records with a known truth: fc⁺ 20 N, fc⁻ 16 N, fv⁺ 200 N s/m, fv⁻ 260 N s/m.

use friction::identify::procedures::synthetic::{BallScrew, Excitation};
use friction::identify::procedures::validation::validate;
use friction::identify::procedures::{FitReport, Given, Table, run};
use serde_json::{Value, json};

fn given(v: Value) -> Given {
    v.as_object().unwrap().clone()
}

/// The truth `(fv, fc)` per side.
const POSITIVE: (f64, f64) = (200.0, 20.0);
const NEGATIVE: (f64, f64) = (260.0, 16.0);

/// An EMPS-like axis whose friction differs by direction, without a force offset.
fn axis(excitation: Excitation, seed: u64) -> BallScrew {
    BallScrew {
        fv: POSITIVE.0,
        fc: POSITIVE.1,
        negative: Some(NEGATIVE),
        offset: 0.0,
        excitation,
        seed,
        duration: 60.0,
        ..BallScrew::default()
    }
}

/// The options of every per-direction IDIM fit here: the simulated drive holds its force
/// command over the following step.
fn asymmetric() -> Given {
    given(json!({"asymmetric": true, "force_held": true}))
}

fn record(excitation: Excitation, seed: u64) -> Table {
    axis(excitation, seed).simulate().unwrap()
}

/// `(value, std error)` of `name` on `side` (`""` or `"negative"`).
pub(crate) fn value(r: &FitReport, side: &str, name: &str) -> (f64, f64) {
    let (p, e) = if side.is_empty() {
        (&r.params, &r.std_errors)
    } else {
        (
            r.params[side].as_object().unwrap(),
            r.std_errors[side].as_object().unwrap(),
        )
    };
    (p[name].as_f64().unwrap(), e[name].as_f64().unwrap())
}

/// Every side's `fv` and `fc` within `pct` % of the truth and within 4 standard errors.
fn assert_sides(r: &FitReport, pct: f64) {
    for (side, (fv, fc)) in [("", POSITIVE), ("negative", NEGATIVE)] {
        for (name, truth) in [("fv", fv), ("fc", fc)] {
            let (v, se) = value(r, side, name);
            let rel = 100.0 * (v - truth).abs() / truth;
            assert!(
                rel < pct && (v - truth).abs() <= 4.0 * se,
                "{side}.{name} = {v} ± {se}: truth {truth} ({rel:.2} %)"
            );
        }
    }
}

#[test]
fn idim_ls_fits_each_direction_within_one_percent_and_four_standard_errors() {
    let rec = record(Excitation::Moves, 1);
    let r = run("idim_ls", "coulomb_viscous", &rec, &asymmetric()).unwrap();
    assert_sides(&r, 1.0);
    let d = r.directions.as_ref().unwrap();
    assert!(d.differ, "{}", d.summary);
    assert!(d.parameters.iter().all(|p| p.differ), "{}", d.summary);
    assert!(
        r.verdict
            .directions
            .as_deref()
            .unwrap()
            .starts_with("the directions differ")
    );
    // Both sides have intervals.
    assert!(r.ci95["negative"]["fc"].is_array() && r.ci95["fv"].is_array());
}

#[test]
fn idim_ls_cannot_tell_equal_directions_apart() {
    let rec = BallScrew {
        negative: None,
        ..axis(Excitation::Moves, 2)
    }
    .simulate()
    .unwrap();
    let r = run("idim_ls", "coulomb_viscous", &rec, &asymmetric()).unwrap();
    let d = r.directions.as_ref().unwrap();
    assert!(!d.differ, "{}", d.summary);
    assert!(
        d.summary.starts_with("the data cannot tell"),
        "{}",
        d.summary
    );
    // The symmetric fit has no `directions` and no negative set.
    let s = run(
        "idim_ls",
        "coulomb_viscous",
        &rec,
        &given(json!({"force_held": true})),
    )
    .unwrap();
    assert!(s.directions.is_none() && s.params.get("negative").is_none());
}

#[test]
fn per_direction_options_are_refused_clearly() {
    let rec = record(Excitation::Moves, 1);
    let both = given(json!({"asymmetric": true, "offset": true}));
    let e = run("idim_ls", "coulomb_viscous", &rec, &both)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("given.offset cannot be fitted with given.asymmetric = true"),
        "{e}"
    );
    // An unknown option is named without a value (it used to read "given.asymetric (NaN)").
    let e = run(
        "idim_ls",
        "coulomb_viscous",
        &rec,
        &given(json!({"asymetric": true})),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("given.asymetric is not an option of procedure 'idim_ls' (it takes: "),
        "{e}"
    );
    let e = run(
        "idim_ls",
        "coulomb_viscous",
        &rec,
        &given(json!({"asymmetric": 1})),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "given.asymmetric is refused: invalid type: integer `1`, expected a boolean"
    );
}

#[test]
fn power_rls_fits_each_direction() {
    let rec = record(Excitation::Moves, 1);
    let r = run(
        "power_rls",
        "coulomb_viscous",
        &rec,
        &given(json!({"asymmetric": true})),
    )
    .unwrap();
    // The power weighting (v²) leaves the rest out by itself.
    assert_sides(&r, 1.0);
    assert!(r.directions.as_ref().unwrap().differ);
    assert!(r.details["one"]["negative"]["fc"].is_number());
}

/// The report with the true parameters in place of the fitted ones (the true model's own
/// held-out error).
fn truth_of(r: &FitReport) -> FitReport {
    let mut t = r.clone();
    t.params.insert("fv".into(), json!(POSITIVE.0));
    t.params.insert("fc".into(), json!(POSITIVE.1));
    t.params.insert("j".into(), json!(95.0));
    t.params.insert(
        "negative".into(),
        json!({"fv": NEGATIVE.0, "fc": NEGATIVE.1}),
    );
    t
}

#[test]
fn a_held_out_record_of_another_excitation_scores_within_five_percent_of_the_truth() {
    let fit_on = record(Excitation::Moves, 1);
    let held_out = record(Excitation::Sines { pulse: 40.0 }, 7);
    for procedure in ["idim_ls", "power_rls"] {
        let mut g = given(json!({"asymmetric": true}));
        if procedure == "idim_ls" {
            g = asymmetric();
        }
        let r = run(procedure, "coulomb_viscous", &fit_on, &g).unwrap();
        let fitted = validate(&r, &held_out, "sines").unwrap();
        let truth = validate(&truth_of(&r), &held_out, "sines").unwrap();
        assert!(fitted.n > 1000 && fitted.record == "sines");
        assert!(
            (fitted.rel_error_pct - truth.rel_error_pct).abs() < 0.05 * truth.rel_error_pct,
            "{procedure}: {} % against the truth's {} %",
            fitted.rel_error_pct,
            truth.rel_error_pct
        );
        assert!(fitted.r2.unwrap() > 0.9, "{fitted:?}");
    }
}

#[test]
fn validation_is_refused_for_a_procedure_without_one() {
    let curve = Table::new(vec![
        (
            "v".into(),
            vec![0.1, 0.2, 0.3, 0.4, 0.5, -0.1, -0.2, -0.3, -0.4, -0.5],
        ),
        (
            "friction".into(),
            vec![1.1, 1.2, 1.3, 1.4, 1.5, -1.1, -1.2, -1.3, -1.4, -1.5],
        ),
    ])
    .unwrap();
    let r = run("static_curve", "coulomb_viscous", &curve, &Given::new()).unwrap();
    let e = validate(&r, &curve, "x").unwrap_err().to_string();
    assert!(
        e.starts_with("validate is not available for procedure 'static_curve'"),
        "{e}"
    );
}

/// `t, x, v, friction` of Coulomb + viscous friction (1 N, 0.4 N s/m) under a velocity of
/// frequency `f` \[Hz\], with noise.
fn friction_record(f: f64, seed: u64) -> Table {
    let mut rng = friction::identify::rng::Rng::new(seed);
    let t: Vec<f64> = (0..4000).map(|k| k as f64 * 1e-3).collect();
    let w = std::f64::consts::TAU * f;
    let v: Vec<f64> = t.iter().map(|t| (w * t).sin() + 0.2).collect();
    let x: Vec<f64> = t
        .iter()
        .map(|t| (1.0 - (w * t).cos()) / w + 0.2 * t)
        .collect();
    let fr: Vec<f64> = v
        .iter()
        .map(|v| v.signum() + 0.4 * v + 0.02 * rng.normal())
        .collect();
    Table::new(vec![
        ("t".into(), t),
        ("x".into(), x),
        ("v".into(), v),
        ("friction".into(), fr),
    ])
    .unwrap()
}

#[test]
fn output_error_validates_by_replaying_the_held_out_record() {
    let fit_on = friction_record(1.0, 1);
    let held_out = friction_record(2.3, 2);
    let g = given(json!({"fit": ["fc", "fv"]}));
    let r = run("output_error", "coulomb_viscous", &fit_on, &g).unwrap();
    let fitted = validate(&r, &held_out, "2.3 Hz").unwrap();
    let mut truth = r.clone();
    truth.params.insert("fc".into(), json!(1.0));
    truth.params.insert("fv".into(), json!(0.4));
    let own = validate(&truth, &held_out, "2.3 Hz").unwrap();
    assert_eq!(fitted.n, 4000);
    assert!(
        (fitted.rel_error_pct - own.rel_error_pct).abs() < 0.05 * own.rel_error_pct,
        "{fitted:?} {own:?}"
    );
    // A wrong set scores worse.
    truth.params.insert("fc".into(), json!(1.2));
    assert!(validate(&truth, &held_out, "x").unwrap().rel_error_pct > 2.0 * own.rel_error_pct);
}

/// `bench compare` on the inverse model: t,x,u records only, each model fitted by IDIM-LS on
/// the estimation record and scored by its inverse-model force on the held-out one.
#[test]
fn the_inverse_model_comparison_scores_held_out_records_like_the_truth() {
    use friction::identify::procedures::compare::ModelChoice;
    use friction::identify::procedures::compare_inverse;
    use friction::identify::procedures::output_error::Segment;
    let segment = |name: &str, t: &Table| {
        let cols: Vec<Vec<f64>> = ["t", "x", "u"]
            .iter()
            .map(|c| t.get(c).unwrap().to_vec())
            .collect();
        Segment::from_columns(name, &["t", "x", "u"], &cols).unwrap()
    };
    let fit_on = record(Excitation::Moves, 1);
    let held_out = record(Excitation::Sines { pulse: 40.0 }, 7);
    let (e, v) = (segment("moves", &fit_on), segment("sines", &held_out));
    let models: Vec<ModelChoice> = ["coulomb_viscous", "stribeck_exp"]
        .iter()
        .map(|m| ModelChoice::parse(m).unwrap())
        .collect();
    let t = compare_inverse::compare(
        std::slice::from_ref(&e),
        std::slice::from_ref(&v),
        &models,
        &asymmetric(),
    )
    .unwrap();
    assert_eq!(t.residual, compare_inverse::RESIDUAL);
    let cv = t
        .rows
        .iter()
        .find(|r| r.model == "coulomb_viscous")
        .unwrap();
    assert!(t.rows.iter().all(|r| r.error.is_none()), "{:?}", t.rows);
    assert!(cv.params["negative"]["fc"].is_number());
    // The fitted set's held-out MSE is the true model's own, within 10 %.
    let truth = validate(&truth_of(cv.fit.as_ref().unwrap()), &held_out, "sines").unwrap();
    let own = truth.rms * truth.rms;
    assert!(
        (cv.validation.all - own).abs() < 0.1 * own,
        "{} against {own}",
        cv.validation.all
    );
    let e2 = compare_inverse::compare(&[e.clone(), e], &[v], &models, &asymmetric())
        .unwrap_err()
        .to_string();
    assert!(
        e2.starts_with("estimate takes one record for the inverse model (got 2)"),
        "{e2}"
    );
}
