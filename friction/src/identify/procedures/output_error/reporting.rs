//! The report of a finished output-error fit: values, uncertainty, goodness and provenance.

use super::super::quality::{on_bound, scaled_condition};
use super::super::{FitReport, Given, num};
use super::per_direction::{directions, put};
use super::refining::Evaluated;
use super::running::Run;
use super::{Method, Options, OutputError, Replay, Segment};
use crate::identify::{FitError, Residuals, stats};
use nalgebra::DMatrix;
use serde_json::{Map, Value};

/// Builds the report of a finished fit of `problem`: the full parameter set under `params`
/// (with `mass` and `offset` when fitted or known), standard errors, MSE, R², AIC, BIC,
/// provenance (procedure, model, method, termination, samples, columns, time range, sources in
/// `notes`) and, under `details`, the fitted names, iterations, evaluations, wall time, data
/// used per segment and the settings.
pub(super) fn report(
    problem: &OutputError<'_>,
    opts: &Options,
    run: &Run,
    procedure: &str,
    evaluated: Option<&Evaluated>,
) -> Result<FitReport, FitError> {
    let r = &run.result;
    let Some((model, setup)) = problem.model_at(&r.params) else {
        return Err(FitError::Bug(
            "the best parameters break the model's rules".into(),
        ));
    };
    let Value::Object(mut params) = model.params_json() else {
        return Err(FitError::Bug("parameters are not a JSON object".into()));
    };
    let values = problem.values(&r.params);
    let m = problem.len();
    let (jac, resid, jac_ok) = match evaluated {
        Some(e) => (e.jac.clone(), e.resid.clone(), true),
        None => {
            let mut resid = vec![0.0; m];
            problem.residuals(&r.params, &mut resid)?;
            let mut jac = DMatrix::zeros(0, 0);
            let ok = matches!(problem.jacobian(&r.params, &mut jac), Some(Ok(())));
            (jac, resid, ok)
        }
    };
    let unc = if jac_ok {
        stats::least_squares(&jac, &resid, true)
    } else {
        None
    };
    let mut std_errors = Map::new();
    for (i, f) in problem.free.iter().enumerate() {
        if let Some(se) = unc
            .as_ref()
            .map(|u| u.std_errors[i])
            .filter(|s| s.is_finite())
        {
            put(&mut std_errors, &f.name, num(se * f.slope(r.params[i])));
        }
        if f.name == "mass" && matches!(opts.replay, Replay::Torque { .. }) {
            params.insert("mass".into(), num(values[i]));
        }
    }
    if problem.free.iter().any(|f| f.name == "offset") || setup.offset != 0.0 {
        params.insert("offset".into(), num(setup.offset));
    }
    let columns: &[&str] = match opts.replay {
        Replay::Velocity => &["t", "x", "v", "u", "friction"],
        Replay::Torque { .. } => &["t", "x", "v", "u"],
    };
    let method_name = match &opts.method {
        Method::Lm => "levenberg_marquardt".to_string(),
        Method::Aep { polish: true, .. } => "aep+levenberg_marquardt".to_string(),
        Method::Aep { .. } => "aep".to_string(),
    };
    let mut rep = FitReport::new(
        procedure,
        &opts.model,
        &method_name,
        columns,
        m,
        &Given::new(),
    );
    rep.params = params;
    rep.std_errors = std_errors;
    rep.mse = Some(r.mse);
    rep.n_eff = unc.as_ref().map(|u| u.n_eff);
    if jac_ok {
        rep.directions = directions(problem, &r.params, &jac, &resid, rep.n_eff);
    }
    rep.goodness(&problem.target(), &resid, problem.free.len());
    rep.provenance.termination = Some(r.termination);
    let b = problem.bounds();
    rep.at_bound = problem
        .free
        .iter()
        .enumerate()
        .filter(|(i, _)| on_bound(r.params[*i], b.lower[*i]) || on_bound(r.params[*i], b.upper[*i]))
        .map(|(_, f)| f.name.clone())
        .collect();
    rep.condition = if jac_ok { scaled_condition(&jac) } else { None };
    let t0 = problem
        .segs
        .iter()
        .map(|s| s.t[0])
        .fold(f64::INFINITY, f64::min);
    let t1 = problem
        .segs
        .iter()
        .map(|s| s.t[s.len() - 1])
        .fold(f64::NEG_INFINITY, f64::max);
    rep.provenance.time_range_s = Some([t0, t1]);
    rep.provenance.notes.push(format!(
        "residual: {} (model replayed from rest on each segment, {} sub-steps per sample interval)",
        opts.replay.residual_name(),
        problem.substeps
    ));
    if setup.offset != 0.0 && !problem.free.iter().any(|f| f.name == "offset") {
        rep.provenance.notes.push(format!(
            "known offset {} subtracted from the measured {}",
            setup.offset,
            match opts.replay {
                Replay::Velocity => "friction",
                Replay::Torque { .. } => "applied force",
            }
        ));
    }
    for s in problem.segs {
        let u = s.used();
        rep.provenance.notes.push(format!(
            "data: {} ({} samples, t {}..{} s)",
            u.source, u.samples, u.t_start, u.t_end
        ));
    }
    if let Value::Object(given) = &opts.params {
        rep.provenance.given = given.clone();
    }
    if let Some(u) = &unc {
        rep.provenance
            .settings
            .insert("serial_correlation_window".into(), serde_json::json!(u.lag));
    }
    rep.details = serde_json::json!({
        "fitted": problem.free.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        "iterations": r.iters,
        "evaluations": run.evaluations,
        "elapsed_s": r.elapsed_s,
        "residual": opts.replay.residual_name(),
        "data": problem.segs.iter().map(Segment::used).collect::<Vec<_>>(),
        "settings": {
            "replay": opts.replay, "speed": opts.speed, "warmup_s": opts.warmup_s, "free": problem.free, "method": run.method,
            "max_iters": opts.max_iters, "substeps": problem.substeps,
            "jacobian": format!("forward differences, step {} in scaled coordinates", problem.diff_step),
        },
    });
    rep.assess();
    Ok(rep)
}
