//! IDIM-LS on a held-out record: the fitted set's inverse model predicts the force of a record
//! it was not fitted on, conditioned as in the fit (the same cut-off and decimation, the same
//! rows at rest left out per direction, the same handling of a held force).

use super::problem::{FC, FS, FV, J, OFF, Problem, VS, count, idx};
use super::regression::{self, FullRate, decimated_columns};
use super::{Conditioning, IdimLsOptions};
use crate::identify::FitError;
use crate::identify::procedures::typed::parse;
use crate::identify::procedures::{FitReport, Given, Table};
use serde_json::Value;

/// Settings of the fit that condition the held-out record the same way.
const SAME_AS_FIT: [&str; 4] = ["cutoff_hz", "decimation", "v_min", "force_held"];

/// `(measured, predicted)` force on `table` (`t, x, u`) by the set of `report`.
pub fn predict(report: &FitReport, table: &Table) -> Result<(Vec<f64>, Vec<f64>), FitError> {
    predict_with(report, table, true)
}

/// [`predict`]; `combined`: a linear model's prediction decimated as one column (else through
/// the regression's columns, as the fit did).
fn predict_with(
    report: &FitReport,
    table: &Table,
    combined: bool,
) -> Result<(Vec<f64>, Vec<f64>), FitError> {
    let name = super::PROCEDURE.name;
    let (t, x, u) = (
        table.column("t", name)?,
        table.column("x", name)?,
        table.column("u", name)?,
    );
    let fitted: IdimLsOptions = super::PROCEDURE.options_of(&report.provenance.given)?;
    let same: Given = SAME_AS_FIT
        .iter()
        .filter_map(|key| Some((key.to_string(), report.provenance.settings.get(*key)?.clone())))
        .collect();
    let conditioning = Conditioning {
        max_gap_steps: fitted.conditioning.max_gap_steps,
        ..parse(&same)?
    };
    let u = fitted.terms.load()?.subtract(x, u);
    let asymmetric = report.params.contains_key("negative");
    let stribeck = report.params.contains_key("fs");
    let sides = if asymmetric { 2 } else { 1 };
    let mut full = vec![0.0; count(sides)];
    full[J] = value(&report.params, "j")?;
    full[OFF] = report.param("offset").unwrap_or(0.0);
    for side in 0..sides {
        let params = match side {
            0 => &report.params,
            _ => report.params["negative"]
                .as_object()
                .ok_or_else(|| FitError::Bug("idim_ls: params.negative is not an object".into()))?,
        };
        let names: &[(usize, &str)] = if stribeck {
            &[(FV, "fv"), (FC, "fc"), (FS, "fs"), (VS, "vs")]
        } else {
            &[(FV, "fv"), (FC, "fc")]
        };
        for (w, n) in names {
            full[idx(side, *w)] = value(params, n)?;
        }
    }
    if combined && !stribeck {
        // Linear in the columns: the prediction is combined at full rate and decimated as one
        // column, not the five or seven of the regression.
        let mut cols = decimated_columns(t, x, &u, &conditioning, asymmetric, |f| {
            vec![f.u.to_vec(), linear_force(&full, f)]
        })?
        .0
        .into_iter();
        let (Some(measured), Some(predicted)) = (cols.next(), cols.next()) else {
            return Err(FitError::Bug("idim_ls: decimation lost a column".into()));
        };
        return Ok((measured, predicted));
    }
    let reg = regression::regression(t, x, &u, &conditioning, asymmetric)?;
    let problem = Problem {
        r: &reg,
        u: &reg.u,
        full,
        free: Vec::new(),
        stribeck,
        delta: report.param("delta").unwrap_or(1.0),
    };
    let predicted = (0..reg.u.len())
        .map(|k| problem.model(&problem.full, k))
        .collect();
    Ok((reg.u.clone(), predicted))
}

/// The force of the Coulomb + viscous inverse model `full` at every full-rate sample of `f`.
fn linear_force(full: &[f64], f: &FullRate<'_>) -> Vec<f64> {
    (0..f.a.len())
        .map(|k| {
            let mut force = full[J] * f.a[k] + full[OFF];
            for (side, (v, s)) in f.sides.iter().enumerate() {
                force += full[idx(side, FV)] * v[k] + full[idx(side, FC)] * s[k];
            }
            force
        })
        .collect()
}

/// A fitted value the report must have.
fn value(params: &serde_json::Map<String, Value>, name: &str) -> Result<f64, FitError> {
    params
        .get(name)
        .and_then(Value::as_f64)
        .ok_or_else(|| FitError::Bug(format!("idim_ls: the report has no value of {name}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::procedures::run;
    use crate::identify::procedures::synthetic::BallScrew;

    /// Eight seconds of the ball screw with its own negative-direction friction.
    fn two_sided_record() -> crate::identify::procedures::Table {
        BallScrew {
            duration: 8.0,
            negative: Some((260.0, 16.0)),
            ..BallScrew::default()
        }
        .simulate()
        .unwrap()
    }

    /// A held-out record is conditioned as its fit was (the fit's cut-off, decimation and
    /// v_min, not from its own bandwidth): on the fit's own record the prediction has the fit's
    /// rows and residuals.
    #[test]
    fn a_held_out_record_is_conditioned_as_its_fit() {
        let rec = two_sided_record();
        for given in [
            serde_json::json!({"decimation": 7, "cutoff_hz": 40.0}),
            serde_json::json!({"asymmetric": true, "decimation": 7}),
        ] {
            let r = run("idim_ls", "coulomb_viscous", &rec, given.as_object().unwrap()).unwrap();
            let (measured, predicted) = predict(&r, &rec).unwrap();
            assert_eq!(
                measured.len() as u64,
                r.details["samples_used"].as_u64().unwrap(),
                "{given}"
            );
            let mse = measured
                .iter()
                .zip(&predicted)
                .map(|(m, p)| (m - p).powi(2))
                .sum::<f64>()
                / measured.len() as f64;
            let fitted = r.mse.unwrap();
            assert!((mse - fitted).abs() <= 1e-6 * fitted, "{given}: {mse} {fitted}");
        }
    }

    /// The prediction combined at full rate equals the one through the regression's columns
    /// (the filters are linear), both ways and per direction.
    #[test]
    fn the_combined_prediction_is_the_regressions() {
        let rec = two_sided_record();
        for given in [
            serde_json::json!({"offset": true}),
            serde_json::json!({"asymmetric": true, "force_held": true}),
        ] {
            let r = run(
                "idim_ls",
                "coulomb_viscous",
                &rec,
                given.as_object().unwrap(),
            )
            .unwrap();
            let (m1, p1) = predict_with(&r, &rec, true).unwrap();
            let (m2, p2) = predict_with(&r, &rec, false).unwrap();
            assert_eq!(m1.len(), m2.len());
            let scale = m2.iter().fold(0.0_f64, |a, b| a.max(b.abs()));
            for k in 0..m1.len() {
                assert!((m1[k] - m2[k]).abs() < 1e-9 * scale, "{k}");
                assert!(
                    (p1[k] - p2[k]).abs() < 1e-9 * scale,
                    "{k}: {} {}",
                    p1[k],
                    p2[k]
                );
            }
        }
    }
}
