//! A recorded segment (`t, x, v, u, friction`, the columns `bench simulate` writes), simulated
//! segments for known-answer tests, and the identification excitation.

use super::Table;
use crate::identify::FitError;
use crate::load::Load;
use crate::{FrictionModel, Input};
use serde::Deserialize;
use serde::Serialize;

/// One segment of data a result used (provenance).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DataUsed {
    /// File name or run id.
    pub source: String,
    /// Samples used.
    pub samples: usize,
    /// First time \[s\].
    pub t_start: f64,
    /// Last time \[s\].
    pub t_end: f64,
}

/// A recorded segment: equal-length columns, SI units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Segment {
    /// Where it came from (file name or run id), for provenance.
    pub source: String,
    /// Time \[s\], strictly increasing.
    pub t: Vec<f64>,
    /// Position \[m or rad\].
    pub x: Vec<f64>,
    /// Velocity \[m/s or rad/s\].
    pub v: Vec<f64>,
    /// Applied force or torque, excluding friction \[N or N m\].
    pub u: Vec<f64>,
    /// Measured friction \[N or N m\].
    pub friction: Vec<f64>,
}

impl Segment {
    /// A segment from named columns (`t, x, v, u, friction`; extra columns are ignored). `t` and
    /// `v` or `x` are required; a missing `v` is the central difference of `x`, a missing `x` is
    /// integrated from `v`, a missing `u` or `friction` is zero
    /// (a velocity replay needs `friction`, a torque replay `u`: see [`Segment::check`]).
    pub fn from_columns(
        source: &str,
        names: &[&str],
        cols: &[Vec<f64>],
    ) -> Result<Segment, FitError> {
        let col = |n: &str| names.iter().position(|c| *c == n).map(|i| cols[i].clone());
        let t =
            col("t").ok_or_else(|| FitError::Data(format!("{source}: column 't' is missing")))?;
        let n = t.len();
        let v = match (col("v"), col("x")) {
            (Some(v), _) => v,
            // A record of position only (a drive's encoder): velocity by central differences.
            (None, Some(x)) if n >= 2 => (0..n)
                .map(|k| {
                    let (a, b) = (k.saturating_sub(1), (k + 1).min(n - 1));
                    (x[b] - x[a]) / (t[b] - t[a])
                })
                .collect(),
            _ => {
                return Err(FitError::Data(format!(
                    "{source}: column 'v' is missing (and no 'x' to differentiate)"
                )));
            }
        };
        let x = col("x").unwrap_or_else(|| {
            let mut x = vec![0.0; n];
            for k in 1..n {
                x[k] = x[k - 1] + 0.5 * (v[k] + v[k - 1]) * (t[k] - t[k - 1]);
            }
            x
        });
        let seg = Segment {
            source: source.into(),
            u: col("u").unwrap_or_else(|| vec![0.0; n]),
            friction: col("friction").unwrap_or_else(|| vec![f64::NAN; n]),
            t,
            x,
            v,
        };
        seg.check(None)?;
        Ok(seg)
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// True when there is no sample.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// Checks lengths, finiteness and time order; with a replay, that its columns are present.
    pub fn check(&self, replay: Option<&Replay>) -> Result<(), FitError> {
        let n = self.t.len();
        let bad = |m: String| Err(FitError::Data(format!("{}: {m}", self.source)));
        if n < 2 {
            return bad(format!("{n} samples (need at least 2)"));
        }
        for (name, c) in [
            ("x", &self.x),
            ("v", &self.v),
            ("u", &self.u),
            ("friction", &self.friction),
        ] {
            if c.len() != n {
                return bad(format!(
                    "column '{name}' has {} samples, 't' has {n}",
                    c.len()
                ));
            }
        }
        if let Some(k) = self
            .t
            .windows(2)
            .position(|w| w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater))
        {
            return bad(format!("t must be strictly increasing (row {})", k + 2));
        }
        let need: &[(&str, &Vec<f64>)] = match replay {
            Some(Replay::Velocity) => {
                &[("t", &self.t), ("v", &self.v), ("friction", &self.friction)]
            }
            Some(Replay::Torque { .. }) => &[
                ("t", &self.t),
                ("x", &self.x),
                ("v", &self.v),
                ("u", &self.u),
            ],
            None => &[("t", &self.t), ("v", &self.v)],
        };
        for (name, c) in need {
            if let Some(k) = c.iter().position(|x| !x.is_finite()) {
                return bad(format!(
                    "column '{name}' is missing or not finite (row {})",
                    k + 2
                ));
            }
        }
        Ok(())
    }

    /// Provenance entry of this segment.
    pub fn used(&self) -> DataUsed {
        DataUsed {
            source: self.source.clone(),
            samples: self.len(),
            t_start: self.t.first().copied().unwrap_or(0.0),
            t_end: self.t.last().copied().unwrap_or(0.0),
        }
    }
}

impl Segment {
    /// Simulated measurements: `model` driven by the velocity `v(t)` (velocity replay), with
    /// Gaussian noise of standard deviation `noise_friction` on the friction and `noise_v` on
    /// the recorded velocity (seeded). `x` is the trapezoidal integral of the true `v`.
    pub fn simulate_velocity(
        source: &str,
        model: &mut dyn FrictionModel,
        t: &[f64],
        v: &[f64],
        noise_friction: f64,
        noise_v: f64,
        seed: u64,
    ) -> Segment {
        let n = t.len();
        let mut rng = crate::identify::rng::Rng::new(seed);
        let mut x = vec![0.0; n];
        for k in 1..n {
            x[k] = x[k - 1] + 0.5 * (v[k] + v[k - 1]) * (t[k] - t[k - 1]);
        }
        model.reset();
        let mut friction = Vec::with_capacity(n);
        for k in 0..n {
            let dt = if k + 1 < n {
                t[k + 1] - t[k]
            } else {
                t[k] - t[k - 1]
            };
            let f = model.step(
                &Input {
                    t: t[k],
                    x: x[k],
                    v: v[k],
                    ..Input::default()
                },
                dt,
            );
            friction.push(f + noise_friction * rng.normal());
        }
        let v = v.iter().map(|v| v + noise_v * rng.normal()).collect();
        Segment {
            source: source.into(),
            t: t.to_vec(),
            x,
            v,
            u: vec![0.0; n],
            friction,
        }
    }
}

impl Segment {
    /// Samples of a continuous plant: `model` driven by the velocity `v(t)` integrated at
    /// `dt / fine`, recorded every `dt` for `n` samples (from `t = 0`), with Gaussian noise of
    /// standard deviation `noise_friction` on the recorded friction and `noise_v` on the
    /// recorded velocity (seeded). `x` is the trapezoidal integral of the true `v`.
    #[allow(clippy::too_many_arguments)]
    pub fn sample_velocity_driven(
        source: &str,
        model: &mut dyn FrictionModel,
        v: impl Fn(f64) -> f64,
        dt: f64,
        n: usize,
        fine: usize,
        noise_friction: f64,
        noise_v: f64,
        seed: u64,
    ) -> Segment {
        let fine = fine.max(1);
        let h = dt / fine as f64;
        let tf: Vec<f64> = (0..n * fine).map(|k| k as f64 * h).collect();
        let vf: Vec<f64> = tf.iter().map(|t| v(*t)).collect();
        let truth = Segment::simulate_velocity(source, model, &tf, &vf, 0.0, 0.0, 0);
        let mut rng = crate::identify::rng::Rng::new(seed);
        let pick = |c: &[f64]| c.iter().step_by(fine).copied().collect::<Vec<f64>>();
        let friction = pick(&truth.friction)
            .into_iter()
            .map(|f| f + noise_friction * rng.normal())
            .collect();
        let v = pick(&truth.v)
            .into_iter()
            .map(|v| v + noise_v * rng.normal())
            .collect();
        Segment {
            source: source.into(),
            t: pick(&truth.t),
            x: pick(&truth.x),
            u: vec![0.0; n],
            v,
            friction,
        }
    }
}

/// The identification excitation used by the tests and `bench perf fit`, a velocity \[m/s\] at
/// time `t` repeating every 20 s, designed so that every LuGre parameter shows: 0–6 s presliding
/// reversals at 2 Hz with a displacement amplitude growing from 2 to 20 µm (`sigma0`, `sigma1`);
/// 6–14 s two periods of a 0.25 Hz sine of 10 mm/s (reversals and the Stribeck range, `fc`,
/// `fs`, `vs`); 14–20 s two periods of a 1/3 Hz sine of 0.3 m/s (`sigma2`).
pub fn excitation_velocity(t: f64) -> f64 {
    use std::f64::consts::TAU;
    let tau = t.rem_euclid(20.0);
    if tau < 6.0 {
        let a = 2e-6 + 18e-6 * tau / 6.0;
        let w = TAU * 2.0;
        // x = a(t) sin(w t): v = a w cos(w t) + a' sin(w t)
        a * w * (w * tau).cos() + 18e-6 / 6.0 * (w * tau).sin()
    } else if tau < 14.0 {
        0.01 * (TAU * 0.25 * (tau - 6.0)).sin()
    } else {
        0.3 * (TAU / 3.0 * (tau - 14.0)).sin()
    }
}

impl Segment {
    /// A segment from a [`Table`] of named columns (see [`Segment::from_columns`]).
    pub fn from_table(source: &str, table: &Table) -> Result<Segment, FitError> {
        let names: Vec<&str> = table.names().iter().map(String::as_str).collect();
        let cols: Vec<Vec<f64>> = names
            .iter()
            .map(|n| table.get(n).unwrap_or_default().to_vec())
            .collect();
        Segment::from_columns(source, &names, &cols)
    }
}

/// How a segment is replayed through the model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Replay {
    /// Measured velocity drives the model; friction error \[N\].
    Velocity,
    /// Measured applied force drives a plant of this mass \[kg or kg m^2\]; position error \[m\].
    Torque {
        /// Mass or inertia (a start value when `mass` is fitted).
        mass: f64,
        /// A known load beside the inertia (`given.load`); none by default.
        #[serde(default, skip_serializing_if = "Load::is_none")]
        load: Load,
    },
}

impl Replay {
    /// What the residual is.
    pub fn residual_name(&self) -> &'static str {
        match self {
            Replay::Velocity => "friction [N or N m]",
            Replay::Torque { .. } => "position [m or rad]",
        }
    }
}

/// How the applied force `u` runs between two samples.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// Linear between the samples (a measured, continuous force).
    #[default]
    Linear,
    /// Held at the sample's value until the next (zero-order hold: a drive's command).
    Zoh,
}

/// How the speed runs between two samples of a velocity replay.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// Linear between the samples' speeds.
    #[default]
    Linear,
    /// Linear between the samples' speeds plus a parabolic bump (zero at both samples) that
    /// makes the interval's displacement the recorded one, `x_k - x_{k-1}`; each sub-step is
    /// driven by the profile's mean over it, so the sub-steps add up to that displacement
    /// exactly. A model whose presliding state follows the displacement (GMS, LuGre) then sees
    /// the angle the encoder read, where a speed estimate's integral drifts from it by up to a
    /// count per sample (docs/src/characterise.md#adequate). Where the bump changes the
    /// profile's sign inside an interval the model reverses there: in a fast transient that is
    /// the reversal the samples straddle (holding the interval's mean speed instead doubled the
    /// true GMS's error on the default simulated bench), at a start from rest it can be one
    /// that did not happen.
    Displacement,
}

impl Speed {
    /// The speed driving the sub-step `(w0, w1]` of the interval `a → b` of `s` (fractions of
    /// the interval): the point value at `w1` for [`Speed::Linear`], the profile's mean over
    /// the sub-step for [`Speed::Displacement`].
    pub fn over(self, s: &Segment, a: usize, b: usize, w0: f64, w1: f64) -> f64 {
        let (va, vb) = (s.v[a], s.v[b]);
        let span = s.t[b] - s.t[a];
        if self == Speed::Linear || a == b || span <= 0.0 {
            return va + w1 * (vb - va);
        }
        let c = (s.x[b] - s.x[a]) / span - 0.5 * (va + vb);
        // Primitive of va + w (vb - va) + 6 c w (1 - w).
        let prim = |w: f64| va * w + 0.5 * (vb - va) * w * w + c * w * w * (3.0 - 2.0 * w);
        (prim(w1) - prim(w0)) / (w1 - w0)
    }
}
