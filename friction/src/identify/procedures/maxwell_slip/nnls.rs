//! Non-negative least squares (Lawson & Hanson 1974, ch. 23) for the breakpoint grid: on the
//! design matrix, and with the active set found on the normal equations for the count-change
//! fit's phase search, which solves a problem of many rows and few columns hundreds of times.

use nalgebra::{DMatrix, DVector};

/// Non-negative least squares `min |A z - b|, z_j >= 0` for the columns `j` with `nonneg[j]`
/// (the others free), by the active-set method of Lawson & Hanson (1974, ch. 23).
pub(super) fn nnls(a: &DMatrix<f64>, b: &DVector<f64>, nonneg: &[bool]) -> DVector<f64> {
    let tol = 1e-10 * a.norm() * b.norm().max(1e-300);
    active_set(
        nonneg,
        tol,
        |z| a.transpose() * (b - a * z),
        |passive| solve_on(a, b, passive),
    )
    .0
}

/// The same problem with every column non-negative, its active set found on the normal
/// equations `AᵀA z = Aᵀb` (a problem the size of the grid, whatever the number of rows) and
/// the solution then computed on `A`'s passive columns as [`nnls`] computes its last one: the
/// same answer at a fraction of the work when the rows far outnumber the columns.
pub(super) fn nnls_normal(a: &DMatrix<f64>, b: &DVector<f64>) -> DVector<f64> {
    let (g, h) = (a.tr_mul(a), a.tr_mul(b));
    let tol = 1e-10 * a.norm() * b.norm().max(1e-300);
    let (_, passive) = active_set(
        &vec![true; a.ncols()],
        tol,
        |z| &h - &g * z,
        |passive| solve_normal(&g, &h, passive),
    );
    solve_on(a, b, &passive)
}

/// The least-squares solution on the passive columns of `a` (zeros elsewhere).
fn solve_on(a: &DMatrix<f64>, b: &DVector<f64>, passive: &[bool]) -> DVector<f64> {
    let cols: Vec<usize> = (0..a.ncols()).filter(|&j| passive[j]).collect();
    let mut full = DVector::zeros(a.ncols());
    if cols.is_empty() {
        return full;
    }
    let sub = a.select_columns(&cols);
    if let Ok(s) = sub.svd(true, true).solve(b, 1e-12) {
        for (i, &j) in cols.iter().enumerate() {
            full[j] = s[i];
        }
    }
    full
}

/// The normal equations `G z = h` on the passive columns, scaled to a unit diagonal: by
/// Cholesky, or by the pseudo-inverse where the passive columns are (nearly) dependent.
fn solve_normal(g: &DMatrix<f64>, h: &DVector<f64>, passive: &[bool]) -> DVector<f64> {
    let cols: Vec<usize> = (0..g.ncols()).filter(|&j| passive[j]).collect();
    let mut full = DVector::zeros(g.ncols());
    let d: Vec<f64> = cols.iter().map(|&j| 1.0 / g[(j, j)].sqrt()).collect();
    if cols.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return full;
    }
    let sub = DMatrix::from_fn(cols.len(), cols.len(), |r, c| {
        g[(cols[r], cols[c])] * d[r] * d[c]
    });
    let rhs = DVector::from_fn(cols.len(), |r, _| h[cols[r]] * d[r]);
    let u = match sub.clone().cholesky() {
        Some(ch) => ch.solve(&rhs),
        None => {
            let svd = sub.svd(true, true);
            let eps = 1e-12 * svd.singular_values.max();
            svd.solve(&rhs, eps)
                .unwrap_or_else(|_| DVector::zeros(cols.len()))
        }
    };
    for (i, &j) in cols.iter().enumerate() {
        full[j] = u[i] * d[i];
    }
    full
}

/// Lawson & Hanson's active-set loop: `gradient(z)` is `Aᵀ(b - A z)`, `solve(passive)` the
/// unconstrained solution on the passive columns. Returns the solution and its passive set.
fn active_set(
    nonneg: &[bool],
    tol: f64,
    gradient: impl Fn(&DVector<f64>) -> DVector<f64>,
    solve: impl Fn(&[bool]) -> DVector<f64>,
) -> (DVector<f64>, Vec<bool>) {
    let n = nonneg.len();
    let mut passive: Vec<bool> = nonneg.iter().map(|nn| !nn).collect();
    // The free columns start in the passive set (zeros if there are none).
    let mut z = solve(&passive);
    for _ in 0..3 * n {
        let w = gradient(&z);
        let Some(j) = (0..n)
            .filter(|&j| !passive[j] && w[j] > tol)
            .max_by(|&i, &j| w[i].total_cmp(&w[j]))
        else {
            break;
        };
        passive[j] = true;
        loop {
            let s = solve(&passive);
            let bad: Vec<usize> = (0..n)
                .filter(|&i| passive[i] && nonneg[i] && s[i] <= 0.0)
                .collect();
            if bad.is_empty() {
                z = s;
                break;
            }
            let step = bad
                .iter()
                .map(|&i| z[i] / (z[i] - s[i]))
                .fold(f64::INFINITY, f64::min);
            z = &z + (s - &z) * step;
            for i in 0..n {
                if passive[i] && nonneg[i] && z[i] <= 1e-15 {
                    passive[i] = false;
                    z[i] = 0.0;
                }
            }
        }
    }
    (z, passive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nnls_keeps_coefficients_non_negative() {
        // b = 2 a1 - a2 exactly: the unconstrained fit needs a negative coefficient.
        let a = DMatrix::from_row_slice(3, 2, &[1.0, 1.0, 2.0, 1.0, 3.0, 2.0]);
        let b = DVector::from_row_slice(&[1.0, 3.0, 4.0]);
        let z = nnls(&a, &b, &[true, true]);
        assert!(z.iter().all(|v| *v >= 0.0), "{z}");
        assert!((z[0] - 19.0 / 14.0).abs() < 1e-9 && z[1] == 0.0, "{z}");
    }
}
