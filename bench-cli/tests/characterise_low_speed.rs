//! The shipped low-speed bench (`bench-daemon/config/sim-low-speed.toml`: a 20-bit encoder and
//! its own plant) under `bench characterise`, in simulated time: a LuGre truth whose Stribeck
//! fall lies below the default bench's slowest held speed is measured, and the low-speed sine
//! tells its presliding stiffness and damping.

use crate::characterise::{characterise_sim, check_curve, err_pct};
use crate::util::{db_in, stderr, stdout};
use serde_json::Value;

/// The flags of the shipped low-speed bench: its configuration and its simulated plant.
pub(crate) const LOW_SPEED_BENCH: [&str; 4] = [
    "--config",
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../bench-daemon/config/low-speed-bench.toml"
    ),
    "--sim-params",
    concat!(
        "@",
        env!("CARGO_MANIFEST_DIR"),
        "/../bench-daemon/config/low-speed-bench.sim.json"
    ),
];

/// `bench characterise --sim --json` of `models` on the shipped low-speed bench with a LuGre
/// truth of `vs` 0.05 rad/s: the campaign's JSON.
fn low_speed_lugre_campaign(models: &str) -> Value {
    const LUGRE: &str = r#"{"fc":0.6,"fs":0.9,"vs":0.05,"sigma0":2000,"sigma1":60,"sigma2":0.04}"#;
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let o = characterise_sim(
        ("lugre", LUGRE),
        models,
        &[&LOW_SPEED_BENCH[..], &["--db", &db, "--json"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).split_once('\n').unwrap().1).unwrap()
}

/// The shipped low-speed bench (`config/low-speed-bench.toml` with its plant,
/// `low-speed-bench.sim.json`: a flywheel of 5e-2 kg m², a 20-bit encoder, loop gains from
/// the inertia and the encoder): its loops hold the Stribeck fall of a LuGre truth with `vs`
/// 0.05 rad/s, which the shipped bench cannot, so the sweep measures it and the static fit
/// finds `fc`, `fs` per direction and `vs` from the held points (the Stribeck curve only, to
/// keep the test cheap; the LuGre fits are the same as on any bench).
#[test]
fn the_low_speed_bench_holds_a_lugre_fall_below_its_stribeck_velocity_and_measures_vs() {
    let c = low_speed_lugre_campaign("stribeck_exp");
    // The sweep held every point (none stick-slipping), 4 of its 6 below its estimate of vs
    // under the true vs.
    let sweep = &c["steps"][2]["results"];
    for d in ["positive", "negative"] {
        let points = sweep[d].as_array().unwrap();
        assert!(points.iter().all(|p| p["stick_slip"] == false), "{sweep}");
        let below = points
            .iter()
            .filter(|p| p["setpoint_rad_s"].as_f64().unwrap().abs() < 0.05)
            .count();
        assert!(below >= 4, "{sweep}");
    }
    let fit = c["fits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["model"] == "stribeck_exp" && f["procedure"] == "static_curve")
        .unwrap();
    assert!(fit["note"].is_null(), "{fit}");
    let p = &fit["report"]["params"];
    let get = |k: &str| p[k].as_f64().unwrap();
    let neg = |k: &str| p["negative"][k].as_f64().unwrap_or(get(k));
    check_curve(
        "low-speed bench, lugre vs 0.05",
        get,
        neg,
        (0.6, 0.9, 0.05),
        "",
    );
}

/// On the low-speed bench the presliding sine gives LuGre's `sigma0` and `sigma1` (the bristle
/// loop corrected, `presliding_sine` given the static fit's `fs`): each within two standard
/// errors of the truth, the standard errors a few percent, no damping step by output error
/// after it, and LuGre's validation MSE that of the truth.
#[test]
fn the_low_speed_sine_tells_lugres_stiffness_and_damping_within_their_errors() {
    let c = low_speed_lugre_campaign("lugre");
    let fits = c["fits"].as_array().unwrap();
    let sine = fits
        .iter()
        .find(|f| f["procedure"] == "presliding_sine")
        .unwrap();
    let report = &sine["report"];
    for (name, truth) in [("sigma0", 2000.0), ("sigma1", 60.0)] {
        let got = report["params"][name].as_f64().unwrap();
        let se = report["std_errors"][name].as_f64().unwrap();
        eprintln!(
            "low-speed bench, lugre: {name} {got:.1} ± {se:.1} (truth {truth}, {:+.2} %)",
            err_pct(got, truth)
        );
        assert!((got - truth).abs() <= 2.0 * se, "{name}: {report}");
        assert!(se < 0.03 * truth, "{name}: {report}");
    }
    assert!(
        !fits
            .iter()
            .any(|f| f["procedure"] == "output_error" && f["model"] == "lugre"),
        "{fits:?}"
    );
    let answer = &c["answer"];
    let truth_mse = answer["truth_validation_mse"].as_f64().unwrap();
    let lugre = answer["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == "lugre")
        .unwrap();
    let ratio = lugre["validation_mse"].as_f64().unwrap() / truth_mse;
    eprintln!("low-speed bench, lugre: validation MSE {ratio:.3} times the truth's");
    assert!(ratio < 1.05, "{answer}");
}
