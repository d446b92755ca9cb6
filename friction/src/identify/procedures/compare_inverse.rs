//! The model comparison on the inverse model (docs/src/identification.md#comparing-inverse-models):
//! every chosen model fitted by [`idim_ls`] on the estimation record and scored
//! by its inverse-model force on estimation and validation records (the held-out prediction of
//! [`validation`]), so that a record of `t, x, u` alone (an imported run,
//! the EMPS files) can rank models as a friction record ranks them by replay.
//!
//! The residual is the measured force less the inverse model's, on the rows the fit keeps
//! (filtered and decimated as in the fit): it has no presliding/gross-sliding split (the
//! decimated rows carry no regime), so only `all` is scored.

use super::compare::{ModelChoice, Row, Scores, Table};
use super::output_error::Segment;
use super::{FitReport, Given, Table as Columns, idim_ls, validation};
use crate::identify::FitError;
use serde_json::Value;

/// What the residual is.
pub const RESIDUAL: &str = "force (the inverse model's)";

/// Fits each model of `models` by IDIM-LS on the one `estimate` record (`given` the options of
/// every fit, e.g. `asymmetric`, `force_held`; a model's `params` are held values) and scores
/// it on `estimate` and on each of `validate`.
pub fn compare(
    estimate: &[Segment],
    validate: &[Segment],
    models: &[ModelChoice],
    given: &Given,
) -> Result<Table, FitError> {
    let [fit_on] = estimate else {
        return Err(FitError::Setting {
            field: "estimate".into(),
            rule: format!(
                "takes one record for the inverse model (got {}): IDIM-LS filters a record as one time series",
                estimate.len()
            ),
        });
    };
    if validate.is_empty() {
        return Err(FitError::Data(
            "the comparison needs validation data".into(),
        ));
    }
    let fit_table = columns(fit_on)?;
    let validate_tables = validate
        .iter()
        .map(columns)
        .collect::<Result<Vec<_>, _>>()?;
    let rows = models.iter().map(|m| {
        Row::scored(m, |row| {
            let mut g = given.clone();
            if let Value::Object(held) = &m.params {
                g.extend(held.clone());
            }
            let r = super::run(idim_ls::PROCEDURE.name, &m.model, &fit_table, &g)?;
            row.estimation = score(&r, std::slice::from_ref(&fit_table))?;
            row.validation = score(&r, &validate_tables)?;
            row.params = Value::Object(r.params.clone());
            row.fit = Some(r);
            Ok(())
        })
    });
    Ok(Table::ranked(
        RESIDUAL,
        Default::default(),
        estimate,
        validate,
        rows.collect(),
    ))
}

/// The `t, x, u` columns of a segment.
fn columns(s: &Segment) -> Result<Columns, FitError> {
    Columns::new(vec![
        ("t".into(), s.t.clone()),
        ("x".into(), s.x.clone()),
        ("u".into(), s.u.clone()),
    ])
}

/// The mean squared inverse-model residual of `report` over `records`.
fn score(report: &FitReport, records: &[Columns]) -> Result<Scores, FitError> {
    let (mut sum, mut n) = (0.0, 0usize);
    for t in records {
        let v = validation::validate(report, t, "")?;
        sum += v.rms * v.rms * v.n as f64;
        n += v.n;
    }
    Ok(Scores {
        all: if n > 0 { sum / n as f64 } else { f64::NAN },
        ..Scores::failed()
    })
}
