//! Scenarios for `bench simulate`: a spring pulled at constant speed (the stick-slip benchmark),
//! an applied force on a mass, or prescribed motion; and the signal profiles they use.
//!
//! The JSON forms are part of the interface (issue 2): `{"kind":"spring_pull","mass":M,
//! "stiffness":K,"pull_velocity":V,"pull_stop_s":T}`, `{"kind":"force","mass":M,"force":P}` (with an optional known `"load"`, [`crate::load`]),
//! `{"kind":"velocity","velocity":P}`, `{"kind":"position","position":P}`.

use crate::Input;
use crate::load::Load;
use crate::model::FrictionModel;
use crate::plant::{self, Applied, PlantParams, PlantState};
use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;

/// A time signal. Fields after the first default to 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Profile {
    /// `value`.
    Constant {
        /// The value.
        value: f64,
    },
    /// `offset + rate t`.
    Ramp {
        /// Slope per second.
        rate: f64,
        /// Value at t = 0.
        #[serde(default)]
        offset: f64,
    },
    /// `offset + amplitude sin(omega t + phase)`.
    Sine {
        /// Amplitude.
        amplitude: f64,
        /// Angular frequency \[rad/s\].
        #[serde(default)]
        omega: f64,
        /// Offset.
        #[serde(default)]
        offset: f64,
        /// Phase \[rad\].
        #[serde(default)]
        phase: f64,
    },
    /// `0` before `at`, `value` from `at` on.
    Step {
        /// Value after the step.
        value: f64,
        /// Step time \[s\].
        #[serde(default)]
        at: f64,
    },
    /// `offset + amplitude sin(2 pi (f0 t + (f1 - f0) t^2 / (2 duration)))` for `t <= duration`,
    /// then the frequency holds at `f1` (phase-continuous).
    Chirp {
        /// Amplitude.
        amplitude: f64,
        /// Start frequency \[Hz\].
        #[serde(default)]
        f0: f64,
        /// End frequency \[Hz\].
        #[serde(default)]
        f1: f64,
        /// Sweep duration \[s\].
        #[serde(default)]
        duration: f64,
        /// Offset.
        #[serde(default)]
        offset: f64,
    },
    /// Linear interpolation of samples, held beyond the ends.
    Samples {
        /// Strictly increasing times \[s\].
        t: Vec<f64>,
        /// Values at those times.
        value: Vec<f64>,
    },
}

impl Profile {
    /// Checks the profile; `field` names it in the error.
    pub fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        let bad = |sub: &str, rule: &str| {
            Err(ScenarioError {
                field: format!("{field}.{sub}"),
                rule: rule.into(),
            })
        };
        let finite = |sub: &str, x: f64| {
            if x.is_finite() {
                Ok(())
            } else {
                bad(sub, "must be finite")
            }
        };
        match self {
            Profile::Constant { value } => finite("constant.value", *value),
            Profile::Ramp { rate, offset } => {
                finite("ramp.rate", *rate).and(finite("ramp.offset", *offset))
            }
            Profile::Sine {
                amplitude,
                omega,
                offset,
                phase,
            } => finite("sine.amplitude", *amplitude)
                .and(finite("sine.omega", *omega))
                .and(finite("sine.offset", *offset))
                .and(finite("sine.phase", *phase)),
            Profile::Step { value, at } => finite("step.value", *value).and(finite("step.at", *at)),
            Profile::Chirp {
                amplitude,
                f0,
                f1,
                duration,
                offset,
            } => {
                finite("chirp.amplitude", *amplitude)?;
                finite("chirp.offset", *offset)?;
                if !(f0.is_finite() && *f0 >= 0.0) {
                    return bad("chirp.f0", "must be >= 0");
                }
                if !(f1.is_finite() && *f1 >= 0.0) {
                    return bad("chirp.f1", "must be >= 0");
                }
                if !(duration.is_finite() && *duration >= 0.0) {
                    return bad("chirp.duration", "must be >= 0");
                }
                Ok(())
            }
            Profile::Samples { t, value } => {
                if t.is_empty() {
                    return bad("samples.t", "must not be empty");
                }
                if t.len() != value.len() {
                    return bad(
                        "samples.value",
                        &format!("must have as many entries as t ({})", t.len()),
                    );
                }
                if t.iter().chain(value).any(|x| !x.is_finite()) {
                    return bad("samples", "must be finite");
                }
                if t.windows(2).any(|w| w[1] <= w[0]) {
                    return bad("samples.t", "must be strictly increasing");
                }
                Ok(())
            }
        }
    }

    fn chirp_phase(t: f64, f0: f64, f1: f64, duration: f64) -> (f64, f64) {
        // Returns (phase [rad], instantaneous frequency [Hz]).
        if t <= duration {
            let f = f0 + (f1 - f0) * t / duration;
            (TAU * (f0 * t + (f1 - f0) * t * t / (2.0 * duration)), f)
        } else {
            let end = TAU * (f0 + f1) * duration / 2.0;
            (end + TAU * f1 * (t - duration), f1)
        }
    }

    /// The value at `t`.
    pub fn value(&self, t: f64) -> f64 {
        match self {
            Profile::Constant { value } => *value,
            Profile::Ramp { rate, offset } => offset + rate * t,
            Profile::Sine {
                amplitude,
                omega,
                offset,
                phase,
            } => offset + amplitude * (omega * t + phase).sin(),
            Profile::Step { value, at } => {
                if t >= *at {
                    *value
                } else {
                    0.0
                }
            }
            Profile::Chirp {
                amplitude,
                f0,
                f1,
                duration,
                offset,
            } => offset + amplitude * Self::chirp_phase(t, *f0, *f1, *duration).0.sin(),
            Profile::Samples { t: ts, value } => {
                let i = ts.partition_point(|&x| x <= t);
                if i == 0 {
                    value[0]
                } else if i == ts.len() {
                    value[ts.len() - 1]
                } else {
                    let a = (t - ts[i - 1]) / (ts[i] - ts[i - 1]);
                    value[i - 1] + a * (value[i] - value[i - 1])
                }
            }
        }
    }

    /// The time derivative at `t` (0 across a step).
    pub fn rate(&self, t: f64) -> f64 {
        match self {
            Profile::Constant { .. } | Profile::Step { .. } => 0.0,
            Profile::Ramp { rate, .. } => *rate,
            Profile::Sine {
                amplitude,
                omega,
                phase,
                ..
            } => amplitude * omega * (omega * t + phase).cos(),
            Profile::Chirp {
                amplitude,
                f0,
                f1,
                duration,
                ..
            } => {
                let (ph, f) = Self::chirp_phase(t, *f0, *f1, *duration);
                amplitude * TAU * f * ph.cos()
            }
            Profile::Samples { t: ts, value } => {
                let i = ts.partition_point(|&x| x <= t);
                if i == 0 || i == ts.len() {
                    0.0
                } else {
                    (value[i] - value[i - 1]) / (ts[i] - ts[i - 1])
                }
            }
        }
    }
}

/// What drives the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Scenario {
    /// A mass on a spring whose far end moves at `pull_velocity` until `pull_stop_s` (stick-slip).
    SpringPull {
        /// Mass or inertia \[kg\].
        mass: f64,
        /// Spring stiffness \[N/m\].
        stiffness: f64,
        /// Velocity of the spring's far end \[m/s\].
        pull_velocity: f64,
        /// Time at which the far end stops \[s\]; never if absent.
        #[serde(default)]
        pull_stop_s: Option<f64>,
    },
    /// A force profile applied to a mass.
    Force {
        /// Mass or inertia \[kg\].
        mass: f64,
        /// Applied force \[N\].
        force: Profile,
        /// A known load beside the mass ([`crate::load`]); none by default.
        #[serde(default, skip_serializing_if = "Load::is_none")]
        load: Load,
    },
    /// Prescribed velocity; the model predicts the friction.
    Velocity {
        /// Velocity \[m/s\].
        velocity: Profile,
    },
    /// Prescribed position; the model predicts the friction.
    Position {
        /// Position \[m\].
        position: Profile,
    },
}

/// A scenario field that breaks a rule.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("scenario field {field} {rule}")]
pub struct ScenarioError {
    /// The field, dotted (e.g. `force.sine.omega`).
    pub field: String,
    /// The rule, e.g. "must be > 0".
    pub rule: String,
}

impl Scenario {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let positive = |field: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(ScenarioError {
                    field: field.into(),
                    rule: format!("({x}) must be > 0"),
                })
            }
        };
        match self {
            Scenario::SpringPull {
                mass,
                stiffness,
                pull_velocity,
                pull_stop_s,
            } => {
                positive("mass", *mass)?;
                positive("stiffness", *stiffness)?;
                if !pull_velocity.is_finite() {
                    return Err(ScenarioError {
                        field: "pull_velocity".into(),
                        rule: "must be finite".into(),
                    });
                }
                if let Some(t) = pull_stop_s
                    && !(t.is_finite() && *t >= 0.0)
                {
                    return Err(ScenarioError {
                        field: "pull_stop_s".into(),
                        rule: format!("({t}) must be >= 0"),
                    });
                }
                Ok(())
            }
            Scenario::Force { mass, force, load } => {
                positive("mass", *mass)?;
                load.validate().map_err(|e| ScenarioError {
                    field: format!("load.{}", e.field),
                    rule: format!("({}) must be {}", e.value, e.rule),
                })?;
                force.validate("force")
            }
            Scenario::Velocity { velocity } => velocity.validate("velocity"),
            Scenario::Position { position } => position.validate("position"),
        }
    }
}

/// One output sample of a simulation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// Time \[s\].
    pub t: f64,
    /// Position at `t`.
    pub x: f64,
    /// Velocity at `t`.
    pub v: f64,
    /// Applied force.
    pub u: f64,
    /// Friction over the step starting at `t`.
    pub friction: f64,
    /// The model's state after the step (names from `FrictionModel::state_names`).
    pub states: Vec<f64>,
}

/// Runs `model` in `scenario` for `duration` s at step `dt`, calling `sink` every `every` steps.
///
/// The caller validates the scenario; `dt > 0` and `every >= 1` are required.
pub fn simulate(
    model: &mut dyn FrictionModel,
    scenario: &Scenario,
    dt: f64,
    duration: f64,
    every: usize,
    mut sink: impl FnMut(&Row),
) {
    let steps = (duration / dt).round() as u64;
    let every = every.max(1) as u64;
    let mut row = Row::default();
    let mut s = PlantState::default();
    // Prescribed velocity integrates position by the trapezoidal rule.
    if let Scenario::Position { position } = scenario {
        s.x = position.value(0.0);
    }
    for k in 0..=steps {
        let t = k as f64 * dt;
        s.t = t;
        let (x0, v0, u, f) = match scenario {
            Scenario::SpringPull {
                mass,
                stiffness,
                pull_velocity,
                pull_stop_s,
            } => {
                let stop = pull_stop_s.unwrap_or(f64::INFINITY);
                let end = |t: f64| pull_velocity * t.min(stop);
                let v_end = if t < stop { *pull_velocity } else { 0.0 };
                let u = stiffness * (end(t) - s.x);
                let a = Applied {
                    u,
                    u0: stiffness * (end(t + dt) - s.x),
                    cu: stiffness * dt,
                    du_dt: stiffness * (v_end - s.v),
                };
                let (x0, v0) = (s.x, s.v);
                (
                    x0,
                    v0,
                    u,
                    plant::step(model, &PlantParams { mass: *mass }, &mut s, &a, dt),
                )
            }
            Scenario::Force { mass, force, load } => {
                // The row records the applied force; the plant feels it net of the load.
                let u = force.value(t);
                let a = load.on(&Applied::force(u, force.rate(t)), &s, dt);
                let (x0, v0) = (s.x, s.v);
                (
                    x0,
                    v0,
                    u,
                    plant::step(model, &PlantParams { mass: *mass }, &mut s, &a, dt),
                )
            }
            Scenario::Velocity { velocity } => {
                s.v = velocity.value(t);
                let (x0, v0) = (s.x, s.v);
                let f = model.step(
                    &Input {
                        t,
                        x: x0,
                        v: v0,
                        u: 0.0,
                        du_dt: 0.0,
                    },
                    dt,
                );
                s.x += 0.5 * dt * (v0 + velocity.value(t + dt));
                (x0, v0, 0.0, f)
            }
            Scenario::Position { position } => {
                s.x = position.value(t);
                s.v = position.rate(t);
                (
                    s.x,
                    s.v,
                    0.0,
                    model.step(
                        &Input {
                            t,
                            x: s.x,
                            v: s.v,
                            u: 0.0,
                            du_dt: 0.0,
                        },
                        dt,
                    ),
                )
            }
        };
        if k % every == 0 {
            row.t = t;
            row.x = x0;
            row.v = v0;
            row.u = u;
            row.friction = f;
            row.states.clear();
            model.state_values(&mut row.states);
            sink(&row);
        }
    }
}
