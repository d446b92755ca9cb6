//! Shared scalar functions of the friction equations (docs/src/models/conventions.md, docs/src/models/numerics.md#exact-and-implicit-state-updates).

/// `sgn` with `sgn(0) = 0` (S4 eq. 3).
#[inline]
pub fn sgn(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// `clamp(x, a)`: `x` if `|x| < a`, else `a sgn(x)` (S4 eq. 8; docs/src/models/conventions.md argument order).
#[inline]
pub fn sat(x: f64, a: f64) -> f64 {
    x.clamp(-a, a)
}

/// Generalised exponential Stribeck shape `exp(-|v/vs|^delta)` (S1 8.20, S4 eq. 5); `phi(0) = 1`.
#[inline]
pub fn phi_exp(v: f64, vs: f64, delta: f64) -> f64 {
    let r = (v / vs).abs();
    if delta == 2.0 {
        (-r * r).exp()
    } else if delta == 1.0 {
        (-r).exp()
    } else {
        (-r.powf(delta)).exp()
    }
}

/// Lorentzian (Hess–Soom) Stribeck shape `1 / (1 + (v/vs)^2)` (S1 8.19).
#[inline]
pub fn phi_lorentz(v: f64, vs: f64) -> f64 {
    let r = v / vs;
    1.0 / (1.0 + r * r)
}

/// Stribeck level `g(v) = fc + (fs - fc) phi(v)` with the generalised exponential shape (convention A).
#[inline]
pub fn stribeck_level(v: f64, fc: f64, fs: f64, vs: f64, delta: f64) -> f64 {
    fc + (fs - fc) * phi_exp(v, vs, delta)
}

/// Frozen-`v` exact exponential relaxation of `y' = -lambda (y - y_ss)` over `h` (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 1)).
///
/// A convex combination of `y` and `y_ss`, so invariant bounds are kept for any `h`.
#[inline]
pub fn relax(y: f64, y_ss: f64, lambda_h: f64) -> f64 {
    y_ss + (y - y_ss) * (-lambda_h).exp()
}

/// Clamps a possibly corrupt magnitude: returns `x` limited to `[-a, a]`, and 0 for NaN.
#[inline]
pub(crate) fn guard(x: f64, a: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(-a, a) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_one_at_rest_and_vanish_fast() {
        for phi in [
            phi_exp(0.0, 0.01, 2.0),
            phi_exp(0.0, 0.01, 0.5),
            phi_lorentz(0.0, 0.01),
        ] {
            assert_eq!(phi, 1.0);
        }
        assert!(phi_exp(1.0, 0.01, 2.0) < 1e-300);
        assert!(phi_lorentz(1.0, 0.01) < 1e-3);
    }

    #[test]
    fn sat_and_sgn_follow_s4() {
        assert_eq!(sgn(0.0), 0.0);
        assert_eq!(sat(3.0, 2.0), 2.0);
        assert_eq!(sat(-3.0, 2.0), -2.0);
        assert_eq!(sat(1.0, 2.0), 1.0);
    }

    #[test]
    fn relax_is_exact_and_convex() {
        let y = relax(1.0, 0.0, 1.0);
        assert!((y - (-1.0f64).exp()).abs() < 1e-15);
        assert_eq!(relax(0.3, 0.3, 1e9), 0.3);
        assert_eq!(relax(1.0, -1.0, 1e9), -1.0);
    }
}
