//! IDIM-LS on a held-out record: the fitted set's inverse model predicts the force of a record
//! it was not fitted on, conditioned as in the fit (the same cut-off and decimation, the same
//! rows at rest left out per direction, the same handling of a held force).

use super::problem::{FC, FS, FV, J, OFF, Problem, VS, count, idx};
use super::regression;
use crate::identify::FitError;
use crate::identify::procedures::{FitReport, Given, Table};
use serde_json::Value;

/// Settings of the fit that condition the held-out record the same way.
const SAME_AS_FIT: [&str; 4] = ["cutoff_hz", "decimation", "v_min", "force_held"];

/// `(measured, predicted)` force on `table` (`t, x, u`) by the set of `report`.
pub fn predict(report: &FitReport, table: &Table) -> Result<(Vec<f64>, Vec<f64>), FitError> {
    let name = super::PROCEDURE.name;
    let (t, x, u) = (
        table.column("t", name)?,
        table.column("x", name)?,
        table.column("u", name)?,
    );
    let mut given = Given::new();
    for key in SAME_AS_FIT {
        if let Some(v) = report.provenance.settings.get(key) {
            given.insert(key.into(), v.clone());
        }
    }
    if let Some(v) = report.provenance.given.get("max_gap_steps") {
        given.insert("max_gap_steps".into(), v.clone());
    }
    let load = crate::identify::procedures::given_load(&report.provenance.given)?;
    let u = load.subtract(x, u);
    let asymmetric = report.params.contains_key("negative");
    let reg = regression(t, x, &u, &given, asymmetric)?;
    let stribeck = report.params.contains_key("fs");
    let mut full = vec![0.0; count(reg.sides.len())];
    full[J] = value(&report.params, "j")?;
    full[OFF] = report.param("offset").unwrap_or(0.0);
    for side in 0..reg.sides.len() {
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

/// A fitted value the report must have.
fn value(params: &serde_json::Map<String, Value>, name: &str) -> Result<f64, FitError> {
    params
        .get(name)
        .and_then(Value::as_f64)
        .ok_or_else(|| FitError::Bug(format!("idim_ls: the report has no value of {name}")))
}
