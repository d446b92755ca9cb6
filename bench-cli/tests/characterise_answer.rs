//! The campaign's answer judges itself and its report hides nothing (`bench characterise
//! --sim`, simulated time): the validation profile runs twice, the best model is set against
//! the bench's repeatability (`answer.floor_mse`, `answer.adequate`), an answer that is not
//! adequate says so and what was not measured, and the report shows both directions of every
//! parameter, MSE in squared units, round ticks, the measured range of every plot, stick-slip
//! points hollow and the caveats in the headline box.

use crate::util::{bench, db_in, stderr, stdout};
use serde_json::Value;

/// `bench characterise --sim` on the simulator's default truth with `models`: the campaign's
/// JSON and its report.
fn default_bench(models: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let out = dir.path().join("out");
    let o = bench(&[
        "characterise",
        "--sim",
        "--models",
        models,
        "--db",
        &db,
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let (first, json) = text.split_once('\n').unwrap();
    let id = first.strip_prefix("campaign ").unwrap();
    let html = std::fs::read_to_string(out.join(format!("campaign-{id}.html"))).unwrap();
    (serde_json::from_str(json).unwrap(), html)
}

/// Prints a row of the campaign table (adequate, best MSE over the floor and the truth's, the
/// answer's text).
pub(crate) fn table_row(what: &str, a: &Value) {
    eprintln!(
        "CAMPAIGN | {what} | adequate {} | best {} | best/floor {:.2} | best/truth {:.2} | {}",
        a["adequate"],
        a["best_model"],
        a["best_over_floor"].as_f64().unwrap_or(f64::NAN),
        a["best_over_truth"].as_f64().unwrap_or(f64::NAN),
        a["text"].as_str().unwrap_or("")
    );
}

/// On the default simulated bench (GMS, `vs` 0.1 rad/s, no loop holding its fall) the two
/// static models leave several times the bench's repeatability: the answer says none
/// describes the bench, that the Stribeck region below the slowest held speed was not
/// measured, and what to try; the report's headline box says so with its caveats.
#[test]
fn static_models_on_the_default_bench_are_not_adequate_and_the_answer_says_why() {
    let (c, html) = default_bench("coulomb_viscous,stribeck_exp");
    let a = &c["answer"];
    table_row("default bench, coulomb_viscous + stribeck_exp", a);
    let floor = a["floor_mse"].as_f64().unwrap();
    let best = a["ranking"][0]["validation_mse"].as_f64().unwrap();
    assert!(floor > 0.0 && best > 2.0 * floor, "{a}");
    assert_eq!(a["adequate"], false, "{a}");
    let text = a["text"].as_str().unwrap();
    assert!(
        text.starts_with("none of the fitted models describes this bench: the best, "),
        "{text}"
    );
    assert!(!text.contains("describes this bench best"), "{text}");
    assert!(text.contains("the Stribeck region below"), "{text}");
    assert!(text.contains("try: "), "{text}");
    assert!(a["not_measured"]["vs"].is_string(), "{a}");
    // The validation step ran its profile twice after a lead-in pass (both passes start from
    // the state a pass ends in).
    let pieces = c["steps"][4]["spec"]["params"]["pieces"]
        .as_array()
        .unwrap();
    assert_eq!(pieces.len() % 3, 0);
    let pass = pieces.len() / 3;
    assert_eq!(pieces[..pass], pieces[pass..2 * pass]);
    assert_eq!(pieces[..pass], pieces[2 * pass..]);
    let parts = &a["floor_parts"];
    let sum = parts["repeat_mse"].as_f64().unwrap() + parts["resolution_mse"].as_f64().unwrap();
    assert!((sum - floor).abs() <= 1e-12 * floor, "{parts} {floor}");
    // The headline box: red, its caveats listed inside it.
    let head = &html[html.find("id=\"answer\"").unwrap()..html.find("</div>").unwrap()];
    assert!(html.contains("class=\"answer inadequate\" id=\"answer\""));
    assert!(head.contains("<li>vs not measured"), "{head}");
    assert!(head.contains("<li>fs from the breakaway step"), "{head}");
    // Stick-slip points of the sweep drawn hollow.
    assert!(
        html.contains("fill=\"none\" stroke=\"#8c564b\"/>"),
        "no hollow point"
    );
    assert!(html.contains("stick-slip, left out (hollow)"));
    report_hides_nothing(&html);
}

/// What every report shows: both directions of an asymmetric fit with their errors, MSE in
/// N² m², round ticks, the measured range under every plot.
fn report_hides_nothing(html: &str) {
    assert!(html.contains("<td>fc⁺</td>") && html.contains("<td>fc⁻</td>"));
    assert!(
        !html.contains("<td>negative</td>"),
        "a negative row of dashes"
    );
    assert!(html.contains("validation MSE [N² m²]"));
    assert!(html.contains("the floor: repeatability + encoder resolution"));
    assert!(html.contains("the bench's repeatability (validation profile run twice)"));
    assert!(html.contains("the encoder's resolution ("));
    let plots = html.matches("<svg").count();
    assert!(plots >= 3);
    assert_eq!(html.matches("<p class=\"range\">measured: ").count(), plots);
    // Ticks are round: evenly spaced by 1, 2 or 5 times a power of ten.
    for plot in html.split("<svg").skip(1) {
        let ticks: Vec<f64> = plot
            .split("class=\"ytick\"")
            .skip(1)
            .map(|t| {
                let label = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                label.replace('−', "-").parse::<f64>().unwrap()
            })
            .collect();
        assert!(ticks.len() >= 3, "{ticks:?}");
        let step = ticks[1] - ticks[0];
        let mantissa = step / 10f64.powf(step.log10().floor());
        assert!(
            [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6),
            "{ticks:?}"
        );
        for w in ticks.windows(2) {
            assert!((w[1] - w[0] - step).abs() < 1e-6 * step.abs(), "{ticks:?}");
        }
    }
}

/// The static parameters of `model`'s final set in the campaign `c` (from its fits).
pub(crate) fn final_params(c: &Value, model: &str) -> Value {
    c["fits"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|f| f["model"] == model && f["report"]["params"].is_object())
        .map(|f| f["report"]["params"].clone())
        .unwrap_or_default()
}

/// The default models on the default simulated bench: the answer is what its numbers say
/// (adequate exactly when the best model is within twice the floor, and then only it says
/// "describes this bench best"), and every static parameter of the best model is within 3 %
/// of the truth or flagged in `not_measured`. Prints the campaign table's row. Since GMS's
/// slip dynamics and breakaway are fitted by output error on the presliding run and refined on
/// the slips run the answer is adequate (1.34 × the floor of repeat and encoder resolution,
/// where the true model leaves 1.09 ×) and 1.23 × the truth's MSE (issue 41 asks for 1.5:
/// docs/src/characterise.md#slips); with the presliding run's fit alone it was 1.64 ×, and
/// before that it fell back to the Coulomb + viscous steady state at 30 × the truth's.
#[test]
fn the_default_models_on_the_default_bench_get_an_answer_that_matches_its_numbers() {
    let (c, html) = default_bench("coulomb_viscous,stribeck_exp,lugre,gms");
    let a = &c["answer"];
    table_row("default bench, default models", a);
    let k = a["best_over_floor"].as_f64().unwrap();
    assert_eq!(a["adequate"], k <= 2.0, "{a}");
    assert_eq!(a["adequate"], true, "{a}");
    let over_truth = a["best_over_truth"].as_f64().unwrap();
    // 1.23 since GMS's slip dynamics are refined on the slips run (1.64 before; issue 41 asks
    // for 1.5: docs/src/characterise.md#slips).
    assert!(over_truth <= 1.3, "best/truth {over_truth}: {a}");
    // The floor counts what the encoder cannot resolve: the true model leaves about it.
    let truth_k = a["truth_over_floor"].as_f64().unwrap();
    assert!((0.5..=2.0).contains(&truth_k), "truth/floor {truth_k}: {a}");
    let text = a["text"].as_str().unwrap();
    assert_eq!(
        text.contains("describes this bench best"),
        k <= 2.0,
        "{text}"
    );
    if k > 2.0 {
        assert!(text.contains("the true model itself leaves"), "{text}");
    }
    // The simulator's default truth: GMS, fc 1.0 / 0.9, fs 1.5 / 1.35.
    let best = a["best_model"].as_str().unwrap();
    let p = final_params(&c, best);
    let flagged = |k: &str| a["not_measured"].get(k).is_some();
    for (key, pos, neg) in [("fc", 1.0, 0.9), ("fs", 1.5, 1.35)] {
        let got_p = p[key].as_f64().unwrap();
        let got_n = p["negative"][key].as_f64().unwrap_or(got_p);
        eprintln!("CAMPAIGN | default bench | {best} {key} {got_p:.4} / {got_n:.4}");
        for (got, want) in [(got_p, pos), (got_n, neg)] {
            assert!(
                ((got - want) / want).abs() <= 0.03 || flagged(key),
                "{key} {got} against {want}: {a}"
            );
        }
    }
    report_hides_nothing(&html);
}
