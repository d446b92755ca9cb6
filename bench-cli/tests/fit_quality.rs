//! Fits that say how good they are, and lockstep models on the bench's own parameters (issue
//! 17), end to end on the simulated bench in simulated time (the daemon's control loop on the
//! plant, [`crate::util::SimBench`]): a sweep recorded through it, `bench fit` on it against
//! the simulator's known truth, and runs (`bench run --sim --virtual-time`) whose lockstep
//! models take the newest fitted parameter set.

use crate::util::{SimBench, bench, db_in, fit_run, show, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

/// A sweep dense in the Stribeck region (truth v_s = 0.1 rad/s) and reaching the viscous one,
/// so the five shape parameters per direction are determined: 10 speeds per direction, from
/// 0.04 rad/s (the slowest the stiff drive below holds without stick-slip in both directions).
const SWEEP: &str = r#"{
  "kind": "constant_velocity_sweep",
  "name": "stribeck sweep for fit quality",
  "params": {
    "velocities": [0.04, 0.05, 0.06, 0.08, 0.1, 0.13, 0.17, 0.25, 0.5, 1.0],
    "directions": "both",
    "settle_s": 1.0,
    "measure_s": 0.8,
    "repeats": 1
  }
}"#;

fn json_out(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap()
}

/// The simulated drive with a velocity loop stiff enough to hold speeds inside the Stribeck
/// dip: its default (kp 0.3 N m s/rad) is weaker than the truth's steepest negative slope
/// (about 4.3 N m s/rad at v = v_s/sqrt(2)), so below about 0.2 rad/s the shipped bench
/// stick-slips (measured: torque std 0.13 N m, mean speed far from the set point). kp = 6
/// holds them; a 2 ms velocity filter keeps encoder quantisation from dithering the friction
/// (with kp 8 and the default 1 ms the mean torque at 0.05 rad/s read 6 % below the curve; with
/// 3 ms the loop rang at 0.13-0.5 rad/s; with 2 ms every point from 0.04 rad/s up lay within
/// 1 % of the curve, std 2-12 mN m). Below 0.04 rad/s the negative direction still stick-slips.
const STIFF_DRIVE: &str = r#"{"velocity_kp": 6, "velocity_ki": 150, "velocity_filter_s": 0.002}"#;

/// Runs of the simulated bench with the stiff drive, recorded once for the tests of this file
/// (each works on its own copy of the database): the sweep above, the quick presliding run
/// and the quick validation profile.
struct StiffRuns {
    db: std::path::PathBuf,
    sweep: i64,
    presliding: i64,
    validation: i64,
}

impl StiffRuns {
    fn get() -> &'static StiffRuns {
        static RUNS: std::sync::OnceLock<StiffRuns> = std::sync::OnceLock::new();
        RUNS.get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("fit-quality-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let db = dir.join("runs.db");
            let _ = std::fs::remove_file(&db);
            let stiff: Value = serde_json::from_str(STIFF_DRIVE).unwrap();
            let bench = SimBench {
                params: serde_json::from_value(stiff).unwrap(),
                ..SimBench::default()
            };
            let db_text = db.display().to_string();
            let run = |spec: &str| bench.run_into(&db_text, spec, "completed").id;
            let quick = |name: &str| std::fs::read_to_string(crate::util::spec(name)).unwrap();
            StiffRuns {
                sweep: run(SWEEP),
                presliding: run(&quick("presliding.json")),
                validation: run(&quick("validation_profile.json")),
                db,
            }
        })
    }

    /// A copy of the database in `dir`; its path.
    fn copy_into(&self, dir: &tempfile::TempDir) -> String {
        let to = db_in(dir);
        std::fs::copy(&self.db, &to).unwrap();
        let wal = self.db.with_extension("db-wal");
        if wal.exists() {
            std::fs::copy(&wal, format!("{to}-wal")).unwrap();
        }
        to
    }
}

/// `bench run SPEC --sim --virtual-time --db DB --json`; the outcome line.
fn run_on(dir: &Path, spec: &str, db: &str) -> Value {
    let path = dir.join(format!("spec-{}.json", spec.len()));
    std::fs::write(&path, spec).unwrap();
    let path = path.to_str().unwrap();
    let o = bench(&["run", path, "--sim", "--virtual-time", "--db", db, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.starts_with('{')).expect("outcome");
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["status"], "completed", "{v}");
    v
}

/// The simulator's true Stribeck parameters per direction: `(fc, fs, vs)`.
fn truth() -> [(f64, f64, f64); 2] {
    let p = bench_sim::default_truth().params;
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let vs = f(&p, "vs");
    [
        (f(&p, "fc"), f(&p, "fs"), vs),
        (f(&p["negative"], "fc"), f(&p["negative"], "fs"), vs),
    ]
}

/// Recovering the truth within 5 % per direction: each sweep point averages 800 sensor
/// readings (2 mN m noise), and with the stiff drive the points lie within about 1 % of the
/// true steady-state curve; a five-parameter exponential Stribeck curve through ten such points
/// per direction pins f_c and f_s to a few per cent (f_s is extrapolated from 0.04 rad/s, where
/// the Gaussian truth has fallen 15 % of the way to f_c) and v_s, which the truth (delta = 2)
/// and the fitted exponent share, to within 5 % as well.
#[test]
fn a_static_fit_of_a_sim_sweep_recovers_the_truth_and_says_it_is_ok() {
    let dir = tempfile::tempdir().unwrap();
    let runs = StiffRuns::get();
    let db = runs.copy_into(&dir);
    let id = runs.sweep.to_string();
    let rep = json_out(&bench(&[
        "fit",
        "--model",
        "stribeck_exp",
        "--procedure",
        "static_curve",
        "--run",
        &id,
        "--db",
        &db,
        "--json",
    ]));
    for (set, (fc, fs, vs)) in [&rep["params"], &rep["params"]["negative"]]
        .into_iter()
        .zip(truth())
    {
        for (name, t) in [("fc", fc), ("fs", fs), ("vs", vs)] {
            let got = set[name].as_f64().unwrap();
            eprintln!(
                "static_curve {name}: fitted {got:.4}, truth {t} ({:+.2} %)",
                100.0 * (got - t) / t
            );
            assert!(
                (got - t).abs() <= 0.05 * t,
                "{name}: fitted {got}, truth {t} (5 %)\n{rep:#}"
            );
        }
    }
    // The quality keys, and the verdict a clean fit earns.
    assert_eq!(rep["termination"], "converged", "{rep:#}");
    assert_eq!(rep["at_bound"], json!([]), "{rep:#}");
    assert!(rep["condition"].as_f64().unwrap() >= 1.0, "{rep:#}");
    let rel_fs = rep["relative_std_errors"]["fs"].as_f64().unwrap();
    assert!(rel_fs > 0.0 && rel_fs < 0.05, "{rep:#}");
    assert_eq!(
        rep["verdict"],
        json!({"status": "ok", "reasons": []}),
        "{rep:#}"
    );
    // The stored set carries the same quality in its provenance.
    let set_id = rep["parameter_set_id"].as_i64().unwrap().to_string();
    let set = json_out(&bench(&["params", "show", &set_id, "--db", &db, "--json"]));
    let prov = &set["provenance"];
    assert_eq!(prov["verdict"]["status"], "ok", "{prov:#}");
    assert_eq!(prov["termination"], "converged", "{prov:#}");
    assert!(
        prov["relative_std_errors"]["negative"]["fc"].is_number(),
        "{prov:#}"
    );
    assert!(prov["condition"].is_number(), "{prov:#}");
    // Printed in the bench's units (rotary by default), with the verdict.
    let text = stdout(&bench(&["params", "show", &set_id, "--db", &db]));
    assert!(text.contains("verdict:    ok"), "{text}");
    assert!(
        text.contains(" N m s/rad") && text.contains(" rad/s"),
        "{text}"
    );
    let o = bench(&[
        "fit",
        "--model",
        "stribeck_exp",
        "--procedure",
        "static_curve",
        "--run",
        &id,
        "--db",
        &db,
        "--name",
        "text",
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("verdict: ok"), "{text}");
    assert!(text.contains("termination: converged"), "{text}");
    let fc_line = text.lines().find(|l| l.starts_with("fc = ")).unwrap();
    assert!(fc_line.contains(" N m  ± "), "{fc_line}");
    // A linear bench labels the same numbers in N and m/s.
    let cfg = dir.path().join("linear.toml");
    let sim = std::fs::read_to_string(format!(
        "{}/../bench-daemon/config/sim.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    std::fs::write(&cfg, format!("geometry = \"linear\"\n{sim}")).unwrap();
    let text = stdout(&bench(&[
        "params",
        "show",
        &set_id,
        "--db",
        &db,
        "--config",
        cfg.to_str().unwrap(),
    ]));
    assert!(text.contains("vs = ") && text.contains(" m/s"), "{text}");
    assert!(!text.contains("rad/s"), "{text}");
}

/// The stored parameter set of a fit report.
fn stored_set(db: &str, report: &Value) -> Value {
    let id = report["parameter_set_id"].as_i64().unwrap().to_string();
    json_out(&bench(&["params", "show", &id, "--db", db, "--json"]))["params"].clone()
}

/// The truth's total presliding stiffness Σk \[N m/rad\].
fn true_sum_k() -> f64 {
    bench_sim::default_truth().params["k"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_f64().unwrap())
        .sum()
}

/// Prints a row of the closing note's table and returns the relative error.
fn compared(what: &str, got: f64, truth: f64) -> f64 {
    let err = (got - truth) / truth;
    eprintln!(
        "{what}: fitted {got:.4}, truth {truth} ({:+.2} %)",
        100.0 * err
    );
    err
}

/// The dynamic models identified in the manual's order (identification.md#order) from a
/// sweep and a presliding run: GMS gets its Stribeck curve from `static_curve` and its
/// elements from `maxwell_slip` (the stored set whole: curve and elements), LuGre its curve
/// from `static_curve` and `sigma0` from `presliding_sine`. Tolerances: the static curve
/// within 5 % per direction (see the test above), Σk within 10 % (the reversal curves give
/// it to about 2 %: 985 ± 13 N m/rad on one run), LuGre sane (f_s > f_c, v_s within a factor
/// 2). On the validation profile, LuGre on these values (its `sigma1` fitted on the
/// presliding run) predicts the friction better than Coulomb + viscous fitted the same way.
#[test]
fn gms_and_lugre_identified_in_the_manuals_order_match_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let runs = StiffRuns::get();
    let db = runs.copy_into(&dir);
    let sides = |p: &Value| [p.clone(), p["negative"].clone()];

    fit_run(&db, "gms", "static_curve", runs.sweep, None);
    let rep = fit_run(&db, "gms", "maxwell_slip", runs.presliding, None);
    assert_eq!(rep["verdict"]["status"], "ok", "{rep:#}");
    let sum_k = rep["details"]["sum_k"].as_f64().unwrap();
    assert!(
        compared("maxwell_slip sum k", sum_k, true_sum_k()).abs() < 0.10,
        "{rep:#}"
    );
    let gms = stored_set(&db, &rep);
    let stored_k: f64 = gms["k"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_f64().unwrap())
        .sum();
    assert!((stored_k - sum_k).abs() < 1e-9 * sum_k, "{gms:#}");
    for (side, (p, (fc, fs, vs))) in sides(&gms).iter().zip(truth()).enumerate() {
        for (name, t) in [("fc", fc), ("fs", fs), ("vs", vs)] {
            let got = p[name].as_f64().unwrap();
            let what = format!("gms set {name} (side {side})");
            assert!(compared(&what, got, t).abs() <= 0.05, "{gms:#}");
        }
    }

    fit_run(&db, "lugre", "static_curve", runs.sweep, None);
    let rep = fit_run(&db, "lugre", "presliding_sine", runs.presliding, None);
    let sigma0 = rep["params"]["sigma0"].as_f64().unwrap();
    assert!(
        compared("presliding_sine sigma0", sigma0, true_sum_k()).abs() < 0.10,
        "{rep:#}"
    );
    let lugre = stored_set(&db, &rep);
    for (p, (_, _, vs)) in sides(&lugre).iter().zip(truth()) {
        let f = |n: &str| p[n].as_f64().unwrap();
        assert!(f("fs") > f("fc"), "{lugre:#}");
        assert!(f("vs") > vs / 2.0 && f("vs") < vs * 2.0, "{lugre:#}");
        assert_eq!(f("sigma0"), sigma0, "{lugre:#}");
    }

    let table = json_out(&bench(&[
        "compare",
        "--estimate",
        &runs.presliding.to_string(),
        "--validate",
        &runs.validation.to_string(),
        "--models",
        "lugre=sigma1,coulomb_viscous",
        "--db",
        &db,
        "--json",
    ]));
    let rows = table["rows"].as_array().unwrap();
    let val = |m: &str| {
        let row = rows.iter().find(|r| r["model"] == m).unwrap();
        (
            row["rank"].as_i64().unwrap(),
            row["validation"]["all"].as_f64().unwrap(),
        )
    };
    eprintln!(
        "validation MSE: lugre {:?}, coulomb_viscous {:?}",
        val("lugre"),
        val("coulomb_viscous")
    );
    assert_eq!(val("lugre").0, 1, "{table:#}");
    assert!(val("lugre").1 < val("coulomb_viscous").1, "{table:#}");
    // The comparison started LuGre from the bench's fits and says which.
    let run = show(&db, runs.presliding);
    let starts = &run["comparisons"][0]["options"]["start_from"]["lugre"];
    assert_eq!(starts.as_array().map(Vec::len), Some(2), "{run:#}");
}

/// A lockstep model set to `"latest"` (in the spec or by default) runs on the newest
/// parameter set of that model, and the run records which set it used.
#[test]
fn lockstep_latest_uses_and_records_the_newest_parameter_set() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let short = |lockstep: Value| {
        json!({
            "kind": "constant_velocity_sweep",
            "name": "short",
            "params": {"velocities": [0.5], "directions": "positive", "settle_s": 0.3, "measure_s": 0.2, "repeats": 1},
            "lockstep": lockstep,
        })
        .to_string()
    };
    // No set of the model yet: "latest" is refused, naming the field, before any run exists.
    let path = dir.path().join("latest.json");
    std::fs::write(
        &path,
        short(json!({"models": ["stribeck_exp"], "params": {"stribeck_exp": "latest"}})),
    )
    .unwrap();
    let o = bench(&["run", path.to_str().unwrap(), "--sim", "--db", &db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("spec lockstep.params stribeck_exp = \"latest\": no parameter set of model 'stribeck_exp'"),
        "{}",
        stderr(&o)
    );
    let runs = json_out(&bench(&["runs", "list", "--db", &db, "--json"]));
    assert_eq!(runs["runs"].as_array().map_or(0, Vec::len), 0, "{runs}");
    // Two sets of the model: the newer one is used.
    let (old, new) = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = run_store::Store::open(Path::new(&db)).await.unwrap();
        let p = |fc: f64| json!({"fc": fc, "fs": fc * 1.5, "fv": 0.05, "vs": 0.1, "delta": 2.0});
        let old = store
            .add_parameter_set("old", "stribeck_exp", &p(0.7), &json!({}))
            .await
            .unwrap();
        let new = store
            .add_parameter_set("new", "stribeck_exp", &p(0.95), &json!({}))
            .await
            .unwrap();
        store.close().await;
        (old, new)
    });
    assert!(new > old);
    let out = run_on(
        dir.path(),
        &short(
            json!({"models": ["stribeck_exp", "coulomb_viscous"], "params": {"stribeck_exp": "latest"}}),
        ),
        &db,
    );
    let run = show(&db, out["run_id"].as_i64().unwrap());
    // `--sim` runs are the simulated bench's.
    assert_eq!(run["bench_id"], "sim", "{run:#}");
    let cfg = &run["bench_config"];
    assert_eq!(
        cfg["lockstep_resolved"][0]["params"]["fc"],
        json!(0.95),
        "{cfg:#}"
    );
    assert_eq!(
        cfg["lockstep_sets"],
        json!([
            {"model": "stribeck_exp", "source": "latest", "set_id": new, "set_name": "new"},
            {"model": "coulomb_viscous", "source": "defaults"},
        ]),
        "{cfg:#}"
    );
    assert_eq!(
        run["models"],
        json!([
            "stribeck_exp",
            "coulomb_viscous",
            "stribeck_exp:x_plant",
            "coulomb_viscous:x_plant"
        ]),
        "{run:#}"
    );
    // Without a spec choice, the bench's models take their newest set by default.
    let out = run_on(dir.path(), &short(Value::Null), &db);
    let run = show(&db, out["run_id"].as_i64().unwrap());
    let sets = run["bench_config"]["lockstep_sets"]
        .as_array()
        .unwrap()
        .clone();
    let strib = sets.iter().find(|s| s["model"] == "stribeck_exp").unwrap();
    assert_eq!(strib["set_id"], json!(new), "{sets:?}");
    assert!(
        sets.iter()
            .filter(|s| s["model"] != "stribeck_exp")
            .all(|s| s["source"] == "defaults"),
        "{sets:?}"
    );
}
