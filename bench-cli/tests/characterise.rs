//! `bench characterise --sim` on a simulated bench whose truth the shipped specs were not sized
//! for (a Stribeck curve with `delta` = 1.5 and `vs` = 1 rad/s), in simulated time: the
//! campaign's record (steps with their runs, fits, comparison, trial), the identified values
//! against the truth, the best model against the true model's own error on the same
//! validation run, the bench time, and the self-contained report. Prints the acceptance row
//! (`cargo test -p bench-daemon --test integration characterise -- --nocapture`).

use crate::characterise_low_speed::LOW_SPEED_BENCH;
use crate::util::{bench, db_in, stderr, stdout};
use run_store::{CampaignStatus, Store};
use serde_json::Value;

const TRUTH: &str = r#"{"fc": 0.5, "fs": 0.8, "fv": 0.04, "vs": 1.0, "delta": 1.5}"#;

fn campaign(db: &str, out: &str) -> (i64, Value) {
    let o = bench(&[
        "characterise",
        "--sim",
        "--truth",
        "stribeck_exp",
        "--truth-params",
        TRUTH,
        "--models",
        "coulomb_viscous,stribeck_exp",
        "--db",
        db,
        "--out",
        out,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let (first, json) = text.split_once('\n').unwrap();
    let id: i64 = first.strip_prefix("campaign ").unwrap().parse().unwrap();
    (id, serde_json::from_str(json).unwrap())
}

/// `bench characterise --sim` on the true model `(id, params)` with `models`, then `rest`.
pub(crate) fn characterise_sim(
    truth: (&str, &str),
    models: &str,
    rest: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "characterise",
        "--sim",
        "--truth",
        truth.0,
        "--truth-params",
        truth.1,
        "--models",
        models,
    ];
    args.extend(rest);
    bench(&args)
}

pub(crate) fn err_pct(got: f64, truth: f64) -> f64 {
    100.0 * (got - truth) / truth
}

/// Prints the static curve's errors against the truth `(fc, fs, vs)` as an acceptance row
/// headed `what` (with `more`) and asserts `fc`, `fs` per direction within 3 % and `vs` within
/// 10 %. `p` and `n` read a parameter of the positive and negative direction.
pub(crate) fn check_curve(
    what: &str,
    p: impl Fn(&str) -> f64,
    n: impl Fn(&str) -> f64,
    (fc, fs, vs): (f64, f64, f64),
    more: &str,
) {
    eprintln!(
        "ACCEPTANCE | {what} | fc {:+.2} % / {:+.2} % | fs {:+.2} % / {:+.2} % | vs {:+.1} %{more}",
        err_pct(p("fc"), fc),
        err_pct(n("fc"), fc),
        err_pct(p("fs"), fs),
        err_pct(n("fs"), fs),
        err_pct(p("vs"), vs),
    );
    for (got, want, tol) in [
        (p("fc"), fc, 3.0),
        (n("fc"), fc, 3.0),
        (p("fs"), fs, 3.0),
        (n("fs"), fs, 3.0),
        (p("vs"), vs, 10.0),
    ] {
        assert!(err_pct(got, want).abs() <= tol, "{got} against {want}");
    }
}

#[test]
fn a_campaign_on_a_stribeck_truth_identifies_it_ranks_it_first_and_writes_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    // `--out` names a directory that does not exist yet: the campaign makes it.
    let reports = dir.path().join("reports").join("night");
    let (id, c) = campaign(&db, reports.to_str().unwrap());
    assert_eq!(c["status"], "completed");
    let steps: Vec<&str> = c["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "breakaway",
            "low_speed_check",
            "sweep",
            "presliding",
            "validation"
        ]
    );
    // Every step's run is stored and links back to the campaign.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt
        .block_on(Store::open_existing(std::path::Path::new(&db)))
        .unwrap();
    for s in c["steps"].as_array().unwrap() {
        let run = s["run_id"].as_i64().unwrap();
        let link = rt.block_on(store.campaign_of_run(run)).unwrap();
        assert_eq!(link, Some((id, s["name"].as_str().unwrap().to_string())));
    }
    let stored = rt.block_on(store.campaign(id)).unwrap();
    assert_eq!(stored.status, CampaignStatus::Completed);
    assert!(stored.comparison_id.is_some() && stored.trial_run_id.is_some());
    // The sweep was designed from the steps before it: at least 5 points below vs per direction.
    let sweep = &c["steps"][2]["spec"]["params"]["velocities"];
    let below = sweep
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v.as_f64().unwrap() < 1.0)
        .count();
    assert!(below >= 5, "{sweep}");
    // The identified curve against the truth.
    let set = rt
        .block_on(
            store.parameter_set(
                stored
                    .fits
                    .iter()
                    .rev()
                    .find(|f| f["model"] == "stribeck_exp")
                    .unwrap()["report"]["parameter_set_id"]
                    .as_i64()
                    .unwrap(),
            ),
        )
        .unwrap()
        .params;
    rt.block_on(store.close());
    let p = |k: &str| set[k].as_f64().unwrap();
    let n = |k: &str| set["negative"][k].as_f64().unwrap_or(p(k));
    let ans = &c["answer"];
    let best = ans["ranking"][0]["validation_mse"].as_f64().unwrap();
    let truth = ans["truth_validation_mse"].as_f64().unwrap();
    let bench_s = ans["bench_time_s"].as_f64().unwrap();
    let more = format!(
        " | best {} MSE / truth MSE {:.3} | bench time {bench_s:.0} s",
        ans["best_model"],
        best / truth
    );
    check_curve("stribeck_exp delta 1.5", p, n, (0.5, 0.8, 1.0), &more);
    assert_eq!(ans["best_model"], "stribeck_exp", "{ans}");
    assert!(
        best <= 1.5 * truth,
        "best {best} against the truth's {truth}"
    );
    assert!(bench_s > 0.0 && bench_s <= 20.0 * 60.0, "{bench_s}");
    // The report: one file, the answer at the top, nothing fetched.
    let html = std::fs::read_to_string(reports.join(format!("campaign-{id}.html"))).unwrap();
    let answer = ans["text"].as_str().unwrap();
    // The answer is what its numbers say. On this static truth it is not adequate (4.2 × the
    // floor), and the true model itself leaves as much: a static model has no friction at
    // rest to offer where the bench holds, and the floor's resolution part, measured with the
    // best (static) model, does not count the holding torque the readings cannot tell
    // (docs/src/characterise.md#floor).
    let k = ans["best_over_floor"].as_f64().unwrap();
    let truth_k = ans["truth_over_floor"].as_f64().unwrap();
    if k <= 2.0 {
        assert!(
            answer.starts_with("stribeck_exp describes this bench best"),
            "{answer}"
        );
    } else {
        assert!(
            k <= 1.5 * truth_k,
            "best {k} × the floor, truth {truth_k} ×"
        );
        assert!(
            answer.starts_with(
                "none of the fitted models describes this bench: the best, stribeck_exp,"
            ) && answer.contains("the true model itself leaves"),
            "{answer}"
        );
    }
    assert!(html.find(answer).unwrap() < html.find("<svg").unwrap());
    assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("href="));
    assert!(html.matches("<svg").count() >= 3);
    // `bench report` writes the same page from the store.
    let path = dir.path().join("again.html");
    let o = bench(&[
        "report",
        &id.to_string(),
        "--db",
        &db,
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), html);
}

#[test]
fn bad_input_is_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    for (args, says) in [
        (vec!["--models", "lugre,nope"], "--models: 'nope'"),
        (vec!["--budget-min", "0"], "--budget-min (0)"),
        (vec!["--truth", "nope"], "--truth"),
        (
            vec!["--sim-params", r#"{"inertia": 0.05}"#],
            "--sim-params: unknown field `inertia`",
        ),
        (
            vec!["--sim-params", r#"{"inertia_kg_m2": -1}"#],
            "--sim-params: sim parameter inertia_kg_m2 (-1)",
        ),
        // The plant's encoder is not the one the bench's [limits] count in.
        (
            vec!["--sim-params", r#"{"encoder_counts_per_rev": 1048576}"#],
            "--sim-params: encoder_counts_per_rev (1048576) is not the bench's [limits] encoder_counts_per_rev (131072)",
        ),
    ] {
        let mut all = vec!["characterise", "--sim", "--db", &db];
        all.extend(args);
        let o = bench(&all);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    assert!(!std::path::Path::new(&db).exists());
    let o = bench(&["report", "7", "--db", &db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Campaign `id` as the store at `db` holds it.
fn stored_campaign(db: &str, id: &str) -> run_store::Campaign {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt
        .block_on(Store::open_existing(std::path::Path::new(db)))
        .unwrap();
    let c = rt.block_on(store.campaign(id.parse().unwrap())).unwrap();
    rt.block_on(store.close());
    c
}

#[test]
fn a_budget_too_small_for_a_step_stops_the_campaign_and_resume_continues_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let o = characterise_sim(
        ("stribeck_exp", TRUTH),
        "coulomb_viscous",
        &["--budget-min", "0.5", "--db", &db],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--budget-min"), "{}", stderr(&o));
    let id = stdout(&o)
        .lines()
        .next()
        .unwrap()
        .strip_prefix("campaign ")
        .unwrap()
        .to_string();
    let c = stored_campaign(&db, &id);
    assert_eq!(c.status, CampaignStatus::Failed);
    let done_before = c.steps.len();
    assert!(done_before >= 1, "{:?}", c.steps);
    let o = bench(&[
        "characterise",
        "--sim",
        "--resume",
        &id,
        "--budget-min",
        "20",
        "--db",
        &db,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let c: Value = serde_json::from_str(text.split_once('\n').unwrap().1).unwrap();
    assert_eq!(c["status"], "completed");
    // The steps done before were kept, not run again.
    assert_eq!(c["steps"].as_array().unwrap().len(), 5);
}

/// An asymmetric GMS whose stiffness split makes the velocity loop slip at every speed of the
/// low-speed check below `vs`: the sweep holds no speed below it, so the sweep's static fit
/// cannot tell `fs` and `vs`.
const GMS_UNHELD: &str = r#"{"k":[3500,1750,1050,700],"alpha":[0.1,0.2,0.3,0.4],"fc":0.8,"fs":1.2,
  "vs":0.4,"delta":2,"sigma1":1,"sigma2":0.05,"c":50,"negative":{"fc":0.7,"fs":1.0,"c":50}}"#;

/// Which models contain which (steady state): the ranking must never put the first below the
/// second.
const CONTAINS: [(&str, &str); 3] = [
    ("stribeck_exp", "coulomb_viscous"),
    ("gms", "stribeck_exp"),
    ("gms", "coulomb_viscous"),
];

/// On that truth the campaign takes `fs` per direction from the breakaway step, fits `vs` with
/// it held, and ranks no model below one it contains. LuGre is left out to keep the test
/// cheap (its fits cost seconds of CPU); the ranking rule is the same for it.
#[test]
fn a_gms_truth_whose_sweep_holds_no_speed_below_vs_gets_fs_from_the_breakaway_and_a_ranking_that_respects_nesting()
 {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let o = characterise_sim(
        ("gms", GMS_UNHELD),
        "coulomb_viscous,stribeck_exp,gms",
        &["--db", &db, "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let c: Value = serde_json::from_str(stdout(&o).split_once('\n').unwrap().1).unwrap();
    let fits = c["fits"].as_array().unwrap();
    // The sweep's own static fit could not tell fs and vs; the refit held fs per direction at
    // the breakaway's.
    let refit = fits
        .iter()
        .find(|f| f["model"] == "gms" && f["note"].is_string())
        .unwrap_or_else(|| panic!("no refit from the breakaway: {fits:?}"));
    assert!(refit["note"].as_str().unwrap().contains("breakaway"));
    let p = &refit["report"]["params"];
    let (fs, fs_neg, vs) = (
        p["fs"].as_f64().unwrap(),
        p["negative"]["fs"].as_f64().unwrap(),
        p["vs"].as_f64().unwrap(),
    );
    let ans = &c["answer"];
    let ranking = ans["ranking"].as_array().unwrap();
    let row = |m: &str| ranking.iter().find(|r| r["model"] == m).unwrap();
    for (outer, inner) in CONTAINS {
        let (o, i) = (row(outer), row(inner));
        assert!(
            o["rank"].as_u64() <= i["rank"].as_u64()
                && o["validation_mse"].as_f64() <= i["validation_mse"].as_f64(),
            "{outer} ranked below {inner}: {ranking:?}"
        );
    }
    for r in ranking.iter().filter(|r| r["note"].is_string()) {
        let note = r["note"].as_str().unwrap();
        assert!(
            note.starts_with("fit worse than contained model; contained parameters used"),
            "{note}"
        );
    }
    let best = ans["ranking"][0]["validation_mse"].as_f64().unwrap();
    let truth = ans["truth_validation_mse"].as_f64().unwrap();
    eprintln!(
        "ACCEPTANCE | gms, no held speed below vs | fs {:+.2} % / {:+.2} % | vs {:+.1} % | best {} MSE / truth MSE {:.3}",
        err_pct(fs, 1.2),
        err_pct(fs_neg, 1.0),
        err_pct(vs, 0.4),
        ans["best_model"],
        best / truth
    );
    assert!(err_pct(fs, 1.2).abs() <= 5.0, "{p}");
    assert!(err_pct(fs_neg, 1.0).abs() <= 5.0, "{p}");
    assert!(err_pct(vs, 0.4).abs() <= 10.0, "{p}");
    // 2.15 since the models are scored on the validation run's two passes only (the lead-in
    // pass replayed, not scored); the bound was 2.0 when they were scored over the whole run.
    assert!(
        best <= 2.2 * truth,
        "best {best} against the truth's {truth}"
    );
}

/// Stiff GMS truths whose first elements slip within one or two encoder counts of a reversal
/// (Σk 10 500 and 10 000 N m/rad; 1.7 and 1.2 counts): the campaign's staggered reversals let
/// `maxwell_slip` read Σk at the count changes within 10 %.
const GMS_STIFF: [(&str, f64); 2] = [
    (
        r#"{"k":[6000,2500,1200,800],"alpha":[0.15,0.25,0.25,0.35],"fc":0.8,"fs":1.2,"vs":0.4,
        "delta":2,"sigma1":1,"sigma2":0.05,"c":50,"negative":{"fc":0.7,"fs":1.0,"c":50}}"#,
        10_500.0,
    ),
    (
        r#"{"k":[4000,3000,2000,1000],"alpha":[0.1,0.3,0.3,0.3],"fc":0.9,"fs":1.3,"vs":0.3,
        "delta":2,"sigma1":1,"sigma2":0.05,"c":50,"negative":{"fc":0.8,"fs":1.1,"c":50}}"#,
        10_000.0,
    ),
];

#[test]
fn a_stiff_gms_truth_gets_its_presliding_stiffness_from_the_count_changes_within_ten_percent() {
    for (params, sum_k) in GMS_STIFF {
        let dir = tempfile::tempdir().unwrap();
        let db = db_in(&dir);
        let o = characterise_sim(("gms", params), "gms", &["--db", &db, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let c: Value = serde_json::from_str(stdout(&o).split_once('\n').unwrap().1).unwrap();
        let fit = c["fits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["procedure"] == "maxwell_slip")
            .unwrap_or_else(|| panic!("no maxwell_slip fit: {c}"));
        let d = &fit["report"]["details"];
        let (got, se) = (
            d["sum_k"].as_f64().unwrap(),
            d["sum_k_std_error"].as_f64().unwrap(),
        );
        eprintln!(
            "ACCEPTANCE | gms, Σk {sum_k} | Σk {got:.0} ± {se:.0} ({:+.1} %)",
            err_pct(got, sum_k)
        );
        assert_eq!(d["at_count_changes"], true, "{d}");
        assert!(d["phase_spread"].as_f64().unwrap() >= 0.3, "{d}");
        assert!(err_pct(got, sum_k).abs() <= 10.0, "{d}");
    }
}

/// A Stribeck truth with a small `vs` (0.2 rad/s, `delta` 1): on the simulated bench no loop
/// holds a speed on its fall (the curve falls faster than the drive's loops damp), so the
/// low-speed check and the sweep stick-slip there. The campaign reads `vs` and `delta` from the
/// sliding phases of that stick-slip (the torque sensor against the encoder's centred speed)
/// with `fs` per direction from the breakaway, and holds them in the static fit.
#[test]
fn a_small_stribeck_velocity_that_no_loop_holds_is_read_from_the_sliding_phases_of_the_stick_slip()
{
    const SMALL_VS: &str = r#"{"fc": 0.5, "fs": 0.8, "vs": 0.2, "delta": 1}"#;
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let o = characterise_sim(
        ("stribeck_exp", SMALL_VS),
        "coulomb_viscous,stribeck_exp",
        &["--db", &db, "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let c: Value = serde_json::from_str(stdout(&o).split_once('\n').unwrap().1).unwrap();
    let fits = c["fits"].as_array().unwrap();
    let fit = fits
        .iter()
        .find(|f| f["model"] == "stribeck_exp" && f["sliding"].is_object())
        .unwrap_or_else(|| panic!("no static fit on the sliding phases: {fits:?}"));
    assert!(fit["note"].as_str().unwrap().contains("sliding phases"));
    let p = &fit["report"]["params"];
    let n = &p["negative"];
    let get = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let (vs, vs_se) = (
        get(&fit["sliding"], "vs"),
        get(&fit["sliding"], "vs_std_error"),
    );
    let ans = &c["answer"];
    let best = ans["ranking"][0]["validation_mse"].as_f64().unwrap();
    let truth = ans["truth_validation_mse"].as_f64().unwrap();
    eprintln!(
        "ACCEPTANCE | stribeck_exp vs 0.2 delta 1 | fc {:+.2} % / {:+.2} % | fs {:+.2} % / {:+.2} % | vs {:+.1} % (se {:.1} %) delta {} | best {} MSE / truth MSE {:.3} | bench time {:.0} s",
        err_pct(get(p, "fc"), 0.5),
        err_pct(get(n, "fc"), 0.5),
        err_pct(get(p, "fs"), 0.8),
        err_pct(get(n, "fs"), 0.8),
        err_pct(vs, 0.2),
        100.0 * vs_se / 0.2,
        fit["sliding"]["delta"],
        ans["best_model"],
        best / truth,
        ans["bench_time_s"].as_f64().unwrap()
    );
    for (v, k) in [(p, "fc"), (n, "fc")] {
        assert!(err_pct(get(v, k), 0.5).abs() <= 3.0, "{p}");
    }
    for (v, k) in [(p, "fs"), (n, "fs")] {
        assert!(err_pct(get(v, k), 0.8).abs() <= 3.0, "{p}");
    }
    assert!(err_pct(vs, 0.2).abs() <= 10.0, "{p}");
    assert_eq!(get(p, "vs"), vs);
    assert!(
        best <= 1.5 * truth,
        "best {best} against the truth's {truth}"
    );
}

/// A campaign keeps its simulated plant for `--resume`, and the bench it resumes under must
/// match that plant again: a low-speed campaign (20-bit encoder) resumed without its
/// `--config` (the shipped 17-bit limits) is refused naming the encoder, and nothing runs.
#[test]
fn a_resumed_campaign_on_another_plant_than_its_bench_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let o = characterise_sim(
        ("stribeck_exp", TRUTH),
        "coulomb_viscous",
        &[&LOW_SPEED_BENCH[..], &["--budget-min", "0.05", "--db", &db]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let id = stdout(&o).lines().next().unwrap()["campaign ".len()..].to_string();
    let o = bench(&["characterise", "--sim", "--resume", &id, "--db", &db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("encoder_counts_per_rev (1048576)"),
        "{}",
        stderr(&o)
    );
    let c = stored_campaign(&db, &id);
    assert_eq!(c.status, CampaignStatus::Failed);
    assert!(c.steps.is_empty(), "{:?}", c.steps);
}
