//! The model interface: a parameter struct, a state struct, and pure step functions.
//!
//! Each model module defines a zero-sized marker type implementing [`Dynamics`] (the pure
//! functions over `&Params` and `&mut State`, as rapier's `PhysicsPipeline::step`) and
//! [`ModelDef`] (its id, description and parameter documentation). [`Model<D>`] owns one
//! parameter set and one state, contains non-finite values, and implements the object-safe
//! [`FrictionModel`] that the registry, the plant and the lockstep bank use.

use crate::{Input, ParamError, StepLaw};
use serde::{Serialize, de::DeserializeOwned};

/// One documented parameter of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamDoc {
    /// Field name, snake_case as on the model's page (`docs/src/models/<id>.md`).
    pub name: &'static str,
    /// SI unit, written for a linear bench (rotary: N→N m, m→rad, kg→kg m^2), `-` if none.
    pub unit: &'static str,
    /// One line: what the parameter means.
    pub description: &'static str,
}

impl ParamDoc {
    /// A parameter's documentation.
    pub const fn new(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
    ) -> ParamDoc {
        ParamDoc {
            name,
            unit,
            description,
        }
    }
}

/// A parameter set that can check itself.
pub trait Validate {
    /// Returns the first rule broken, naming the parameter.
    fn validate(&self) -> Result<(), ParamError>;
}

/// The pure equations of one model.
pub trait Dynamics {
    /// Parameters (serde, defaults from the papers' tables).
    type Params: Clone
        + std::fmt::Debug
        + Default
        + Serialize
        + DeserializeOwned
        + Validate
        + Send
        + Sync
        + 'static;
    /// What the equations integrate; `initial_state` is at rest.
    type State: Clone + std::fmt::Debug + Send + Sync + 'static;

    /// The state at rest for these parameters.
    fn initial_state(p: &Self::Params) -> Self::State;

    /// Velocity-driven step (lockstep with measured or prescribed motion): returns the friction of
    /// sample k from the state at k and the inputs at k, then advances the state to k+1.
    fn step(p: &Self::Params, s: &mut Self::State, input: &Input, dt: f64) -> f64;

    /// The friction over the next step as a function of `v_{k+1}`, for plant coupling.
    fn law(p: &Self::Params, s: &Self::State, input: &Input, dt: f64) -> StepLaw;

    /// Advances the state after the plant chose `v_next` (and hence the friction `force`).
    fn advance(
        p: &Self::Params,
        s: &mut Self::State,
        input: &Input,
        v_next: f64,
        force: f64,
        dt: f64,
    );

    /// The steady-state (Stribeck) friction at constant velocity `v`, where the model defines one.
    fn steady_state(p: &Self::Params, v: f64) -> Option<f64>;

    /// Names of the state variables, in the order of `state_values`.
    fn state_names(p: &Self::Params) -> Vec<String>;

    /// Appends the state variables to `out`.
    fn state_values(s: &Self::State, out: &mut Vec<f64>);
}

/// The registry's view of a model type: id, description, parameter docs.
pub trait ModelDef: Dynamics + 'static {
    /// Model id (part of the interface: `lugre`, `gms`, ...).
    const ID: &'static str;
    /// One line for `bench models`.
    const DESCRIPTION: &'static str;
    /// Every parameter, in the order of the `Params` fields.
    const PARAMS: &'static [ParamDoc];
    /// Whether the model accepts `negative`, a separate parameter set for negative motion.
    const ASYMMETRIC: bool = false;
    /// Whether the coupling law has no guards, so the plant may evaluate it again with the
    /// velocity frozen at a predicted midpoint (predictor-corrector; see `plant::step`).
    const REFINE_LAW: bool = false;
}

/// Object-safe interface to any model with its parameters and state.
pub trait FrictionModel: Send + Sync + std::fmt::Debug {
    /// The model id.
    fn id(&self) -> &'static str;
    /// Back to rest.
    fn reset(&mut self);
    /// Velocity-driven step; see [`Dynamics::step`]. Never returns a non-finite value.
    fn step(&mut self, input: &Input, dt: f64) -> f64;
    /// The coupling law for a plant step; see [`Dynamics::law`].
    fn law(&self, input: &Input, dt: f64) -> StepLaw;
    /// Commits a plant step; see [`Dynamics::advance`].
    fn advance(&mut self, input: &Input, v_next: f64, force: f64, dt: f64);
    /// Steady-state friction at constant `v`, where defined.
    fn steady_state(&self, v: f64) -> Option<f64>;
    /// Names of the state variables.
    fn state_names(&self) -> Vec<String>;
    /// Appends the state variables to `out`.
    fn state_values(&self, out: &mut Vec<f64>);
    /// The parameters as JSON (with `negative` where set).
    fn params_json(&self) -> serde_json::Value;
    /// How many steps produced a non-finite value and were rolled back.
    fn quarantined(&self) -> u64;
    /// Whether `law` may be re-evaluated at a predicted midpoint velocity ([`ModelDef::REFINE_LAW`]).
    fn refines_law(&self) -> bool;
}

/// A model: its parameters, its state, and the last finite state (for quarantine).
pub struct Model<D: Dynamics> {
    /// Parameters, validated at construction.
    pub params: D::Params,
    /// Current state.
    pub state: D::State,
    last_good: D::State,
    quarantined: u64,
    scratch: Vec<f64>,
}

impl<D: Dynamics> Clone for Model<D> {
    fn clone(&self) -> Self {
        Model {
            params: self.params.clone(),
            state: self.state.clone(),
            last_good: self.last_good.clone(),
            quarantined: self.quarantined,
            scratch: Vec::new(),
        }
    }
}

impl<D: Dynamics> std::fmt::Debug for Model<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("params", &self.params)
            .field("state", &self.state)
            .finish()
    }
}

impl<D: Dynamics> Model<D> {
    /// Builds a model at rest after validating `params`.
    pub fn new(params: D::Params) -> Result<Model<D>, ParamError> {
        params.validate()?;
        let state = D::initial_state(&params);
        Ok(Model {
            last_good: state.clone(),
            params,
            state,
            quarantined: 0,
            scratch: Vec::new(),
        })
    }

    /// Keeps the new state if every value is finite and `force` is finite, else restores the
    /// last finite state (rapier's quarantine). Returns the force to hand out.
    fn contain(&mut self, force: f64) -> f64 {
        self.scratch.clear();
        D::state_values(&self.state, &mut self.scratch);
        if force.is_finite() && self.scratch.iter().all(|x| x.is_finite()) {
            self.last_good.clone_from(&self.state);
            force
        } else {
            self.state.clone_from(&self.last_good);
            self.quarantined += 1;
            0.0
        }
    }
}

impl<D: ModelDef> FrictionModel for Model<D> {
    fn id(&self) -> &'static str {
        D::ID
    }
    fn reset(&mut self) {
        self.state = D::initial_state(&self.params);
        self.last_good = self.state.clone();
    }
    fn step(&mut self, input: &Input, dt: f64) -> f64 {
        let f = D::step(&self.params, &mut self.state, input, dt);
        self.contain(f)
    }
    fn law(&self, input: &Input, dt: f64) -> StepLaw {
        D::law(&self.params, &self.state, input, dt)
    }
    fn advance(&mut self, input: &Input, v_next: f64, force: f64, dt: f64) {
        D::advance(&self.params, &mut self.state, input, v_next, force, dt);
        self.contain(force);
    }
    fn steady_state(&self, v: f64) -> Option<f64> {
        D::steady_state(&self.params, v)
    }
    fn state_names(&self) -> Vec<String> {
        D::state_names(&self.params)
    }
    fn state_values(&self, out: &mut Vec<f64>) {
        D::state_values(&self.state, out)
    }
    fn params_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.params).unwrap_or(serde_json::Value::Null)
    }
    fn quarantined(&self) -> u64 {
        self.quarantined
    }
    fn refines_law(&self) -> bool {
        D::REFINE_LAW
    }
}
