//! The campaign's fits, comparison and answer: each model fitted in the documented order
//! (docs/src/identification.md#order: the Stribeck curve on the sweep, then the presliding part
//! on the presliding run), the fitted sets scored on the validation run (`bench compare` with
//! `MODEL=none`, each model at its newest set), and the plain-language answer.

use super::design::Estimates;
pub use super::fit_plan::{FitPlan, breakaway_given, order};
use super::fit_plan::{output_error_step, sine_told_sigma1, static_swing};
use super::given::Given;
use super::record::{
    FitRecord, FitReport, Judged, RankRow, Record, SlidingFall, StepRecord, Verdict,
};
use super::sliding::{self, Bin, Fall};
use super::{Step, estimates};
use bench_daemon::config::Geometry;
use bench_daemon::fitting::compare::{Source, read_sources};
use bench_daemon::fitting::{Field, FitRequest, fit::fit_stored};
use friction::identify::procedures::Offset;
use friction::identify::procedures::compare::{
    self, CompareOptions, ModelChoice, Regimes, ReplayName, StoredOptions,
};
use friction::identify::procedures::output_error::{Replay, Speed};
use friction::identify::procedures::quality::REL_STD_ERROR_LIMIT;
use run_store::{NewComparison, Store};
use serde_json::{Value, json};
use std::path::Path;
/// Why the campaign refitted a static curve from the breakaway.
pub const STATIC_FROM_BREAKAWAY: &str = "the sweep's static fit could not tell fs and vs (its verdict); refitted with fs per direction held at the breakaway step's and the Gaussian shape, vs fitted on the sweep";

/// Fits every model in its order, compares them on the validation run and, on the simulated
/// bench, scores the true model on the same run (the noise floor). Returns the fits, the
/// stored comparison's id and the truth's validation MSE.
pub async fn fit_and_compare(
    c: &Record,
    db: &Path,
    geometry: Geometry,
) -> anyhow::Result<(Vec<FitRecord>, i64, Option<f64>)> {
    let req = &c.request;
    let run = |name: Step| {
        c.run_of(name)
            .ok_or_else(|| anyhow::anyhow!("the {name} step has no completed run"))
    };
    let mut fits = Vec::new();
    let est = estimates(c);
    let fall = if est.stribeck_held {
        None
    } else {
        sliding_fall(c, &est, db).await?
    };
    for model in &req.models {
        let mut steps = order(model, &est, fall.as_ref());
        let mut i = 0;
        while i < steps.len() {
            let FitPlan {
                procedure,
                from,
                mut given,
            } = steps[i].clone();
            i += 1;
            if procedure == "output_error"
                && from == Step::Presliding
                && sine_told_sigma1(&fits, model)
            {
                continue;
            }
            if procedure == "maxwell_slip" {
                given = static_swing(&fits, model);
            }
            if from == Step::Slips
                && let Some(Given::OutputError { params, .. }) = &mut given
            {
                *params = newest_set(&fits, model);
            }
            let name = match from {
                Step::Slips => format!("{model}-campaign{}-{procedure}-slips", c.id),
                _ => format!("{model}-campaign{}-{procedure}", c.id),
            };
            let mut fit = fit_one(model, procedure, run(from)?, given.clone(), name, db).await?;
            if procedure == "static_curve"
                && given.is_some()
                && let Some(f) = &fall
            {
                fit.note = Some(sliding_note(f));
                fit.sliding = Some(SlidingFall {
                    vs: f.vs,
                    vs_std_error: f.vs_se,
                    delta: f.delta,
                    points: f.n,
                    reduced_chi2: f.chi2,
                });
            } else if procedure == "static_curve" && given.is_some() {
                fit.note = Some(VS_NOT_MEASURED.into());
            }
            let refit = procedure == "static_curve"
                && model != "coulomb_viscous"
                && given.is_none()
                && (fit.error.is_some() || fit.undetermined(&["fs", "vs"], REL_STD_ERROR_LIMIT));
            fits.push(fit);
            if !refit {
                continue;
            }
            let Some(given) = breakaway_given(&est, None) else {
                continue;
            };
            let name = format!("{model}-campaign{}-static_curve-breakaway", c.id);
            let given = Some(Given::StaticCurve(given));
            let mut fit = fit_one(model, procedure, run(from)?, given, name, db).await?;
            fit.note = Some(STATIC_FROM_BREAKAWAY.into());
            if fit.undetermined(&["vs"], REL_STD_ERROR_LIMIT)
                && let Some(dynamic) = output_error_step(model)
                && !steps.contains(&dynamic)
            {
                steps.push(dynamic);
            }
            fits.push(fit);
        }
    }
    let (presliding, validation) = (run(Step::Presliding)?, run(Step::Validation)?);
    let warmup_s = c
        .step(Step::Validation)
        .and_then(|s| super::floor::layout_of(&s.spec))
        .map_or(0.0, |(_, lead_s)| lead_s);
    let store = bench_daemon::db::open_existing(db).await?;
    let mut choices = Vec::new();
    for m in &req.models {
        // Each model scored at its final set (every part the order fitted), not refitted.
        let params = match final_fit_id(&fits, m) {
            Some(id) => store.parameter_set(id).await?.params,
            None => json!({}),
        };
        choices.push(ModelChoice {
            model: m.clone(),
            params,
            fit: Vec::new(),
        });
    }
    let scored = score(&store, presliding, validation, choices, warmup_s).await;
    let truth = match (&req.truth, &scored) {
        (Some(t), Ok(_)) => {
            let choice = ModelChoice {
                model: t.model.clone(),
                params: t.params.clone(),
                fit: Vec::new(),
            };
            let table = score(&store, presliding, validation, vec![choice], warmup_s).await;
            Some(table.map(|t| t.rows.first().map(|r| r.validation.all)))
        }
        _ => None,
    };
    let stored = match scored {
        Ok(table) => {
            fits.extend(contained_sets(&store, c.id, validation, &table).await?);
            let mut json = serde_json::to_value(&table)?;
            json["residual"] = json!(format!("friction [{}]", geometry.force()));
            let new = NewComparison {
                estimate_runs: vec![presliding],
                validate_runs: vec![validation],
                models: req.models.iter().map(|m| format!("{m}=none")).collect(),
                options: serde_json::to_value(StoredOptions {
                    velocity: Some("encoder centred difference".into()),
                    speed: Some("displacement".into()),
                    validation_warmup_s: Some(warmup_s),
                    campaign: Some(c.id),
                    params: Some("each model's final campaign set".into()),
                    ..StoredOptions::new(ReplayName::Velocity, PRESLIDING_V)
                })?,
                table: json,
            };
            store
                .add_comparison(&new)
                .await
                .map_err(anyhow::Error::from)
        }
        Err(e) => Err(e),
    };
    store.close().await;
    Ok((fits, stored?, truth.transpose()?.flatten()))
}

/// Fits `model` by `procedure` on run `run_id`, stored as `name`; the campaign's fit record
/// (its report, or the error that stopped it).
async fn fit_one(
    model: &str,
    procedure: &'static str,
    run_id: i64,
    given: Option<Given>,
    name: String,
    db: &Path,
) -> anyhow::Result<FitRecord> {
    let fr = FitRequest {
        model: model.into(),
        procedure: procedure.into(),
        run: run_id,
        given: given.map(|g| g.to_map()),
        name: Some(name),
        segments: None,
        t_range: None,
        timeout_s: Some(FIT_FUSE_S),
        encoder_velocity: true,
    };
    let dbp = db.to_path_buf();
    let fitted = tokio::task::spawn_blocking(move || fit_stored(&fr, &dbp)).await?;
    let mut record = FitRecord::new(model, procedure, run_id);
    match fitted.map(|f| f.to_json()) {
        Ok(Ok(report)) => record.report = Some(serde_json::from_value(report)?),
        Ok(Err(e)) | Err(e) => record.error = Some(e.to_string()),
    }
    Ok(record)
}

/// The set of the newest fit of `model` that found one, as the start of the next fit: its
/// negative set without the values it shares with the positive one (GMS's elements and
/// `sigma1`, which the model's rules keep equal, and a fit frees per direction).
fn newest_set(fits: &[FitRecord], model: &str) -> Option<serde_json::Map<String, Value>> {
    let mut p = fits
        .iter()
        .rev()
        .filter(|f| f.model == model && f.error.is_none())
        .find_map(FitRecord::params)?
        .clone();
    let positive = p.clone();
    if let Some(Value::Object(neg)) = p.get_mut("negative") {
        neg.retain(|k, v| positive.get(k) != Some(v));
    }
    Some(p)
}

/// |v| below this is presliding in the comparison's regime split \[rad/s\].
const PRESLIDING_V: f64 = 1e-3;

/// The set id the last successful fit of `model` saved.
fn final_fit_id(fits: &[FitRecord], model: &str) -> Option<i64> {
    fits.iter()
        .rev()
        .filter(|f| f.model == model)
        .find_map(FitRecord::set_id)
}

/// Scores `models` (no fitting) on the validation run, the presliding run as estimation data,
/// replayed by the encoder's speed ([`super::encoder_velocity`]); the validation run's first
/// `warmup_s` (its lead-in) replayed, not scored.
async fn score(
    store: &Store,
    estimate: i64,
    validation: i64,
    models: Vec<ModelChoice>,
    warmup_s: f64,
) -> anyhow::Result<compare::Table> {
    let mut est = read_sources(Field::Estimate, &[Source::Run(estimate)], Some(store))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut val = read_sources(Field::Validate, &[Source::Run(validation)], Some(store))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    est.iter_mut()
        .chain(val.iter_mut())
        .for_each(super::encoder_velocity::from_encoder);
    let opts = CompareOptions {
        replay: Replay::Velocity,
        regimes: Regimes {
            presliding_velocity: PRESLIDING_V,
            presliding_displacement: None,
        },
        max_iters: 1,
        timeout: None,
        offset: Offset::None,
        speed: Speed::Displacement,
        // Scored on the passes the floor is measured on, not on the lead-in.
        validation_warmup_s: warmup_s,
    };
    tokio::task::spawn_blocking(move || {
        let mut table = compare::compare(&est, &val, &models, &opts)?;
        compare::never_worse_than_contained(&mut table, &est, &val, &opts);
        Ok::<_, friction::identify::FitError>(table)
    })
    .await?
    .map_err(|e| anyhow::anyhow!("compare: {e}"))
}

/// Stores the parameters of every row the comparison replaced by a contained model's (the
/// model's final campaign set from now on: the report and the compensation trial use it) and
/// returns their fit records, the replacement as the verdict.
async fn contained_sets(
    store: &Store,
    campaign: i64,
    validation: i64,
    table: &compare::Table,
) -> anyhow::Result<Vec<FitRecord>> {
    let mut out = Vec::new();
    for row in table.rows.iter().filter(|r| r.note.is_some()) {
        let note = row.note.clone().unwrap_or_default();
        let provenance = json!({"procedure": "contained", "campaign": campaign,
                                "validation_run": validation, "notes": [note]});
        let name = format!("{}-campaign{campaign}-contained", row.model);
        let id = store
            .add_parameter_set(&name, &row.model, &row.params, &provenance)
            .await?;
        let params = match &row.params {
            Value::Object(p) => p.clone(),
            _ => serde_json::Map::new(),
        };
        out.push(FitRecord {
            note: Some(note.clone()),
            report: Some(FitReport {
                parameter_set_id: Some(id),
                parameter_set_name: Some(name),
                params,
                verdict: Some(Verdict {
                    status: "warning".into(),
                    reasons: vec![note],
                    rest: serde_json::Map::new(),
                }),
                ..FitReport::default()
            }),
            ..FitRecord::new(&row.model, "contained", validation)
        });
    }
    Ok(out)
}

/// The answer from the comparison table and the trial's record: the ranking, the best model,
/// the compensation ranking and the residual's unit. Its sentence is [`super::judge`]'s (this
/// one stands when no model could be scored).
pub fn answer(table: &Value, trial: Option<&StepRecord>) -> Judged {
    let rows: Vec<ScoredRow> = table
        .get("rows")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default();
    let ranking: Vec<RankRow> = rows
        .into_iter()
        .map(|r| {
            let mse = r.validation.all;
            RankRow {
                rank: r.rank,
                model: r.model,
                validation_mse: mse,
                validation_rms: mse.map(f64::sqrt),
                error: r.error,
                note: r.note,
                tie: None,
            }
        })
        .collect();
    let trials = trial
        .map(StepRecord::trial_ranking)
        .unwrap_or_default()
        .to_vec();
    let unit = table
        .get("residual")
        .and_then(Value::as_str)
        .and_then(|r| {
            r.split_once('[')
                .map(|(_, u)| u.trim_end_matches(']').to_string())
        })
        .unwrap_or_else(|| "N m".into());
    let best = ranking.iter().find(|r| r.validation_rms.is_some());
    Judged {
        text: "No model could be scored on the validation run.".into(),
        best_model: best.map(|b| b.model.clone()),
        best_compensator: trials.first().map(|t| t.name.clone()),
        ranking,
        compensation: trials,
        unit,
        ..Judged::default()
    }
}

/// What the answer reads of a stored comparison row.
#[derive(serde::Deserialize)]
struct ScoredRow {
    rank: Option<usize>,
    model: String,
    #[serde(default)]
    validation: ScoredMse,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

/// A row's validation MSE (null when the model could not be scored).
#[derive(Default, serde::Deserialize)]
struct ScoredMse {
    #[serde(default)]
    all: Option<f64>,
}

/// The newest fitted set of `model` in the campaign's fits (the last step of its order).
pub fn final_fit<'a>(c: &'a Record, model: &str) -> Option<&'a FitRecord> {
    c.fits
        .iter()
        .rev()
        .find(|f| f.model == model && f.report.is_some())
}

/// The stored parameter set a model's last fit saved, whole (Stribeck and presliding parts).
pub async fn final_params(store: &Store, c: &Record, model: &str) -> Option<Value> {
    let id = final_fit(c, model)?.set_id()?;
    store.parameter_set(id).await.ok().map(|s| s.params)
}

/// Why the static fit holds an estimated `vs`: neither a held point nor the sliding phases
/// measured it.
pub const VS_NOT_MEASURED: &str = "vs not measured: no loop held a speed on the Stribeck fall and the sliding phases of the low-speed check's stick-slip did not determine it (too few bins below vs, or friction lagging the speed in the slips); vs held at the low-speed check's estimate and delta at 2, so vs and the fc it shapes are not the bench's to within 10 %";

/// Why the static fit holds `vs` and `delta`.
fn sliding_note(f: &Fall) -> String {
    format!(
        "no loop held a speed below vs: vs {:.4} ± {:.4} rad/s and delta {} from {} bins of the sliding phases of the low-speed check's stick-slip (torque sensor against the encoder's centred speed) and the held sweep points, fs per direction held at the breakaway step's (reduced chi-square {:.1}); held in this fit",
        f.vs, f.vs_se, f.delta, f.n, f.chi2
    )
}

/// The Stribeck fall from the sliding phases of the low-speed check's stick-slip with the
/// sweep's held points ([`sliding::fit`]), `fs` per direction at the
/// breakaway's; `None` when they do not determine `vs` (its relative standard error over the
/// verdict's limit, fewer than [`MIN_BELOW`] sliding bins below it, or a reduced chi-square
/// over [`MAX_CHI2`]) or there is no breakaway.
async fn sliding_fall(c: &Record, est: &Estimates, db: &Path) -> anyhow::Result<Option<Fall>> {
    let (Some(pos), Some(neg)) = (est.fs_pos, est.fs_neg) else {
        return Ok(None);
    };
    let sweep = c.step(Step::Sweep).and_then(StepRecord::stribeck_points);
    let held: Vec<Bin> = sweep
        .into_iter()
        .flat_map(|s| [(true, &s.positive), (false, &s.negative)])
        .flat_map(|(positive, pts)| {
            pts.iter().filter(|p| !p.stick_slip).map(move |p| Bin {
                v: p.velocity_rad_s.abs(),
                f: p.mean_torque_nm.abs(),
                se: p.std_torque_nm / (p.n as f64).max(1.0).sqrt(),
                positive,
            })
        })
        .collect();
    // Sliding samples below the slowest held speed (above it the held points measure the
    // curve at steady state).
    let v_top = held
        .iter()
        .map(|b| b.v)
        .reduce(f64::min)
        .or(est.v_hold)
        .unwrap_or(1.0);
    let store = bench_daemon::db::open_existing(db).await?;
    // The low-speed check's slips only: it runs every speed through the velocity loop. The
    // sweep's slips below the held speed run against the position loop's spring, and their
    // bins sit about 2 % above the curve on the simulated bench (its friction changes within
    // the centred window), which a 10 % reading of `vs` cannot afford.
    let mut slips = Vec::new();
    if let Some(id) = c.run_of(Step::LowSpeedCheck) {
        let samples = bench_daemon::session::experiment_samples(&store, id).await;
        store.close().await;
        let samples = samples?;
        slips = sliding::bins(&samples, super::encoder_velocity::count_of(&samples), v_top);
    } else {
        store.close().await;
    }
    let slips_v: Vec<f64> = slips.iter().map(|b| b.v).collect();
    let mut bins = held;
    bins.extend(slips);
    let v_lo = bins.iter().map(|b| b.v).reduce(f64::min).unwrap_or(0.0);
    let v_hi = bins.iter().map(|b| b.v).reduce(f64::max).unwrap_or(0.0);
    let floor = 1e-3 * pos.max(neg);
    let fall =
        tokio::task::spawn_blocking(move || sliding::fit(&bins, (pos, neg), floor, (v_lo, v_hi)))
            .await?;
    Ok(fall.filter(|f| {
        let below = slips_v.iter().filter(|v| **v < f.vs).count();
        f.vs_se / f.vs <= REL_STD_ERROR_LIMIT && f.chi2 <= MAX_CHI2 && below >= MIN_BELOW
    }))
}

/// Largest reduced chi-square of a sliding fit the campaign uses: above it the bins do not
/// follow one steady-state curve (the friction lags the speed in the slips, as a LuGre
/// bristle does), and no static curve read from them is the bench's.
const MAX_CHI2: f64 = 10.0;
/// Fewest sliding bins below the fitted `vs` (the rule for the sweep: points below
/// `vs`, not only the fall's tail).
const MIN_BELOW: usize = 5;

/// A fuse on one fit's wall time \[s\]. The fits are bounded by their work (the iteration
/// caps, the output-error fit's starts and its sub-step refinement's budget), not by the
/// clock, so that a campaign's results do not depend on the machine's load; this only stops a
/// fit that would not end (its report then says `timeout`).
const FIT_FUSE_S: f64 = 120.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maxwell_slip_is_given_the_swing_of_the_models_newest_static_curve() {
        let record = |v: Value| serde_json::from_value::<FitRecord>(v).unwrap();
        let stat = |model: &str, p: Value| {
            record(
                json!({"model": model, "procedure": "static_curve", "run_id": 1,
                          "report": {"params": p}}),
            )
        };
        let fits = [
            stat("gms", json!({"fs": 25.9, "negative": {"fs": 20.0}})),
            stat("gms", json!({"fs": 1.2, "negative": {"fs": 1.0}})),
            stat("lugre", json!({"fs": 0.9})),
            record(
                json!({"model": "gms", "procedure": "static_curve", "run_id": 1, "error": "no data"}),
            ),
        ];
        let swing = |m: &str| match static_swing(&fits[..3], m) {
            Some(Given::MaxwellSlip { static_swing }) => Some(static_swing),
            _ => None,
        };
        assert!((swing("gms").unwrap() - 2.2).abs() < 1e-12);
        assert_eq!(swing("lugre"), Some(1.8));
        assert_eq!(
            static_swing(&fits, "gms"),
            None,
            "a failed refit gives none"
        );
        assert_eq!(static_swing(&fits, "stribeck_exp"), None);
    }
}
