//! Running an output-error fit: the method from its starts, then the sub-steps chosen from the
//! data (`refining`), the report (`reporting`), the nested comparison and the bootstrap.

mod contained;

use super::super::FitReport;
use super::refining::{Refined, refine, with_substeps};
use super::reporting::report;
use super::running::run_method;
use super::{FreeParam, Method, Options, OutputError, Replay, Scale, Segment};
use crate::identify::stats;
use crate::identify::{FitError, FitResult, Residuals};
use serde_json::json;

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
        contained::contained_start(segs, &opts)?
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
            contained::screen(&problem, &q0, extra, &c.added, 1)?
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
