//! `bench compare --replay inverse`: models ranked by their IDIM-LS inverse-model force on
//! `t, x, u` records alone, from CSV files and from imported runs (issue 43).

use crate::util::{bench, stderr};
use friction::identify::procedures::synthetic::{BallScrew, Excitation};
use serde_json::Value;
use std::path::Path;

/// A simulated closed-loop axis (friction per direction) as a `t,x,u` CSV file.
fn record(dir: &Path, name: &str, excitation: Excitation, seed: u64) -> String {
    let t = BallScrew {
        negative: Some((260.0, 16.0)),
        offset: 0.0,
        excitation,
        seed,
        duration: 20.0,
        ..BallScrew::default()
    }
    .simulate()
    .unwrap();
    let (ts, x, u) = (
        t.get("t").unwrap(),
        t.get("x").unwrap(),
        t.get("u").unwrap(),
    );
    let mut text = String::from("t,x,u\n");
    for ((t, x), u) in ts.iter().zip(x).zip(u) {
        text.push_str(&format!("{t},{x},{u}\n"));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn compare(args: &[&str]) -> Value {
    let mut all = vec![
        "compare",
        "--models",
        "coulomb_viscous,stribeck_exp",
        "--replay",
        "inverse",
        "--given",
        r#"{"asymmetric": true, "force_held": true}"#,
        "--json",
    ];
    all.extend_from_slice(args);
    let o = bench(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Every row fitted and scored, the fitted sets per direction, the residual a force.
fn check(t: &Value) {
    assert_eq!(t["residual"], "force [N m] (the inverse model's)", "{t}");
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert!(r["error"].is_null(), "{r}");
        assert!(r["validation"]["all"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["params"]["negative"]["fc"].is_number(), "{r}");
    }
}

#[test]
fn the_inverse_comparison_ranks_models_on_csv_files_and_imported_runs() {
    let dir = tempfile::tempdir().unwrap();
    let est = record(dir.path(), "moves.csv", Excitation::Moves, 1);
    let val = record(
        dir.path(),
        "sines.csv",
        Excitation::Sines { pulse: 40.0 },
        7,
    );
    check(&compare(&["--estimate", &est, "--validate", &val]));

    // The same files imported as runs: compared by id, and stored with them.
    let db = dir.path().join("runs.db").display().to_string();
    let import = |file: &str| {
        let o = bench(&["runs", "import", file, "--db", &db, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["run_id"].as_i64().unwrap().to_string()
    };
    let (e, v) = (import(&est), import(&val));
    let t = compare(&["--estimate", &e, "--validate", &v, "--db", &db]);
    check(&t);
    assert!(t["comparison_id"].is_number(), "{t}");

    // Options for the inverse model only, and one estimation record.
    let o = bench(&[
        "compare",
        "--estimate",
        &est,
        "--validate",
        &val,
        "--models",
        "coulomb_viscous",
        "--given",
        r#"{"force_held": true}"#,
    ]);
    assert!(
        stderr(&o).contains("given is for the inverse comparison (--replay inverse)"),
        "{}",
        stderr(&o)
    );
    let o = bench(&[
        "compare",
        "--estimate",
        &format!("{est},{est}"),
        "--validate",
        &val,
        "--models",
        "coulomb_viscous",
        "--replay",
        "inverse",
    ]);
    assert!(
        stderr(&o).contains("estimate takes one record for the inverse model (got 2)"),
        "{}",
        stderr(&o)
    );
}
