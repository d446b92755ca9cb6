//! Uncertainty that covers the truth (issue 26): over 100 simulated data sets with known
//! parameters and seeded noise, each parameter's reported 95 % interval (`ci95`) must contain
//! the truth in 88–99 % of them, for `static_curve` of `stribeck_exp` and `output_error` of
//! `lugre`. The records are short so that the 200 fits stay cheap.

use crate::util::model;
use friction::identify::procedures::output_error::{self, Options, Segment};
use friction::identify::procedures::{FitReport, Given, Table, run};
use friction::identify::rng::Rng;
use serde_json::{Value, json};
use std::f64::consts::TAU;

/// Data sets per procedure.
const SETS: u64 = 100;

/// Counts, per parameter, the sets whose interval contains the truth.
fn covered(reports: &[FitReport], truth: &Value) -> Vec<(String, usize)> {
    truth
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, t)| {
            let t = t.as_f64().unwrap();
            let n = reports
                .iter()
                .filter(|r| {
                    let ci = r.ci95[name].as_array().expect(name);
                    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
                    lo <= t && t <= hi
                })
                .count();
            (name.clone(), n)
        })
        .collect()
}

fn assert_covers(what: &str, counts: &[(String, usize)], sets: usize) {
    eprintln!("{what}: coverage of 95 % intervals over {sets} sets: {counts:?}");
    for (name, n) in counts {
        let share = *n as f64 / sets as f64;
        assert!(
            (0.88..=0.99).contains(&share),
            "{what}: {name} covered in {n} of {sets}"
        );
    }
}

/// Stribeck sweep points: 24 speeds from 1 mm/s to 0.5 m/s, friction noise 0.01 N.
fn sweep(truth: &Value, seed: u64) -> Table {
    let m = model("stribeck_exp", truth.clone());
    let mut rng = Rng::new(seed);
    let v: Vec<f64> = (0..24)
        .map(|i| 1e-3 * 500f64.powf(i as f64 / 23.0))
        .collect();
    let f = v
        .iter()
        .map(|v| m.steady_state(*v).unwrap() + 0.01 * rng.normal())
        .collect();
    Table::new(vec![("v".into(), v), ("friction".into(), f)]).unwrap()
}

#[test]
fn static_curve_intervals_cover_the_truth() {
    let truth = json!({"fc": 1.0, "fs": 1.5, "fv": 0.4, "vs": 0.01, "delta": 1.5});
    let reports: Vec<FitReport> = (0..SETS)
        .map(|seed| {
            run(
                "static_curve",
                "stribeck_exp",
                &sweep(&truth, seed),
                &Given::new(),
            )
            .unwrap()
        })
        .collect();
    assert_covers(
        "static_curve stribeck_exp",
        &covered(&reports, &truth),
        SETS as usize,
    );
}

/// A 3 s excitation for LuGre: presliding reversals at 4 Hz growing from 5 to 20 µm (sigma0,
/// sigma1), a 1 Hz sine of 10 mm/s through the Stribeck range (fc, fs, vs), a 1 Hz sine of
/// 0.3 m/s (sigma2).
fn short_excitation(t: f64) -> f64 {
    if t < 1.0 {
        let (a, w) = (5e-6 + 15e-6 * t, TAU * 4.0);
        a * w * (w * t).cos() + 15e-6 * (w * t).sin()
    } else if t < 2.0 {
        0.01 * (TAU * (t - 1.0)).sin()
    } else {
        0.3 * (TAU * (t - 2.0)).sin()
    }
}

#[test]
fn lugre_output_error_intervals_cover_the_truth() {
    let truth =
        json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3});
    let names = ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"];
    let one = |seed: u64| {
        let mut m = model("lugre", truth.clone());
        // The continuous plant: integrated at 0.01 ms, sampled at 1 kHz for 3 s.
        let seg = Segment::sample_velocity_driven(
            "cov",
            m.as_mut(),
            short_excitation,
            1e-3,
            3000,
            100,
            0.01,
            0.0,
            1000 + seed,
        );
        // Started at the truth, which only shortens the search: the intervals are those of
        // the optimum (the search from the defaults is tested in identify_records); the
        // sub-steps are chosen from the data.
        let mut o = Options::new("lugre", &names);
        o.params = truth.clone();
        o.nested = false;
        o.threads = 1;
        output_error::fit(&[seg], &o).unwrap()
    };
    // Two workers, one fit each at a time.
    let reports: Vec<FitReport> = std::thread::scope(|sc| {
        let one = &one;
        let workers: Vec<_> = (0..2u64)
            .map(|w| sc.spawn(move || (w..SETS).step_by(2).map(one).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_covers(
        "output_error lugre",
        &covered(&reports, &truth),
        SETS as usize,
    );
}
