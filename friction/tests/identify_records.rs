//! Fits that hold on recordings (issue 26): IDIM-LS on a simulated EMPS-like axis, offsets,
//! given keys, non-uniform time stamps, power_rls's threshold, nested models, output error on a
//! continuous plant.

use crate::util::model;
use friction::identify::TerminationReason;
use friction::identify::procedures::output_error::{self, Options, Replay, Segment};
use friction::identify::procedures::synthetic::BallScrew;
use friction::identify::procedures::{FitReport, Given, Table, run};
use friction::identify::rng::Rng;
use serde_json::{Value, json};
use std::f64::consts::TAU;

fn given(v: Value) -> Given {
    v.as_object().unwrap().clone()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// `name` lies within `k` standard errors of `truth`.
fn within_se(r: &FitReport, name: &str, truth: f64, k: f64) {
    let (v, se) = (r.param(name).unwrap(), r.std_errors[name].as_f64().unwrap());
    assert!(
        (v - truth).abs() <= k * se,
        "{name}: {v} ± {se}, truth {truth}"
    );
}

/// The EMPS-like record every IDIM test uses (25 s, 1 kHz; truth 95 kg, 200 N s/m, 20 N, -3 N).
fn emps_like() -> Table {
    BallScrew::default().simulate().unwrap()
}

#[test]
fn idim_ls_recovers_the_simulated_axis_with_its_offset() {
    let rec = emps_like();
    let r = run(
        "idim_ls",
        "coulomb_viscous",
        &rec,
        &given(json!({"offset": true})),
    )
    .unwrap();
    // Held to the known truth, not only to the fit's own standard errors (a defect that
    // inflated them would loosen those): 1 % as the IDIM-LS issue states. The offset, which
    // only the reversals tell from the Coulomb level, comes out -3.39 N on this record (truth
    // -3 N): held to 0.5 N.
    for (n, t) in [("j", 95.0), ("fv", 200.0), ("fc", 20.0)] {
        assert!(rel(r.param(n).unwrap(), t) < 0.01, "{n}: {:?}", r.params);
        within_se(&r, n, t, 3.0);
    }
    let offset = r.param("offset").unwrap();
    assert!(
        (offset - -3.0).abs() < 0.5,
        "offset {offset}: {:?}",
        r.params
    );
    within_se(&r, "offset", -3.0, 3.0);
    // Standard errors, relative errors, intervals and the defaults from the bandwidth.
    for n in ["j", "fv", "fc", "offset"] {
        assert!(r.relative_std_errors[n].as_f64().unwrap() > 0.0);
        let ci = r.ci95[n].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() < r.param(n).unwrap());
    }
    let s = &r.provenance.settings;
    let (fb, fc, dec) = (
        s["bandwidth_hz"].as_f64().unwrap(),
        s["cutoff_hz"].as_f64().unwrap(),
        s["decimation"].as_u64().unwrap(),
    );
    assert!((5.0..60.0).contains(&fb), "{s:?}");
    assert!((fc - 5.0 * fb).abs() < 1e-9 && dec >= 2, "{s:?}");
    assert!(r.n_eff.unwrap() < r.provenance.n_points as f64);
    assert_eq!(r.verdict.reasons, Vec::<String>::new());
    // The options override the defaults and are recorded.
    let r2 = run(
        "idim_ls",
        "coulomb_viscous",
        &rec,
        &given(json!({"offset": true, "cutoff_hz": 60.0, "decimation": 5})),
    )
    .unwrap();
    assert_eq!(r2.provenance.settings["cutoff_hz"], 60.0);
    assert_eq!(r2.provenance.settings["decimation"], 5);
    assert!(rel(r2.param("j").unwrap(), 95.0) < 0.01, "{:?}", r2.params);
    // Without the offset the Coulomb level absorbs it less well: the offset-free fit is worse.
    let plain = run("idim_ls", "coulomb_viscous", &rec, &Given::new()).unwrap();
    assert!(plain.mse.unwrap() > r.mse.unwrap());
    assert!(plain.params.get("offset").is_none());
}

#[test]
fn idim_ls_bootstrap_and_second_stage() {
    let rec = BallScrew {
        duration: 10.0,
        ..BallScrew::default()
    }
    .simulate()
    .unwrap();
    let b = run(
        "idim_ls",
        "coulomb_viscous",
        &rec,
        &given(json!({"offset": true, "bootstrap": 40, "seed": 3})),
    )
    .unwrap();
    assert_eq!(b.details["bootstrap"]["replicates"], 40);
    let ci = b.ci95["fc"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(lo < b.param("fc").unwrap() && b.param("fc").unwrap() < hi);
    // The axis has no Stribeck effect: the second stage is never worse, and says the terms are
    // not supported.
    let s = run(
        "idim_ls",
        "stribeck_exp",
        &rec,
        &given(json!({"offset": true})),
    )
    .unwrap();
    let nested = &s.details["nested"];
    assert!(
        nested["mse"].as_f64() <= nested["mse_contained"].as_f64(),
        "{nested}"
    );
    assert_eq!(nested["supported"], false, "{nested}");
    assert!(
        s.verdict
            .reasons
            .iter()
            .any(|r| r.contains("not supported")),
        "{:?}",
        s.verdict
    );
}

/// Drops every seventh sample: the record is resampled on its median step, and a gap of 50
/// steps is refused naming its time.
#[test]
fn non_uniform_time_stamps_are_resampled_or_refused() {
    let rec = BallScrew {
        duration: 10.0,
        ..BallScrew::default()
    }
    .simulate()
    .unwrap();
    let keep = |f: &dyn Fn(usize) -> bool| {
        let cols = ["t", "x", "u"]
            .iter()
            .map(|n| {
                let c = rec.get(n).unwrap();
                (
                    n.to_string(),
                    c.iter()
                        .enumerate()
                        .filter(|(k, _)| f(*k))
                        .map(|(_, v)| *v)
                        .collect(),
                )
            })
            .collect();
        Table::new(cols).unwrap()
    };
    let dropped = keep(&|k| k % 7 != 3);
    let r = run(
        "idim_ls",
        "coulomb_viscous",
        &dropped,
        &given(json!({"offset": true})),
    )
    .unwrap();
    assert_eq!(r.provenance.settings["resampled"], true);
    assert!(r.provenance.notes.iter().any(|n| n.contains("resampled")));
    assert!(rel(r.param("j").unwrap(), 95.0) < 0.01, "{:?}", r.params);
    let gap = keep(&|k| !(4000..4050).contains(&k));
    let e = refused("idim_ls", "coulomb_viscous", &gap, json!({}));
    assert!(e.contains("largest gap") && e.contains("t = 4.05"), "{e}");
    let e = refused("power_rls", "coulomb_viscous", &gap, json!({}));
    assert!(e.contains("largest gap"), "{e}");
}

#[test]
fn power_rls_standard_errors_offset_and_threshold_in_the_data_units() {
    let rec = emps_like();
    let r = run(
        "power_rls",
        "coulomb_viscous",
        &rec,
        &given(json!({"offset": true})),
    )
    .unwrap();
    for n in ["j", "fv", "fc", "offset"] {
        assert!(r.std_errors[n].as_f64().unwrap() > 0.0, "{n}");
    }
    assert!(rel(r.param("fc").unwrap(), 20.0) < 0.05, "{:?}", r.params);
    // S2's 20 rad/s on a ball screw at 0.13 m/s: refused, naming the speeds, never zeros.
    let e = refused(
        "power_rls",
        "coulomb_viscous",
        &rec,
        json!({"eta": "threshold", "v_min": 20.0}),
    );
    assert!(
        e.contains("given.v_min (20)") && e.contains("m/s or rad/s"),
        "{e}"
    );
    // The default threshold is a fifth of the fast speeds, in m/s here.
    let t = run(
        "power_rls",
        "coulomb_viscous",
        &rec,
        &given(json!({"eta": "threshold"})),
    )
    .unwrap();
    let v_min = t.provenance.settings["v_min"].as_f64().unwrap();
    assert!((0.005..0.05).contains(&v_min), "{v_min}");
    assert!(t.param("fc").unwrap() > 10.0);
}

/// The error of a fit that must be refused.
fn refused(procedure: &str, model: &str, table: &Table, g: Value) -> String {
    run(procedure, model, table, &given(g))
        .unwrap_err()
        .to_string()
}

#[test]
fn unknown_given_keys_and_offsets_that_cannot_apply_are_refused() {
    let e = refused(
        "idim_ls",
        "coulomb_viscous",
        &emps_like(),
        json!({"ofset": true}),
    );
    assert!(
        e.contains("given.ofset") && e.contains("not an option of procedure 'idim_ls'"),
        "{e}"
    );
    let sweep = Table::new(vec![
        ("v".into(), vec![0.1, 0.2, 0.3, 0.4]),
        ("friction".into(), vec![1.0, 1.1, 1.2, 1.3]),
    ])
    .unwrap();
    let e = refused(
        "static_curve",
        "coulomb_viscous",
        &sweep,
        json!({"fs": 1.0}),
    );
    assert!(e.contains("given.fs"), "{e}");
    let step = Table::new(vec![
        ("t".into(), vec![0.0, 1.0, 2.0]),
        ("x".into(), vec![0.0; 3]),
        ("u".into(), vec![0.0; 3]),
    ])
    .unwrap();
    let e = refused("step_damping", "lugre", &step, json!({"offset": true}));
    assert!(
        e.contains("given.offset") && e.contains("size of the torque step"),
        "{e}"
    );
}

/// A robot-joint-like record: velocity-driven Stribeck friction with a gravity offset of
/// 0.4 N m, sampled with dropped samples (irregular time stamps).
fn joint_record(seed: u64) -> Segment {
    let truth = json!({"fc": 0.8, "fs": 1.3, "fv": 0.5, "vs": 0.05, "delta": 2.0});
    let mut m = model("stribeck_exp", truth);
    let mut rng = Rng::new(seed);
    let t: Vec<f64> = (0..6000)
        .filter(|k| k % 11 != 5 && k % 17 != 3)
        .map(|k| k as f64 * 1e-3)
        .collect();
    let v: Vec<f64> = t
        .iter()
        .map(|t| 0.6 * (TAU * 0.5 * t).sin() + 0.1 * (TAU * 1.3 * t).sin())
        .collect();
    let mut seg = Segment::simulate_velocity("joint", m.as_mut(), &t, &v, 0.0, 0.0, 0);
    for f in &mut seg.friction {
        *f += 0.4 + 0.03 * rng.normal();
    }
    seg
}

#[test]
fn nested_fits_are_never_worse_and_take_an_offset() {
    let seg = joint_record(5);
    let fit = |m: &str, names: &[&str], offset: bool| {
        let mut o = Options::new(m, names);
        if offset {
            o.offset = friction::identify::procedures::Offset::Fit;
        }
        output_error::fit(std::slice::from_ref(&seg), &o).unwrap()
    };
    let cv = fit("coulomb_viscous", &["fc", "fv"], false);
    let st = fit("stribeck_exp", &["fc", "fs", "fv", "vs"], false);
    assert!(
        st.mse.unwrap() <= cv.mse.unwrap() * (1.0 + 1e-9),
        "{:?} {:?}",
        st.mse,
        cv.mse
    );
    assert_eq!(st.details["nested"]["contained"], "coulomb_viscous");
    // With the offset the Stribeck model is far better, and recovers it.
    let cv_o = fit("coulomb_viscous", &["fc", "fv"], true);
    let st_o = fit("stribeck_exp", &["fc", "fs", "fv", "vs"], true);
    assert!(
        st_o.mse.unwrap() < 0.5 * st.mse.unwrap(),
        "{:?} {:?}",
        st_o.mse,
        st.mse
    );
    assert!(st_o.mse.unwrap() <= cv_o.mse.unwrap());
    within_se(&st_o, "offset", 0.4, 3.0);
    for (n, t) in [("fc", 0.8), ("fs", 1.3), ("fv", 0.5), ("vs", 0.05)] {
        within_se(&st_o, n, t, 3.0);
    }
    assert_eq!(st_o.details["nested"]["supported"], true);
    assert!(st_o.r2.unwrap() > 0.9 && st_o.aic.unwrap() < cv_o.aic.unwrap());
    // Replaying the fitted set (fit: []) subtracts its offset from the measurement.
    let mut replay = Options::new("stribeck_exp", &[]);
    replay.params = Value::Object(st_o.params.clone());
    let r = output_error::fit(std::slice::from_ref(&seg), &replay).unwrap();
    assert!(rel(r.mse.unwrap(), st_o.mse.unwrap()) < 1e-6, "{:?}", r.mse);
    assert_eq!(r.provenance.method, "replay");
}

/// The continuous plant: LuGre integrated at 0.1 ms, sampled at 1 kHz, friction noise
/// 0.01 N. The output-error fit chooses its sub-steps and recovers every parameter within 2 %;
/// the largest error left (sigma1, +1.7 %) is the 0.1 ms integration's own: against a plant
/// integrated at 0.01 ms every parameter lies within three standard errors.
#[test]
fn output_error_on_a_sampled_continuous_lugre_recovers_within_two_percent() {
    let truth =
        json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3});
    let names = ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"];
    for (fine, tolerance) in [(10, "2 %"), (100, "3 se")] {
        let mut m = model("lugre", truth.clone());
        let seg = Segment::sample_velocity_driven(
            "lugre",
            m.as_mut(),
            output_error::excitation_velocity,
            1e-3,
            20_000,
            fine,
            0.01,
            0.0,
            7,
        );
        let mut o = Options::new("lugre", &names);
        o.nested = false;
        let r = output_error::fit(std::slice::from_ref(&seg), &o).unwrap();
        let table: Vec<String> = names
            .iter()
            .map(|n| {
                let (v, t) = (r.param(n).unwrap(), truth[n].as_f64().unwrap());
                let se = r.std_errors[*n].as_f64().unwrap();
                format!(
                    "{n}: {:+.3} % = {:+.1} se",
                    100.0 * (v / t - 1.0),
                    (v - t) / se
                )
            })
            .collect();
        eprintln!(
            "sampled LuGre (truth at {} ms): {table:?}, sub-steps {}",
            1.0 / fine as f64,
            r.provenance.settings["substeps"]
        );
        for n in names {
            let t = truth[n].as_f64().unwrap();
            if tolerance == "2 %" {
                assert!(rel(r.param(n).unwrap(), t) < 0.02, "{table:?}");
            } else {
                within_se(&r, n, t, 3.0);
            }
        }
        assert!(r.provenance.settings["substeps"].as_u64().unwrap() > 1);
        // The residual is the sensor noise: MSE ≈ 0.01²; the work and the data are reported.
        assert!(rel(r.mse.unwrap(), 1e-4) < 0.1, "mse {:?}", r.mse);
        assert_eq!(r.termination, Some(TerminationReason::Converged));
        let (it, ev) = (
            r.details["iterations"].as_u64().unwrap(),
            r.details["evaluations"].as_u64().unwrap(),
        );
        assert!(it > 1 && ev > it, "{it} {ev}");
        assert_eq!(r.details["data"][0]["samples"], seg.len());
        assert_eq!(r.provenance.procedure, "output_error");
    }
}

/// Dropped samples are replayed at their own spacing: the fit on the irregular record matches
/// the one on the full record.
#[test]
fn output_error_replays_irregular_time_stamps_as_recorded() {
    let truth =
        json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3});
    let mut m = model("lugre", truth.clone());
    let full = Segment::sample_velocity_driven(
        "full",
        m.as_mut(),
        |t| output_error::excitation_velocity(t + 6.0),
        1e-3,
        4000,
        20,
        0.01,
        0.0,
        9,
    );
    let keep: Vec<usize> = (0..full.len()).filter(|k| k % 5 != 2).collect();
    let pick = |c: &[f64]| keep.iter().map(|k| c[*k]).collect::<Vec<f64>>();
    let gappy = Segment {
        source: "gappy".into(),
        t: pick(&full.t),
        x: pick(&full.x),
        v: pick(&full.v),
        u: pick(&full.u),
        friction: pick(&full.friction),
    };
    let mut o = Options::new("lugre", &["fc", "fs", "vs", "sigma2"]);
    o.params = truth.clone();
    o.nested = false;
    let r = output_error::fit(&[gappy], &o).unwrap();
    for n in ["fc", "fs", "vs", "sigma2"] {
        within_se(&r, n, truth[n].as_f64().unwrap(), 3.0);
    }
    assert_eq!(r.details["settings"]["replay"], json!(Replay::Velocity));
}
