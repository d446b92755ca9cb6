//! `bench models`, `bench simulate`, `bench perf models`.

use crate::util::{bench, stderr, stdout};
use serde_json::Value;

const SPRING: &str = r#"{"kind":"spring_pull","mass":1,"stiffness":2,"pull_velocity":0.1}"#;

#[test]
fn models_json_lists_every_model_with_units_and_defaults() {
    let o = bench(&["models", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let models = doc.as_array().unwrap();
    assert_eq!(models.len(), friction::registry::MODELS.len());
    let lugre = models
        .iter()
        .find(|m| m["id"] == "lugre")
        .expect("lugre listed");
    let sigma0 = lugre["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "sigma0")
        .unwrap();
    assert_eq!(sigma0["unit"], "N/m");
    assert_eq!(sigma0["default"], 1e5);
    assert!(!lugre["description"].as_str().unwrap().is_empty());
    let text = bench(&["models"]);
    assert!(stdout(&text).contains("sigma0"));
}

#[test]
fn simulate_writes_the_csv_header_then_rows_every_n_steps() {
    let o = bench(&[
        "simulate",
        "--model",
        "lugre",
        "--scenario",
        SPRING,
        "--dt",
        "1e-3",
        "--duration",
        "1",
        "--every",
        "100",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("t,x,v,u,friction,z"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 11);
    assert_eq!(rows[1][0], 0.1);
    assert!(
        rows.iter()
            .all(|r| r.len() == 6 && r.iter().all(|x| x.is_finite()))
    );
}

#[test]
fn simulate_json_has_columns_and_data() {
    let params = r#"{"fs": 2.0}"#;
    let o = bench(&[
        "simulate",
        "--model",
        "lugre",
        "--params",
        params,
        "--scenario",
        SPRING,
        "--dt",
        "1e-3",
        "--duration",
        "0.01",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["params"]["fs"], 2.0);
    assert_eq!(doc["data"]["t"].as_array().unwrap().len(), 11);
    assert_eq!(doc["columns"][4], "friction");
}

#[test]
fn simulate_reads_params_and_scenario_from_files() {
    let dir = std::env::temp_dir().join(format!("fb-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("p.json");
    let s = dir.join("s.json");
    std::fs::write(&p, r#"{"fc": 0.5, "fs": 0.7}"#).unwrap();
    std::fs::write(
        &s,
        r#"{"kind":"velocity","velocity":{"constant":{"value":1.0}}}"#,
    )
    .unwrap();
    let o = bench(&[
        "simulate",
        "--model",
        "lugre",
        "--params",
        &format!("@{}", p.display()),
        "--scenario",
        &format!("@{}", s.display()),
        "--dt",
        "1e-3",
        "--duration",
        "1",
        "--every",
        "1000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let last: Vec<f64> = stdout(&o)
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    // Steady state at 1 m/s: fc + sigma2 v = 0.5 + 0.4.
    assert!((last[4] - 0.9).abs() < 1e-9, "{last:?}");
}

/// Bad input is one line on stderr naming the field and the rule, and exit code 2.
#[test]
fn simulate_errors_are_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--model", "nope", "--scenario", SPRING],
            "unknown model 'nope'",
        ),
        (
            &[
                "--model",
                "lugre",
                "--params",
                r#"{"sigma0": -5}"#,
                "--scenario",
                SPRING,
            ],
            "sigma0 (-5) must be > 0",
        ),
        (
            &[
                "--model",
                "lugre",
                "--params",
                r#"{"fs": 0.5}"#,
                "--scenario",
                SPRING,
            ],
            "fs (0.5) must be >= fc (1)",
        ),
        (
            &[
                "--model",
                "lugre",
                "--params",
                r#"{"sigma": 1}"#,
                "--scenario",
                SPRING,
            ],
            "unknown parameter 'sigma'",
        ),
        (
            &[
                "--model",
                "lugre",
                "--params",
                "{nope",
                "--scenario",
                SPRING,
            ],
            "--params: inline JSON is not valid JSON",
        ),
        (
            &[
                "--model",
                "lugre",
                "--scenario",
                r#"{"kind":"spring_pull","mass":0,"stiffness":2,"pull_velocity":0.1}"#,
            ],
            "mass (0) must be > 0",
        ),
        (
            &["--model", "lugre", "--scenario", r#"{"kind":"teleport"}"#],
            "unknown variant `teleport`",
        ),
        (
            &[
                "--model",
                "lugre",
                "--scenario",
                r#"{"kind":"force","mass":1,"force":{"samples":{"t":[0,0],"value":[1,2]}}}"#,
            ],
            "force.samples.t must be strictly increasing",
        ),
        (
            &[
                "--model",
                "lugre",
                "--scenario",
                "@/nonexistent/scenario.json",
            ],
            "cannot read /nonexistent/scenario.json",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["simulate"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--dt", "1e-3", "--duration", "1"]);
        let o = bench(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: wrote to stdout");
    }
    let o = bench(&[
        "simulate",
        "--model",
        "lugre",
        "--scenario",
        SPRING,
        "--dt",
        "0",
        "--duration",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--dt (0) must be > 0"));
}

#[test]
fn perf_models_json_has_the_documented_keys() {
    let o = bench(&["perf", "models", "--json", "--samples", "2000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let per = doc["per_model_ns"].as_object().unwrap();
    assert_eq!(per.len(), friction::registry::MODELS.len());
    assert!(per.values().all(|v| v.as_f64().unwrap() > 0.0));
    assert!(doc["all_models_ns_per_sample"].as_f64().unwrap() > 0.0);
    assert!(doc["replay_1h_1khz_s"].as_f64().unwrap() > 0.0);
}
