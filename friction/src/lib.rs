//! Friction models of the literature, stable at the fixed steps a real bench runs, with a
//! one-degree-of-freedom plant, scenarios and the lockstep bank.
//!
//! # Brief overview
//!
//! A model is a `Params` struct (serde, validated, defaults from the papers' tables) and a
//! `State` struct, with pure step functions ([`Dynamics`]). [`registry`] builds any model from
//! `{"model": ID, "params": {...}}` as a boxed [`FrictionModel`]. Models are used two ways:
//!
//! - velocity-driven, in lockstep with a bench: `Input → FrictionModel::step → force`, and a
//!   [`ModelBank`] steps every chosen model on the same [`Input`];
//! - coupled to a mass: [`plant::step`] asks the model for its [`StepLaw`] over the step and
//!   solves the momentum balance implicitly, so stiff and switched models stay stable and
//!   drift-free at 0.1, 1 and 10 ms.
//!
//! Equations and their provenance are in the manual (`docs/src/models/`, one page per model); every model module cites its paper and
//! equation numbers.
//!
//! # Example
//!
//! ```
//! use friction::{Input, registry::{build_model, ModelSpec}};
//!
//! let spec: ModelSpec = serde_json::from_str(r#"{"model": "lugre", "params": {"fs": 2.0}}"#).unwrap();
//! let mut model = build_model(&spec).unwrap();
//! let mut f = 0.0;
//! for _ in 0..10_000 {
//!     f = model.step(&Input::velocity(0.1), 1e-3);
//! }
//! // At constant velocity LuGre settles on its Stribeck curve.
//! assert!((f - model.steady_state(0.1).unwrap()).abs() < 1e-9);
//! ```

#![deny(missing_docs)]

mod bank;
pub mod compensation;
pub mod curve;
mod error;
pub mod identify;
mod input;
mod law;
pub mod load;
pub mod model;
pub mod models;
pub mod plant;
pub mod registry;
pub mod scenario;
pub mod units;

pub use bank::{Counters, ModelBank, ModelOutput};
pub use error::{BuildError, ParamError};
pub use input::Input;
pub use law::{PlantSide, StepLaw};
pub use load::Load;
pub use model::{Dynamics, FrictionModel, Model, ModelDef};
pub use scenario::{Profile, Scenario, ScenarioError};
