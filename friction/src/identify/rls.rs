//! Weighted recursive least squares with a variable forgetting factor (S2 eq. 7; docs/src/identification.md#power_rls).
//!
//! $$\varepsilon_k = y_k - \theta_{k-1}^T\varphi_k,\quad
//!   K_k = \frac{\eta_k P_{k-1}\varphi_k}{\lambda_1(k) + \eta_k \varphi_k^T P_{k-1}\varphi_k},\quad
//!   \theta_k = \theta_{k-1} + K_k\varepsilon_k,$$
//! $$P_k = \big(P_{k-1} - K_k \varphi_k^T P_{k-1}\big)/\lambda_1(k),\qquad
//!   \lambda_1(k) = \lambda_0\lambda_1(k-1) + 1 - \lambda_0.$$
//!
//! Written so that a zero weight `eta_k` leaves the estimate unchanged (only forgetting acts).
//! Regressors are scaled by `scale` (the expected magnitude of each parameter), because S2's
//! `J ~ 1e-5`, `fv ~ 1e-4`, `fc ~ 1e-2` make the raw problem badly conditioned.

use nalgebra::{DMatrix, DVector};

/// A recursive least-squares estimator.
#[derive(Clone, Debug)]
pub struct Rls {
    theta: DVector<f64>,
    p: DMatrix<f64>,
    scale: DVector<f64>,
    lambda1: f64,
    lambda0: f64,
    updates: u64,
}

impl Rls {
    /// `n` parameters of typical magnitudes `scale`, `P_0 = alpha I` (in scaled units),
    /// forgetting `lambda1(0)` tending to 1 at rate `lambda0` (S2: 0.9 and 0.99).
    pub fn new(scale: &[f64], alpha: f64, lambda1_0: f64, lambda0: f64) -> Rls {
        let n = scale.len();
        Rls {
            theta: DVector::zeros(n),
            p: DMatrix::identity(n, n) * alpha,
            scale: DVector::from_iterator(
                n,
                scale.iter().map(|s| if *s != 0.0 { *s } else { 1.0 }),
            ),
            lambda1: lambda1_0,
            lambda0,
            updates: 0,
        }
    }

    /// One update with regressor `phi`, target `y` and weight `eta >= 0`.
    pub fn update(&mut self, phi: &[f64], y: f64, eta: f64) {
        self.lambda1 = self.lambda0 * self.lambda1 + 1.0 - self.lambda0;
        let phi = DVector::from_iterator(
            phi.len(),
            phi.iter().zip(self.scale.iter()).map(|(x, s)| x * s),
        );
        let pphi = &self.p * &phi;
        let den = self.lambda1 + eta * phi.dot(&pphi);
        if !(den.is_finite() && den > 0.0) {
            return;
        }
        let eps = y - self.theta.dot(&phi);
        let k = &pphi * (eta / den);
        self.theta += &k * eps;
        self.p = (&self.p - &k * pphi.transpose()) / self.lambda1;
        // Keep P symmetric against round-off.
        self.p = (&self.p + self.p.transpose()) * 0.5;
        self.updates += 1;
    }

    /// The current estimate in physical units.
    pub fn theta(&self) -> Vec<f64> {
        self.theta
            .iter()
            .zip(self.scale.iter())
            .map(|(t, s)| t * s)
            .collect()
    }

    /// Number of updates applied.
    pub fn updates(&self) -> u64 {
        self.updates
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_on_noise_free_data_and_ignores_zero_weights() {
        let truth = [7e-6, 1.6e-4, 0.01];
        let mut rls = Rls::new(&truth, 1e6, 0.9, 0.99);
        for k in 0..5000 {
            let t = k as f64 * 1e-3;
            let v = 50.0 * (7.0 * t).sin() + 3.0;
            let phi = [
                350.0 * (7.0 * t).cos() + 100.0 * (31.0 * t).sin(),
                v,
                v.signum(),
            ];
            let y: f64 = phi.iter().zip(&truth).map(|(x, t)| x * t).sum();
            rls.update(&phi, y, 1.0);
        }
        let before = rls.theta();
        for (e, t) in before.iter().zip(&truth) {
            assert!((e - t).abs() / t < 1e-6, "{before:?}");
        }
        rls.update(&[1.0, 1.0, 1.0], 1e3, 0.0);
        assert_eq!(rls.theta(), before);
    }
}
