//! A known load on the plant beside its inertia: a pendulum, a linear spring or a constant
//! force (docs/src/known-load.md).
//!
//! The load is the force `L(x)` the drive must apply to hold the body still at `x`, so the
//! momentum balance of [`crate::plant`] becomes
//!
//! $$m\\,\dot v = u - F - L(x)$$
//!
//! with \\( u \\) the applied force and \\( F \\) the friction. Its three forms:
//!
//! - pendulum: \\( L = m_p\\,g\\,l\\,\sin(x - x_0) \\), a point mass \\( m_p \\) \[kg\] at
//!   \\( l \\) \[m\] from the axis, \\( x_0 \\) \[rad\] the angle of its lowest point; the arm's
//!   inertia is part of the plant's inertia, which the user states whole;
//! - spring: \\( L = k\\,(x - x_0) \\), stiffness \\( k \\) \[N/m or N m/rad\], rest position
//!   \\( x_0 \\);
//! - constant: \\( L = c \\) \[N or N m\] (gravity on an inclined slide, a counterweight).
//!
//! Over a plant step the load enters the applied force linearised at the step's start,
//! \\( L(x_{k+1}) \approx L(x_k) + L'(x_k)\\,h\\,v_{k+1} \\): a stiffening load (\\( L' \ge 0 \\))
//! implicitly in \\( v_{k+1} \\), as a spring's pull already is, a softening one (a pendulum
//! above the horizontal) explicitly at \\( v_k \\), so the step keeps its non-negative slope.

use crate::plant::{Applied, PlantState};
use serde::{Deserialize, Serialize};

/// Standard gravity \[m/s^2\] (the default of `g`).
pub const STANDARD_GRAVITY: f64 = 9.806_65;

fn standard_gravity() -> f64 {
    STANDARD_GRAVITY
}

/// A known load: `{"kind": "pendulum", "mass", "length", "bottom", "g"}`,
/// `{"kind": "spring", "stiffness", "rest"}` or `{"kind": "constant", "force"}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Load {
    /// No load: a bare inertia.
    #[default]
    None,
    /// A point mass on an arm under gravity (rotary axis).
    Pendulum {
        /// Mass \[kg\].
        mass: f64,
        /// Distance of the mass from the axis \[m\].
        length: f64,
        /// Angle of the lowest point \[rad\]; default 0.
        #[serde(default)]
        bottom: f64,
        /// Gravity \[m/s^2\]; default 9.80665.
        #[serde(default = "standard_gravity")]
        g: f64,
    },
    /// A linear spring.
    Spring {
        /// Stiffness \[N/m or N m/rad\].
        stiffness: f64,
        /// Position where the spring is relaxed \[m or rad\]; default 0.
        #[serde(default)]
        rest: f64,
    },
    /// A constant force \[N or N m\] the drive holds against.
    Constant {
        /// The force.
        force: f64,
    },
}

/// A load field that breaks its rule.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("load.{field} ({value}) must be {rule}")]
pub struct LoadError {
    /// The field, e.g. `length`.
    pub field: &'static str,
    /// The value given.
    pub value: f64,
    /// The rule.
    pub rule: &'static str,
}

impl Load {
    /// True for [`Load::None`].
    pub fn is_none(&self) -> bool {
        *self == Load::None
    }

    /// Checks every field: finite; a pendulum's mass, length and gravity and a spring's
    /// stiffness > 0.
    pub fn validate(&self) -> Result<(), LoadError> {
        let check = |field, value: f64, positive: bool| {
            let ok = value.is_finite() && (!positive || value > 0.0);
            let rule = if positive { "finite and > 0" } else { "finite" };
            if ok {
                Ok(())
            } else {
                Err(LoadError { field, value, rule })
            }
        };
        match *self {
            Load::None => Ok(()),
            Load::Pendulum {
                mass,
                length,
                bottom,
                g,
            } => check("mass", mass, true)
                .and(check("length", length, true))
                .and(check("bottom", bottom, false))
                .and(check("g", g, true)),
            Load::Spring { stiffness, rest } => {
                check("stiffness", stiffness, true).and(check("rest", rest, false))
            }
            Load::Constant { force } => check("force", force, false),
        }
    }

    /// The force the drive holds against at position `x` \[N or N m\].
    pub fn force(&self, x: f64) -> f64 {
        match *self {
            Load::None => 0.0,
            Load::Pendulum {
                mass,
                length,
                bottom,
                g,
            } => mass * g * length * (x - bottom).sin(),
            Load::Spring { stiffness, rest } => stiffness * (x - rest),
            Load::Constant { force } => force,
        }
    }

    /// `dL/dx` at `x` \[N/m or N m/rad\].
    pub fn stiffness(&self, x: f64) -> f64 {
        match *self {
            Load::None | Load::Constant { .. } => 0.0,
            Load::Pendulum {
                mass,
                length,
                bottom,
                g,
            } => mass * g * length * (x - bottom).cos(),
            Load::Spring { stiffness, .. } => stiffness,
        }
    }

    /// The net force on the body over a step of `h` from `s` under the applied force `a`
    /// (module doc): what [`crate::plant::step`] takes.
    pub fn on(&self, a: &Applied, s: &PlantState, h: f64) -> Applied {
        if self.is_none() {
            return *a;
        }
        let (l, k) = (self.force(s.x), self.stiffness(s.x));
        let (implicit, explicit) = if k >= 0.0 { (k, 0.0) } else { (0.0, k) };
        Applied {
            u: a.u - l,
            u0: a.u0 - l - explicit * h * s.v,
            cu: a.cu + implicit * h,
            du_dt: a.du_dt - k * s.v,
        }
    }

    /// `u - L(x)` per sample: the force left for inertia and friction.
    pub fn subtract(&self, x: &[f64], u: &[f64]) -> Vec<f64> {
        x.iter().zip(u).map(|(x, u)| u - self.force(*x)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plant::{self, PlantParams};
    use crate::registry::{ModelSpec, build_model};

    fn free_swing(load: &Load, x0: f64, h: f64, t_end: f64) -> Vec<(f64, f64)> {
        let mut m = build_model(&ModelSpec {
            model: "viscous".into(),
            params: serde_json::json!({"fv": 0.0}),
        })
        .unwrap();
        let p = PlantParams { mass: 0.02 };
        let mut s = PlantState {
            x: x0,
            ..PlantState::default()
        };
        let mut out = Vec::new();
        while s.t < t_end {
            let a = load.on(&Applied::force(0.0, 0.0), &s, h);
            plant::step(m.as_mut(), &p, &mut s, &a, h);
            out.push((s.t, s.x));
        }
        out
    }

    /// A small swing without friction has the pendulum's period 2π √(J / (m g l)).
    #[test]
    fn pendulum_swings_at_its_period() {
        let load = Load::Pendulum {
            mass: 0.5,
            length: 0.2,
            bottom: 0.3,
            g: STANDARD_GRAVITY,
        };
        let path = free_swing(&load, 0.3 + 0.01, 1e-5, 3.0);
        // Upward crossings of the bottom.
        let ups: Vec<f64> = path
            .windows(2)
            .filter(|w| w[0].1 < 0.3 && w[1].1 >= 0.3)
            .map(|w| w[1].0)
            .collect();
        let period = (ups[ups.len() - 1] - ups[0]) / (ups.len() - 1) as f64;
        let truth = std::f64::consts::TAU * (0.02_f64 / (0.5 * STANDARD_GRAVITY * 0.2)).sqrt();
        assert!((period / truth - 1.0).abs() < 1e-3, "{period} {truth}");
        // It swings about the lowest point, not about 0.
        let mean = path.iter().map(|p| p.1).sum::<f64>() / path.len() as f64;
        assert!((mean - 0.3).abs() < 1e-3, "{mean}");
    }

    /// A spring holds the body at rest after a constant force at `rest + c / k`.
    #[test]
    fn spring_and_constant_balance() {
        let spring = Load::Spring {
            stiffness: 2.0,
            rest: 0.1,
        };
        assert_eq!(spring.force(0.6), 1.0);
        assert_eq!(Load::Constant { force: -3.0 }.force(7.0), -3.0);
        assert_eq!(
            spring.on(&Applied::force(1.0, 0.0), &PlantState::default(), 0.5),
            Applied {
                u: 1.2,
                u0: 1.2,
                cu: 1.0,
                du_dt: 0.0
            }
        );
    }

    #[test]
    fn bad_fields_are_named() {
        let e = serde_json::from_str::<Load>(r#"{"kind": "pendulum", "mass": 1, "length": -2}"#)
            .unwrap()
            .validate()
            .unwrap_err();
        assert_eq!(e.to_string(), "load.length (-2) must be finite and > 0");
        assert!(serde_json::from_str::<Load>(r#"{"kind": "spring", "k": 1}"#).is_err());
    }
}
