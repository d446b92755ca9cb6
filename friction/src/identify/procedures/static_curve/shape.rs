//! How each model names the curve's parameters, which its shape fixes, and the curve itself.

use crate::curve::{phi_exp, phi_lorentz};

/// Shape of the Stribeck term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Shape {
    /// `exp(-|v/vs|^delta)`.
    Exp,
    /// `1/(1 + (v/vs)^2)`.
    Lorentz,
    /// No Stribeck term: `fc + fv v`.
    Line,
}

/// Internal parameter order: fc, fs, fv, vs, delta, offset.
pub(super) const FC: usize = 0;
pub(super) const FS: usize = 1;
pub(super) const FV: usize = 2;
pub(super) const VS: usize = 3;
pub(super) const DELTA: usize = 4;
pub(super) const OFFSET: usize = 5;
/// Internal parameters.
pub(super) const N: usize = 6;

/// How a model names the five curve parameters (`None`: not a parameter of the model) and
/// which values its shape fixes.
pub(super) struct Layout {
    pub(super) shape: Shape,
    pub(super) names: [Option<&'static str>; N],
    pub(super) fixed_delta: Option<f64>,
}

pub(super) fn layout(model: &str) -> Layout {
    let exp = |fv: &'static str, delta: &'static str| Layout {
        shape: Shape::Exp,
        names: [
            Some("fc"),
            Some("fs"),
            Some(fv),
            Some("vs"),
            Some(delta),
            None,
        ],
        fixed_delta: None,
    };
    match model {
        "lugre" | "gms" => exp("sigma2", "delta"),
        "improved_armstrong" | "improved_lugre" => exp("fv", "delta_v"),
        "hybrid" => Layout {
            shape: Shape::Exp,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None, None],
            fixed_delta: Some(2.0),
        },
        "tustin" => Layout {
            shape: Shape::Exp,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None, None],
            fixed_delta: Some(1.0),
        },
        "stribeck_lorentz" => Layout {
            shape: Shape::Lorentz,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None, None],
            fixed_delta: None,
        },
        "coulomb_viscous" => Layout {
            shape: Shape::Line,
            names: [Some("fc"), None, Some("fv"), None, None, None],
            fixed_delta: None,
        },
        _ => exp("fv", "delta"),
    }
}

/// The curve magnitude `fc + (fs - fc) phi(s) + fv s` at speed `s >= 0`.
pub(super) fn curve(shape: Shape, p: &[f64; N], s: f64) -> f64 {
    let phi = match shape {
        Shape::Exp => phi_exp(s, p[VS], p[DELTA]),
        Shape::Lorentz => phi_lorentz(s, p[VS]),
        Shape::Line => 0.0,
    };
    p[FC] + (p[FS] - p[FC]) * phi + p[FV] * s
}
