//! `bench fit`: JSON `params` by the model's names, end to end from `bench simulate`, exit codes.

use crate::util::{bench, stderr, stdout};
use serde_json::Value;
use std::path::PathBuf;

/// Writes `text` to a fresh file in the temp directory.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bench-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// S4 Table 1 (+) Armstrong curve points (noise-free), `v,friction`.
fn s4_points() -> String {
    let mut csv = String::from("v,friction\n");
    for i in 0..40 {
        let v = 2e-3 * (3.0f64 / 2e-3).powf(i as f64 / 39.0);
        let f = 8.955 + (17.617 - 8.955) * (-(v / 0.145f64).powf(1.032)).exp() + 5.234 * v;
        csv.push_str(&format!("{v},{f}\n"));
    }
    csv
}

#[test]
fn static_curve_json_has_params_by_model_names() {
    let csv = temp_file("s4.csv", &s4_points());
    let o = bench(&[
        "fit",
        "--model",
        "stribeck_exp",
        "--procedure",
        "static_curve",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (name, truth) in [
        ("fc", 8.955),
        ("fs", 17.617),
        ("fv", 5.234),
        ("vs", 0.145),
        ("delta", 1.032),
    ] {
        let est = doc["params"][name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} in {doc}"));
        assert!((est - truth).abs() / truth < 1e-4, "{name}: {est}");
    }
    assert_eq!(doc["provenance"]["procedure"], "static_curve");
    assert_eq!(doc["provenance"]["n_points"], 40);
    assert!(doc["mse"].as_f64().unwrap() < 1e-12);
    // Text output names the parameters.
    let o = bench(&[
        "fit",
        "--model",
        "stribeck_exp",
        "--procedure",
        "static_curve",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("vs = "), "{}", stdout(&o));
}

#[test]
fn presliding_sine_fits_a_bench_simulate_run() {
    let params = r#"{"sigma0":17260,"sigma1":66.708,"sigma2":5.234,"fc":8.955,"fs":17.617,"vs":0.145,"delta":1.032}"#;
    let scenario = r#"{"kind":"force","mass":0.167,"force":{"sine":{"amplitude":3,"omega":12.566370614359172}}}"#;
    let o = bench(&[
        "simulate",
        "--model",
        "lugre",
        "--params",
        params,
        "--scenario",
        scenario,
        "--dt",
        "1e-3",
        "--duration",
        "5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = temp_file("sine.csv", &stdout(&o));
    let o = bench(&[
        "fit",
        "--model",
        "lugre",
        "--procedure",
        "presliding_sine",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s0 = doc["params"]["sigma0"].as_f64().unwrap();
    assert!((s0 - 17260.0).abs() / 17260.0 < 0.05, "sigma0 {s0}");
    assert!(doc["std_errors"]["sigma0"].as_f64().unwrap() > 0.0);
    assert_eq!(
        doc["provenance"]["columns"],
        serde_json::json!(["t", "x", "u"])
    );
}

#[test]
fn bad_input_exits_2_naming_the_thing() {
    let csv = temp_file("pts.csv", &s4_points());
    let path = csv.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--model", "lugre", "--procedure", "nope"],
            "unknown procedure 'nope'",
        ),
        (
            &["--model", "coulomb", "--procedure", "presliding_sine"],
            "does not apply to model 'coulomb'",
        ),
        (
            &["--model", "lugre", "--procedure", "presliding_sine"],
            "missing column 't'",
        ),
        (
            &["--model", "nomodel", "--procedure", "static_curve"],
            "unknown model 'nomodel'",
        ),
        (
            &[
                "--model",
                "lugre",
                "--procedure",
                "static_curve",
                "--given",
                "[1]",
            ],
            "--given must be a JSON object",
        ),
    ];
    for (args, msg) in cases {
        let mut all = vec!["fit", "--csv", path];
        all.extend_from_slice(args);
        let o = bench(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }
    let o = bench(&[
        "fit",
        "--model",
        "lugre",
        "--procedure",
        "static_curve",
        "--csv",
        "/nonexistent/x.csv",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--csv"), "{}", stderr(&o));
}

/// `bench fit --procedure idim_ls` on a simulated EMPS-like record (t, x, u only): `j`, `fv`,
/// `fc` and `offset` with standard errors and 95 % intervals, the bandwidth-derived settings
/// in the provenance; a misspelt option exits 2 naming it.
#[test]
fn idim_ls_from_a_csv_of_position_and_force() {
    use friction::identify::procedures::synthetic::BallScrew;
    let rec = BallScrew {
        duration: 10.0,
        ..BallScrew::default()
    }
    .simulate()
    .unwrap();
    let mut csv = String::from("t,x,u\n");
    let (t, x, u) = (
        rec.get("t").unwrap(),
        rec.get("x").unwrap(),
        rec.get("u").unwrap(),
    );
    for k in 0..t.len() {
        csv.push_str(&format!("{},{},{}\n", t[k], x[k], u[k]));
    }
    let path = temp_file("axis.csv", &csv);
    let fit = |given: &str| {
        bench(&[
            "fit",
            "--model",
            "coulomb_viscous",
            "--procedure",
            "idim_ls",
            "--csv",
            path.to_str().unwrap(),
            "--given",
            given,
            "--json",
        ])
    };
    let o = fit(r#"{"offset": true}"#);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (name, truth) in [("j", 95.0), ("fv", 200.0), ("fc", 20.0), ("offset", -3.0)] {
        let (v, se) = (
            doc["params"][name].as_f64().unwrap(),
            doc["std_errors"][name].as_f64().unwrap(),
        );
        assert!((v - truth).abs() < 4.0 * se, "{name}: {v} ± {se}");
        let ci = doc["ci95"][name].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() < v && v < ci[1].as_f64().unwrap());
    }
    assert!(
        doc["provenance"]["settings"]["bandwidth_hz"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(doc["r2"].as_f64().unwrap() > 0.9 && doc["n_eff"].as_f64().is_some());
    let o = fit(r#"{"ofset": true}"#);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("given.ofset"), "{}", stderr(&o));
}

/// A simulated axis whose friction differs by direction, as `t,x,u` CSV text.
fn per_direction_csv(excitation: friction::identify::procedures::synthetic::Excitation) -> String {
    use friction::identify::procedures::synthetic::BallScrew;
    let rec = BallScrew {
        duration: 30.0,
        negative: Some((260.0, 16.0)),
        offset: 0.0,
        excitation,
        ..BallScrew::default()
    }
    .simulate()
    .unwrap();
    let (t, x, u) = (
        rec.get("t").unwrap(),
        rec.get("x").unwrap(),
        rec.get("u").unwrap(),
    );
    let mut csv = String::from("t,x,u\n");
    for k in 0..t.len() {
        csv.push_str(&format!("{},{},{}\n", t[k], x[k], u[k]));
    }
    csv
}

/// `bench fit --given {"asymmetric": true}` (issue 43): both directions with standard errors,
/// `directions`, and `--validate` on a held-out CSV and the same record stored as a run.
#[test]
fn idim_ls_per_direction_validated_on_a_held_out_csv_and_run() {
    use friction::identify::procedures::synthetic::Excitation;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db").display().to_string();
    let fit_on = dir.path().join("moves.csv");
    std::fs::write(&fit_on, per_direction_csv(Excitation::Moves)).unwrap();
    let held = dir.path().join("sines.csv");
    std::fs::write(&held, per_direction_csv(Excitation::Sines { pulse: 40.0 })).unwrap();
    let imported = bench(&[
        "runs",
        "import",
        held.to_str().unwrap(),
        "--columns",
        "t=t,x=x,u=u",
        "--geometry",
        "linear",
        "--db",
        &db,
        "--json",
    ]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let run: Value = serde_json::from_slice(&imported.stdout).unwrap();
    let id = run["run_id"].as_i64().unwrap().to_string();
    let fit = |json: bool| {
        let mut args = vec![
            "fit",
            "--model",
            "coulomb_viscous",
            "--procedure",
            "idim_ls",
            "--csv",
            fit_on.to_str().unwrap(),
            "--given",
            r#"{"asymmetric": true, "force_held": true}"#,
            "--validate",
            held.to_str().unwrap(),
            "--validate",
            &id,
            "--db",
            &db,
        ];
        if json {
            args.push("--json");
        }
        bench(&args)
    };
    let o = fit(true);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (side, fv, fc) in [("", 200.0, 20.0), ("negative", 260.0, 16.0)] {
        let p = if side.is_empty() {
            &doc["params"]
        } else {
            &doc["params"][side]
        };
        let e = if side.is_empty() {
            &doc["std_errors"]
        } else {
            &doc["std_errors"][side]
        };
        for (name, truth) in [("fv", fv), ("fc", fc)] {
            let (v, se) = (p[name].as_f64().unwrap(), e[name].as_f64().unwrap());
            assert!((v - truth).abs() < 4.0 * se, "{side}.{name}: {v} ± {se}");
        }
    }
    assert!(doc["ci95"]["negative"]["fv"].is_array(), "{doc}");
    assert_eq!(doc["directions"]["differ"], true, "{doc}");
    assert!(
        doc["verdict"]["directions"]
            .as_str()
            .unwrap()
            .starts_with("the directions differ")
    );
    let v = doc["validation"].as_array().unwrap();
    assert_eq!(v.len(), 2, "{doc}");
    assert_eq!(v[1]["record"], format!("run {id}"));
    let rel = |i: usize| v[i]["rel_error_pct"].as_f64().unwrap();
    assert!(rel(0) > 0.0 && rel(0) < 10.0, "{doc}");
    assert!(
        (rel(0) - rel(1)).abs() < 1e-6 * rel(0),
        "the CSV and the run are one record"
    );
    for key in ["rms", "r2", "n"] {
        assert!(v[0][key].is_number(), "{key}");
    }
    let text = stdout(&fit(false));
    assert!(text.contains("directions: the directions differ"), "{text}");
    assert!(
        text.contains(&format!("held out run {id}: relative error")),
        "{text}"
    );
    // A procedure without a held-out score says so, naming the flag.
    let o = bench(&[
        "fit", "--model", "coulomb_viscous", "--procedure", "static_curve", "--csv",
        temp_file("sv.csv", "v,friction\n0.1,1.1\n0.2,1.2\n0.3,1.3\n0.4,1.4\n-0.1,-1.1\n-0.2,-1.2\n-0.3,-1.3\n-0.4,-1.4\n").to_str().unwrap(),
        "--validate", held.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("--validate"), "{}", stderr(&o));
}
