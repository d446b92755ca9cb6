//! `bench fit --run`, `bench params` and `bench compare` with run ids, on runs recorded from the
//! simulated plant into a temp database (issue 5).

use crate::util::{bench, record_sim_run, stderr, stdout};
use friction::registry::{ModelSpec, build_model};
use run_store::Store;
use serde_json::{Value, json};
use std::path::Path;

/// An asymmetric static map with a Stribeck dip wide enough for the sweep's velocities and
/// gentle enough for the velocity PI (the negative levels at 80 %, as the sim's default truth).
fn truth() -> ModelSpec {
    ModelSpec {
        model: "static_armstrong".into(),
        params: json!({"fc": 0.6, "fs": 0.8, "fv": 0.3, "vs": 1.0, "delta": 1.0,
                       "negative": {"fc": 0.48, "fs": 0.64}}),
    }
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Runtime::new().unwrap().block_on(f)
}

fn json_out(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap()
}

fn db_arg(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// The quick sweep of `experiments/specs/` (±0.05..2 rad/s, 1 s measured per point) on the
/// sim; `static_curve` from the run's Stribeck points gives a loadable parameter set whose
/// steady-state curve matches the sim's truth at every swept velocity.
///
/// Tolerance 0.2 % of the level + 1 mN m: each point averages 1000 sensor readings of 2 mN m
/// noise quantised to 1 mN m (standard error < 0.1 mN m, the quantisation dithered away by the
/// noise), the fit is evaluated at the measured mean speed, and the friction map is static, so
/// the mean torque is the curve's level; what is left is the fitted shape (five parameters per
/// direction through eight points), which misses by at most about 0.5 mN m (0.06 %) here.
#[test]
fn static_curve_from_a_sweep_run_recovers_the_true_levels_and_saves_a_loadable_set() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let (store, id) = block_on(async {
        let store = Store::open(&db).await.unwrap();
        let id = record_sim_run(&store, "constant_velocity_sweep.json", &truth())
            .await
            .id;
        (store, id)
    });
    let true_model = build_model(&truth()).unwrap();
    let out = json_out(&bench(&[
        "fit",
        "--model",
        "static_armstrong",
        "--procedure",
        "static_curve",
        "--run",
        &id.to_string(),
        "--db",
        &db_arg(&db),
        "--json",
    ]));
    let set_id = out["parameter_set_id"].as_i64().expect("parameter_set_id");
    assert_eq!(
        out["parameter_set_name"],
        format!("static_armstrong-run{id}-static_curve")
    );
    assert!(out["params"]["negative"]["fc"].is_number(), "{out:#}");

    let (set, results) = block_on(async {
        let set = store.parameter_set(set_id).await.unwrap();
        let run = store.run(id).await.unwrap();
        (set, run.results.unwrap())
    });
    assert_eq!(set.model_id, "static_armstrong");
    assert_eq!(set.provenance["runs"], json!([id]));
    assert_eq!(set.provenance["procedure"], "static_curve");
    let fitted = build_model(&ModelSpec {
        model: set.model_id.clone(),
        params: set.params.clone(),
    })
    .expect("the stored set builds");
    let points: Vec<&Value> = ["positive", "negative"]
        .iter()
        .flat_map(|d| results[d].as_array().unwrap())
        .collect();
    assert_eq!(points.len(), 16);
    for p in points {
        let v = p["velocity_rad_s"].as_f64().unwrap();
        let truth = true_model.steady_state(v).unwrap();
        let fit = fitted.steady_state(v).unwrap();
        println!("v {v:+.4}: fitted {fit:+.5}, truth {truth:+.5}");
        assert!(
            (fit - truth).abs() < 0.002 * truth.abs() + 1e-3,
            "v {v}: fitted {fit} vs truth {truth}\n{:#}",
            set.params
        );
    }

    // `bench params` shows it by id and by name.
    let db = db_arg(&db);
    let shown = json_out(&bench(&[
        "params",
        "show",
        &set_id.to_string(),
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(shown["params"], set.params);
    let name = format!("static_armstrong-run{id}-static_curve");
    let by_name = json_out(&bench(&["params", "show", &name, "--db", &db, "--json"]));
    assert_eq!(by_name["id"], set_id);
    let list = json_out(&bench(&[
        "params",
        "list",
        "--model",
        "static_armstrong",
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(list.as_array().unwrap().len(), 1);
}

/// A run the procedure cannot use, and unknown run ids: exit 2 naming them, nothing stored.
#[test]
fn a_wrong_kind_or_unknown_run_exits_2_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let ramp = block_on(async {
        let store = Store::open(&path).await.unwrap();
        let run = run_store::NewRun {
            kind: "torque_ramp".into(),
            name: "ramp".into(),
            software_version: "test".into(),
            ..run_store::NewRun::default()
        };
        store.create_run(&run).await.unwrap()
    });
    let db = db_arg(&path);
    let fit = |run: &str| {
        bench(&[
            "fit",
            "--model",
            "lugre",
            "--procedure",
            "static_curve",
            "--run",
            run,
            "--db",
            &db,
        ])
    };
    let o = fit(&ramp.to_string());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("'torque_ramp'") && err.contains("constant_velocity_sweep"),
        "{err}"
    );
    let o = fit("99");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--run: run 99 not found"),
        "{}",
        stderr(&o)
    );
    let o = bench(&[
        "compare",
        "--estimate",
        "99",
        "--validate",
        "99",
        "--models",
        "coulomb_viscous",
        "--db",
        &db,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--estimate: run 99 not found"),
        "{}",
        stderr(&o)
    );
    let sets = json_out(&bench(&["params", "list", "--db", &db, "--json"]));
    assert_eq!(sets, json!([]));
    let shown = json_out(&bench(&[
        "runs",
        "show",
        &ramp.to_string(),
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(shown["comparisons"], json!([]));
}

/// `bench compare` on run ids stores the table with both runs, and `bench runs show` lists it.
#[test]
fn compare_with_run_ids_stores_the_table_and_runs_show_lists_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let (est, val) = block_on(async {
        let store = Store::open(&path).await.unwrap();
        let est = record_sim_run(&store, "validation_profile.json", &truth()).await;
        let val = record_sim_run(&store, "torque_ramp.json", &truth()).await;
        (est.id, val.id)
    });
    let db = db_arg(&path);
    let out = json_out(&bench(&[
        "compare",
        "--estimate",
        &est.to_string(),
        "--validate",
        &val.to_string(),
        "--models",
        "coulomb_viscous,static_armstrong=none",
        "--db",
        &db,
        "--json",
    ]));
    let cid = out["comparison_id"].as_i64().expect("comparison_id");
    assert_eq!(out["rows"].as_array().unwrap().len(), 2);
    for run in [est, val] {
        let shown = json_out(&bench(&[
            "runs",
            "show",
            &run.to_string(),
            "--db",
            &db,
            "--json",
        ]));
        let list = shown["comparisons"].as_array().unwrap();
        assert_eq!(list.len(), 1, "{shown:#}");
        assert_eq!(list[0]["id"], cid);
        assert_eq!(list[0]["estimate_runs"], json!([est]));
        assert_eq!(list[0]["validate_runs"], json!([val]));
        assert_eq!(list[0]["table"]["rows"], out["rows"]);
        assert_eq!(
            shown["kind"],
            if run == est {
                "validation_profile"
            } else {
                "torque_ramp"
            }
        );
    }
    let text = stdout(&bench(&["runs", "show", &val.to_string(), "--db", &db]));
    assert!(text.contains(&format!("    {cid} (")), "{text}");

    // A time-series procedure on part of a run: segments 1..3 of the validation profile are
    // its 2 s ramp and 0.5 s hold (2500 samples at 1 kHz); the selection goes into provenance.
    let fit = json_out(&bench(&[
        "fit",
        "--model",
        "coulomb_viscous",
        "--procedure",
        "power_rls",
        "--run",
        &est.to_string(),
        "--segments",
        "1..3",
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(fit["provenance"]["n_points"], 2500, "{fit:#}");
    let set = json_out(&bench(&[
        "params",
        "show",
        &fit["parameter_set_id"].to_string(),
        "--db",
        &db,
        "--json",
    ]));
    assert_eq!(set["provenance"]["selection"], json!({"segments": "1..3"}));
    assert_eq!(set["provenance"]["runs"], json!([est]));
}
