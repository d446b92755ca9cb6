//! The answer judges itself: the best model's validation MSE against the floor
//! ([`super::floor`]: the bench's repeatability plus what its encoder cannot resolve), what the campaign did not measure (the Stribeck region no loop held,
//! `fs` left to the breakaway step, a presliding stiffness the data did not determine), rows
//! that share a rank, and a compensation trial that ranks another model first. The sentence
//! says "describes this bench best" only when the best model is within [`ADEQUATE_RATIO`] of the
//! floor; otherwise it says that none does, why, and what to try.

use super::analyse::{STATIC_FROM_BREAKAWAY, VS_NOT_MEASURED};
use super::floor::FloorParts;
use super::record::{FitRecord, Judged, RankRow, Record, StepRecord};
use super::{Request, design, estimates};
use experiments::kinds::compensation_trial::Ranked;
use friction::identify::procedures::compare::CONTAINED_USED;
use std::collections::BTreeMap;

/// A best model within this multiple of the floor describes the bench (`answer.adequate`).
pub const ADEQUATE_RATIO: f64 = 2.0;

/// How the text names the floor.
pub const FLOOR_WORDS: &str =
    "the bench's floor (its repeatability plus what its encoder cannot resolve)";

/// Caveat of a static fit that held `fs` at the breakaway step's.
pub const FS_FROM_BREAKAWAY: &str =
    "fs from the breakaway step: the sweep did not measure the fall from it";
/// Caveat of a static fit that held `fs` at the breakaway step's when the best model's final
/// fit then freed `fs` by output error (GMS on the presliding and slips runs).
pub const FS_BY_OUTPUT_ERROR: &str = "fs fitted by output error on the presliding and slips runs' breakaways (from the breakaway step's before): the sweep did not measure the fall from it";
/// Caveat of a presliding fit whose verdict says the stiffness is not determined.
pub const STIFFNESS_NOT_DETERMINED: &str = "presliding stiffness not determined";

/// Adds `floor_mse` (with its `floor_parts`), `adequate`, `best_over_floor`, `best_over_truth`, `caveats`,
/// `not_measured` and tie notes to `answer` (from [`super::analyse::answer`]; the truth's
/// validation MSE is the campaign's), and rewrites its `text` accordingly.
pub fn judge(c: &Record, parts: Option<FloorParts>, answer: &mut Judged) {
    let floor = parts.as_ref().map(FloorParts::total);
    answer.floor_parts = parts;
    explain_contained(&mut answer.ranking);
    tie_notes(&mut answer.ranking);
    let unmeasured = stribeck_unmeasured_below(c);
    let mut caveats = Vec::new();
    let mut not_measured = BTreeMap::new();
    if let Some(v) = unmeasured {
        caveats.push(format!(
            "vs not measured: no held speed below {v:.3} rad/s and the stick-slip did not place the fall (vs from the fall's tail or the low-speed check's estimate, delta held at 2)"
        ));
        not_measured.insert("vs".into(), format!("no held speed below {v:.3} rad/s"));
        not_measured.insert("delta".into(), "held at 2".into());
    }
    let best_model = answer.ranking.iter().find(|r| r.validation_mse.is_some());
    if fs_from_breakaway(c) {
        let refit = best_model.is_some_and(|b| fs_by_output_error(c, &b.model));
        let (caveat, why) = match refit {
            true => (
                FS_BY_OUTPUT_ERROR,
                "fitted by output error on the presliding and slips runs' breakaways",
            ),
            false => (
                FS_FROM_BREAKAWAY,
                "from the breakaway step's slowest torque ramp",
            ),
        };
        caveats.push(caveat.to_string());
        not_measured.insert("fs".into(), why.into());
    }
    let flat = no_rise(&answer.ranking);
    if !flat.is_empty() {
        caveats.push(format!(
            "no Stribeck rise supported by the validation run: {} use coulomb_viscous's steady state (fs = fc)",
            flat.join(", ")
        ));
    }
    for m in stiffness_undetermined(c) {
        caveats.push(format!("{STIFFNESS_NOT_DETERMINED} ({m})"));
    }
    let best = answer
        .ranking
        .iter()
        .find(|r| r.validation_mse.is_some())
        .cloned();
    let best_mse = best.as_ref().and_then(|b| b.validation_mse);
    let truth = c.answer.truth_validation_mse.flatten();
    let ratio = |d: Option<f64>| best_mse.zip(d).map(|(b, d)| b / d);
    let adequate = ratio(floor).map(|k| k <= ADEQUATE_RATIO);
    answer.floor_mse = floor;
    answer.adequate = adequate;
    answer.best_over_floor = ratio(floor);
    answer.best_over_truth = ratio(truth);
    if let Some(b) = &best {
        let truth_k = truth.zip(floor).map(|(t, f)| t / f);
        answer.truth_over_floor = Some(truth_k);
        let mut text = headline(
            b,
            &answer.unit,
            ratio(floor),
            adequate,
            unmeasured,
            &c.request,
        );
        if let (Some(false), Some(t)) = (adequate, truth_k) {
            text.push_str(&format!(
                " On this simulated bench the true model itself leaves {t:.1}× the floor in the same replay."
            ));
        }
        let tie = answer.ranking.iter().filter(|r| r.rank == b.rank);
        if let Some(t) = tie.filter_map(|r| r.tie.as_deref()).next() {
            text.push_str(&format!(" {t}."));
        }
        text.push_str(&compensation_note(&answer.compensation, b));
        answer.text = text;
    }
    answer.caveats = caveats;
    answer.not_measured = not_measured;
}

/// The first sentence: the best model and how it stands against the floor.
fn headline(
    best: &RankRow,
    unit: &str,
    k: Option<f64>,
    adequate: Option<bool>,
    unmeasured: Option<f64>,
    req: &Request,
) -> String {
    let m = &best.model;
    let rms = best.validation_rms.unwrap_or(f64::NAN);
    let against = k.map_or_else(
        || " (the bench's floor not measured)".to_string(),
        |k| format!(", {k:.2}× {FLOOR_WORDS}"),
    );
    if adequate != Some(false) {
        return format!("{m} describes this bench best: validation RMS {rms:.3} {unit}{against}.");
    }
    let mut s = format!(
        "none of the fitted models describes this bench: the best, {m}, leaves {:.1}× {FLOOR_WORDS}, validation RMS {rms:.3} {unit}",
        k.unwrap_or(f64::NAN)
    );
    if let Some(v) = unmeasured {
        s.push_str(&format!(
            "; the Stribeck region below {v:.3} rad/s was not measured"
        ));
    }
    s.push_str("; try: ");
    s.push_str(&tries(unmeasured.is_some(), req).join(", "));
    s.push('.');
    s
}

/// What to try when no model is adequate.
fn tries(unmeasured: bool, req: &Request) -> Vec<String> {
    let mut out = Vec::new();
    let missing: Vec<&str> = ["lugre", "gms"]
        .into_iter()
        .filter(|m| !req.models.iter().any(|x| x == m))
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "a model with presliding dynamics (--models {},{})",
            req.models.join(","),
            missing.join(",")
        ));
    }
    if unmeasured {
        out.push(
            "a loop that holds the slow speeds (a position-loop derivative gain above the fall's slope) or a recording faster than 1 kHz, to measure the fall".into(),
        );
    }
    out.push("a longer --budget-min for more sweep points".into());
    out
}

/// A sentence when the compensation trial ranks another compensator than `best` first.
fn compensation_note(trials: &[Ranked], best: &RankRow) -> String {
    let gain = |name: &str| {
        trials
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.improvement_pct)
    };
    let m = best.model.as_str();
    let own = match gain(m) {
        Some(g) if g >= 0.0 => {
            format!(" Compensating with it reduces the tracking error by {g:.0} %")
        }
        Some(g) => format!(
            " Compensating with it increases the tracking error by {:.0} %",
            -g
        ),
        None => " It was not part of the compensation trial".into(),
    };
    let first = trials.first().map(|t| t.name.as_str());
    match first.filter(|f| *f != m) {
        Some(f) => format!(
            "{own}; the compensation trial ranks {f} first ({:+.0} %).",
            -gain(f).unwrap_or(f64::NAN)
        )
        .replace("(-", "(−"),
        None => format!("{own}."),
    }
}

/// A row whose fit fell back to a contained model's parameters is ranked with the score
/// those parameters give it (never its own worse fit's); its note says what that score is:
/// the contained model's steady state with the row's own presliding part, which is why it can
/// differ from the contained model's own row.
fn explain_contained(ranking: &mut [RankRow]) {
    for r in ranking {
        let Some(note) = &r.note else {
            continue;
        };
        let Some(inner) = note
            .strip_prefix(CONTAINED_USED)
            .and_then(|n| n.trim().strip_prefix('('))
            .and_then(|n| n.strip_suffix(')'))
        else {
            continue;
        };
        let own = match r.model.as_str() {
            "lugre" | "gms" => ", its own presliding part kept",
            _ => "",
        };
        r.note = Some(format!(
            "{note}: ranked with the score of {inner}'s steady state{own}, not its own fit's"
        ));
    }
}

/// Notes on rows that share a rank with another (`tie`), naming the others and why.
fn tie_notes(ranking: &mut [RankRow]) {
    let ranks: Vec<(Option<usize>, String)> =
        ranking.iter().map(|r| (r.rank, r.model.clone())).collect();
    for r in ranking.iter_mut() {
        let others: Vec<&str> = ranks
            .iter()
            .filter(|(k, m)| *k == r.rank && *m != r.model)
            .map(|(_, m)| m.as_str())
            .collect();
        if others.is_empty() || r.validation_mse.is_none() {
            continue;
        }
        r.tie = Some(format!(
            "{} shares rank {} with {}: equal validation MSE{}",
            r.model,
            r.rank_text(),
            others.join(", "),
            r.note
                .as_deref()
                .map_or(String::new(), |n| format!(" ({n})"))
        ));
    }
}

/// The speed below which the Stribeck region was not measured (the sweep's slowest held
/// point): a static fit's note says `vs` was not measured, or it was placed from the fall's
/// tail alone (`fs` from the breakaway, no held point below twice its `vs`). `None` when the
/// held points or the sliding phases measured the fall.
pub fn stribeck_unmeasured_below(c: &Record) -> Option<f64> {
    let held = c
        .step(super::Step::Sweep)
        .and_then(StepRecord::stribeck_points)
        .and_then(design::slowest_held)
        .or(estimates(c).v_hold)?;
    let from_tail = |f: &FitRecord| {
        f.note.as_deref() == Some(STATIC_FROM_BREAKAWAY)
            && f.param("vs").is_none_or(|vs| held > 2.0 * vs)
    };
    c.fits
        .iter()
        .filter(|f| f.procedure == "static_curve")
        .any(|f| f.note.as_deref() == Some(VS_NOT_MEASURED) || from_tail(f))
        .then_some(held)
}

/// Rows whose steady state fell back to Coulomb + viscous friction: the validation supports
/// no Stribeck rise for them.
fn no_rise(ranking: &[RankRow]) -> Vec<String> {
    ranking
        .iter()
        .filter(|r| {
            r.note
                .as_deref()
                .is_some_and(|n| n.starts_with(CONTAINED_USED) && n.contains("(coulomb_viscous)"))
        })
        .map(|r| r.model.clone())
        .collect()
}

/// Whether a static fit held `fs` at the breakaway step's.
fn fs_from_breakaway(c: &Record) -> bool {
    c.fits
        .iter()
        .any(|f| f.procedure == "static_curve" && f.note.is_some() && f.report.is_some())
}

/// Whether `model`'s final fit is an output-error fit that freed `fs` (a fitted value has a
/// standard error).
fn fs_by_output_error(c: &Record, model: &str) -> bool {
    super::analyse::final_fit(c, model).is_some_and(|f| {
        f.procedure == "output_error"
            && f.report
                .as_ref()
                .and_then(|r| r.std_errors.as_ref())
                .is_some_and(|e| e.contains_key("fs"))
    })
}

/// Models whose presliding fit's verdict says the stiffness is not determined, or whose
/// presliding fit failed.
fn stiffness_undetermined(c: &Record) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &c.fits {
        if !matches!(f.procedure.as_str(), "maxwell_slip" | "presliding_sine") {
            continue;
        }
        let says = f
            .reasons()
            .iter()
            .any(|r| r.starts_with(STIFFNESS_NOT_DETERMINED));
        if (says || f.error.is_some()) && !out.contains(&f.model) {
            out.push(f.model.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn campaign() -> Record {
        Record {
            id: 1,
            uuid: "u".into(),
            created_at: String::new(),
            updated_at: String::new(),
            status: run_store::CampaignStatus::Completed,
            request: Request {
                models: vec!["coulomb_viscous".into(), "stribeck_exp".into()],
                budget_min: 20.0,
                truth: None,
                sim_params: None,
            },
            bench: serde_json::json!({}),
            software_version: String::new(),
            steps: Vec::new(),
            fits: Vec::new(),
            comparison_id: None,
            trial_run_id: None,
            answer: Default::default(),
            reason: None,
        }
    }

    /// A floor of `total`, half of it each part.
    fn floor(total: f64) -> FloorParts {
        FloorParts {
            repeat_mse: 0.5 * total,
            resolution_mse: Some(0.5 * total),
            model: Some("coulomb_viscous".into()),
        }
    }

    fn answer(best_mse: f64) -> Judged {
        let row = |model: &str, note: Option<String>| RankRow {
            rank: Some(1),
            model: model.into(),
            validation_mse: Some(best_mse),
            validation_rms: Some(best_mse.sqrt()),
            note,
            ..RankRow::default()
        };
        let trial = |rank: usize, name: &str, improvement: f64| Ranked {
            rank,
            name: name.into(),
            law: String::new(),
            rms_error: 0.01,
            max_error: 0.02,
            reversal_glitch: None,
            effort_rms: 0.1,
            improvement_pct: Some(improvement),
            unstable: false,
            trials: 1,
            per_reference: Vec::new(),
        };
        Judged {
            unit: "N m".into(),
            ranking: vec![
                row("coulomb_viscous", None),
                row(
                    "stribeck_exp",
                    Some(format!("{CONTAINED_USED} (coulomb_viscous)")),
                ),
            ],
            compensation: vec![
                trial(1, "stribeck_exp", 50.0),
                trial(2, "coulomb_viscous", 40.0),
            ],
            ..Judged::default()
        }
    }

    #[test]
    fn an_answer_over_twice_the_floor_says_no_model_describes_the_bench() {
        let mut a = answer(0.5);
        judge(&campaign(), Some(floor(0.1)), &mut a);
        assert_eq!(a.adequate, Some(false));
        let text = &a.text;
        assert!(
            text.starts_with("none of the fitted models describes this bench: the best, coulomb_viscous, leaves 5.0× the bench's floor (its repeatability plus what its encoder cannot resolve)"),
            "{text}"
        );
        assert!(!text.contains("describes this bench best"), "{text}");
        assert!(
            text.contains("--models coulomb_viscous,stribeck_exp,lugre,gms"),
            "{text}"
        );
        // The tie is noted on both rows, the compensation's first named.
        for r in &a.ranking {
            assert!(r.tie.as_deref().unwrap().contains("shares rank 1"), "{r:?}");
        }
        assert!(
            text.contains("the compensation trial ranks stribeck_exp first"),
            "{text}"
        );
        assert!(a.caveats[0].starts_with("no Stribeck rise supported"));
    }

    #[test]
    fn an_answer_within_twice_the_floor_describes_the_bench() {
        let mut a = answer(0.15);
        judge(&campaign(), Some(floor(0.1)), &mut a);
        assert_eq!(a.adequate, Some(true));
        let text = &a.text;
        assert!(
            text.starts_with("coulomb_viscous describes this bench best: validation RMS 0.387 N m, 1.50× the bench's floor (its repeatability plus what its encoder cannot resolve)."),
            "{text}"
        );
    }

    /// A static fit that held `fs` at the breakaway's leaves `fs` flagged; when the best
    /// model's final fit freed `fs` by output error, the flag says so instead.
    #[test]
    fn fs_held_at_the_breakaway_is_flagged_and_an_output_error_refit_says_so() {
        let fit = |procedure: &str, extra: serde_json::Value| {
            let mut v = serde_json::json!({"model": "coulomb_viscous", "procedure": procedure,
                "run_id": 1, "report": {"params": {"fs": 1.4}}});
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            serde_json::from_value::<FitRecord>(v).unwrap()
        };
        let mut c = campaign();
        c.fits = vec![fit("static_curve", serde_json::json!({"note": "held"}))];
        let mut a = answer(0.15);
        judge(&c, Some(floor(0.1)), &mut a);
        assert!(
            a.caveats.contains(&FS_FROM_BREAKAWAY.to_string()),
            "{:?}",
            a.caveats
        );
        assert!(a.not_measured["fs"].contains("breakaway step"));
        let refit =
            serde_json::json!({"report": {"params": {"fs": 1.5}, "std_errors": {"fs": 0.01}}});
        c.fits.push(fit("output_error", refit));
        let mut a = answer(0.15);
        judge(&c, Some(floor(0.1)), &mut a);
        assert!(
            a.caveats.contains(&FS_BY_OUTPUT_ERROR.to_string()),
            "{:?}",
            a.caveats
        );
        assert!(a.not_measured["fs"].contains("output error"));
    }
}
