//! Model-based friction compensation: the torque a position controller adds to its output so
//! that the friction it predicts is cancelled (docs/src/experiments/compensation_trial.md).
//!
//! Three laws, each a pure step with plain data in and out:
//!
//! - **none**: the baseline, 0.
//! - **feedforward** from any registry model: a static model (no state) is evaluated on the
//!   reference velocity or on the measured one; a dynamic model is stepped once per tick on the
//!   measured motion, as in lockstep (its internal state needs the real motion).
//! - **LuGre observer** (Canudas de Wit, Olsson, Åström, Lischinsky 1995, §IV; survey S1 §8.5):
//!   the bristle state is not measured, so it is estimated by
//!   `dẑ/dt = v − σ0 |v| / g(v) ẑ − k e`, `F̂ = σ0 ẑ + σ1 dẑ/dt + σ2 v`, where `e = x − x_ref`
//!   is the position tracking error and `k ≥ 0` the observer gain. The `−k e` term drives the
//!   estimate by the tracking error itself (a lag behind the reference raises the estimate in
//!   the direction of motion).
//!
//! Every law's output is clamped to the bench's torque limit by the caller's controller.

use crate::curve::{guard, relax};
use crate::models::lugre;
use crate::registry::{ModelSpec, build_model};
use crate::{BuildError, FrictionModel, Input};
use serde::{Deserialize, Serialize};

/// Which velocity a static feedforward model is evaluated on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VelocitySource {
    /// The reference's velocity: no measurement noise, no feedback through the model.
    #[default]
    Reference,
    /// The measured velocity.
    Measured,
}

/// A compensator as a run stores it: its law and its resolved parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case", deny_unknown_fields)]
pub enum CompensatorSpec {
    /// No compensation.
    None,
    /// Feedforward of a registry model.
    Feedforward {
        /// The model and its parameters.
        model: ModelSpec,
        /// Velocity a static model is evaluated on (dynamic models: always measured).
        velocity: VelocitySource,
    },
    /// The LuGre observer.
    LugreObserver {
        /// LuGre parameters (the model's JSON, missing fields defaulted).
        params: serde_json::Value,
        /// Observer gain `k` \[1/s\].
        gain: f64,
    },
}

/// What a compensator sees at a tick (SI, run coordinates).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompensationInput {
    /// Run time \[s\].
    pub t: f64,
    /// Measured position \[rad\].
    pub x: f64,
    /// Measured velocity \[rad/s\].
    pub v: f64,
    /// Reference position \[rad\].
    pub x_ref: f64,
    /// Reference velocity \[rad/s\].
    pub v_ref: f64,
}

/// A built compensator with its state.
#[derive(Debug)]
pub enum Compensator {
    /// No compensation.
    None,
    /// Feedforward of a model.
    Feedforward {
        /// The model.
        model: Box<dyn FrictionModel>,
        /// The velocity it is fed.
        velocity: VelocitySource,
    },
    /// The LuGre observer.
    LugreObserver(LugreObserver),
}

impl Compensator {
    /// Builds the compensator of `spec`; a static model keeps its velocity source, a dynamic
    /// one is fed the measured velocity.
    pub fn build(spec: &CompensatorSpec) -> Result<Compensator, BuildError> {
        Ok(match spec {
            CompensatorSpec::None => Compensator::None,
            CompensatorSpec::Feedforward { model, velocity } => {
                let model = build_model(model)?;
                let velocity = if model.state_names().is_empty() {
                    *velocity
                } else {
                    VelocitySource::Measured
                };
                Compensator::Feedforward { model, velocity }
            }
            CompensatorSpec::LugreObserver { params, gain } => {
                let spec = ModelSpec {
                    model: "lugre".into(),
                    params: params.clone(),
                };
                // Validates the parameters the way the registry does.
                build_model(&spec)?;
                let bad = |reason: String| BuildError::BadParams {
                    model: "lugre observer".into(),
                    reason,
                };
                let params: lugre::Params = serde_json::from_value(with_defaults(params))
                    .map_err(|e| bad(e.to_string()))?;
                if !(gain.is_finite() && *gain >= 0.0) {
                    return Err(bad(format!(
                        "observer gain {gain}: must be finite and >= 0"
                    )));
                }
                Compensator::LugreObserver(LugreObserver::new(params, *gain))
            }
        })
    }

    /// Back to rest (a new trial segment starts from a relaxed state).
    pub fn reset(&mut self) {
        match self {
            Compensator::None => {}
            Compensator::Feedforward { model, .. } => model.reset(),
            Compensator::LugreObserver(o) => o.z = 0.0,
        }
    }

    /// The compensation torque for this tick \[N m\] (finite; 0 where a model gave nothing).
    pub fn step(&mut self, i: &CompensationInput, dt: f64) -> f64 {
        let f = match self {
            Compensator::None => 0.0,
            Compensator::Feedforward { model, velocity } => {
                let v = match velocity {
                    VelocitySource::Reference => i.v_ref,
                    VelocitySource::Measured => i.v,
                };
                let input = Input {
                    t: i.t,
                    x: i.x,
                    v,
                    ..Input::default()
                };
                model.step(&input, dt)
            }
            Compensator::LugreObserver(o) => o.step(i.v, i.x - i.x_ref, dt),
        };
        if f.is_finite() { f } else { 0.0 }
    }
}

/// LuGre parameters over their defaults (a stored set may name only some).
fn with_defaults(params: &serde_json::Value) -> serde_json::Value {
    let mut full = serde_json::to_value(lugre::Params::default()).unwrap_or_default();
    if let (Some(base), Some(given)) = (full.as_object_mut(), params.as_object()) {
        for (k, v) in given {
            base.insert(k.clone(), v.clone());
        }
    }
    full
}

/// The observer of Canudas de Wit et al. (1995): LuGre's bristle equation with the tracking
/// error as a correction.
#[derive(Clone, Debug, PartialEq)]
pub struct LugreObserver {
    params: lugre::Params,
    gain: f64,
    z: f64,
}

impl LugreObserver {
    /// An observer at rest.
    pub fn new(params: lugre::Params, gain: f64) -> LugreObserver {
        LugreObserver {
            params,
            gain,
            z: 0.0,
        }
    }

    /// Advances `ẑ` over `dt` with the measured velocity `v` and the tracking error `e`
    /// (frozen over the step, exact exponential as the LuGre model's own step); returns `F̂`.
    /// `ẑ` stays within the model's bristle bound at every step size.
    pub fn step(&mut self, v: f64, e: f64, dt: f64) -> f64 {
        let p = &self.params;
        let q = p.side(if v != 0.0 { v } else { -e });
        let z_max = p.z_max();
        let z0 = guard(self.z, z_max);
        let drive = v - self.gain * e;
        let lambda = q.sigma0 * v.abs() / p.g(v);
        let z1 = if lambda * dt > 1e-12 {
            relax(z0, drive / lambda, lambda * dt)
        } else {
            z0 + drive * dt
        };
        let z1 = guard(z1, z_max);
        self.z = z1;
        q.sigma0 * z1 + q.sigma1_at(v) * (z1 - z0) / dt + q.sigma2 * v
    }

    /// The estimated bristle deflection.
    pub fn z(&self) -> f64 {
        self.z
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feedforward(model: &str, params: serde_json::Value, v: VelocitySource) -> Compensator {
        Compensator::build(&CompensatorSpec::Feedforward {
            model: ModelSpec {
                model: model.into(),
                params,
            },
            velocity: v,
        })
        .unwrap()
    }

    #[test]
    fn a_static_model_follows_the_chosen_velocity_and_a_dynamic_one_the_measured() {
        let i = CompensationInput {
            v: -1.0,
            v_ref: 1.0,
            ..Default::default()
        };
        let params = json!({"fc": 1.0, "fv": 0.1});
        let mut on_ref = feedforward("coulomb_viscous", params.clone(), VelocitySource::Reference);
        let mut on_meas = feedforward("coulomb_viscous", params, VelocitySource::Measured);
        assert!((on_ref.step(&i, 1e-3) - 1.1).abs() < 1e-12);
        assert!((on_meas.step(&i, 1e-3) + 1.1).abs() < 1e-12);
        let mut lugre = feedforward("lugre", json!({}), VelocitySource::Reference);
        assert!(matches!(
            lugre,
            Compensator::Feedforward {
                velocity: VelocitySource::Measured,
                ..
            }
        ));
        let mut f = 0.0;
        for _ in 0..1000 {
            f = lugre.step(&i, 1e-3);
        }
        assert!(f < -1.0, "dynamic model on the measured velocity: {f}");
    }

    #[test]
    fn the_observer_is_lugre_when_tracking_is_perfect_and_leans_on_the_error_otherwise() {
        let p = lugre::Params::default();
        let mut obs = LugreObserver::new(p.clone(), 100.0);
        let mut model = crate::registry::build_model(&ModelSpec {
            model: "lugre".into(),
            params: json!({}),
        })
        .unwrap();
        let (mut f_obs, mut f_model) = (0.0, 0.0);
        for k in 0..2000 {
            let v = 0.01 * (k as f64 * 1e-3 * 6.0).sin();
            f_obs = obs.step(v, 0.0, 1e-3);
            f_model = model.step(&Input::velocity(v), 1e-3);
        }
        assert!((f_obs - f_model).abs() < 1e-9, "{f_obs} vs {f_model}");
        // At rest, a lag behind the reference (e < 0) raises the estimate in the direction
        // of motion, up to the bristle bound.
        let mut obs = LugreObserver::new(p.clone(), 100.0);
        let mut f = 0.0;
        for _ in 0..1000 {
            f = obs.step(0.0, -0.01, 1e-3);
        }
        assert!(f > 0.0 && obs.z() <= p.z_max() + 1e-15, "{f}");
    }

    #[test]
    fn every_law_stays_finite_and_bounded_at_0_1_1_and_10_ms() {
        for dt in [1e-4, 1e-3, 1e-2] {
            let mut laws = [
                Compensator::build(&CompensatorSpec::None).unwrap(),
                feedforward("gms", json!({}), VelocitySource::Measured),
                feedforward("stribeck_exp", json!({}), VelocitySource::Reference),
                Compensator::build(&CompensatorSpec::LugreObserver {
                    params: json!({}),
                    gain: 1e3,
                })
                .unwrap(),
            ];
            for law in &mut laws {
                for k in 0..(2.0 / dt) as usize {
                    let t = k as f64 * dt;
                    let i = CompensationInput {
                        t,
                        x: (3.0 * t).sin(),
                        v: 3.0 * (3.0 * t).cos() + 0.05 * (k as f64 * 7.3).sin(),
                        x_ref: 1.1 * (3.0 * t).sin(),
                        v_ref: 3.3 * (3.0 * t).cos(),
                    };
                    let f = law.step(&i, dt);
                    assert!(f.is_finite() && f.abs() < 1e3, "{law:?} dt {dt}: {f}");
                }
            }
        }
    }

    #[test]
    fn bad_observer_gains_and_parameters_are_refused() {
        let bad = |params, gain| {
            Compensator::build(&CompensatorSpec::LugreObserver { params, gain }).unwrap_err()
        };
        assert!(bad(json!({}), -1.0).to_string().contains("gain"));
        assert!(bad(json!({"fc": -1.0}), 1.0).to_string().contains("fc"));
    }
}
