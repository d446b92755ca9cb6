//! A plant with a known load (issue 43, item 3): a pendulum bench driven by a torque, recorded
//! at 1 kHz with a known truth (Coulomb 0.3 N m, viscous 0.05 N m s/rad, inertia 0.01 kg m²,
//! a 1 kg arm at 0.2 m whose lowest point is at 0.4 rad), fitted with the load given.

use crate::util::{model, run as simulate, scenario};
use friction::identify::procedures::synthetic::BallScrew;
use friction::identify::procedures::{FitReport, Given, Table, run};
use serde_json::{Value, json};

const FC: f64 = 0.3;
const FV: f64 = 0.05;
const J: f64 = 0.01;

fn pendulum() -> Value {
    json!({"kind": "pendulum", "mass": 1.0, "length": 0.2, "bottom": 0.4})
}

/// The bench's record: a torque of 0.9 N m at 0.7 Hz plus 0.5 N m at 1.6 Hz swings the arm
/// about ±0.9 rad about its lowest point (below going over the top); 10 s stepped at 0.1 ms, every tenth step kept.
fn record() -> Table {
    let force = |t: f64| {
        let w = std::f64::consts::TAU;
        0.9 * (w * 0.7 * t).sin() + 0.5 * (w * 1.6 * t + 1.0).sin()
    };
    let ts: Vec<f64> = (0..=100_000).map(|k| k as f64 * 1e-4).collect();
    let value: Vec<f64> = ts.iter().map(|t| force(*t)).collect();
    let sc = scenario(json!({"kind": "force", "mass": J, "load": pendulum(),
        "force": {"samples": {"t": ts, "value": value}}}));
    let mut m = model("coulomb_viscous", json!({"fc": FC, "fv": FV}));
    let rows = simulate(m.as_mut(), &sc, 1e-4, 10.0, 10);
    let col = |f: fn(&friction::scenario::Row) -> f64| rows.iter().map(f).collect::<Vec<_>>();
    Table::new(vec![
        ("t".into(), col(|r| r.t)),
        ("x".into(), col(|r| r.x)),
        ("v".into(), col(|r| r.v)),
        ("u".into(), col(|r| r.u)),
    ])
    .unwrap()
}

fn given(v: Value) -> Given {
    v.as_object().unwrap().clone()
}

fn within(r: &FitReport, name: &str, truth: f64, pct: f64) -> bool {
    let v = r.param(name).unwrap();
    100.0 * (v - truth).abs() / truth < pct
}

#[test]
fn a_pendulum_bench_is_fitted_within_two_percent_with_its_load_given() {
    let rec = record();
    let swing = rec
        .get("x")
        .unwrap()
        .iter()
        .fold(0.0_f64, |m, x| m.max((x - 0.4).abs()));
    assert!(swing > 0.8, "the arm swings {swing} rad");
    let oe = |load: Option<Value>| {
        let mut g = json!({"replay": "torque", "mass": J, "fit": ["fc", "fv"],
            "params": {"fc": 0.2, "fv": 0.03}, "substeps": 10});
        if let Some(l) = load {
            g["load"] = l;
        }
        run("output_error", "coulomb_viscous", &rec, &given(g)).unwrap()
    };
    let r = oe(Some(pendulum()));
    eprintln!("output_error, pendulum given: {:?}", r.params);
    assert!(
        within(&r, "fc", FC, 2.0) && within(&r, "fv", FV, 2.0),
        "{:?}",
        r.params
    );
    // The same record read as a bare inertia is not this friction.
    let bare = oe(None);
    assert!(
        !within(&bare, "fc", FC, 2.0) || !within(&bare, "fv", FV, 2.0),
        "{:?}",
        bare.params
    );
}

/// A closed-loop axis (the EMPS-like generator) carrying a 20 kg arm at 0.5 m whose lowest
/// point is 0.6 rad below the stroke: IDIM-LS with the load given recovers the friction.
fn arm() -> Value {
    json!({"kind": "pendulum", "mass": 20.0, "length": 0.5, "bottom": -0.6})
}

fn pendulum_axis() -> Table {
    BallScrew {
        offset: 0.0,
        load: serde_json::from_value(arm()).unwrap(),
        ..BallScrew::default()
    }
    .simulate()
    .unwrap()
}

#[test]
fn idim_ls_on_a_closed_loop_pendulum_axis_is_within_two_percent() {
    let (arm, rec) = (arm(), pendulum_axis());
    let idim = |g: Value| run("idim_ls", "coulomb_viscous", &rec, &given(g)).unwrap();
    let r = idim(json!({"load": arm, "force_held": true}));
    eprintln!("idim_ls, pendulum given: {:?}", r.params);
    for (name, truth) in [("fc", 20.0), ("fv", 200.0), ("j", 95.0)] {
        assert!(within(&r, name, truth, 2.0), "{name}: {:?}", r.params);
    }
    let bare = idim(json!({"force_held": true}));
    assert!(
        !within(&bare, "fc", 20.0, 2.0) || !within(&bare, "fv", 200.0, 2.0),
        "{:?}",
        bare.params
    );
}

/// The same axis by the power-equation RLS: the load given, the friction within 2 %; a
/// held-out record scored with the fit's load.
#[test]
fn power_rls_on_a_closed_loop_pendulum_axis_is_within_two_percent() {
    let rec = pendulum_axis();
    let rls = |g: Value| run("power_rls", "coulomb_viscous", &rec, &given(g)).unwrap();
    let r = rls(json!({"load": arm()}));
    eprintln!("power_rls, pendulum given: {:?}", r.params);
    for (name, truth) in [("fc", 20.0), ("fv", 200.0)] {
        assert!(within(&r, name, truth, 2.0), "{name}: {:?}", r.params);
    }
    let bare = rls(json!({}));
    assert!(
        !within(&bare, "fc", 20.0, 2.0) || !within(&bare, "fv", 200.0, 2.0),
        "{:?}",
        bare.params
    );
    let held = friction::identify::procedures::validation::validate(&r, &rec, "same").unwrap();
    let ignored = friction::identify::procedures::validation::validate(
        &{
            let mut b = r.clone();
            b.provenance.given.remove("load");
            b
        },
        &rec,
        "same",
    )
    .unwrap();
    assert!(
        held.rel_error_pct < 0.5 * ignored.rel_error_pct,
        "{held:?} {ignored:?}"
    );
}

#[test]
fn a_bad_load_is_refused_naming_its_field() {
    let rec = record();
    let e = run(
        "idim_ls",
        "coulomb_viscous",
        &rec,
        &given(json!({"load": {"kind": "pendulum", "mass": 1.0, "length": 0.0}})),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "given.load.length (0) must be finite and > 0");
    let e = run(
        "output_error",
        "coulomb_viscous",
        &rec,
        &given(json!({"load": pendulum(), "fit": ["fc"]})),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("given.load acts on the plant of a torque replay"),
        "{e}"
    );
}
