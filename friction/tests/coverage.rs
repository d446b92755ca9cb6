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

/// One presliding sine on a LuGre truth: `sigma0`, `J`, the bristle damping ratio and the
/// amplitude as a fraction `a` of `fs` drawn from the seed (S4's bench, ratio 0.6, to a
/// flywheel's, 3), 2 Hz for 6 cycles, integrated at 0.05 ms and sampled at 1 kHz through a
/// 2^20-count encoder, torque noise 0.5 % of the amplitude.
fn presliding_set(seed: u64) -> (Value, Table, Given) {
    let mut rng = Rng::new(7000 + seed);
    let sigma0 = 10f64.powf(3.0 + 1.5 * rng.uniform());
    let j = 10f64.powf(-1.7 + rng.uniform());
    let a = 0.1 + 0.35 * rng.uniform();
    let w = TAU * 2.0;
    let sigma1 = (0.3 + 2.7 * rng.uniform()) * 2.0 * (sigma0 * j).sqrt();
    let (fc, fs) = (0.6, 0.9);
    let mut m = model(
        "lugre",
        json!({"sigma0": sigma0, "sigma1": sigma1, "sigma2": 0.04, "fc": fc, "fs": fs, "vs": 0.05}),
    );
    let p = friction::plant::PlantParams { mass: j };
    let mut s = friction::plant::PlantState::default();
    let q = TAU / f64::from(1u32 << 20);
    let amp = a * fs;
    let (mut t, mut x, mut u) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..6000 {
        t.push(s.t);
        x.push((s.x / q).round() * q);
        u.push(amp * (w * s.t).sin() + 0.005 * amp * rng.normal());
        for _ in 0..20 {
            let applied = friction::plant::Applied::force(amp * (w * s.t).sin(), 0.0);
            friction::plant::step(m.as_mut(), &p, &mut s, &applied, 5e-5);
        }
        assert!(s.x.is_finite(), "set {seed} diverged at sample {k}");
    }
    let table = Table::new(vec![("t".into(), t), ("x".into(), x), ("u".into(), u)]).unwrap();
    let given = json!({"fs": fs, "j": j}).as_object().unwrap().clone();
    (json!({"sigma0": sigma0, "sigma1": sigma1}), table, given)
}

/// `presliding_sine` given `fs` and `J`: `sigma0` and `sigma1` from the complex stiffness
/// corrected for the inertia and LuGre's bristle loop, their intervals covering the truths
/// from S4's bench to a flywheel's.
#[test]
fn presliding_sine_intervals_cover_sigma0_and_sigma1() {
    let mut reports = Vec::new();
    let mut truths = Vec::new();
    for seed in 0..SETS {
        let (truth, table, given) = presliding_set(seed);
        let r = run("presliding_sine", "lugre", &table, &given).unwrap();
        let rel = |k: &str| {
            let t = truth[k].as_f64().unwrap();
            let se = r.std_errors[k].as_f64().unwrap_or(f64::INFINITY);
            format!(
                "{k} {:+.2} % (se {:.2} %)",
                100.0 * (r.param(k).unwrap() / t - 1.0),
                100.0 * se / t
            )
        };
        eprintln!(
            "set {seed}: sigma0 {:.0}: {}, {}",
            truth["sigma0"].as_f64().unwrap(),
            rel("sigma0"),
            rel("sigma1")
        );
        truths.push(truth);
        reports.push(r);
    }
    let mut counts = Vec::new();
    for name in ["sigma0", "sigma1"] {
        let n = reports
            .iter()
            .zip(&truths)
            .filter(|(r, truth)| {
                let t = truth[name].as_f64().unwrap();
                let ci = r.ci95[name].as_array().unwrap();
                ci[0].as_f64().unwrap() <= t && t <= ci[1].as_f64().unwrap()
            })
            .count();
        counts.push((name.to_string(), n));
    }
    assert_covers("presliding_sine lugre", &counts, SETS as usize);
}
