//! One direction's fit (or the pooled one): which parameters are free, the starts, the nested
//! start from the straight line, the bootstrap, and the split of sweep points by direction.

use super::super::need_rows;
use super::super::quality::{on_bound, scaled_condition};
use super::problem::{CurveProblem, initial_guess};
use super::shape::{DELTA, FC, FS, FV, Layout, N, OFFSET, Shape, VS};
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::stats;
use crate::identify::{Bounds, FitError, Residuals, Runner, TerminationReason};

/// One direction's fit (or the pooled one).
#[derive(Clone, Debug)]
pub(super) struct DirFit {
    pub(super) p: [f64; N],
    pub(super) se: Option<Vec<f64>>,
    /// Bootstrap percentile intervals by internal index (when asked for).
    pub(super) ci: Option<Vec<[f64; 2]>>,
    pub(super) cost: f64,
    pub(super) n: usize,
    pub(super) termination: TerminationReason,
    /// Internal indices of free parameters that ended on a bound.
    pub(super) at_bound: Vec<usize>,
    /// Scaled condition number of `JᵀJ` at the optimum.
    pub(super) condition: Option<f64>,
    /// The straight line's SSE and free-parameter count, for the nested judgement.
    pub(super) line: Option<(f64, usize)>,
    /// Number of free parameters.
    pub(super) k: usize,
    /// Sum of squares of the magnitudes about their mean (for R²).
    pub(super) sst: f64,
}

/// What a direction's fit is asked to do.
pub(super) struct Ask<'a> {
    pub(super) lay: &'a Layout,
    pub(super) fixed: &'a [Option<f64>; N],
    pub(super) offset: bool,
    pub(super) nested: bool,
    pub(super) bootstrap: Option<(usize, u64)>,
}

/// The free internal parameters of a layout (fixed ones set in `full`).
pub(super) fn free_of(ask: &Ask<'_>, full: &mut [f64; N]) -> Vec<usize> {
    let lay = ask.lay;
    let mut free = Vec::new();
    for (i, value) in full.iter_mut().enumerate() {
        let used = match (i, lay.shape) {
            (OFFSET, _) => ask.offset,
            (_, Shape::Line) => i == FC || i == FV,
            (_, Shape::Lorentz) => i != DELTA,
            (_, Shape::Exp) => i != DELTA || lay.fixed_delta.is_none(),
        };
        match ask.fixed[i] {
            Some(x) => *value = x,
            None if used => free.push(i),
            None => {}
        }
    }
    if lay.shape == Shape::Line {
        full[FS] = full[FC];
    }
    free
}

/// Runs LM from each start; returns the best `(params, cost, termination)`.
pub(super) fn best_of(
    problem: &mut CurveProblem<'_>,
    starts: &[[f64; N]],
    bounds: &Bounds,
) -> Result<(Vec<f64>, f64, TerminationReason, [f64; N]), FitError> {
    let mut best: Option<(Vec<f64>, f64, TerminationReason, [f64; N])> = None;
    for start in starts {
        problem.full = *start;
        let p0: Vec<f64> = problem.free.iter().map(|i| start[*i]).collect();
        let lm = LevenbergMarquardt::new().with_bounds(bounds.clone());
        let r = Runner::new(&*problem, lm).max_iters(200).run(p0)?;
        if best.as_ref().is_none_or(|b| r.cost < b.1) {
            best = Some((r.params, r.cost, r.termination, *start));
        }
    }
    best.ok_or_else(|| FitError::Bug("no start ran".into()))
}

pub(super) fn fit_direction(
    s: &[f64],
    y: &[f64],
    sign: &[f64],
    ask: &Ask<'_>,
    what: &str,
) -> Result<DirFit, FitError> {
    let lay = ask.lay;
    let mut idx: Vec<usize> = (0..s.len()).collect();
    idx.sort_by(|a, b| s[*a].total_cmp(&s[*b]));
    let s: Vec<f64> = idx.iter().map(|i| s[*i]).collect();
    let y: Vec<f64> = idx.iter().map(|i| y[*i]).collect();
    let sign: Vec<f64> = idx.iter().map(|i| sign[*i]).collect();
    let mut full = initial_guess(&s, &y);
    if let Some(d) = lay.fixed_delta {
        full[DELTA] = d;
    }
    let free = free_of(ask, &mut full);
    need_rows(s.len(), free.len() + 1, what)?;
    let s_min = s.iter().cloned().find(|x| *x > 0.0).unwrap_or(1e-12);
    let (lo, hi): (Vec<f64>, Vec<f64>) = free
        .iter()
        .map(|i| match *i {
            VS => (s_min * 1e-3, f64::INFINITY),
            DELTA => (0.05, 20.0),
            OFFSET => (f64::NEG_INFINITY, f64::INFINITY),
            _ => (0.0, f64::INFINITY),
        })
        .unzip();
    let bounds = Bounds {
        lower: lo.clone(),
        upper: hi.clone(),
    };
    let mut problem = CurveProblem {
        s: &s,
        y: &y,
        sign: &sign,
        shape: lay.shape,
        full,
        free: free.clone(),
    };
    let mut starts: Vec<[f64; N]> = if free.contains(&DELTA) {
        [1.0, 0.7, 2.0]
            .iter()
            .map(|d| {
                let mut st = full;
                st[DELTA] = *d;
                st
            })
            .collect()
    } else {
        vec![full]
    };
    // The straight line the curve contains, and starts from it.
    let stribeck = lay.shape != Shape::Line && free.contains(&FS) && free.contains(&VS);
    let mut line = None;
    if ask.nested && stribeck {
        let line_lay = Layout {
            shape: Shape::Line,
            names: lay.names,
            fixed_delta: None,
        };
        let line_ask = Ask {
            lay: &line_lay,
            nested: false,
            bootstrap: None,
            ..*ask
        };
        let l = fit_direction(&s, &y, &sign, &line_ask, what)?;
        line = Some((l.cost, l.k));
        let mut exact = full;
        exact[FC] = l.p[FC];
        exact[FS] = l.p[FC];
        exact[FV] = l.p[FV];
        exact[OFFSET] = l.p[OFFSET];
        starts.push(exact);
        for f in [0.1, 0.3, 0.6] {
            let mut st = exact;
            st[FS] = 1.3 * l.p[FC];
            st[VS] = s[((s.len() - 1) as f64 * f) as usize].max(s_min);
            starts.push(st);
        }
    }
    // A held Stribeck level (the breakaway, measured apart) leaves only the fall's speed to
    // find, from below the slowest point (the sweep may not have held a speed below vs) up.
    if free.contains(&VS) && !free.contains(&FS) && lay.shape != Shape::Line {
        for f in [0.3, 0.5, 0.7, 1.0, 2.0] {
            let mut st = full;
            st[VS] = f * s_min;
            starts.push(st);
        }
    }
    let (p, cost, termination, start) = best_of(&mut problem, &starts, &bounds)?;
    problem.full = start;
    let mut jac = nalgebra::DMatrix::zeros(0, 0);
    let jac_ok = matches!(problem.jacobian(&p, &mut jac), Some(Ok(())));
    let mut resid = vec![0.0; s.len()];
    problem.residuals(&p, &mut resid)?;
    let se = jac_ok
        .then(|| stats::least_squares(&jac, &resid, false))
        .flatten()
        .map(|u| {
            let mut all = vec![f64::NAN; N];
            for (i, e) in free.iter().zip(u.std_errors) {
                all[*i] = e;
            }
            all
        });
    let at_bound = free
        .iter()
        .enumerate()
        .filter(|(j, _)| on_bound(p[*j], lo[*j]) || on_bound(p[*j], hi[*j]))
        .map(|(_, i)| *i)
        .collect();
    let condition = if jac_ok { scaled_condition(&jac) } else { None };
    let q = problem.expand(&p);
    let (se, ci) = match ask.bootstrap {
        Some((replicates, seed)) => {
            let fitted: Vec<f64> = (0..s.len()).map(|i| problem.predict(&q, i)).collect();
            let r: Vec<f64> = resid.iter().map(|e| -e).collect();
            let boot = stats::block_bootstrap(&fitted, &r, 1, replicates, seed, |yb| {
                let bp = CurveProblem {
                    y: yb,
                    full: q,
                    free: free.clone(),
                    ..problem
                };
                let lm = LevenbergMarquardt::new().with_bounds(bounds.clone());
                Ok(Runner::new(&bp, lm).max_iters(200).run(p.clone())?.params)
            })?;
            let mut se = vec![f64::NAN; N];
            let mut ci = vec![[f64::NAN; 2]; N];
            for (j, i) in free.iter().enumerate() {
                se[*i] = boot.std_errors[j];
                ci[*i] = boot.ci95[j];
            }
            (Some(se), Some(ci))
        }
        None => (se, None),
    };
    Ok(DirFit {
        p: q,
        se,
        ci,
        cost,
        n: s.len(),
        termination,
        at_bound,
        condition,
        line,
        k: free.len(),
        sst: {
            let m = super::super::mean(&y);
            y.iter().map(|v| (v - m).powi(2)).sum()
        },
    })
}

/// Splits sweep points into magnitudes per direction: `(speed, |friction|, sign)` of
/// `v > 0` and of `v < 0` (`friction` less the known `offset`).
pub(super) type Points = (Vec<f64>, Vec<f64>, Vec<f64>);

pub(super) fn split(v: &[f64], f: &[f64], offset: f64) -> (Points, Points) {
    let (mut pos, mut neg): (Points, Points) = Default::default();
    for (v, f) in v.iter().zip(f) {
        if !(v.is_finite() && f.is_finite()) {
            continue;
        }
        let f = f - offset;
        if *v > 0.0 {
            pos.0.push(*v);
            pos.1.push(f);
            pos.2.push(1.0);
        } else if *v < 0.0 {
            neg.0.push(-v);
            neg.1.push(-f);
            neg.2.push(-1.0);
        }
    }
    (pos, neg)
}
