//! The least-squares problem on one direction's magnitudes, with its analytic Jacobian, and
//! the start values read from the data.

use super::shape::{DELTA, FC, FS, FV, N, OFFSET, Shape, VS, curve};
use crate::identify::{FitError, Residuals};

/// Least-squares problem on magnitudes `y` at speeds `s` (with the direction `sign` of each
/// point for the offset); the free parameters are `free`.
pub(super) struct CurveProblem<'a> {
    pub(super) s: &'a [f64],
    pub(super) y: &'a [f64],
    pub(super) sign: &'a [f64],
    pub(super) shape: Shape,
    pub(super) full: [f64; N],
    pub(super) free: Vec<usize>,
}

impl CurveProblem<'_> {
    pub(super) fn expand(&self, p: &[f64]) -> [f64; N] {
        let mut full = self.full;
        for (i, x) in self.free.iter().zip(p) {
            full[*i] = *x;
        }
        full
    }

    pub(super) fn predict(&self, q: &[f64; N], i: usize) -> f64 {
        curve(self.shape, q, self.s[i]) + self.sign[i] * q[OFFSET]
    }
}

impl Residuals for CurveProblem<'_> {
    fn len(&self) -> usize {
        self.s.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        let full = self.expand(p);
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.predict(&full, i) - self.y[i];
        }
        Ok(())
    }
    fn jacobian(
        &self,
        p: &[f64],
        jac: &mut nalgebra::DMatrix<f64>,
    ) -> Option<Result<(), FitError>> {
        let q = self.expand(p);
        jac.resize_mut(self.s.len(), self.free.len(), 0.0);
        for (i, &s) in self.s.iter().enumerate() {
            let amp = q[FS] - q[FC];
            // phi and its derivatives in vs and delta.
            let (phi, dvs, ddelta) = match self.shape {
                Shape::Exp => {
                    let r = s / q[VS];
                    let rd = if r > 0.0 { r.powf(q[DELTA]) } else { 0.0 };
                    let phi = (-rd).exp();
                    let ln_r = if r > 0.0 { r.ln() } else { 0.0 };
                    (phi, phi * rd * q[DELTA] / q[VS], -phi * rd * ln_r)
                }
                Shape::Lorentz => {
                    let r2 = (s / q[VS]).powi(2);
                    let phi = 1.0 / (1.0 + r2);
                    (phi, phi * phi * 2.0 * r2 / q[VS], 0.0)
                }
                Shape::Line => (0.0, 0.0, 0.0),
            };
            for (j, &k) in self.free.iter().enumerate() {
                jac[(i, j)] = match k {
                    FC => 1.0 - phi,
                    FS => phi,
                    FV => s,
                    VS => amp * dvs,
                    OFFSET => self.sign[i],
                    _ => amp * ddelta,
                };
            }
        }
        Some(Ok(()))
    }
}

/// Initial guess from the data (see the module doc); `s` sorted ascending.
pub(super) fn initial_guess(s: &[f64], y: &[f64]) -> [f64; N] {
    let n = s.len();
    let k = (n / 3).max(2).min(n);
    let (hs, hy) = (&s[n - k..], &y[n - k..]);
    let (ms, my) = (super::super::mean(hs), super::super::mean(hy));
    let sxx: f64 = hs.iter().map(|x| (x - ms).powi(2)).sum();
    let sxy: f64 = hs.iter().zip(hy).map(|(x, y)| (x - ms) * (y - my)).sum();
    let mut fv = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let mut fc = my - fv * ms;
    if fc.is_nan() || fc <= 0.0 {
        fv = 0.0;
        fc = y.iter().cloned().fold(f64::INFINITY, f64::min).max(1e-12);
    }
    let fs = s[..k]
        .iter()
        .zip(&y[..k])
        .map(|(s, y)| y - fv * s)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(fc * 1.001);
    let target = (fs - fc) / std::f64::consts::E;
    let vs = s
        .iter()
        .zip(y)
        .find(|(s, y)| *y - fc - fv * *s < target)
        .map_or(s[n / 2], |(s, _)| *s)
        .max(s[0].max(1e-12));
    [fc, fs, fv, vs, 1.0, 0.0]
}
