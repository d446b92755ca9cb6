//! The campaign's fits, comparison and answer: each model fitted in the documented order
//! (docs/src/identification.md#order: the Stribeck curve on the sweep, then the presliding part
//! on the presliding run), the fitted sets scored on the validation run (`bench compare` with
//! `MODEL=none`, each model at its newest set), and the plain-language answer.

use super::design::Estimates;
use super::{Request, estimates, step};
use crate::config::Geometry;
use crate::fitting::compare::{Source, read_sources};
use crate::fitting::{Field, FitRequest, fit::fit_stored};
use friction::identify::procedures::Offset;
use friction::identify::procedures::compare::{self, CompareOptions, ModelChoice, Regimes};
use friction::identify::procedures::output_error::Replay;
use run_store::{Campaign, NewComparison, Store};
use serde_json::{Value, json};
use std::path::Path;

/// The documented order of one model: (procedure, step whose run it fits, given). The
/// Stribeck curve from the sweep's held points, then the presliding part from the presliding
/// run. When the velocity loop did not hold the Stribeck region (the held points
/// show no fall from the breakaway level), the held points cannot tell `fs` and `vs`: the static fit then takes `fs`
/// from the breakaway ramps (S4 §4.4 fixes `fs` before fitting the shape), and `vs` (with the
/// dynamic models' damping, as the documented optional step) is fitted by output error on the
/// low-speed check, whose stick-slip crosses the falling part of the curve.
pub fn order(model: &str, est: &Estimates) -> Vec<(&'static str, &'static str, Option<Value>)> {
    let fs = match (est.fs_pos, est.fs_neg) {
        (Some(a), Some(b)) => Some(0.5 * (a + b)),
        (a, b) => a.or(b),
    };
    let unheld = !est.stribeck_held;
    let stribeck = model != "coulomb_viscous";
    let static_given = match fs {
        Some(fs) if unheld && stribeck => {
            Some(json!({"fs": fs, "vs": est.vs.unwrap_or(0.1), "delta": 2.0}))
        }
        _ => None,
    };
    let mut out = vec![("static_curve", "sweep", static_given)];
    let dynamic = match model {
        "lugre" => {
            out.push(("presliding_sine", "presliding", None));
            vec!["vs", "sigma1"]
        }
        "gms" => {
            out.push(("maxwell_slip", "presliding", None));
            vec!["vs", "sigma1", "c"]
        }
        _ => Vec::new(),
    };
    if unheld && !dynamic.is_empty() {
        out.push((
            "output_error",
            "low_speed_check",
            Some(json!({"fit": dynamic, "max_iters": 30, "timeout_s": FIT_TIMEOUT_S})),
        ));
    }
    out
}

/// Fits every model in its order, compares them on the validation run and, on the simulated
/// bench, scores the true model on the same run (the noise floor). Returns the fits, the
/// stored comparison's id and the truth's validation MSE.
pub async fn fit_and_compare(
    c: &Campaign,
    req: &Request,
    db: &Path,
    geometry: Geometry,
) -> anyhow::Result<(Vec<Value>, i64, Option<f64>)> {
    let run = |name: &str| {
        step(c, name)
            .and_then(|s| s["run_id"].as_i64())
            .ok_or_else(|| anyhow::anyhow!("the {name} step has no completed run"))
    };
    let mut fits = Vec::new();
    let est = estimates(c);
    for model in &req.models {
        for (procedure, from, given) in order(model, &est) {
            let fr = FitRequest {
                model: model.clone(),
                procedure: procedure.into(),
                run: run(from)?,
                given: given.and_then(|g| g.as_object().cloned()),
                name: Some(format!("{model}-campaign{}-{procedure}", c.id)),
                segments: None,
                t_range: None,
                timeout_s: Some(FIT_TIMEOUT_S),
            };
            let dbp = db.to_path_buf();
            let fitted = tokio::task::spawn_blocking(move || fit_stored(&fr, &dbp)).await?;
            fits.push(match fitted.map(|f| f.to_json()) {
                Ok(Ok(report)) => json!({"model": model, "procedure": procedure, "run_id": run(from)?, "report": report}),
                Ok(Err(e)) | Err(e) => json!({"model": model, "procedure": procedure, "run_id": run(from)?, "error": e.to_string()}),
            });
        }
    }
    let (presliding, validation) = (run("presliding")?, run("validation")?);
    let store = crate::db::open_existing(db).await?;
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
    let scored = score(&store, presliding, validation, choices).await;
    let truth = match (&req.truth, &scored) {
        (Some(t), Ok(_)) => {
            let choice = ModelChoice {
                model: t.model.clone(),
                params: t.params.clone(),
                fit: Vec::new(),
            };
            let table = score(&store, presliding, validation, vec![choice]).await;
            Some(table.map(|t| t.rows.first().map(|r| r.validation.all)))
        }
        _ => None,
    };
    let stored = match scored {
        Ok(table) => {
            let mut json = serde_json::to_value(&table)?;
            json["residual"] = json!(format!("friction [{}]", geometry.force()));
            let new = NewComparison {
                estimate_runs: vec![presliding],
                validate_runs: vec![validation],
                models: req.models.iter().map(|m| format!("{m}=none")).collect(),
                options: json!({"replay": "velocity", "presliding_velocity": PRESLIDING_V,
                                "campaign": c.id, "params": "each model's final campaign set"}),
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

/// |v| below this is presliding in the comparison's regime split \[rad/s\].
const PRESLIDING_V: f64 = 1e-3;

/// The set id the last successful fit of `model` saved.
fn final_fit_id(fits: &[Value], model: &str) -> Option<i64> {
    fits.iter()
        .rev()
        .filter(|f| f["model"] == model)
        .find_map(|f| f["report"]["parameter_set_id"].as_i64())
}

/// Scores `models` (no fitting) on the validation run, the presliding run as estimation data,
/// replayed by the measured velocity.
async fn score(
    store: &Store,
    estimate: i64,
    validation: i64,
    models: Vec<ModelChoice>,
) -> anyhow::Result<compare::Table> {
    let est = read_sources(Field::Estimate, &[Source::Run(estimate)], Some(store))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let val = read_sources(Field::Validate, &[Source::Run(validation)], Some(store))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let opts = CompareOptions {
        replay: Replay::Velocity,
        regimes: Regimes {
            presliding_velocity: PRESLIDING_V,
            presliding_displacement: None,
        },
        max_iters: 1,
        timeout: None,
        offset: Offset::None,
    };
    tokio::task::spawn_blocking(move || compare::compare(&est, &val, &models, &opts))
        .await?
        .map_err(|e| anyhow::anyhow!("compare: {e}"))
}

/// The answer from the comparison table and the trial's record: the ranking, the best model,
/// its validation RMS, its compensation gain, and the sentence that says so.
pub fn answer(table: &Value, trial: &Value) -> Value {
    let rows = table["rows"].as_array().cloned().unwrap_or_default();
    let ranking: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mse = r["validation"]["all"].as_f64();
            json!({"rank": r["rank"], "model": r["model"], "validation_mse": mse,
                   "validation_rms": mse.map(f64::sqrt), "error": r["error"]})
        })
        .collect();
    let trials = trial["results"]["ranking"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let gain = |m: &str| {
        trials
            .iter()
            .find(|t| t["name"] == m)
            .and_then(|t| t["improvement_pct"].as_f64())
    };
    let unit = table["residual"]
        .as_str()
        .and_then(|r| {
            r.split_once('[')
                .map(|(_, u)| u.trim_end_matches(']').to_string())
        })
        .unwrap_or_else(|| "N m".into());
    let best = ranking.iter().find(|r| r["validation_rms"].is_number());
    let text = match best {
        Some(b) => {
            let m = b["model"].as_str().unwrap_or("?");
            let rms = b["validation_rms"].as_f64().unwrap_or(f64::NAN);
            let comp = match gain(m) {
                Some(g) if g >= 0.0 => {
                    format!("compensating with it reduces the tracking error by {g:.0} %")
                }
                Some(g) => format!(
                    "compensating with it increases the tracking error by {:.0} %",
                    -g
                ),
                None => "it was not part of the compensation trial".into(),
            };
            format!("{m} describes this bench best: validation RMS {rms:.3} {unit}; {comp}.")
        }
        None => "No model could be scored on the validation run.".into(),
    };
    json!({
        "text": text,
        "best_model": best.map(|b| b["model"].clone()),
        "ranking": ranking,
        "best_compensator": trials.first().map(|t| t["name"].clone()),
        "compensation": trials,
        "unit": unit,
    })
}

/// The newest fitted set of `model` in the campaign's fits (the last step of its order).
pub fn final_fit<'a>(c: &'a Campaign, model: &str) -> Option<&'a Value> {
    c.fits
        .iter()
        .rev()
        .find(|f| f["model"] == model && f["report"].is_object())
}

/// The stored parameter set a model's last fit saved, whole (Stribeck and presliding parts).
pub async fn final_params(store: &Store, c: &Campaign, model: &str) -> Option<Value> {
    let id = final_fit(c, model)?["report"]["parameter_set_id"].as_i64()?;
    store.parameter_set(id).await.ok().map(|s| s.params)
}

/// Wall-time cap of one fit \[s\]: the campaign's fits, comparison and report stay within
/// seconds after its last run (a fit stopped there says `timeout` in its report).
const FIT_TIMEOUT_S: f64 = 5.0;
