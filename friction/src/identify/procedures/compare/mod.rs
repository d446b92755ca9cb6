//! The model comparison table (issue 5; after Nnaji et al., S3 Tables 6–7): fit every chosen
//! model on estimation data, then score it on estimation and validation data, per regime.
//!
//! Each model is fitted by [output error](super::output_error) on its chosen parameters (or
//! used with its given/default parameters when none is chosen), then every segment is replayed
//! and the squared residuals are averaged per regime:
//!
//! - **presliding**: `|v| < presliding_velocity`, or (when `presliding_displacement` is given)
//!   the displacement since the last velocity reversal is within it;
//! - **gross sliding**: every other sample.
//!
//! Models are ranked by their mean squared residual over all validation samples (1 = best).

use super::output_error::DataUsed;
use super::output_error::{self, FreeParam, Method, Options, Replay, Segment};
use super::{FitReport, Offset};
use crate::identify::FitError;
use crate::registry;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::time::Duration;

mod stored;
pub use stored::{CsvFiles, ReplayName, StartSource, StoredOptions};

/// One model of the comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelChoice {
    /// Model id.
    pub model: String,
    /// Fixed parameters and start values over the defaults.
    pub params: Value,
    /// Parameters to fit (empty: use `params` as they are).
    pub fit: Vec<String>,
}

impl ModelChoice {
    /// Parses `ID` (fit every parameter whose rules make it positive and whose default is
    /// \> 0), `ID=p1+p2` (fit these; `negative.p1` fits `p1` of negative motion apart), or
    /// `ID=none` (defaults, no fit).
    pub fn parse(text: &str) -> Result<ModelChoice, FitError> {
        let (id, names) = match text.split_once('=') {
            Some((id, n)) => (id.trim(), Some(n.trim())),
            None => (text.trim(), None),
        };
        let entry = registry::entry(id).map_err(|e| FitError::Setting {
            field: "models".into(),
            rule: e.to_string(),
        })?;
        let fit = match names {
            Some("none") | Some("") => Vec::new(),
            Some(n) => n.split('+').map(|s| s.trim().to_string()).collect(),
            None => default_fit(entry),
        };
        if let Some(bad) = fit.iter().find(|n| {
            let known = match n.strip_prefix("negative.") {
                // A negative-side parameter: one the model's negative set takes.
                Some(_) => output_error::negative_taken(entry, n),
                None => entry.params.iter().any(|p| p.name == n.as_str()),
            };
            *n != "mass" && !known
        }) {
            let known: Vec<&str> = entry.params.iter().map(|p| p.name).collect();
            return Err(FitError::Setting {
                field: format!("{id}.{bad}"),
                rule: format!("is not a parameter of '{id}' (known: {})", known.join(", ")),
            });
        }
        Ok(ModelChoice {
            model: id.into(),
            params: Value::Object(Map::new()),
            fit,
        })
    }
}

/// Every parameter of `entry` whose validation refuses 0 or a negative value and whose default
/// is > 0 (the physical coefficients; shape switches such as `vd = 0` stay fixed).
pub fn default_fit(entry: &registry::ModelEntry) -> Vec<String> {
    let d = entry.defaults();
    entry
        .params
        .iter()
        .filter(|p| {
            let Some(v) = d.get(p.name).and_then(Value::as_f64) else {
                return false;
            };
            v > 0.0
                && [0.0, -v].iter().any(|x| {
                    let mut m = Map::new();
                    m.insert(p.name.into(), Value::from(*x));
                    entry.build(Value::Object(m)).is_err()
                })
        })
        .map(|p| p.name.to_string())
        .collect()
}

/// How samples are split into regimes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, JsonSchema)]
#[schemars(rename = "ComparisonRegimes")]
pub struct Regimes {
    /// `|v|` below this is presliding \[m/s or rad/s\].
    pub presliding_velocity: f64,
    /// Displacement since the last reversal within which motion is presliding \[m or rad\].
    pub presliding_displacement: Option<f64>,
}

impl Default for Regimes {
    /// `|v| < 1e-3`, no displacement criterion.
    fn default() -> Regimes {
        Regimes {
            presliding_velocity: 1e-3,
            presliding_displacement: None,
        }
    }
}

impl Regimes {
    /// `true` for each presliding sample of `s`.
    pub fn presliding(&self, s: &Segment) -> Vec<bool> {
        let mut x_rev = s.x.first().copied().unwrap_or(0.0);
        let mut dir = 0.0;
        s.v.iter()
            .zip(&s.x)
            .map(|(&v, &x)| {
                if v != 0.0 && v.signum() != dir {
                    dir = v.signum();
                    x_rev = x;
                }
                v.abs() < self.presliding_velocity
                    || self
                        .presliding_displacement
                        .is_some_and(|d| (x - x_rev).abs() <= d)
            })
            .collect()
    }
}

/// Mean squared residuals of one model on one data set.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, JsonSchema)]
#[schemars(rename = "ComparisonScores")]
pub struct Scores {
    /// Over every sample (null: the model failed, or no sample was scored).
    #[schemars(with = "Option<f64>")]
    pub all: f64,
    /// Over presliding samples (`None` if there is none).
    pub presliding: Option<f64>,
    /// Over gross-sliding samples (`None` if there is none).
    pub gross_sliding: Option<f64>,
    /// Presliding samples.
    pub n_presliding: usize,
    /// Gross-sliding samples.
    pub n_gross_sliding: usize,
}

impl Scores {
    pub(super) fn failed() -> Scores {
        Scores {
            all: f64::NAN,
            presliding: None,
            gross_sliding: None,
            n_presliding: 0,
            n_gross_sliding: 0,
        }
    }
}

/// Per sample of each segment: presliding (`Some(true)`), gross sliding (`Some(false)`), or
/// not scored (`None`: within the first `warmup_s` of its segment, where the replay only
/// brings the model to the state the scored samples start from).
fn masks(regimes: &Regimes, segs: &[Segment], warmup_s: f64) -> Vec<Vec<Option<bool>>> {
    segs.iter()
        .map(|s| {
            let t0 = s.t.first().copied().unwrap_or(0.0);
            regimes
                .presliding(s)
                .into_iter()
                .zip(&s.t)
                .map(|(p, t)| (*t >= t0 + warmup_s).then_some(p))
                .collect()
        })
        .collect()
}

/// Scores residuals (per segment) with the regime masks (per segment), samples masked `None`
/// left out.
fn score(res: &[Vec<f64>], masks: &[Vec<Option<bool>>]) -> Scores {
    let (mut sp, mut np, mut sg, mut ng) = (0.0, 0usize, 0.0, 0usize);
    for (r, m) in res.iter().zip(masks) {
        for (r, p) in r.iter().zip(m) {
            let Some(p) = *p else {
                continue;
            };
            if p {
                sp += r * r;
                np += 1;
            } else {
                sg += r * r;
                ng += 1;
            }
        }
    }
    let mean = |s: f64, n: usize| (n > 0).then(|| s / n as f64);
    Scores {
        all: if np + ng > 0 {
            (sp + sg) / (np + ng) as f64
        } else {
            f64::NAN
        },
        presliding: mean(sp, np),
        gross_sliding: mean(sg, ng),
        n_presliding: np,
        n_gross_sliding: ng,
    }
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[schemars(rename = "ComparisonRow")]
pub struct Row {
    /// Rank by validation MSE (1 = best); failed models come last.
    pub rank: usize,
    /// Model id.
    pub model: String,
    /// The parameters scored (fitted and fixed).
    pub params: Value,
    /// The fit (parameters, standard errors, provenance), if parameters were fitted.
    pub fit: Option<FitReport>,
    /// Scores on the estimation data.
    pub estimation: Scores,
    /// Scores on the validation data.
    pub validation: Scores,
    /// Why the model could not be fitted or scored.
    pub error: Option<String>,
    /// What was done to its parameters after the fit (see [`never_worse_than_contained`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Row {
    /// The row of `m`: its given parameters, then what `fill` fits and scores. An error of
    /// `fill` is kept as the row's, with the scores failed (ranked last).
    pub(super) fn scored(
        m: &ModelChoice,
        fill: impl FnOnce(&mut Row) -> Result<(), FitError>,
    ) -> Row {
        let mut row = Row {
            rank: 0,
            model: m.model.clone(),
            params: m.params.clone(),
            fit: None,
            estimation: Scores::failed(),
            validation: Scores::failed(),
            error: None,
            note: None,
        };
        if let Err(e) = fill(&mut row) {
            row.error = Some(e.to_string());
        }
        row
    }
}

/// The comparison table (a stored comparison's `table`).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[schemars(rename = "ComparisonTable")]
pub struct Table {
    /// What the residual is (`friction [N or N m]` or `position [m or rad]`).
    pub residual: String,
    /// The regime split.
    pub regimes: Regimes,
    /// Estimation data.
    pub estimation_data: Vec<DataUsed>,
    /// Validation data.
    pub validation_data: Vec<DataUsed>,
    /// Rows in rank order.
    pub rows: Vec<Row>,
}

/// Settings of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareOptions {
    /// How the data drive the models.
    pub replay: Replay,
    /// Regime split.
    pub regimes: Regimes,
    /// LM iteration cap per model.
    pub max_iters: u64,
    /// Wall-time budget per model fit.
    pub timeout: Option<Duration>,
    /// A constant force offset in the measurement, fitted per model or known (a stored set's
    /// `offset` among a model's parameters is always subtracted).
    pub offset: Offset,
    /// The speed between samples of a velocity replay when a model is fitted and scored.
    pub speed: output_error::Speed,
    /// The first seconds of each validation segment drive the replay but are not scored: a
    /// lead-in that brings the bench (and the models) to the state the scored part starts
    /// from (the campaign's validation run, whose repeats are its floor).
    pub validation_warmup_s: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            replay: Replay::Velocity,
            regimes: Regimes::default(),
            max_iters: 100,
            timeout: None,
            offset: Offset::None,
            speed: output_error::Speed::Linear,
            validation_warmup_s: 0.0,
        }
    }
}

/// Fits each model on `estimate` and scores it on `estimate` and `validate`.
pub fn compare(
    estimate: &[Segment],
    validate: &[Segment],
    models: &[ModelChoice],
    opts: &CompareOptions,
) -> Result<Table, FitError> {
    if estimate.is_empty() || validate.is_empty() {
        return Err(FitError::Data(
            "the comparison needs estimation and validation data".into(),
        ));
    }
    if models.is_empty() {
        return Err(FitError::Config {
            field: "models".into(),
            value: 0.0,
            rule: "must name at least one model".into(),
        });
    }
    for s in estimate.iter().chain(validate) {
        s.check(Some(&opts.replay))?;
    }
    let masks_e = masks(&opts.regimes, estimate, 0.0);
    let masks_v = masks(&opts.regimes, validate, opts.validation_warmup_s);
    let rows = models.iter().map(|m| {
        Row::scored(m, |row| {
            if !m.fit.is_empty() {
                let o = Options {
                    model: m.model.clone(),
                    params: m.params.clone(),
                    free: m.fit.iter().map(|n| FreeParam::named(n)).collect(),
                    replay: opts.replay,
                    warmup_s: 0.0,
                    method: Method::Lm,
                    max_iters: opts.max_iters,
                    timeout: opts.timeout,
                    threads: 0,
                    diff_step: 1e-6,
                    offset: opts.offset,
                    substeps: None,
                    nested: true,
                    bootstrap: None,
                    hold: super::output_error::Hold::Linear,
                    // Fitted on the replay it is scored on.
                    speed: opts.speed,
                };
                let r = output_error::fit(estimate, &o)?;
                row.params = Value::Object(r.params.clone());
                row.fit = Some(r);
            }
            row.estimation = score(
                &output_error::residuals_with(
                    &m.model,
                    &row.params,
                    estimate,
                    opts.replay,
                    opts.speed,
                )?,
                &masks_e,
            );
            row.validation = score(
                &output_error::residuals_with(
                    &m.model,
                    &row.params,
                    validate,
                    opts.replay,
                    opts.speed,
                )?,
                &masks_v,
            );
            if !row.validation.all.is_finite() {
                return Err(FitError::Eval("the validation replay is not finite".into()));
            }
            Ok(())
        })
    });
    Ok(Table::ranked(
        opts.replay.residual_name(),
        opts.regimes,
        estimate,
        validate,
        rows.collect(),
    ))
}

impl Table {
    /// The table of `rows`, ranked, on the `estimate` and `validate` records.
    pub(super) fn ranked(
        residual: &str,
        regimes: Regimes,
        estimate: &[Segment],
        validate: &[Segment],
        mut rows: Vec<Row>,
    ) -> Table {
        rank(&mut rows);
        Table {
            residual: residual.into(),
            regimes,
            estimation_data: estimate.iter().map(Segment::used).collect(),
            validation_data: validate.iter().map(Segment::used).collect(),
            rows,
        }
    }
}

/// Sorts rows by validation MSE (failed ones last; of equal scores the simpler model first)
/// and numbers them, equal scores sharing a rank.
fn rank(rows: &mut [Row]) {
    let key = |r: &Row| {
        if r.error.is_none() {
            r.validation.all
        } else {
            f64::INFINITY
        }
    };
    rows.sort_by(|a, b| {
        let depth = |r: &Row| super::nested::chain(&r.model).len();
        key(a)
            .total_cmp(&key(b))
            .then_with(|| depth(a).cmp(&depth(b)))
    });
    for i in 0..rows.len() {
        rows[i].rank = match i.checked_sub(1) {
            Some(j) if key(&rows[j]) == key(&rows[i]) && rows[i].error.is_none() => rows[j].rank,
            _ => i + 1,
        };
    }
}

/// The verdict of a row whose fitted parameters were replaced by a contained model's.
pub const CONTAINED_USED: &str = "fit worse than contained model; contained parameters used";

/// A model is never reported worse than a simpler one it contains (Coulomb + viscous ⊂
/// Stribeck ⊂ LuGre, GMS; docs/src/identification.md#nested-models): a row scoring worse on
/// validation than a contained model's row (or failing) is scored again with that row's
/// parameters put in its place (its steady state exactly the contained model's, its own
/// presliding spring kept, with and without its damping), and the best of these is used, its
/// `note` saying so. The fits keep
/// every nested model at least as good as the model it contains on the data they were fitted
/// on; this holds the same on the validation data, where a fit that extrapolated can fail.
pub fn never_worse_than_contained(
    table: &mut Table,
    estimate: &[Segment],
    validate: &[Segment],
    opts: &CompareOptions,
) {
    let masks_e = masks(&opts.regimes, estimate, 0.0);
    let masks_v = masks(&opts.regimes, validate, opts.validation_warmup_s);
    let scored: Vec<(String, Value, f64)> = table
        .rows
        .iter()
        .filter(|r| r.error.is_none())
        .map(|r| (r.model.clone(), r.params.clone(), r.validation.all))
        .collect();
    for row in &mut table.rows {
        let chain = super::nested::chain(&row.model);
        let mut best: Option<(Value, Scores, Scores, &str)> = None;
        let own = if row.error.is_none() {
            row.validation.all
        } else {
            f64::INFINITY
        };
        for (inner, params, mse) in scored.iter().filter(|s| chain.contains(&s.0.as_str())) {
            let bar = best.as_ref().map_or(own, |b| b.2.all);
            if *mse >= bar {
                continue;
            }
            let Some(p) = super::nested::embed(&row.model, &row.params, inner, params) else {
                continue;
            };
            // As fitted, and without the damping the contained model has no counterpart of.
            let mut undamped = p.clone();
            for name in super::nested::damping(&row.model) {
                undamped[*name] = 0.0.into();
                if let Some(n) = undamped
                    .get_mut("negative")
                    .filter(|n| n.get(*name).is_some())
                {
                    n[*name] = 0.0.into();
                }
            }
            for p in [p, undamped] {
                let replay = |segs: &[Segment], masks: &[Vec<Option<bool>>]| {
                    output_error::residuals_with(&row.model, &p, segs, opts.replay, opts.speed)
                        .ok()
                        .map(|r| score(&r, masks))
                };
                let bar = best.as_ref().map_or(bar, |b| b.2.all);
                if let (Some(e), Some(v)) = (replay(estimate, &masks_e), replay(validate, &masks_v))
                    && v.all.is_finite()
                    && v.all < bar
                {
                    best = Some((p, e, v, inner.as_str()));
                }
            }
        }
        if let Some((p, e, v, inner)) = best {
            row.note = Some(format!("{CONTAINED_USED} ({inner})"));
            row.params = p;
            row.estimation = e;
            row.validation = v;
            row.error = None;
        }
    }
    rank(&mut table.rows);
}

#[cfg(test)]
mod tests;
