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
use serde::Serialize;
use serde_json::{Map, Value};
use std::time::Duration;

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
    /// > 0), `ID=p1+p2` (fit these), or `ID=none` (defaults, no fit).
    pub fn parse(text: &str) -> Result<ModelChoice, FitError> {
        let (id, names) = match text.split_once('=') {
            Some((id, n)) => (id.trim(), Some(n.trim())),
            None => (text.trim(), None),
        };
        let entry = registry::entry(id).map_err(|e| FitError::Config {
            field: "models".into(),
            value: f64::NAN,
            rule: e.to_string(),
        })?;
        let fit = match names {
            Some("none") | Some("") => Vec::new(),
            Some(n) => n.split('+').map(|s| s.trim().to_string()).collect(),
            None => default_fit(entry),
        };
        if let Some(bad) = fit
            .iter()
            .find(|n| *n != "mass" && !entry.params.iter().any(|p| p.name == n.as_str()))
        {
            let known: Vec<&str> = entry.params.iter().map(|p| p.name).collect();
            return Err(FitError::Config {
                field: format!("{id}.{bad}"),
                value: f64::NAN,
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
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Scores {
    /// Over every sample.
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
    fn failed() -> Scores {
        Scores {
            all: f64::NAN,
            presliding: None,
            gross_sliding: None,
            n_presliding: 0,
            n_gross_sliding: 0,
        }
    }
}

/// Scores residuals (per segment) with the regime masks (per segment).
fn score(res: &[Vec<f64>], masks: &[Vec<bool>]) -> Scores {
    let (mut sp, mut np, mut sg, mut ng) = (0.0, 0usize, 0.0, 0usize);
    for (r, m) in res.iter().zip(masks) {
        for (r, &p) in r.iter().zip(m) {
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
}

/// The comparison table.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            replay: Replay::Velocity,
            regimes: Regimes::default(),
            max_iters: 100,
            timeout: None,
            offset: Offset::None,
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
    let masks_e: Vec<Vec<bool>> = estimate
        .iter()
        .map(|s| opts.regimes.presliding(s))
        .collect();
    let masks_v: Vec<Vec<bool>> = validate
        .iter()
        .map(|s| opts.regimes.presliding(s))
        .collect();
    let mut rows = Vec::new();
    for m in models {
        let mut row = Row {
            rank: 0,
            model: m.model.clone(),
            params: m.params.clone(),
            fit: None,
            estimation: Scores::failed(),
            validation: Scores::failed(),
            error: None,
        };
        let outcome = (|| -> Result<(), FitError> {
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
                };
                let r = output_error::fit(estimate, &o)?;
                row.params = Value::Object(r.params.clone());
                row.fit = Some(r);
            }
            row.estimation = score(
                &output_error::residuals_of(&m.model, &row.params, estimate, opts.replay)?,
                &masks_e,
            );
            row.validation = score(
                &output_error::residuals_of(&m.model, &row.params, validate, opts.replay)?,
                &masks_v,
            );
            if !row.validation.all.is_finite() {
                return Err(FitError::Eval("the validation replay is not finite".into()));
            }
            Ok(())
        })();
        if let Err(e) = outcome {
            row.error = Some(e.to_string());
        }
        rows.push(row);
    }
    rows.sort_by(|a, b| {
        let key = |r: &Row| {
            if r.error.is_none() {
                r.validation.all
            } else {
                f64::INFINITY
            }
        };
        key(a).total_cmp(&key(b))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    Ok(Table {
        residual: opts.replay.residual_name().into(),
        regimes: opts.regimes,
        estimation_data: estimate.iter().map(Segment::used).collect(),
        validation_data: validate.iter().map(Segment::used).collect(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_model_choices() {
        let c = ModelChoice::parse("lugre=sigma0+fc").unwrap();
        assert_eq!(c.fit, ["sigma0", "fc"]);
        assert!(ModelChoice::parse("coulomb=none").unwrap().fit.is_empty());
        let all = ModelChoice::parse("lugre").unwrap().fit;
        for p in ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"] {
            assert!(all.iter().any(|a| a == p), "{all:?}");
        }
        assert!(!all.iter().any(|a| a == "vd"), "{all:?}");
        assert!(
            ModelChoice::parse("nope")
                .unwrap_err()
                .to_string()
                .contains("unknown model")
        );
    }

    #[test]
    fn regimes_split_on_velocity_and_displacement() {
        let seg = Segment {
            source: "s".into(),
            t: vec![0.0, 1.0, 2.0, 3.0, 4.0],
            x: vec![0.0, 0.1, 0.3, 0.6, 0.55],
            v: vec![0.0, 0.1, 0.2, 0.3, -0.05],
            u: vec![0.0; 5],
            friction: vec![0.0; 5],
        };
        let r = Regimes {
            presliding_velocity: 0.15,
            presliding_displacement: None,
        };
        assert_eq!(r.presliding(&seg), [true, true, false, false, true]);
        let r = Regimes {
            presliding_velocity: 0.01,
            presliding_displacement: Some(0.25),
        };
        assert_eq!(r.presliding(&seg), [true, true, true, false, true]);
    }
}
