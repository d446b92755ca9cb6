//! The compensators of a trial: which law, which model and parameters, and their checks.

use crate::Error;
use crate::error::check;
use friction::compensation::{CompensatorSpec, VelocitySource};
use friction::registry::ModelSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which velocity a static feedforward model is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Velocity {
    /// The reference's velocity (no measurement noise, no feedback through the model).
    Reference,
    /// The measured velocity.
    Measured,
}

impl From<Velocity> for VelocitySource {
    fn from(v: Velocity) -> VelocitySource {
        match v {
            Velocity::Reference => VelocitySource::Reference,
            Velocity::Measured => VelocitySource::Measured,
        }
    }
}

/// One compensator of the trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Compensator {
    /// Name in the results (unique).
    pub name: String,
    /// Friction model id (`bench models`); absent or `"none"`: no compensation (the
    /// baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model's parameters: an object, `"set:NAME"` (a stored parameter set) or
    /// `"latest"` (the newest set of the model); default `"latest"`.
    #[serde(default = "latest")]
    pub params: serde_json::Value,
    /// Velocity a static model is evaluated on: `reference` (default) or `measured`; dynamic
    /// models are always fed the measured velocity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<Velocity>,
    /// Observer gain `k` \[1/s\]: given, the compensator is the LuGre observer of Canudas de
    /// Wit et al. 1995 (model `lugre` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer_gain: Option<f64>,
}

fn latest() -> serde_json::Value {
    "latest".into()
}

impl Compensator {
    /// The baseline: no compensation.
    pub fn none() -> Compensator {
        Compensator {
            name: "none".into(),
            model: None,
            params: latest(),
            velocity: None,
            observer_gain: None,
        }
    }

    pub(super) fn model_named(name: &str, model: &str) -> Compensator {
        Compensator {
            name: name.into(),
            model: Some(model.into()),
            ..Compensator::none()
        }
    }

    /// The model it uses, if any.
    pub fn model_id(&self) -> Option<&str> {
        self.model.as_deref().filter(|m| *m != "none")
    }

    /// The law with resolved parameters `params` (ignored by the baseline).
    pub fn spec(&self, params: serde_json::Value) -> CompensatorSpec {
        match (self.model_id(), self.observer_gain) {
            (None, _) => CompensatorSpec::None,
            (Some(_), Some(gain)) => CompensatorSpec::LugreObserver { params, gain },
            (Some(model), None) => CompensatorSpec::Feedforward {
                model: ModelSpec {
                    model: model.into(),
                    params,
                },
                velocity: self.velocity.map_or(VelocitySource::Reference, Into::into),
            },
        }
    }

    pub(super) fn check(&self, field: &str) -> Result<(), Error> {
        if self.name.trim().is_empty() {
            return Err(Error::invalid(
                format!("{field}.name"),
                "\"\"",
                "must not be empty",
            ));
        }
        let Some(model) = self.model_id() else {
            return Ok(());
        };
        let entry = friction::registry::entry(model)
            .map_err(|e| Error::invalid(format!("{field}.model"), model, e.to_string()))?;
        if let Some(k) = self.observer_gain {
            if model != "lugre" {
                return Err(Error::invalid(
                    format!("{field}.observer_gain"),
                    k,
                    format!("applies to model lugre only (the LuGre observer), not {model}"),
                ));
            }
            check::non_negative(&format!("{field}.observer_gain"), k)?;
        }
        let dynamic = entry
            .build(entry.defaults())
            .map(|m| !m.state_names().is_empty())
            .unwrap_or(false);
        if dynamic && self.velocity == Some(Velocity::Reference) {
            return Err(Error::invalid(
                format!("{field}.velocity"),
                "reference",
                format!(
                    "applies to static models; {model} is dynamic and is fed the measured velocity"
                ),
            ));
        }
        match &self.params {
            serde_json::Value::String(s) if s == "latest" || s.starts_with("set:") => Ok(()),
            serde_json::Value::Object(_) => {
                let spec = self.spec(self.params.clone());
                friction::compensation::Compensator::build(&spec)
                    .map(|_| ())
                    .map_err(|e| {
                        Error::invalid(format!("{field}.params"), "the object", e.to_string())
                    })
            }
            other => Err(Error::invalid(
                format!("{field}.params"),
                other,
                "must be an object of parameters, \"set:NAME\" or \"latest\"",
            )),
        }
    }
}
