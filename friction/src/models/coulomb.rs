//! Coulomb friction: S1 8.11–8.12, S4 eq. 4, S0 eqs. 2–3; docs/src/models/coulomb.md.
//!
//! $$F = f_c \operatorname{sgn}(v)$$, set-valued at rest: `F = clamp(u, fc)` when `v = 0`.
//!
//! In a plant the set-valued law is solved exactly (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick), so a
//! body sticks without drift at any step. With measured velocities (lockstep), `|v| <= dv` counts
//! as rest (a Karnopp window, S1 8.45): set `dv` to the sensor's velocity resolution.

use crate::curve::sgn;
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Coulomb parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N\]; default 1.
    pub fc: f64,
    /// Velocity window counted as rest for measured velocities \[m/s\]; default 0 (exact zero).
    pub dv: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params { fc: 1.0, dv: 0.0 }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("fc", self.fc)?;
        check::non_negative("dv", self.dv)
    }
}

/// Coulomb has no state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State;

/// Marker type of the Coulomb model.
#[derive(Clone, Copy, Debug)]
pub struct Coulomb;

impl Dynamics for Coulomb {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        let v = if input.v.abs() <= p.dv { 0.0 } else { input.v };
        Self::law(p, s, input, dt).force_at(v, input.u)
    }

    fn law(p: &Params, _: &State, _: &Input, _: f64) -> StepLaw {
        StepLaw::Stick {
            limit_pos: p.fc,
            limit_neg: p.fc,
            kinetic_pos: p.fc,
            kinetic_neg: p.fc,
            damping: 0.0,
        }
    }

    fn advance(_: &Params, _: &mut State, _: &Input, _: f64, _: f64, _: f64) {}

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.fc * sgn(v))
    }

    fn state_names(_: &Params) -> Vec<String> {
        Vec::new()
    }

    fn state_values(_: &State, _: &mut Vec<f64>) {}
}

impl ModelDef for Coulomb {
    const ID: &'static str = "coulomb";
    const DESCRIPTION: &'static str = "Coulomb friction fc*sgn(v), set-valued at rest";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new(
            "dv",
            "m/s",
            "velocity window counted as rest (measured velocities)",
        ),
    ];
}
