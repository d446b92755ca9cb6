//! GMS parameters: the element set, the Stribeck level and their validation.

use crate::ParamError;
use crate::curve::{sgn, stribeck_level};
use crate::error::check;
use crate::model::Validate;
use serde::{Deserialize, Serialize};

/// Tolerance on `Σ alpha_i = 1`.
pub const ALPHA_SUM_TOL: f64 = 1e-9;

/// GMS parameters. Defaults: a documented 4-element set on the Canudas scale (module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Element stiffnesses `k_i` \[N/m\], one per element; default `[5e4, 2.5e4, 1.5e4, 1e4]`.
    pub k: Vec<f64>,
    /// Element weights `alpha_i` \[-\], `>= 0`, summing to 1; default `[0.1, 0.2, 0.3, 0.4]`.
    pub alpha: Vec<f64>,
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Breakaway level \[N\] (convention A); default 1.5.
    pub fs: f64,
    /// Stribeck velocity \[m/s\]; default 1e-3.
    pub vs: f64,
    /// Stribeck exponent \[-\]; default 2 (Gaussian).
    pub delta: f64,
    /// Attraction parameter `C` of the slip phase \[N/s\]; default 1e4.
    pub c: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4.
    pub sigma2: f64,
    /// Total micro-damping \[N s/m\], `alpha_i sigma1` on stuck element `i`; default sqrt(1e5).
    pub sigma1: f64,
    /// Parameters for negative motion, if the friction is asymmetric (`k`, `alpha` and
    /// `sigma1` must equal the positive set's: module doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative: Option<Box<Params>>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            k: vec![5e4, 2.5e4, 1.5e4, 1e4],
            alpha: vec![0.1, 0.2, 0.3, 0.4],
            fc: 1.0,
            fs: 1.5,
            vs: 1e-3,
            delta: 2.0,
            c: 1e4,
            sigma2: 0.4,
            sigma1: 1e5f64.sqrt(),
            negative: None,
        }
    }
}

impl Params {
    /// Number of elements `N`.
    pub fn n(&self) -> usize {
        self.k.len()
    }

    /// The set that applies to motion of sign `dir` (positive set for `dir >= 0`).
    #[inline]
    pub fn side(&self, dir: f64) -> &Params {
        match (&self.negative, dir < 0.0) {
            (Some(n), true) => n,
            _ => self,
        }
    }

    /// Stribeck magnitude `s(v) = fc + (fs - fc) exp(-|v/vs|^delta)` (> 0), of the side of `v`.
    #[inline]
    pub fn s(&self, v: f64) -> f64 {
        self.side(v).level(v)
    }

    /// This set's own Stribeck magnitude at `v` (no side selection).
    #[inline]
    pub(super) fn level(&self, v: f64) -> f64 {
        stribeck_level(v, self.fc, self.fs, self.vs, self.delta)
    }

    /// The largest breakaway level of both sides: `|F_i| <= alpha_i fs_max()` always holds.
    pub fn fs_max(&self) -> f64 {
        self.negative
            .as_ref()
            .map_or(self.fs, |n| n.fs.max(self.fs))
    }

    /// Presliding stiffness `dF/dx` at rest: `Σ k_i`.
    pub fn presliding_stiffness(&self) -> f64 {
        self.k.iter().sum()
    }

    /// Displacement at which each element breaks away from rest, `alpha_i fs / k_i` \[m\].
    pub fn break_displacements(&self) -> Vec<f64> {
        self.k
            .iter()
            .zip(&self.alpha)
            .map(|(k, a)| a * self.fs / k)
            .collect()
    }

    /// The virgin (initial loading) curve of the elements at the level `s`:
    /// `Σ min(k_i |x|, alpha_i s) sgn x` (the C → ∞ limit, without damping terms).
    pub fn virgin_curve(&self, x: f64, s: f64) -> f64 {
        self.k
            .iter()
            .zip(&self.alpha)
            .map(|(k, a)| (k * x.abs()).min(a * s))
            .sum::<f64>()
            * sgn(x)
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        if self.k.is_empty() {
            return Err(ParamError::new("k", 0.0, "must have at least one element"));
        }
        if self.alpha.len() != self.k.len() {
            return Err(ParamError::new(
                "alpha",
                self.alpha.len() as f64,
                format!("entries must be as many as in k ({})", self.k.len()),
            ));
        }
        for (i, &k) in self.k.iter().enumerate() {
            check::positive(&format!("k[{i}]"), k)?;
        }
        for (i, &a) in self.alpha.iter().enumerate() {
            check::non_negative(&format!("alpha[{i}]"), a)?;
        }
        let sum: f64 = self.alpha.iter().sum();
        if (sum - 1.0).abs() > ALPHA_SUM_TOL {
            return Err(ParamError::new(
                "alpha",
                sum,
                "must sum to 1 (within 1e-9); the value is the sum",
            ));
        }
        check::positive("fc", self.fc)?;
        check::finite("fs", self.fs)?;
        check::at_least("fs", self.fs, "fc", self.fc)?;
        check::positive("vs", self.vs)?;
        check::positive("delta", self.delta)?;
        check::positive("c", self.c)?;
        check::non_negative("sigma2", self.sigma2)?;
        check::non_negative("sigma1", self.sigma1)?;
        if let Some(n) = &self.negative {
            if n.negative.is_some() {
                return Err(ParamError::new(
                    "negative.negative",
                    0.0,
                    "must not be given",
                ));
            }
            n.validate().map_err(|e| e.nested("negative"))?;
            let shared = "must equal the positive set's (the elements are shared by both \
                 directions; only fc, fs, vs, delta, c and sigma2 may differ)";
            if n.k != self.k {
                return Err(ParamError::new("negative.k", n.k.len() as f64, shared));
            }
            if n.alpha != self.alpha {
                return Err(ParamError::new(
                    "negative.alpha",
                    n.alpha.len() as f64,
                    shared,
                ));
            }
            if n.sigma1 != self.sigma1 {
                return Err(ParamError::new("negative.sigma1", n.sigma1, shared));
            }
        }
        Ok(())
    }
}
