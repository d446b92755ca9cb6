//! Running an output-error fit: the method from its starts, then the sub-steps chosen from the
//! data (`refining`), the report (`reporting`), the nested comparison and the bootstrap.

use super::super::FitReport;
use super::refining::{Refined, refine, with_substeps};
use super::reporting::report;
use super::{FreeParam, Method, Options, OutputError, Replay, Scale, Segment};
use crate::identify::aep::Aep;
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::stats;
use crate::identify::{FitError, FitResult, Residuals, Runner, TerminationReason};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// A finished fit and the work it took.
pub(super) struct Run {
    pub(super) result: FitResult,
    pub(super) evaluations: u64,
    pub(super) method: Value,
}

/// Runs `opts.method` on `problem` from `starts` (the best result is kept).
pub(super) fn run_method(
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
        .max_iters(opts.max_iters)
        .cancel_on(&problem.exhausted);
        if let Some(t) = opts.timeout {
            r = r.timeout(t);
        }
        let mut result = r.run(q0)?;
        // Stopped by its work budget: an iteration cap counted in evaluations.
        if result.termination == TerminationReason::Cancelled
            && problem.exhausted.load(Ordering::Relaxed)
        {
            result.termination = TerminationReason::MaxIters;
        }
        Ok(result)
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
    let n_sub = opts.substeps.unwrap_or(1).max(1);
    let problem = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
    let q0 = problem.start();
    if problem.model_at(&q0).is_none() {
        return Err(FitError::Setting {
            field: "params".into(),
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
    let run = run_method(&problem, &opts, starts)?;
    let refined = if opts.substeps.is_none() && problem.between_samples() {
        // A global search without a polish is not refitted; its check is reported.
        let refits = !matches!(opts.method, Method::Aep { polish: false, .. });
        refine(segs, &opts, n_sub, run, problem.richardson, refits)?
    } else {
        Refined::unrefined(n_sub, run)
    };
    let (n_sub, run) = (refined.n_sub, &refined.run);
    let problem = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
    let evaluated = refined
        .evaluated
        .as_ref()
        .filter(|e| e.n == n_sub && e.q == run.result.params);
    let mut rep = report(&problem, &opts, run, "output_error", evaluated)?;
    if let Some(w) = refined.record(&mut rep.provenance.settings) {
        rep.details["warnings"] = json!([w]);
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
