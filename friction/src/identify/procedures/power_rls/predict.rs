//! The fitted set's force on a held-out record, for `bench fit --validate`.

use super::*;

/// `(measured, predicted)` filtered force on a held-out `table` (`t, x, u`) by the set of
/// `report`: the same filter (`p_n`, discretisation) and known load as the fit, every row
/// unweighted.
pub fn predict(report: &FitReport, table: &Table) -> Result<(Vec<f64>, Vec<f64>), FitError> {
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let fitted: PowerRlsOptions = PROCEDURE.options_of(&report.provenance.given)?;
    let u = &fitted
        .terms
        .load()?
        .subtract(x, table.column("u", PROCEDURE.name)?);
    let settings = &report.details["settings"];
    let pn = settings["p_n"].as_f64().unwrap_or(P_N);
    let how = match settings["discretisation"].as_str() {
        Some("tustin") => Discretisation::Tustin,
        _ => Discretisation::Zoh,
    };
    let max_gap = fitted.max_gap_steps.0;
    need_rows(t.len(), 10, "power_rls")?;
    let grid = Grid::of(t, max_gap)?;
    let (tg, x, u) = (grid.times(), grid.sample(t, x), grid.sample(t, u));
    let (rows, y) = regressors(&tg, &x, &u, pn, how)?;
    let design = Design {
        asymmetric: report.params.contains_key("negative"),
        offset: false,
    };
    let fv_name = if report.provenance.model == "lugre" {
        "sigma2"
    } else {
        "fv"
    };
    let value = |v: Option<f64>, name: &str| {
        v.ok_or_else(|| FitError::Bug(format!("power_rls: the report has no value of {name}")))
    };
    let mut theta = vec![
        value(report.param("j"), "j")?,
        value(report.param(fv_name), fv_name)?,
        value(report.param("fc"), "fc")?,
    ];
    if design.asymmetric {
        theta.push(value(report.negative_param(fv_name), fv_name)?);
        theta.push(value(report.negative_param("fc"), "fc")?);
    }
    let offset = report.param("offset").unwrap_or(0.0);
    let predicted = rows
        .iter()
        .map(|r| {
            offset
                + (0..theta.len())
                    .map(|j| theta[j] * design.phi(r, j))
                    .sum::<f64>()
        })
        .collect();
    Ok((y, predicted))
}
