//! The fit's report: parameters by the model's names, and the figures of the finished fits.

use super::super::FitReport;
use super::super::num;
use super::direction::DirFit;
use super::shape::{Layout, N, OFFSET};
use crate::identify::TerminationReason;
use serde_json::{Map, Value};

/// Writes one direction's parameters by the model's names into `params` / `errors` / `ci`.
pub(super) fn emit(
    fit: &DirFit,
    lay: &Layout,
    fixed: &[Option<f64>; N],
    out: &mut [Map<String, Value>; 3],
) {
    let [params, errors, ci] = out;
    for i in 0..5 {
        if let Some(name) = lay.names[i] {
            params.insert(name.into(), num(fit.p[i]));
            if fixed[i].is_none()
                && let Some(se) = &fit.se
                && se[i].is_finite()
            {
                errors.insert(name.into(), num(se[i]));
                if let Some(c) = &fit.ci {
                    ci.insert(name.into(), serde_json::json!([num(c[i][0]), num(c[i][1])]));
                }
            }
        }
    }
}

/// MSE, goodness, termination, bounds, condition, notes and details of the finished fits.
pub(super) fn finish(
    report: &mut FitReport,
    fits: &[DirFit],
    lay: &Layout,
    fixed: &[Option<f64>; N],
    bootstrap: Option<(usize, u64)>,
) {
    let (cost, n, k): (f64, usize, usize) = fits
        .iter()
        .fold((0.0, 0, 0), |(c, n, k), d| (c + d.cost, n + d.n, k + d.k));
    report.mse = Some(cost / n as f64);
    let sst: f64 = fits.iter().map(|d| d.sst).sum();
    report.r2 = (sst > 0.0).then(|| 1.0 - cost / sst);
    let nf = n as f64;
    report.aic = Some(nf * (cost / nf).ln() + 2.0 * k as f64);
    report.bic = Some(nf * (cost / nf).ln() + k as f64 * nf.ln());
    report.provenance.termination = Some(
        fits.iter()
            .map(|d| d.termination)
            .find(|t| *t != TerminationReason::Converged)
            .unwrap_or(TerminationReason::Converged),
    );
    let negative_only = fits.len() == 1 && report.params.contains_key("negative");
    for (i, d) in fits.iter().enumerate() {
        let prefix = if i == 1 || negative_only {
            "negative."
        } else {
            ""
        };
        report.at_bound.extend(
            d.at_bound
                .iter()
                .filter_map(|i| {
                    if *i == OFFSET {
                        Some("offset")
                    } else {
                        lay.names[*i]
                    }
                })
                .map(|n| format!("{prefix}{n}")),
        );
    }
    report.condition = fits.iter().filter_map(|d| d.condition).reduce(f64::max);
    let held: Vec<&str> = lay
        .names
        .iter()
        .zip(fixed)
        .filter_map(|(n, f)| f.and(*n))
        .collect();
    report.note_held(&held);
    let dirs: Vec<Value> = fits
        .iter()
        .map(|d| serde_json::json!({"n_points": d.n, "mse": num(d.cost / d.n as f64), "termination": d.termination}))
        .collect();
    report.details = serde_json::json!({ "shape": format!("{:?}", lay.shape).to_lowercase(), "directions": dirs });
    if fits.iter().all(|d| d.line.is_some()) {
        let (sse0, k0) = fits
            .iter()
            .filter_map(|d| d.line)
            .fold((0.0, 0), |(s, k), (a, b)| (s + a, k + b));
        report.details["nested"] = super::super::nested::judge(
            report,
            "the Coulomb + viscous line",
            (sse0, k0),
            (cost, k),
            &["fs", "vs"],
        );
    }
    if let Some((replicates, seed)) = bootstrap {
        report.provenance.notes.push(format!(
            "standard errors and ci95 from a bootstrap of the residuals: {replicates} replicates per direction, seed {seed}"
        ));
        report.details["bootstrap"] =
            serde_json::json!({"replicates": replicates, "block": 1, "seed": seed});
    }
}
