//! Running an output-error fit: the method from its starts, the sub-steps chosen from the data,
//! the report with its uncertainty, the nested comparison and the bootstrap.

use super::super::quality::{on_bound, scaled_condition};
use super::super::{FitReport, Given, num};
use super::{FreeParam, Method, Options, OutputError, Replay, Scale, Segment};
use crate::identify::aep::Aep;
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::stats;
use crate::identify::{FitError, FitResult, Residuals, Runner};
use nalgebra::DMatrix;
use serde_json::{Map, Value};

/// A sub-step count is enough when doubling it moves the optimum by at most this many standard
/// errors ...
pub const SUBSTEP_TOLERANCE: f64 = 0.1;
/// ... or by at most this fraction of each value.
pub const SUBSTEP_RELATIVE: f64 = 1e-4;
/// Iteration cap of the refit after the sub-steps grew.
pub const REFINE_ITERS: u64 = 40;
/// The most sub-steps per sample interval chosen from the data.
pub const MAX_SUBSTEPS: usize = 256;

/// A finished fit and the work it took.
struct Run {
    result: FitResult,
    evaluations: u64,
    method: Value,
}

/// Runs `opts.method` on `problem` from `starts` (the best result is kept).
fn run_method(
    problem: &OutputError<'_>,
    opts: &Options,
    starts: Vec<Vec<f64>>,
) -> Result<Run, FitError> {
    let bounds = problem.bounds();
    let lm = |q0: Vec<f64>| -> Result<FitResult, FitError> {
        let mut r = Runner::new(
            problem,
            LevenbergMarquardt::new().with_bounds(bounds.clone()),
        )
        .max_iters(opts.max_iters);
        if let Some(t) = opts.timeout {
            r = r.timeout(t);
        }
        r.run(q0)
    };
    let before = problem.evaluations();
    let mut extra = 0;
    let (result, method) = match &opts.method {
        Method::Lm => {
            let mut best: Option<FitResult> = None;
            let n_starts = starts.len();
            for q0 in starts {
                let r = lm(q0)?;
                best = Some(match best {
                    Some(b) if b.cost <= r.cost => FitResult {
                        iters: b.iters + r.iters,
                        evals: b.evals + r.evals,
                        elapsed_s: b.elapsed_s + r.elapsed_s,
                        ..b
                    },
                    Some(b) => FitResult {
                        iters: b.iters + r.iters,
                        evals: b.evals + r.evals,
                        elapsed_s: b.elapsed_s + r.elapsed_s,
                        ..r
                    },
                    None => r,
                });
            }
            let best = best.ok_or_else(|| FitError::Bug("no start to fit from".into()))?;
            (best, serde_json::json!({"kind": "lm", "starts": n_starts}))
        }
        Method::Aep {
            population,
            beta1,
            beta2,
            seed,
            generations,
            polish,
        } => {
            let aep = Aep::new(bounds.clone())?
                .with_population(*population)?
                .with_betas(*beta1, *beta2)?
                .with_seed(*seed);
            // The global search ranks candidates: the plain replay (no extrapolation) is
            // enough for that at a third of the cost; the polish refines on the full one.
            let coarse = problem.without_extrapolation()?;
            let mut r = Runner::new(&coarse, aep).max_iters(*generations);
            if let Some(t) = opts.timeout {
                r = r.timeout(t);
            }
            let q0 = starts.into_iter().next().unwrap_or_else(|| problem.start());
            let global = r.run(q0)?;
            extra = coarse.evaluations();
            let settings = serde_json::json!({
                "kind": "aep", "population": population, "beta1": beta1, "beta2": beta2, "seed": seed,
                "generations": generations, "polish": polish, "aep_iterations": global.iters,
                "aep_evaluations": global.evals, "aep_mse": global.mse, "aep_termination": global.termination,
            });
            if *polish {
                let mut p = lm(global.params.clone())?;
                p.evals += global.evals;
                p.iters += global.iters;
                p.elapsed_s += global.elapsed_s;
                (p, settings)
            } else {
                (global, settings)
            }
        }
    };
    Ok(Run {
        result,
        evaluations: problem.evaluations() - before + extra,
        method,
    })
}

/// `opts` with `n` sub-steps.
fn with_substeps(opts: &Options, n: usize) -> Options {
    Options {
        substeps: Some(n),
        ..opts.clone()
    }
}

/// How far doubling the sub-steps from `n` would move the optimum `q` (one Gauss–Newton step
/// `(JᵀJ)⁻¹ Jᵀ (r_2n - r_n)`): the largest shift over its allowance, the larger of
/// [`SUBSTEP_TOLERANCE`] standard errors and [`SUBSTEP_RELATIVE`] of the value (data so
/// precise that a tenth of a standard error is below any use need not be replayed finer); and
/// that shift in standard errors; and the Jacobian and residuals at `q` with `n` sub-steps
/// (what the report needs when `n` is kept).
fn substep_change(
    segs: &[Segment],
    opts: &Options,
    n: usize,
    q: &[f64],
) -> Result<(f64, f64, Option<Evaluated>), FitError> {
    let coarse = OutputError::new(segs, &with_substeps(opts, n))?;
    let fine = OutputError::new(segs, &with_substeps(opts, 2 * n))?;
    let m = coarse.len();
    let (mut rc, mut rf) = (vec![0.0; m], vec![0.0; m]);
    coarse.residuals(q, &mut rc)?;
    fine.residuals(q, &mut rf)?;
    let mut jac = DMatrix::zeros(0, 0);
    match coarse.jacobian(q, &mut jac) {
        Some(r) => r?,
        None => return Err(FitError::Bug("the output-error Jacobian is missing".into())),
    }
    let Some(unc) = stats::least_squares(&jac, &rc, true) else {
        return Ok((0.0, 0.0, None));
    };
    let d = nalgebra::DVector::from_iterator(m, rc.iter().zip(&rf).map(|(c, f)| f - c));
    let Some(inv) = (jac.transpose() * &jac).try_inverse() else {
        return Ok((0.0, 0.0, None));
    };
    let step = inv * (jac.transpose() * d);
    let (mut worst, mut in_se) = (0.0f64, 0.0f64);
    for (j, (s, e)) in step.iter().zip(&unc.std_errors).enumerate() {
        let f = &coarse.free[j];
        let slope = f.slope(q[j]).abs();
        let value = f.to_value(q[j]).abs();
        let allowance = (SUBSTEP_TOLERANCE * e * slope).max(SUBSTEP_RELATIVE * value);
        worst = worst.max(s.abs() * slope / allowance.max(f64::MIN_POSITIVE));
        in_se = in_se.max(s.abs() / e.max(f64::MIN_POSITIVE));
    }
    Ok((
        worst,
        in_se,
        Some(Evaluated {
            n,
            q: q.to_vec(),
            jac,
            resid: rc,
        }),
    ))
}

/// The Jacobian and residuals of a problem at `q`, kept for the report.
struct Evaluated {
    n: usize,
    q: Vec<f64>,
    jac: DMatrix<f64>,
    resid: Vec<f64>,
}

/// Fits `opts.free` of `opts.model` to `segs`; the result carries provenance, standard errors
/// and intervals, the goodness of fit, the sub-steps used and, for a model that contains a
/// simpler one, the comparison with it.
pub fn fit(segs: &[Segment], opts: &Options) -> Result<FitReport, FitError> {
    match opts.timeout {
        // The limit is the whole fit's: starts, the contained model's fit and refinements.
        Some(t) => super::super::super::control::within(std::time::Instant::now() + t, || {
            fit_within_limit(segs, opts)
        }),
        None => fit_within_limit(segs, opts),
    }
}

fn fit_within_limit(segs: &[Segment], opts: &Options) -> Result<FitReport, FitError> {
    if opts.free.is_empty() && !opts.offset.fitted() {
        return super::replaying::evaluate(segs, opts);
    }
    let mut opts = opts.clone();
    if opts.offset.fitted() && !opts.free.iter().any(|f| f.name == "offset") {
        opts.free.push(FreeParam {
            name: "offset".into(),
            scale: Some(Scale::Linear),
            ..FreeParam::default()
        });
    }
    let contained = if opts.nested && opts.method == Method::Lm {
        super::super::nested::contained_start(segs, &opts)?
    } else {
        None
    };
    let plain_opts = opts.clone();
    let mut contained = contained;
    if let Some(c) = &contained {
        let mut with = opts.clone();
        c.apply(&mut with);
        let ok = OutputError::new(segs, &with)
            .ok()
            .is_some_and(|p| p.model_at(&p.start()).is_some());
        if ok {
            opts = with;
        } else {
            // The simpler optimum breaks a rule of this model with its fixed values (fs below
            // the simpler fc): start from the given values instead.
            contained = None;
        }
    }
    let mut n_sub = opts.substeps.unwrap_or(1).max(1);
    let problem = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
    let q0 = problem.start();
    if problem.model_at(&q0).is_none() {
        return Err(FitError::Config {
            field: "params".into(),
            value: f64::NAN,
            rule: "the start values break the model's rules".into(),
        });
    }
    let starts = match &contained {
        Some(c) => {
            // The given (or default) start competes too: a degenerate simpler optimum (no
            // Stribeck effect in it) must not cost the richer model its own start.
            let plain = OutputError::new(segs, &with_substeps(&plain_opts, n_sub))?;
            let q_plain = plain.start();
            let extra = (plain.free().len() == problem.free().len()).then_some(q_plain);
            super::super::nested::screen(&problem, &q0, extra, &c.added, 1)?
        }
        None => vec![q0],
    };
    let mut run = run_method(&problem, &opts, starts)?;
    let mut checks = Vec::new();
    // A global search without a polish is not refitted; its check is reported.
    let refits = !matches!(opts.method, Method::Aep { polish: false, .. });
    let mut evaluated = None;
    if opts.substeps.is_none() && problem.between_samples() {
        for _ in 0..6 {
            // Out of time: the sub-steps reached so far stand (the report says which).
            if super::super::super::control::stop_now().is_some() {
                break;
            }
            let (ratio, in_se, at) = substep_change(segs, &opts, n_sub, &run.result.params)?;
            evaluated = at;
            checks.push(serde_json::json!({
                "substeps": n_sub, "change_in_std_errors": num(in_se), "over_allowance": num(ratio),
            }));
            if ratio.is_nan() || ratio <= 1.0 || n_sub >= MAX_SUBSTEPS || !refits {
                break;
            }
            // The extrapolated replay converges in the square of the sub-step, the plain one
            // (torque replay: stick and slip make extrapolation unsafe) in proportion.
            let ratio = if problem.richardson {
                ratio.sqrt()
            } else {
                ratio
            };
            let want = (n_sub as f64 * ratio).ceil() as usize;
            n_sub = want.next_power_of_two().clamp(2 * n_sub, MAX_SUBSTEPS);
            let refined = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
            // From the coarser optimum: a refinement, not a new search.
            let lm_opts = Options {
                method: Method::Lm,
                max_iters: opts.max_iters.min(REFINE_ITERS),
                ..opts.clone()
            };
            let next = run_method(&refined, &lm_opts, vec![run.result.params.clone()])?;
            if let Some(c) = checks.last_mut() {
                c["then_iterations"] = serde_json::json!(next.result.iters);
            }
            run = Run {
                result: FitResult {
                    iters: run.result.iters + next.result.iters,
                    evals: run.result.evals + next.result.evals,
                    elapsed_s: run.result.elapsed_s + next.result.elapsed_s,
                    ..next.result
                },
                evaluations: run.evaluations + next.evaluations,
                method: run.method,
            };
        }
    }
    let problem = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
    let evaluated = evaluated.filter(|e| e.n == n_sub && e.q == run.result.params);
    let mut rep = report(&problem, &opts, &run, "output_error", evaluated)?;
    rep.provenance
        .settings
        .insert("substeps".into(), serde_json::json!(n_sub));
    if !checks.is_empty() {
        rep.provenance
            .settings
            .insert("substep_checks".into(), Value::Array(checks));
    }
    if let Some(c) = &contained {
        rep.details["nested"] = c.judge(&rep, run.result.cost, problem.free.len());
    }
    if let Some((replicates, seed)) = opts.bootstrap {
        bootstrap(&mut rep, &problem, &opts, &run.result, replicates, seed)?;
    }
    rep.assess();
    Ok(rep)
}

/// Replaces the standard errors by a moving-block bootstrap of the residuals: the target
/// (friction, or position in a torque replay) is rebuilt as fit plus resampled residual
/// blocks and refitted by LM from the optimum, at the same sub-steps.
fn bootstrap(
    rep: &mut FitReport,
    problem: &OutputError<'_>,
    opts: &Options,
    r: &FitResult,
    replicates: usize,
    seed: u64,
) -> Result<(), FitError> {
    if problem.skip.iter().any(|k| *k > 0) {
        return Err(FitError::Config {
            field: "given.bootstrap".into(),
            value: replicates as f64,
            rule: "cannot be combined with warmup_s (the warm-up samples have no residual)".into(),
        });
    }
    let m = problem.len();
    let mut resid = vec![0.0; m];
    problem.residuals(&r.params, &mut resid)?;
    let target = problem.target();
    let fitted: Vec<f64> = target.iter().zip(&resid).map(|(y, e)| y + e).collect();
    let resid: Vec<f64> = resid.iter().map(|e| -e).collect();
    let block = stats::andrews_lag(&resid);
    let lm_opts = Options {
        method: Method::Lm,
        nested: false,
        bootstrap: None,
        substeps: Some(problem.substeps),
        ..opts.clone()
    };
    let boot = stats::block_bootstrap(&fitted, &resid, block, replicates, seed, |y| {
        let mut segs = problem.segs.to_vec();
        let mut o = 0;
        for s in &mut segs {
            let n = s.len();
            match opts.replay {
                Replay::Velocity => s.friction.copy_from_slice(&y[o..o + n]),
                Replay::Torque { .. } => s.x.copy_from_slice(&y[o..o + n]),
            }
            o += n;
        }
        let p = OutputError::new(&segs, &lm_opts)?;
        let fit = run_method(&p, &lm_opts, vec![r.params.clone()])?;
        Ok(p.values(&fit.result.params))
    })?;
    let names: Vec<String> = problem.free.iter().map(|f| f.name.clone()).collect();
    rep.use_bootstrap(&names, &boot);
    Ok(())
}

/// Builds the report of a finished fit of `problem`: the full parameter set under `params`
/// (with `mass` and `offset` when fitted or known), standard errors, MSE, R², AIC, BIC,
/// provenance (procedure, model, method, termination, samples, columns, time range, sources in
/// `notes`) and, under `details`, the fitted names, iterations, evaluations, wall time, data
/// used per segment and the settings.
fn report(
    problem: &OutputError<'_>,
    opts: &Options,
    run: &Run,
    procedure: &str,
    evaluated: Option<Evaluated>,
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
        Some(e) => (e.jac, e.resid, true),
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
            std_errors.insert(f.name.clone(), num(se * f.slope(r.params[i])));
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
            "replay": opts.replay, "warmup_s": opts.warmup_s, "free": problem.free, "method": run.method,
            "max_iters": opts.max_iters, "substeps": problem.substeps,
            "jacobian": format!("forward differences, step {} in scaled coordinates", problem.diff_step),
        },
    });
    rep.assess();
    Ok(rep)
}
