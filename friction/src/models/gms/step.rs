//! The GMS step: the elements advanced over one displacement, and the plant step's side.

use super::{Params, State};
use crate::Input;
use crate::curve::{relax, sat, sgn};

/// Advances the elements over a displacement `dx`, with the Stribeck level and slip direction
/// frozen at `v` (the velocity the law was built with) and the sliding parameters of side `q`.
/// `reversal` sticks every element first. Returns `Σ F_i + sigma1 Σ_stuck alpha_i zdot_i`
/// after the update.
pub(super) fn advance_elements(
    p: &Params,
    q: &Params,
    s: &mut State,
    v: f64,
    dx: f64,
    reversal: bool,
    dt: f64,
) -> f64 {
    let lvl = q.level(v);
    let lambda_h = q.c * dt / lvl;
    let d = sgn(v);
    let fs_max = p.fs_max();
    // The level of each side at `v`, computed once per step (not per stuck element).
    let mut side_levels = [None; 2];
    let mut side_level = |trial: f64| {
        let i = usize::from(trial < 0.0);
        *side_levels[i].get_or_insert_with(|| p.side(trial).level(v))
    };
    let mut total = 0.0;
    for (((f, slip), &k), &a) in s.f.iter_mut().zip(&mut s.slipping).zip(&p.k).zip(&p.alpha) {
        let lim = a * lvl;
        // Corrupt states (NaN, beyond the largest possible limit) are brought back in range.
        let f0 = if f.is_nan() { 0.0 } else { sat(*f, a * fs_max) };
        if reversal {
            *slip = false;
        }
        if *slip {
            *f = relax(f0, lim * d, lambda_h);
            total += *f;
        } else {
            // Micro-damping acts on the stuck part of the step only (module doc). A stuck
            // element slips towards the side it is loaded in, so its limit is that side's
            // level: a positively loaded element unloading while the body creeps back must not
            // be cut to the negative side's (lower) level, which would release force
            // discontinuously and feed an oscillation.
            let trial = f0 + k * dx;
            let lim = a * side_level(trial);
            if trial.abs() > lim {
                *slip = true;
                *f = sat(trial, lim);
            } else {
                *f = trial;
            }
            total += *f + a * p.sigma1 * (*f - f0) / (k * dt);
        }
    }
    total
}

/// The velocity-driven step: `Δx = v h`, reversal when `sgn v` changes or `v = 0`.
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    let d = sgn(v);
    let reversal = d != s.dir || d == 0.0;
    s.dir = d;
    let q = p.side(v);
    advance_elements(p, q, s, v, v * dt, reversal, dt) + q.sigma2 * v
}

/// The side of a plant step: `sgn v`, or `sgn u` at rest (breakaway towards the push).
#[inline]
pub(super) fn plant_side<'a>(p: &'a Params, input: &Input) -> &'a Params {
    p.side(if input.v != 0.0 { input.v } else { input.u })
}
