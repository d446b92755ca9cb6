//! Held-out validation: how well a fitted set predicts a record it was not fitted on, scored
//! the procedure's own way (docs/src/identification.md#held-out-validation).
//!
//! `idim_ls` predicts the force of the held-out record by its inverse model, the record
//! filtered and decimated as in the fit; `power_rls` predicts the filtered force through the
//! same filter; `output_error` replays the held-out record through the fitted model. The
//! score compares the prediction with the measurement: `rms` of the error, `rel_error_pct`
//! `= 100 ‖error‖ / ‖measured‖` (the EMPS benchmark's figure), `r2` and the samples `n`.

use super::{FitReport, Table, idim_ls, output_error, power_rls};
use crate::identify::FitError;
use serde::Serialize;

/// How a fitted set did on one held-out record.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "HeldOutScore")]
pub struct Validation {
    /// The record (a run id or a file name, as the caller names it).
    pub record: String,
    /// Root mean square of `measured - predicted` [N or N m; position in a torque replay].
    pub rms: f64,
    /// `100 ‖measured - predicted‖ / ‖measured‖` \[%\].
    pub rel_error_pct: f64,
    /// `1 - SSE/SST` of the prediction (`null` for a constant measurement).
    pub r2: Option<f64>,
    /// Samples scored.
    pub n: usize,
    /// What was predicted and compared.
    pub compared: String,
}

/// The procedures that validate on a held-out record.
pub const PROCEDURES: [&str; 3] = ["idim_ls", "power_rls", "output_error"];

/// Scores the set of `report` on the held-out `table`, named `record`.
pub fn validate(report: &FitReport, table: &Table, record: &str) -> Result<Validation, FitError> {
    let procedure = report.provenance.procedure.as_str();
    let ((measured, predicted), compared) = match procedure {
        "idim_ls" => (
            idim_ls::predict(report, table)?,
            "the inverse model's force, the record filtered and decimated as in the fit",
        ),
        "power_rls" => (
            power_rls::predict(report, table)?,
            "the regression's force through the fit's filter",
        ),
        "output_error" => (
            output_error::predict(report, table)?,
            "the fitted model replayed on the record, as in the fit",
        ),
        other => {
            return Err(FitError::Setting {
                field: "validate".into(),
                rule: format!(
                    "is not available for procedure '{other}' (it is for: {})",
                    PROCEDURES.join(", ")
                ),
            });
        }
    };
    score(&measured, &predicted, record, compared)
}

/// The score of `predicted` against `measured`.
pub fn score(
    measured: &[f64],
    predicted: &[f64],
    record: &str,
    compared: &str,
) -> Result<Validation, FitError> {
    let n = measured.len().min(predicted.len());
    if n == 0 {
        return Err(FitError::Data(format!(
            "held-out record {record}: no sample to score"
        )));
    }
    let sse: f64 = (0..n).map(|k| (measured[k] - predicted[k]).powi(2)).sum();
    let norm2: f64 = measured[..n].iter().map(|m| m * m).sum();
    let mean = measured[..n].iter().sum::<f64>() / n as f64;
    let sst: f64 = measured[..n].iter().map(|m| (m - mean).powi(2)).sum();
    Ok(Validation {
        record: record.into(),
        rms: (sse / n as f64).sqrt(),
        rel_error_pct: 100.0 * (sse / norm2).sqrt(),
        r2: (sst > 0.0).then(|| 1.0 - sse / sst),
        n,
        compared: compared.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_score_is_the_benchmarks_relative_error() {
        let v = score(&[3.0, 4.0], &[3.0, 3.0], "r", "x").unwrap();
        assert!((v.rel_error_pct - 20.0).abs() < 1e-12);
        assert!((v.rms - 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(v.r2, Some(1.0 - 1.0 / 0.5));
        assert_eq!(v.n, 2);
    }
}
