//! Linear least squares `min || W^(1/2) (A theta - b) ||^2` with column scaling and SVD.
//!
//! Friction regressors mix scales (J ~ 1e-5, fv ~ 1e-4, fc ~ 1e-2 in S2), so columns are
//! normalised before the SVD and the solution is scaled back; the parameter covariance is
//! `s^2 (A^T W A)^-1` with `s^2 = rss/(m - n)`.

use super::fitter::FitError;
use nalgebra::{DMatrix, DVector};

/// A linear least-squares solution.
#[derive(Clone, Debug, PartialEq)]
pub struct LsqSolution {
    /// Parameters.
    pub theta: Vec<f64>,
    /// Weighted residual sum of squares.
    pub rss: f64,
    /// Standard errors of the parameters (empty when m <= n).
    pub std_errors: Vec<f64>,
}

/// Solves for `theta` from rows `a` (m × n, row-major as `rows[i][j]`), targets `b`, optional
/// weights `w` (>= 0).
pub fn solve(rows: &[Vec<f64>], b: &[f64], w: Option<&[f64]>) -> Result<LsqSolution, FitError> {
    let m = rows.len();
    let n = rows.first().map_or(0, Vec::len);
    if m == 0
        || n == 0
        || b.len() != m
        || w.is_some_and(|w| w.len() != m)
        || rows.iter().any(|r| r.len() != n)
    {
        return Err(FitError::Data(format!(
            "least squares needs equal-length rows and targets (got {m} rows)"
        )));
    }
    if m < n {
        return Err(FitError::Data(format!(
            "{m} equations cannot determine {n} parameters"
        )));
    }
    let sw: Vec<f64> = (0..m)
        .map(|i| w.map_or(1.0, |w| w[i].max(0.0).sqrt()))
        .collect();
    let mut a = DMatrix::from_fn(m, n, |i, j| rows[i][j] * sw[i]);
    let y = DVector::from_fn(m, |i, _| b[i] * sw[i]);
    let scale: Vec<f64> = (0..n)
        .map(|j| {
            let s = a.column(j).norm();
            if s > 0.0 { s } else { 1.0 }
        })
        .collect();
    for (j, s) in scale.iter().enumerate() {
        a.column_mut(j).scale_mut(1.0 / s);
    }
    let svd = a.clone().svd(true, true);
    let tol = 1e-12 * svd.singular_values.max();
    if svd.singular_values.min() <= tol {
        return Err(FitError::Data(
            "the regressors are collinear: the data do not excite every parameter".into(),
        ));
    }
    let x = svd
        .solve(&y, tol)
        .map_err(|e| FitError::Bug(e.to_string()))?;
    let resid = &a * &x - &y;
    let rss = resid.norm_squared();
    let theta: Vec<f64> = x.iter().zip(&scale).map(|(x, s)| x / s).collect();
    let std_errors = if m > n {
        let s2 = rss / (m - n) as f64;
        match (a.transpose() * &a).try_inverse() {
            Some(inv) => (0..n)
                .map(|j| (s2 * inv[(j, j)]).max(0.0).sqrt() / scale[j])
                .collect(),
            None => Vec::new(),
        }
    } else {
        Vec::new()
    };
    Ok(LsqSolution {
        theta,
        rss,
        std_errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_badly_scaled_parameters() {
        // u = J a + fv v + fc sgn v with S2's scales.
        let truth = [7e-6, 1.6e-4, 0.01];
        let rows: Vec<Vec<f64>> = (0..500)
            .map(|k| {
                let t = k as f64 * 1e-3;
                let v = 50.0 * (7.0 * t).sin() + 3.0;
                vec![
                    350.0 * (7.0 * t).cos() + 100.0 * (31.0 * t).sin(),
                    v,
                    v.signum(),
                ]
            })
            .collect();
        let b: Vec<f64> = rows
            .iter()
            .map(|r| r.iter().zip(&truth).map(|(x, t)| x * t).sum())
            .collect();
        let s = solve(&rows, &b, None).unwrap();
        for (e, t) in s.theta.iter().zip(&truth) {
            assert!((e - t).abs() / t < 1e-9, "{:?}", s.theta);
        }
    }

    #[test]
    fn collinear_data_is_refused() {
        let rows: Vec<Vec<f64>> = (0..10).map(|k| vec![k as f64, 2.0 * k as f64]).collect();
        let b = vec![1.0; 10];
        assert!(
            solve(&rows, &b, None)
                .unwrap_err()
                .to_string()
                .contains("collinear")
        );
    }
}
