//! Test helpers shared by the Dahl-family models (`dahl`, `modified_dahl`, `m2`,
//! `elasto_plastic`): the robustness sweep of every scenario kind at every step size, and
//! cycle-by-cycle comparisons of periodic responses.

use crate::model::{FrictionModel, Model, ModelDef};
use crate::scenario::{Profile, Scenario, simulate};
use std::f64::consts::{PI, TAU};

/// Runs the model with its default parameters in every scenario kind (spring pull m = 1 kg,
/// k = 2 N/m, V = 0.1 m/s; force sines below and above breakaway on 1 kg; a velocity sine; a
/// position sine starting at rest) at `dt` = 1e-4, 1e-3 and 1e-2 s over 60 s, and asserts that every output is
/// finite, `|F| <= 4 fs`, `|v| <= 10 m/s`, and that no step was quarantined. `fs` is the model's
/// breakaway level (its largest static friction).
pub(crate) fn assert_robust<D: ModelDef>(fs: f64) {
    let sine = |amplitude: f64, omega: f64| Profile::Sine {
        amplitude,
        omega,
        offset: 0.0,
        phase: 0.0,
    };
    let scenarios = [
        Scenario::SpringPull {
            mass: 1.0,
            stiffness: 2.0,
            pull_velocity: 0.1,
            pull_stop_s: None,
        },
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force: sine(0.5 * fs, TAU * 0.5),
        },
        Scenario::Force {
            load: crate::Load::None,
            mass: 1.0,
            force: sine(2.0 * fs, 1.0),
        },
        Scenario::Velocity {
            velocity: sine(0.1, 1.0),
        },
        // Starts at rest (x = -A cos wt): an impulsive start would measure sigma1 * v, not
        // robustness.
        Scenario::Position {
            position: Profile::Sine {
                amplitude: 0.01,
                omega: TAU,
                offset: 0.0,
                phase: -0.5 * PI,
            },
        },
    ];
    for &dt in &[1e-4, 1e-3, 1e-2] {
        for sc in &scenarios {
            let mut m = Model::<D>::new(D::Params::default()).unwrap();
            let (mut f_max, mut v_max) = (0.0f64, 0.0f64);
            simulate(&mut m, sc, dt, 60.0, 1, |r| {
                assert!(
                    r.friction.is_finite()
                        && r.x.is_finite()
                        && r.v.is_finite()
                        && r.states.iter().all(|s| s.is_finite()),
                    "{}: non-finite at t={} dt={dt} in {sc:?}",
                    D::ID,
                    r.t
                );
                f_max = f_max.max(r.friction.abs());
                v_max = v_max.max(r.v.abs());
            });
            assert!(
                f_max <= 4.0 * fs,
                "{}: |F| = {f_max} at dt={dt} in {sc:?}",
                D::ID
            );
            assert!(
                v_max <= 10.0,
                "{}: |v| = {v_max} at dt={dt} in {sc:?}",
                D::ID
            );
            assert_eq!(m.quarantined(), 0, "{}: quarantined in {sc:?}", D::ID);
        }
    }
}

/// Simulates `cycles` periods of `per` steps each and returns the friction of every step,
/// grouped by period.
pub(crate) fn cycle_forces(
    model: &mut dyn FrictionModel,
    sc: &Scenario,
    dt: f64,
    per: usize,
    cycles: usize,
) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::with_capacity(per); cycles];
    let mut k = 0usize;
    simulate(model, sc, dt, (per * cycles) as f64 * dt, 1, |r| {
        if k < per * cycles {
            out[k / per].push(r.friction);
        }
        k += 1;
    });
    out
}

/// Simulates `cycles` periods of `per` steps each and returns the mean position of each period.
pub(crate) fn cycle_mean_positions(
    model: &mut dyn FrictionModel,
    sc: &Scenario,
    dt: f64,
    per: usize,
    cycles: usize,
) -> Vec<f64> {
    let mut out = vec![0.0; cycles];
    let mut k = 0usize;
    simulate(model, sc, dt, (per * cycles) as f64 * dt, 1, |r| {
        if k < per * cycles {
            out[k / per] += r.x / per as f64;
        }
        k += 1;
    });
    out
}

/// `max |a_i - b_i| / max |b_i|`: how far two sampled cycles are apart, relative to the swing.
pub(crate) fn max_relative_gap(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let gap = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    gap / scale
}
