//! How sure a least-squares fit is: standard errors that hold for correlated residuals, 95 %
//! intervals, goodness of fit (R², AIC, BIC) and the moving-block bootstrap
//! (docs/src/identification.md#uncertainty).
//!
//! The textbook covariance `s² (JᵀJ)⁻¹` assumes independent residuals. The residual of a fit to
//! a time series is rarely that: what the model misses is smooth, so neighbouring samples carry
//! nearly the same information and the effective number of samples is far below the count. The
//! covariance used here is the sandwich `A⁻¹ Ω A⁻¹`, `A = JᵀJ`, with the long-run covariance
//! `Ω` of the scores `s_t = J_tᵀ r_t` estimated by overlapping batch means over windows of `L`
//! samples (the Bartlett-kernel estimator of Newey & West 1987), `L` twice the window of
//! Andrews' (1991) AR(1) rule on the residuals' lag-one autocorrelation. A window of `L` of `n`
//! samples leaves the estimate itself uncertain, so the standard error is scaled by the
//! fixed-b critical value of Kiefer & Vogelsang (2005) for the Bartlett kernel over 1.96,
//! `1 + (2.9694 b + 0.4160 b² - 0.5324 b³)/1.96` with `b = L/n`. Each standard error is the
//! larger of this and the independent one, so a white residual keeps the classical value. The
//! effective sample count `n_eff` is `n` times the smallest ratio of the two variances; the
//! intervals use Student's `t` with `n_eff - k` degrees of freedom.

use super::FitError;
use super::rng::Rng;
use nalgebra::DMatrix;
use serde::Serialize;

/// Standard errors of a least-squares estimate and what they rest on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Uncertainty {
    /// One standard error per parameter.
    pub std_errors: Vec<f64>,
    /// Effective number of independent samples (`n` for a white residual).
    pub n_eff: f64,
    /// Window of the serial-correlation estimate (1: none found or not asked for).
    pub lag: usize,
}

/// Standard errors from the Jacobian rows `jac` (m × n) and residuals `resid` at the optimum;
/// with `serial`, corrected for correlation between consecutive residuals (time series).
/// A parameter the residuals do not depend on (a zero column: a Stribeck speed where
/// `fs = fc`) gets an infinite error and the others are computed without it. `None` when the
/// rest is rank-deficient or there are no degrees of freedom.
pub fn least_squares(jac: &DMatrix<f64>, resid: &[f64], serial: bool) -> Option<Uncertainty> {
    let live: Vec<usize> = (0..jac.ncols())
        .filter(|j| jac.column(*j).iter().any(|x| *x != 0.0))
        .collect();
    if live.len() < jac.ncols() {
        let sub = DMatrix::from_fn(jac.nrows(), live.len(), |i, j| jac[(i, live[j])]);
        let u = least_squares(&sub, resid, serial)?;
        let mut std_errors = vec![f64::INFINITY; jac.ncols()];
        for (j, e) in live.iter().zip(u.std_errors) {
            std_errors[*j] = e;
        }
        return Some(Uncertainty { std_errors, ..u });
    }
    let (m, n) = (jac.nrows(), jac.ncols());
    if n == 0 || m <= n || resid.len() != m || jac.iter().chain(resid).any(|x| !x.is_finite()) {
        return None;
    }
    // Unit-norm columns so that (JᵀJ)⁻¹ is computed on a well-scaled matrix.
    let scale: Vec<f64> = (0..n).map(|j| jac.column(j).norm()).collect();
    if scale.contains(&0.0) {
        return None;
    }
    let js = DMatrix::from_fn(m, n, |i, j| jac[(i, j)] / scale[j]);
    let inv = (js.transpose() * &js).try_inverse()?;
    let rss: f64 = resid.iter().map(|r| r * r).sum();
    let s2 = rss / (m - n) as f64;
    let iid: Vec<f64> = (0..n).map(|j| s2 * inv[(j, j)].max(0.0)).collect();
    let lag = if serial {
        (2 * andrews_lag(resid)).min((m / 3).max(1))
    } else {
        1
    };
    let mut var = iid.clone();
    let mut n_eff = m as f64;
    if serial {
        let b = lag as f64 / m as f64;
        let fixed_b = 1.0 + (2.9694 * b + 0.4160 * b * b - 0.5324 * b.powi(3)) / 1.96;
        let omega = batch_means(&js, resid, lag) * (m as f64 / (m - n) as f64);
        let cov = &inv * omega * &inv * fixed_b.powi(2);
        let mut worst = 1.0f64;
        for j in 0..n {
            let h = cov[(j, j)].max(0.0);
            if h > var[j] {
                worst = worst.max(h / iid[j].max(f64::MIN_POSITIVE));
                var[j] = h;
            }
        }
        n_eff = (m as f64 / worst).max(1.0);
    }
    Some(Uncertainty {
        std_errors: var.iter().zip(&scale).map(|(v, s)| v.sqrt() / s).collect(),
        n_eff,
        lag,
    })
}

/// Standard errors of the differences `θ_a - θ_b` for `pairs` of (disjoint) columns of `jac`,
/// corrected for serial correlation as [`least_squares`] does. The problem is reparametrised
/// to `(θ_a, θ_a - θ_b)` by the columns `c_a + c_b` and `-c_b`, which fit the same values, so
/// the covariance of the two estimates (they share the data and the other parameters) counts.
pub fn difference_std_errors(
    jac: &DMatrix<f64>,
    resid: &[f64],
    pairs: &[(usize, usize)],
) -> Option<Vec<f64>> {
    let mut j = jac.clone();
    for &(a, b) in pairs {
        let cb = jac.column(b).clone_owned();
        let sum = jac.column(a) + &cb;
        j.set_column(a, &sum);
        j.set_column(b, &(-cb));
    }
    let u = least_squares(&j, resid, true)?;
    Some(pairs.iter().map(|&(_, b)| u.std_errors[b]).collect())
}
/// Andrews' AR(1) plug-in window for the Bartlett kernel: `1.1447 (alpha m)^(1/3)` with
/// `alpha = 4 rho² / ((1 - rho)² (1 + rho)²)`, `rho` the lag-one autocorrelation of `r`;
/// between 1 and a third of the samples.
pub fn andrews_lag(r: &[f64]) -> usize {
    let m = r.len();
    if m < 8 {
        return 1;
    }
    let mean = r.iter().sum::<f64>() / m as f64;
    let c0: f64 = r.iter().map(|x| (x - mean).powi(2)).sum();
    if c0 <= 0.0 {
        return 1;
    }
    let c1: f64 = r.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    let rho = (c1 / c0).clamp(-0.999, 0.9999);
    let alpha = 4.0 * rho * rho / ((1.0 - rho).powi(2) * (1.0 + rho).powi(2));
    let lag = (1.1447 * (alpha * m as f64).cbrt()).ceil();
    (lag as usize).clamp(1, (m / 3).max(1))
}

/// `Σ_t Σ_s` long-run covariance of the scores `J_tᵀ r_t` (summed, not averaged) by overlapping
/// batch means over windows of `lag` samples; `lag = 1` is White's estimator `Σ s_t s_tᵀ`.
fn batch_means(jac: &DMatrix<f64>, r: &[f64], lag: usize) -> DMatrix<f64> {
    let (m, n) = (jac.nrows(), jac.ncols());
    let lag = lag.clamp(1, m);
    let score = |t: usize, j: usize| jac[(t, j)] * r[t];
    let mean: Vec<f64> = (0..n)
        .map(|j| (0..m).map(|t| score(t, j)).sum::<f64>() / m as f64)
        .collect();
    let mut w: Vec<f64> = (0..n)
        .map(|j| (0..lag).map(|t| score(t, j) - mean[j]).sum())
        .collect();
    let mut omega = DMatrix::zeros(n, n);
    let windows = m - lag + 1;
    for start in 0..windows {
        if start > 0 {
            for (j, wj) in w.iter_mut().enumerate() {
                *wj += score(start + lag - 1, j) - score(start - 1, j);
            }
        }
        for a in 0..n {
            for b in 0..=a {
                omega[(a, b)] += w[a] * w[b];
            }
        }
    }
    for a in 0..n {
        for b in 0..a {
            omega[(b, a)] = omega[(a, b)];
        }
    }
    omega * (m as f64 / (windows as f64 * lag as f64))
}

/// The 97.5 % quantile of Student's `t` with `dof` degrees of freedom (exact for 1 and 2, the
/// Cornish–Fisher series of Abramowitz & Stegun 26.7.5 above: within 0.001 at 3, closer after).
pub fn t975(dof: f64) -> f64 {
    const Z: f64 = 1.959_963_984_540_054;
    if dof.is_nan() || dof < 1.0 {
        return f64::NAN;
    }
    if dof < 1.5 {
        return 12.706_204_736_174_7;
    }
    if dof < 2.5 {
        return 4.302_652_729_749_464;
    }
    let z = Z;
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    let z11 = z.powi(11);
    let g5 =
        (27.0 * z11 + 339.0 * z9 + 930.0 * z7 - 1782.0 * z5 - 765.0 * z3 + 17955.0 * z) / 368_640.0;
    z + g1 / dof + g2 / dof.powi(2) + g3 / dof.powi(3) + g4 / dof.powi(4) + g5 / dof.powi(5)
}

/// Goodness of fit of `k` parameters leaving residuals `resid` on `target`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GoodnessOfFit {
    /// `1 - SSE/SST` (SST about the target's mean).
    pub r2: f64,
    /// Akaike: `n ln(SSE/n) + 2k`.
    pub aic: f64,
    /// Schwarz: `n ln(SSE/n) + k ln n`.
    pub bic: f64,
}

impl GoodnessOfFit {
    /// The figures of a fit; `None` without data or with a zero or non-finite SSE.
    pub fn of(target: &[f64], resid: &[f64], k: usize) -> Option<GoodnessOfFit> {
        let n = resid.len();
        let sse: f64 = resid.iter().map(|r| r * r).sum();
        if n == 0 || !(sse > 0.0 && sse.is_finite()) {
            return None;
        }
        let mean = target.iter().sum::<f64>() / target.len().max(1) as f64;
        let sst: f64 = target.iter().map(|y| (y - mean).powi(2)).sum();
        let (n, k) = (n as f64, k as f64);
        let ll = n * (sse / n).ln();
        Some(GoodnessOfFit {
            r2: if sst > 0.0 { 1.0 - sse / sst } else { f64::NAN },
            aic: ll + 2.0 * k,
            bic: ll + k * n.ln(),
        })
    }
}

/// A moving-block bootstrap's spread of the parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bootstrap {
    /// Replicates asked for.
    pub replicates: usize,
    /// Replicates whose refit failed (left out).
    pub failed: usize,
    /// Block length \[samples\].
    pub block: usize,
    /// Seed of the resampling.
    pub seed: u64,
    /// Standard deviation of each parameter over the replicates.
    pub std_errors: Vec<f64>,
    /// 2.5 % and 97.5 % percentiles of each parameter.
    pub ci95: Vec<[f64; 2]>,
}

/// Fewest replicates for a 95 % percentile interval.
pub const MIN_REPLICATES: usize = 20;

/// Residual moving-block bootstrap: `replicates` times, the data `fitted + r*` (blocks of
/// `block` consecutive residuals drawn with replacement, circularly, then centred) are refitted
/// by `refit`, which returns the parameters.
pub fn block_bootstrap(
    fitted: &[f64],
    resid: &[f64],
    block: usize,
    replicates: usize,
    seed: u64,
    mut refit: impl FnMut(&[f64]) -> Result<Vec<f64>, FitError>,
) -> Result<Bootstrap, FitError> {
    let m = resid.len();
    if replicates < MIN_REPLICATES {
        return Err(FitError::Config {
            field: "given.bootstrap".into(),
            value: replicates as f64,
            rule: format!("must be at least {MIN_REPLICATES} replicates for a 95 % interval"),
        });
    }
    if m < 2 || fitted.len() != m {
        return Err(FitError::Data(
            "the bootstrap needs the fit's residuals".into(),
        ));
    }
    let block = block.clamp(1, m);
    let mean = resid.iter().sum::<f64>() / m as f64;
    let mut rng = Rng::new(seed);
    let mut draws: Vec<Vec<f64>> = Vec::with_capacity(replicates);
    let mut failed = 0;
    let mut y = vec![0.0; m];
    for _ in 0..replicates {
        let mut k = 0;
        while k < m {
            let start = (rng.uniform() * m as f64) as usize % m;
            for i in 0..block.min(m - k) {
                y[k] = fitted[k] + resid[(start + i) % m] - mean;
                k += 1;
            }
        }
        match refit(&y) {
            Ok(p) if p.iter().all(|x| x.is_finite()) => draws.push(p),
            _ => failed += 1,
        }
    }
    if draws.len() < MIN_REPLICATES {
        return Err(FitError::Data(format!(
            "the bootstrap refits failed {failed} times in {replicates}: too few left for an interval"
        )));
    }
    let n = draws[0].len();
    let mut std_errors = Vec::with_capacity(n);
    let mut ci95 = Vec::with_capacity(n);
    for j in 0..n {
        let mut col: Vec<f64> = draws.iter().map(|d| d[j]).collect();
        let mean = col.iter().sum::<f64>() / col.len() as f64;
        let var = col.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (col.len() - 1) as f64;
        std_errors.push(var.sqrt());
        col.sort_by(f64::total_cmp);
        ci95.push([percentile(&col, 0.025), percentile(&col, 0.975)]);
    }
    Ok(Bootstrap {
        replicates,
        failed,
        block,
        seed,
        std_errors,
        ci95,
    })
}

/// Linear-interpolated percentile `q` of sorted `x`.
fn percentile(x: &[f64], q: f64) -> f64 {
    let pos = q * (x.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < x.len() {
        x[i] + f * (x[i + 1] - x[i])
    } else {
        x[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// y = a + b x with a periodic regressor x (a velocity) and AR(1) noise of coefficient
    /// `phi`.
    fn line(phi: f64, seed: u64, m: usize) -> (DMatrix<f64>, Vec<f64>) {
        let mut rng = Rng::new(seed);
        let jac = DMatrix::from_fn(m, 2, |i, j| {
            if j == 0 {
                1.0
            } else {
                (std::f64::consts::TAU * 7.3 * i as f64 / m as f64).sin()
            }
        });
        let mut e = 0.0;
        let y = (0..m)
            .map(|i| {
                e = phi * e + rng.normal();
                1.0 + 2.0 * jac[(i, 1)] + e
            })
            .collect();
        (jac, y)
    }

    fn ols(jac: &DMatrix<f64>, y: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let yv = nalgebra::DVector::from_column_slice(y);
        let p = (jac.transpose() * jac).try_inverse().unwrap() * jac.transpose() * &yv;
        let r = (jac * &p - yv).iter().copied().collect();
        (p.iter().copied().collect(), r)
    }

    #[test]
    fn white_residuals_keep_the_classical_errors() {
        let (jac, y) = line(0.0, 1, 2000);
        let (_, r) = ols(&jac, &y);
        let u = least_squares(&jac, &r, true).unwrap();
        let plain = least_squares(&jac, &r, false).unwrap();
        assert!(u.lag <= 6, "{u:?}");
        for (a, b) in u.std_errors.iter().zip(&plain.std_errors) {
            assert!(a >= b && *a < 1.15 * b, "{a} {b}");
        }
        assert!(u.n_eff > 1500.0, "{}", u.n_eff);
    }

    /// Correlated noise: the corrected interval covers the truth about 95 % of the time where
    /// the classical one covers far less.
    #[test]
    fn correlated_residuals_widen_the_errors_to_what_covers() {
        let (mut cover, mut cover_iid) = (0, 0);
        for seed in 0..200 {
            let (jac, y) = line(0.95, seed, 1000);
            let (p, r) = ols(&jac, &y);
            let u = least_squares(&jac, &r, true).unwrap();
            let iid = least_squares(&jac, &r, false).unwrap();
            let q = t975(u.n_eff - 2.0);
            cover += usize::from((p[1] - 2.0).abs() <= q * u.std_errors[1]);
            cover_iid += usize::from((p[1] - 2.0).abs() <= 1.96 * iid.std_errors[1]);
        }
        assert!((176..=198).contains(&cover), "{cover}");
        assert!(cover_iid < 120, "{cover_iid}");
    }

    #[test]
    fn t_quantiles() {
        for (dof, q) in [
            (1.0, 12.7062),
            (2.0, 4.3027),
            (3.0, 3.1824),
            (5.0, 2.5706),
            (10.0, 2.2281),
            (30.0, 2.0423),
            (1e6, 1.9600),
        ] {
            assert!((t975(dof) - q).abs() < 3e-3, "{dof}: {}", t975(dof));
        }
    }

    #[test]
    fn goodness_of_fit_figures() {
        let g = GoodnessOfFit::of(&[1.0, 2.0, 3.0, 4.0], &[0.1, -0.1, 0.1, -0.1], 2).unwrap();
        assert!((g.r2 - (1.0 - 0.04 / 5.0)).abs() < 1e-12);
        assert!((g.aic - (4.0 * 0.01f64.ln() + 4.0)).abs() < 1e-12);
        assert!((g.bic - (4.0 * 0.01f64.ln() + 2.0 * 4f64.ln())).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_of_a_mean() {
        let mut rng = Rng::new(3);
        let y: Vec<f64> = (0..400).map(|_| 5.0 + rng.normal()).collect();
        let mean = y.iter().sum::<f64>() / 400.0;
        let r: Vec<f64> = y.iter().map(|v| v - mean).collect();
        let fitted = vec![mean; 400];
        let b = block_bootstrap(&fitted, &r, 1, 200, 9, |y| {
            Ok(vec![y.iter().sum::<f64>() / y.len() as f64])
        })
        .unwrap();
        assert!((b.std_errors[0] - 0.05).abs() < 0.01, "{b:?}");
        assert!(b.ci95[0][0] < mean && mean < b.ci95[0][1]);
        assert!(block_bootstrap(&fitted, &r, 1, 5, 9, |_| Ok(vec![0.0])).is_err());
    }
}
