//! The search method run on an output-error problem from its starts: Levenberg-Marquardt from
//! each, or the AEP global search with its polish; the best result and the work it took.

use super::{Method, Options, OutputError};
use crate::identify::aep::Aep;
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::{FitError, FitResult, Runner, TerminationReason};
use serde_json::Value;
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
