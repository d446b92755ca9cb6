//! The IDIM-LS regression as a least-squares problem. Parameters: the inertia `j`, the
//! `offset`, then per side (one pooled, or positive and negative) `fv, fc, fs, vs`:
//!
//! $$u = j\,a + \text{offset} + \sum_{\text{side}} \big[f_v v_\text{side} + s_\text{side}\,
//!   (f_c + (f_s - f_c)\,\phi(|v|; v_s, \delta))\big]$$
//!
//! with `phi = 0` in the first stage (Coulomb + viscous) and `exp(-|v/v_s|^δ)` in the second.

use super::regression::Regression;
use crate::curve::phi_exp;
use crate::identify::{FitError, Residuals};
use nalgebra::DMatrix;

/// Index of the inertia.
pub const J: usize = 0;
/// Index of the offset.
pub const OFF: usize = 1;
/// Offsets within a side's block.
pub const FV: usize = 0;
/// Coulomb level within a side's block.
pub const FC: usize = 1;
/// Static level within a side's block.
pub const FS: usize = 2;
/// Stribeck velocity within a side's block.
pub const VS: usize = 3;
/// Parameters per side.
const PER_SIDE: usize = 4;
/// The names of a side's block.
pub const SIDE_NAMES: [&str; PER_SIDE] = ["fv", "fc", "fs", "vs"];

/// Index of parameter `which` (`FV`, `FC`, `FS`, `VS`) of side `side` (0 positive or pooled,
/// 1 negative).
pub fn idx(side: usize, which: usize) -> usize {
    2 + PER_SIDE * side + which
}

/// Number of parameters with `sides` sides.
pub fn count(sides: usize) -> usize {
    2 + PER_SIDE * sides
}

/// The name of parameter `i` as the report spells it (`negative.fc` for the negative side).
pub fn name(i: usize) -> String {
    match i {
        J => "j".into(),
        OFF => "offset".into(),
        _ => {
            let base = SIDE_NAMES[(i - 2) % PER_SIDE];
            if (i - 2) / PER_SIDE == 0 {
                base.into()
            } else {
                format!("negative.{base}")
            }
        }
    }
}

/// True for the parameters the first stage fits linearly.
pub fn linear(i: usize) -> bool {
    i < 2 || matches!((i - 2) % PER_SIDE, FV | FC)
}

/// The regression over the free parameters `free` (indices), the others held at `full`.
pub struct Problem<'a> {
    /// The conditioned record.
    pub r: &'a Regression,
    /// The target (the decimated force less a known offset).
    pub u: &'a [f64],
    /// Every parameter ([`count`] of them).
    pub full: Vec<f64>,
    /// The fitted ones.
    pub free: Vec<usize>,
    /// Second stage: the Stribeck curve.
    pub stribeck: bool,
    /// The Stribeck exponent.
    pub delta: f64,
}

impl Problem<'_> {
    /// The full parameter vector with the free ones set to `p`.
    pub fn expand(&self, p: &[f64]) -> Vec<f64> {
        let mut f = self.full.clone();
        for (i, x) in self.free.iter().zip(p) {
            f[*i] = *x;
        }
        f
    }

    fn phi(&self, q: &[f64], side: usize, k: usize) -> f64 {
        if self.stribeck {
            phi_exp(self.r.v[k].abs(), q[idx(side, VS)], self.delta)
        } else {
            0.0
        }
    }

    /// `d u / d theta_i` at row `k`.
    pub fn column(&self, q: &[f64], i: usize, k: usize) -> f64 {
        match i {
            J => self.r.a[k],
            OFF => 1.0,
            _ => {
                let (side, which) = ((i - 2) / PER_SIDE, (i - 2) % PER_SIDE);
                let sd = &self.r.sides[side];
                let phi = self.phi(q, side, k);
                match which {
                    FV => sd.v[k],
                    FC => sd.s[k] * (1.0 - phi),
                    FS => sd.s[k] * phi,
                    _ => {
                        let vs = q[idx(side, VS)];
                        let x = self.r.v[k].abs() / vs;
                        let rd = if x > 0.0 { x.powf(self.delta) } else { 0.0 };
                        let excess = q[idx(side, FS)] - q[idx(side, FC)];
                        sd.s[k] * excess * phi * rd * self.delta / vs
                    }
                }
            }
        }
    }

    /// The model's force at row `k`.
    pub fn model(&self, q: &[f64], k: usize) -> f64 {
        let r = self.r;
        let mut f = q[J] * r.a[k] + q[OFF];
        for (side, sd) in r.sides.iter().enumerate() {
            let p = |w| q[idx(side, w)];
            let phi = self.phi(q, side, k);
            f += p(FV) * sd.v[k] + sd.s[k] * (p(FC) + (p(FS) - p(FC)) * phi);
        }
        f
    }

    /// The Jacobian over the free parameters at `q`.
    pub fn jacobian_at(&self, q: &[f64]) -> DMatrix<f64> {
        DMatrix::from_fn(self.u.len(), self.free.len(), |k, j| {
            self.column(q, self.free[j], k)
        })
    }

    /// Sum of squared residuals at `q`.
    pub fn sse(&self, q: &[f64]) -> f64 {
        (0..self.u.len())
            .map(|k| (self.model(q, k) - self.u[k]).powi(2))
            .sum()
    }
}

impl Residuals for Problem<'_> {
    fn len(&self) -> usize {
        self.u.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        let q = self.expand(p);
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.model(&q, k) - self.u[k];
        }
        Ok(())
    }
    fn jacobian(&self, p: &[f64], jac: &mut DMatrix<f64>) -> Option<Result<(), FitError>> {
        *jac = self.jacobian_at(&self.expand(p));
        Some(Ok(()))
    }
}

/// Ordinary least squares of the linear (first-stage) problem for target `u`: the free
/// parameters, the fixed linear ones' share subtracted.
pub fn ols(p: &Problem<'_>, u: &[f64]) -> Result<Vec<f64>, FitError> {
    let q = &p.full;
    let w = p.jacobian_at(q);
    let fixed: Vec<usize> = (0..q.len())
        .filter(|i| linear(*i) && !p.free.contains(i))
        .collect();
    let rows: Vec<Vec<f64>> = w.row_iter().map(|r| r.iter().copied().collect()).collect();
    let b: Vec<f64> = (0..u.len())
        .map(|k| {
            u[k] - fixed
                .iter()
                .map(|i| q[*i] * p.column(q, *i, k))
                .sum::<f64>()
        })
        .collect();
    Ok(crate::identify::lsq::solve(&rows, &b, None)?.theta)
}
