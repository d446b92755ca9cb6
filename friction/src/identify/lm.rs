//! Bounded Levenberg–Marquardt (Marquardt's diagonal scaling, projected steps).
//!
//! For the smooth least-squares fits of docs/src/identification.md (static curves, phi_s, output error). The
//! normal equations `(J^T J + lambda diag(J^T J)) delta = -J^T r` are solved by Cholesky on
//! nalgebra matrices; a step leaving the box is projected back. Parameter uncertainty comes from
//! [`standard_errors`].

use super::fitter::{Bounds, FitError, FitState, Fitter, Residuals, TerminationReason};
use nalgebra::{DMatrix, DVector};

/// Levenberg–Marquardt settings and iteration memory.
#[derive(Clone, Debug)]
pub struct LevenbergMarquardt {
    bounds: Option<Bounds>,
    ftol: f64,
    xtol: f64,
    lambda: f64,
    r: Vec<f64>,
    trial: Vec<f64>,
    jac: DMatrix<f64>,
}

impl Default for LevenbergMarquardt {
    fn default() -> Self {
        Self::new()
    }
}

impl LevenbergMarquardt {
    /// Defaults: relative cost tolerance 1e-12, relative step tolerance 1e-10, lambda 1e-3.
    pub fn new() -> Self {
        LevenbergMarquardt {
            bounds: None,
            ftol: 1e-12,
            xtol: 1e-10,
            lambda: 1e-3,
            r: Vec::new(),
            trial: Vec::new(),
            jac: DMatrix::zeros(0, 0),
        }
    }

    /// Keeps the parameters inside `bounds`.
    pub fn with_bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = Some(bounds);
        self
    }

    /// Relative cost decrease below which the fit has converged.
    pub fn with_tolerance(mut self, ftol: f64) -> Result<Self, FitError> {
        if !(ftol.is_finite() && ftol > 0.0) {
            return Err(FitError::Config {
                field: "tolerance".into(),
                value: ftol,
                rule: "must be > 0".into(),
            });
        }
        self.ftol = ftol;
        Ok(self)
    }
}

/// Central-difference Jacobian, one-sided at a bound.
pub(crate) fn numeric_jacobian<P: Residuals + ?Sized>(
    problem: &P,
    p: &[f64],
    bounds: Option<&Bounds>,
    jac: &mut DMatrix<f64>,
    evals: &mut u64,
) -> Result<(), FitError> {
    let m = problem.len();
    let n = p.len();
    jac.resize_mut(m, n, 0.0);
    let mut x = p.to_vec();
    let mut rp = vec![0.0; m];
    let mut rm = vec![0.0; m];
    for j in 0..n {
        let h = 1e-6 * p[j].abs().max(1e-8);
        let (lo, hi) = bounds.map_or((f64::NEG_INFINITY, f64::INFINITY), |b| {
            (b.lower[j], b.upper[j])
        });
        let up = (p[j] + h).min(hi);
        let dn = (p[j] - h).max(lo);
        x[j] = up;
        problem.residuals(&x, &mut rp)?;
        x[j] = dn;
        problem.residuals(&x, &mut rm)?;
        x[j] = p[j];
        *evals += 2;
        let d = up - dn;
        for i in 0..m {
            jac[(i, j)] = if d > 0.0 { (rp[i] - rm[i]) / d } else { 0.0 };
        }
    }
    Ok(())
}

impl<P: Residuals + ?Sized> Fitter<P> for LevenbergMarquardt {
    const NAME: &'static str = "levenberg_marquardt";

    fn init(&mut self, problem: &P, state: &mut FitState) -> Result<(), FitError> {
        if problem.len() < state.params.len() {
            return Err(FitError::Data(format!(
                "{} residuals cannot determine {} parameters",
                problem.len(),
                state.params.len()
            )));
        }
        if let Some(b) = &self.bounds {
            b.validate(state.params.len())?;
            b.project(&mut state.params);
        }
        let p = state.params.clone();
        let c = state.cost_of(problem, &p, &mut self.r)?;
        state.update(&p, c);
        Ok(())
    }

    fn next_iter(
        &mut self,
        problem: &P,
        state: &mut FitState,
    ) -> Result<Option<TerminationReason>, FitError> {
        let n = state.params.len();
        let p = state.params.clone();
        self.r.resize(problem.len(), 0.0);
        problem.residuals(&p, &mut self.r)?;
        state.evals += 1;
        match problem.jacobian(&p, &mut self.jac) {
            Some(res) => res?,
            None => numeric_jacobian(
                problem,
                &p,
                self.bounds.as_ref(),
                &mut self.jac,
                &mut state.evals,
            )?,
        }
        let r = DVector::from_column_slice(&self.r);
        let jtj = self.jac.transpose() * &self.jac;
        let g = self.jac.transpose() * r;
        if g.amax() == 0.0 {
            return Ok(Some(TerminationReason::Converged));
        }
        // Parameters on a bound that the descent direction pushes further out are held there
        // this iteration (an active set): projecting their step away afterwards would spoil the
        // step of the others, and the fit would crawl along the bound to `max_iters`.
        // A parameter the residuals do not depend on here (a zero Jacobian column: a Stribeck
        // speed while fs = fc) is held too, so the others can still move.
        let held: Vec<bool> = (0..n)
            .map(|i| {
                jtj[(i, i)] == 0.0
                    || self.bounds.as_ref().is_some_and(|b| {
                        (p[i] <= b.lower[i] && g[i] > 0.0) || (p[i] >= b.upper[i] && g[i] < 0.0)
                    })
            })
            .collect();
        // Try increasing damping until the cost decreases.
        for _ in 0..40 {
            let mut a = jtj.clone();
            for i in 0..n {
                a[(i, i)] += self.lambda * jtj[(i, i)].max(1e-30);
            }
            let mut rhs = -&g;
            for i in (0..n).filter(|i| held[*i]) {
                a.row_mut(i).fill(0.0);
                a.column_mut(i).fill(0.0);
                a[(i, i)] = 1.0;
                rhs[i] = 0.0;
            }
            let Some(ch) = a.cholesky() else {
                self.lambda *= 10.0;
                continue;
            };
            let delta = ch.solve(&rhs);
            self.trial.clear();
            self.trial
                .extend(p.iter().zip(delta.iter()).map(|(x, d)| x + d));
            if let Some(b) = &self.bounds {
                b.project(&mut self.trial);
            }
            let trial = std::mem::take(&mut self.trial);
            let c = state.cost_of(problem, &trial, &mut self.r)?;
            if c < state.cost {
                let rel = (state.cost - c) / state.cost.max(f64::MIN_POSITIVE);
                let step: f64 = trial
                    .iter()
                    .zip(&p)
                    .map(|(a, b)| ((a - b) / (b.abs() + self.xtol)).abs())
                    .fold(0.0, f64::max);
                state.update(&trial, c);
                self.trial = trial;
                self.lambda = (self.lambda / 3.0).max(1e-12);
                return Ok(
                    (rel < self.ftol || step < self.xtol).then_some(TerminationReason::Converged)
                );
            }
            self.trial = trial;
            self.lambda *= 10.0;
            if self.lambda > 1e16 {
                break;
            }
        }
        // No descent at any damping: a (local) minimum to working precision.
        Ok(Some(TerminationReason::Converged))
    }
}

/// Standard errors of the parameters at `p`: `sqrt(diag(s^2 (J^T J)^-1))`, `s^2 = cost/(m - n)`.
/// `None` when the Jacobian is rank-deficient or there are no degrees of freedom.
pub fn standard_errors<P: Residuals + ?Sized>(
    problem: &P,
    p: &[f64],
    cost: f64,
) -> Option<Vec<f64>> {
    let (m, n) = (problem.len(), p.len());
    if m <= n {
        return None;
    }
    let mut jac = DMatrix::zeros(m, n);
    let mut evals = 0;
    match problem.jacobian(p, &mut jac) {
        Some(r) => r.ok()?,
        None => numeric_jacobian(problem, p, None, &mut jac, &mut evals).ok()?,
    }
    let inv = (jac.transpose() * jac).try_inverse()?;
    let s2 = cost / (m - n) as f64;
    Some((0..n).map(|i| (s2 * inv[(i, i)]).max(0.0).sqrt()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::Runner;

    /// y = a exp(-b t) + c, the shape of a Stribeck fit.
    struct Decay {
        t: Vec<f64>,
        y: Vec<f64>,
    }

    impl Residuals for Decay {
        fn len(&self) -> usize {
            self.t.len()
        }
        fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
            for ((o, t), y) in out.iter_mut().zip(&self.t).zip(&self.y) {
                *o = p[0] * (-p[1] * t).exp() + p[2] - y;
            }
            Ok(())
        }
    }

    #[test]
    fn recovers_an_exponential_decay() {
        let t: Vec<f64> = (0..200).map(|i| i as f64 * 0.05).collect();
        let y = t.iter().map(|t| 2.0 * (-0.7 * t).exp() + 0.5).collect();
        let p = Decay { t, y };
        let r = Runner::new(&p, LevenbergMarquardt::new())
            .run(vec![1.0, 0.1, 0.0])
            .unwrap();
        assert_eq!(r.termination, TerminationReason::Converged);
        for (a, b) in r.params.iter().zip([2.0, 0.7, 0.5]) {
            assert!((a - b).abs() < 1e-6, "{:?}", r.params);
        }
    }

    #[test]
    fn bounds_are_respected() {
        let t: Vec<f64> = (0..50).map(|i| i as f64 * 0.1).collect();
        let y = t.iter().map(|t| 2.0 * (-0.7 * t).exp() + 0.5).collect();
        let p = Decay { t, y };
        let b = Bounds {
            lower: vec![0.0, 0.0, 0.6],
            upper: vec![10.0, 10.0, 10.0],
        };
        let r = Runner::new(&p, LevenbergMarquardt::new().with_bounds(b))
            .max_iters(200)
            .run(vec![1.0, 0.1, 1.0])
            .unwrap();
        assert!(r.params[2] >= 0.6);
        // The optimum lies below c's bound: c is held there and the others still converge.
        assert_eq!(r.params[2], 0.6);
        assert_eq!(r.termination, TerminationReason::Converged, "{r:?}");
    }

    #[test]
    fn bad_tolerance_is_named() {
        let e = LevenbergMarquardt::new().with_tolerance(-1.0).unwrap_err();
        assert_eq!(e.to_string(), "tolerance (-1) must be > 0");
    }
}
