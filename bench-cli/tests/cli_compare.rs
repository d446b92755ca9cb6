//! `bench compare` on CSV files written by `bench simulate`, and `bench perf fit`.

use crate::util::{bench, stderr, stdout};
use serde_json::Value;

/// Writes a LuGre (non-default parameters) velocity-driven run to a CSV file.
fn simulate_csv(name: &str, velocity: &str) -> String {
    let params = r#"{"sigma0":4e4,"sigma1":150,"sigma2":0.8,"fc":0.7,"fs":1.1,"vs":2.5e-3}"#;
    let scenario = format!(r#"{{"kind":"velocity","velocity":{velocity}}}"#);
    let o = bench(&[
        "simulate",
        "--model",
        "lugre",
        "--params",
        params,
        "--scenario",
        &scenario,
        "--dt",
        "1e-3",
        "--duration",
        "8",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path =
        std::env::temp_dir().join(format!("bench-compare-{}-{name}.csv", std::process::id()));
    std::fs::write(&path, &o.stdout).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn compare_ranks_the_generating_model_first() {
    let est = simulate_csv("est", r#"{"sine":{"amplitude":0.02,"omega":2.0}}"#);
    let val = simulate_csv(
        "val",
        r#"{"sine":{"amplitude":0.05,"omega":3.0,"phase":0.5}}"#,
    );
    let models = "lugre=sigma0+sigma2+fc+fs+vs,coulomb_viscous=fc+fv,stribeck_exp=fc+fs+fv+vs";
    let o = bench(&[
        "compare",
        "--estimate",
        &est,
        "--validate",
        &val,
        "--models",
        models,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["model"], "lugre", "{}", stdout(&o));
    assert_eq!(rows[0]["rank"], 1);
    assert!(
        rows[0]["validation"]["all"].as_f64().unwrap()
            < rows[1]["validation"]["all"].as_f64().unwrap()
    );
    assert!(rows[0]["validation"]["presliding"].as_f64().is_some());
    assert!(rows[0]["validation"]["gross_sliding"].as_f64().is_some());
    assert_eq!(rows[0]["fit"]["provenance"]["procedure"], "output_error");
    assert!(rows[0]["fit"]["params"]["sigma0"].as_f64().is_some());
    assert_eq!(t["estimation_data"][0]["source"], est.as_str());

    let text = bench(&[
        "compare",
        "--estimate",
        &est,
        "--validate",
        &val,
        "--models",
        "lugre=fc+fs,coulomb=none",
    ]);
    assert!(text.status.success(), "{}", stderr(&text));
    let s = stdout(&text);
    assert!(
        s.contains("val.pre") && s.contains("defaults") && s.contains("fc+fs"),
        "{s}"
    );
    for p in [est, val] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn compare_refuses_bad_input_with_exit_code_2() {
    let est = simulate_csv("bad", r#"{"constant":{"value":0.01}}"#);
    let o = bench(&[
        "compare",
        "--estimate",
        &est,
        "--validate",
        &est,
        "--models",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown model 'nope'"),
        "{}",
        stderr(&o)
    );
    let o = bench(&[
        "compare",
        "--estimate",
        &est,
        "--validate",
        &est,
        "--models",
        "lugre=sigma9",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("sigma9"), "{}", stderr(&o));
    let o = bench(&[
        "compare",
        "--estimate",
        "/nonexistent.csv",
        "--validate",
        &est,
        "--models",
        "lugre",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent.csv"), "{}", stderr(&o));
    let o = bench(&["compare", "--help"]);
    assert!(stdout(&o).contains("RUNS are run ids"), "{}", stdout(&o));
    let _ = std::fs::remove_file(est);
}

#[test]
fn perf_fit_prints_figures() {
    let o = bench(&["perf", "fit", "--runs", "2", "--oe-seconds", "2", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    let oe = &d["lugre_output_error"];
    assert_eq!(oe["samples"], 2000);
    assert!(oe["fits"][0]["elapsed_s"].as_f64().unwrap() > 0.0);
    assert!(oe["fits"][1]["threads"] == 1);
}

#[test]
fn fit_output_error_and_aep_from_csv() {
    let csv = simulate_csv("fit", r#"{"sine":{"amplitude":0.02,"omega":2.0}}"#);
    let given = r#"{"fit":["fc","fs","sigma2"],"params":{"sigma0":4e4,"sigma1":150,"vs":2.5e-3}}"#;
    let o = bench(&[
        "fit",
        "--model",
        "lugre",
        "--procedure",
        "output_error",
        "--csv",
        &csv,
        "--given",
        given,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        (r["params"]["fc"].as_f64().unwrap() - 0.7).abs() < 0.007,
        "{r}"
    );
    assert!(
        (r["params"]["fs"].as_f64().unwrap() - 1.1).abs() < 0.011,
        "{r}"
    );
    assert!(r["std_errors"]["fc"].as_f64().unwrap() > 0.0);
    assert_eq!(r["provenance"]["procedure"], "output_error");
    assert_eq!(r["provenance"]["termination"], "converged");
    assert!(r["details"]["evaluations"].as_u64().unwrap() > 0);
    let given = r#"{"fit":["fc","fs"],"bounds":{"fc":[0.1,3],"fs":[0.1,3]},"generations":20,"population":8,"params":{"sigma0":4e4,"sigma1":150,"vs":2.5e-3,"sigma2":0.8}}"#;
    let o = bench(&[
        "fit",
        "--model",
        "lugre",
        "--procedure",
        "aep",
        "--csv",
        &csv,
        "--given",
        given,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("fc = "), "{}", stdout(&o));
    let o = bench(&[
        "fit",
        "--model",
        "lugre",
        "--procedure",
        "output_error",
        "--csv",
        &csv,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("given.fit"), "{}", stderr(&o));
    let _ = std::fs::remove_file(csv);
}
