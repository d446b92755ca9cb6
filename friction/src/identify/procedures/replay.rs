//! Replaying a recorded segment through a model between its samples
//! (docs/src/identification.md#sub-steps).
//!
//! A bench samples a continuous plant, so the model is integrated between samples at a finer
//! step than the record's: `substeps` steps per sample interval, each interval at its own
//! spacing (non-uniform time stamps are replayed as they are), with the recorded signals
//! interpolated linearly inside the interval.
//!
//! - **Velocity replay**: the model output at sample `k` is the friction after integrating over
//!   `[t_{k-1}, t_k]`, each sub-step driven by the signals at its end (the model's own
//!   convention: a step's input is the value it reaches); the first sample is reached from
//!   rest by the same number of sub-steps at the first interval's spacing. One sub-step per
//!   interval is the plain lockstep replay.
//! - **Torque replay**: the plant starts at the first sample's position and velocity; the
//!   residual at `k` is the simulated position there, then the plant is integrated over
//!   `[t_k, t_{k+1}]` under the interpolated applied force.
//!
//! Each fixed-step scheme of the library is first-order accurate in the step (a model's step
//! takes the signals at its end), so with `richardson` the replay is run with `n` and with `2n`
//! sub-steps and the residuals are combined as `2 r_2n - r_n` (Richardson extrapolation), which
//! cancels the first-order error: the replay is second-order accurate in the sub-step. The fits
//! use it for velocity replays of models with a state; a torque replay, whose stick and slip
//! switch at different instants at different steps, is not extrapolated.
//!
//! A known force offset is subtracted from the measurement: from the measured friction in a
//! velocity replay (the residual is `F_model + offset - friction`), from the applied force in a
//! torque replay (the plant feels `u - offset`). A known load (`Replay::Torque::load`) acts on
//! the plant of a torque replay beside its inertia ([`crate::load`]).

use super::segment::{Hold, Replay, Segment, Speed};
use crate::plant::{self, Applied, PlantParams, PlantState};
use crate::{FrictionModel, Input};

/// The signals of `s` at fraction `w` of the interval from sample `a` to sample `b` (the
/// applied force held at `a`'s value with a zero-order hold).
fn between(s: &Segment, a: usize, b: usize, w: f64, du_dt: f64, hold: Hold) -> Input {
    let lerp = |c: &[f64]| c[a] + w * (c[b] - c[a]);
    Input {
        t: lerp(&s.t),
        x: lerp(&s.x),
        v: lerp(&s.v),
        u: if hold == Hold::Zoh {
            s.u[a]
        } else {
            lerp(&s.u)
        },
        du_dt: if hold == Hold::Zoh { 0.0 } else { du_dt },
    }
}

/// How one replay runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplaySetup {
    /// Velocity- or torque-driven.
    pub replay: Replay,
    /// Plant mass (torque replay).
    pub mass: f64,
    /// Force offset in the measurement.
    pub offset: f64,
    /// Integration steps per sample interval (at least 1).
    pub substeps: usize,
    /// Extrapolate from `substeps` and twice as many (module doc).
    pub richardson: bool,
    /// The applied force between samples.
    pub hold: Hold,
    /// The speed between samples (velocity replay).
    pub speed: Speed,
}

/// Replays `s` through `model` (reset first); `out[k - skip]` is the residual at sample
/// `k >= skip` (model minus measurement: friction in a velocity replay, position in a torque
/// replay).
pub fn replay_segment(
    model: &mut dyn FrictionModel,
    s: &Segment,
    setup: &ReplaySetup,
    skip: usize,
    out: &mut [f64],
) {
    run(model, s, setup, setup.substeps.max(1), skip, out);
    if setup.richardson {
        let mut fine = vec![0.0; out.len()];
        run(model, s, setup, 2 * setup.substeps.max(1), skip, &mut fine);
        for (o, f) in out.iter_mut().zip(&fine) {
            *o = 2.0 * f - *o;
        }
    }
}

/// One replay with `m` sub-steps per interval.
fn run(
    model: &mut dyn FrictionModel,
    s: &Segment,
    setup: &ReplaySetup,
    m: usize,
    skip: usize,
    out: &mut [f64],
) {
    model.reset();
    let n = s.len();
    let rate = |a: usize, b: usize| (s.u[b] - s.u[a]) / (s.t[b] - s.t[a]);
    match setup.replay {
        Replay::Velocity => {
            for k in 0..n {
                let (a, b) = if k == 0 { (0, 0) } else { (k - 1, k) };
                let span = if k == 0 {
                    s.t[1] - s.t[0]
                } else {
                    s.t[k] - s.t[k - 1]
                };
                let du_dt = rate(k.saturating_sub(1), (k + 1).min(n - 1).max(1));
                let h = span / m as f64;
                let mut f = 0.0;
                for j in 1..=m {
                    let w = j as f64 / m as f64;
                    let mut input = between(s, a, b, w, du_dt, setup.hold);
                    input.v = setup.speed.over(s, a, b, (j - 1) as f64 / m as f64, w);
                    f = model.step(&input, h);
                }
                if k >= skip {
                    out[k - skip] = f + setup.offset - s.friction[k];
                }
            }
        }
        Replay::Torque { load, .. } => {
            let pp = PlantParams { mass: setup.mass };
            let mut st = PlantState {
                t: s.t[0],
                x: s.x[0],
                v: s.v[0],
            };
            for k in 0..n {
                if k >= skip {
                    out[k - skip] = st.x - s.x[k];
                }
                if k + 1 == n {
                    break;
                }
                let (du_dt, slope) = match setup.hold {
                    Hold::Linear => (rate(k, k + 1), s.u[k + 1] - s.u[k]),
                    Hold::Zoh => (0.0, 0.0),
                };
                let h = (s.t[k + 1] - s.t[k]) / m as f64;
                for j in 0..m {
                    let w = j as f64 / m as f64;
                    let u = s.u[k] + w * slope - setup.offset;
                    let a = load.on(&Applied::force(u, du_dt), &st, h);
                    plant::step(model, &pp, &mut st, &a, h);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{ModelSpec, build_model};

    fn lugre() -> Box<dyn FrictionModel> {
        build_model(&ModelSpec {
            model: "lugre".into(),
            params: serde_json::json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3}),
        })
        .unwrap()
    }

    /// Sub-steps converge on the fine-step truth; one sub-step at 1 kHz does not.
    #[test]
    fn substeps_reach_the_fine_step_truth() {
        let v = |t: f64| 0.01 * (std::f64::consts::TAU * 0.5 * t).sin();
        // Truth at 0.01 ms, sampled every 1 ms.
        let fine = 100;
        let tf: Vec<f64> = (0..200_000).map(|k| k as f64 * 1e-5).collect();
        let vf: Vec<f64> = tf.iter().map(|t| v(*t)).collect();
        let mut m = lugre();
        let truth = Segment::simulate_velocity("t", m.as_mut(), &tf, &vf, 0.0, 0.0, 1);
        let pick = |c: &[f64]| c.iter().step_by(fine).copied().collect::<Vec<_>>();
        let seg = Segment {
            source: "s".into(),
            t: pick(&truth.t),
            x: pick(&truth.x),
            v: pick(&truth.v),
            u: pick(&truth.u),
            friction: pick(&truth.friction),
        };
        let mut err = |substeps: usize| {
            let mut out = vec![0.0; seg.len()];
            let setup = ReplaySetup {
                replay: Replay::Velocity,
                mass: 0.0,
                offset: 0.0,
                substeps,
                richardson: false,
                hold: Hold::Linear,
                speed: Speed::Linear,
            };
            replay_segment(m.as_mut(), &seg, &setup, 0, &mut out);
            (out.iter().map(|r| r * r).sum::<f64>() / out.len() as f64).sqrt()
        };
        let (e1, e10, e100) = (err(1), err(10), err(100));
        assert!(e10 < 0.2 * e1 && e100 < 1e-6, "{e1} {e10} {e100}");
    }

    /// A speed estimate inconsistent with the recorded angle: the displacement profile moves
    /// each interval by exactly the recorded displacement, however it is cut into sub-steps.
    #[test]
    fn the_displacement_profile_moves_the_recorded_displacement() {
        let seg = Segment {
            source: "s".into(),
            t: vec![0.0, 1e-3, 2e-3],
            x: vec![0.0, 3e-4, 1e-4],
            v: vec![0.5, 0.1, -0.2],
            u: vec![0.0; 3],
            friction: vec![0.0; 3],
        };
        for m in [1, 3, 16] {
            for (a, b) in [(0, 1), (1, 2)] {
                let h = (seg.t[b] - seg.t[a]) / m as f64;
                let moved: f64 = (1..=m)
                    .map(|j| {
                        let w = |j: usize| j as f64 / m as f64;
                        h * Speed::Displacement.over(&seg, a, b, w(j - 1), w(j))
                    })
                    .sum();
                let dx = seg.x[b] - seg.x[a];
                assert!((moved - dx).abs() < 1e-15, "m {m}: {moved} vs {dx}");
            }
        }
        // At the samples the profile meets their speeds (the bump vanishes there).
        let at_end = Speed::Displacement.over(&seg, 0, 1, 1.0 - 1e-9, 1.0);
        assert!((at_end - 0.1).abs() < 1e-6, "{at_end}");
    }
}
