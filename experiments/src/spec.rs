//! What the user wrote: `{"kind": KIND, "name": "...", "params": {...}}` in JSON or TOML.

use crate::kinds::Kind;
use crate::{BenchLimits, Error, Plan};
use serde::{Deserialize, Serialize};

/// The file formats a spec may be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON.
    Json,
    /// TOML (top-level `kind` and `name`, a `[params]` table).
    Toml,
}

impl Format {
    /// The format a file name implies (`.toml` → TOML, anything else → JSON).
    pub fn from_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("toml") => Format::Toml,
            _ => Format::Json,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    /// Optional here so that a missing kind is named by the field, not found in serde's text.
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    params: Option<serde_json::Value>,
    #[serde(default)]
    lockstep: Option<serde_json::Value>,
}

/// An experiment spec: a name and a kind with its typed parameters (missing ones defaulted).
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Free-form name (defaults to the kind).
    pub name: String,
    /// The kind and its parameters.
    pub kind: Kind,
    /// The run's own lockstep models, `{"models": [...], "params": {...}}`, read by the bench
    /// daemon (over its `[lockstep]` section); `None`: the bench's.
    pub lockstep: Option<serde_json::Value>,
}

impl Spec {
    /// Parses a spec from text.
    pub fn parse(text: &str, format: Format) -> Result<Spec, Error> {
        let value = match format {
            Format::Json => serde_json::from_str::<serde_json::Value>(text)
                .map_err(|e| Error::Parse(format!("invalid JSON: {e}")))?,
            Format::Toml => {
                let t: toml::Value =
                    toml::from_str(text).map_err(|e| Error::Parse(format!("invalid TOML: {e}")))?;
                serde_json::to_value(t).map_err(|e| Error::Parse(format!("invalid TOML: {e}")))?
            }
        };
        Spec::from_value(value)
    }

    /// Parses JSON text.
    pub fn from_json(text: &str) -> Result<Spec, Error> {
        Spec::parse(text, Format::Json)
    }

    /// Parses TOML text.
    pub fn from_toml(text: &str) -> Result<Spec, Error> {
        Spec::parse(text, Format::Toml)
    }

    /// Builds a spec from a JSON value.
    pub fn from_value(value: serde_json::Value) -> Result<Spec, Error> {
        if !value.is_object() {
            // serde would take a list for the fields in order.
            return Err(Error::field(
                "spec",
                "a spec document must be a JSON object {\"kind\", \"name\", \"params\"}",
            ));
        }
        let raw: RawSpec =
            serde_path_to_error::deserialize(value).map_err(|e| Error::at_path("", e))?;
        let kind_name = raw
            .kind
            .ok_or_else(|| Error::field("kind", "missing field `kind`"))?;
        let kind = Kind::from_params(&kind_name, raw.params.unwrap_or(serde_json::json!({})))?;
        let lockstep = match raw.lockstep {
            None | Some(serde_json::Value::Null) => None,
            Some(l @ serde_json::Value::Object(_)) => Some(l),
            Some(_) => {
                return Err(Error::field(
                    "lockstep",
                    "lockstep must be an object {\"models\": [...], \"params\": {...}}",
                ));
            }
        };
        Ok(Spec {
            name: raw.name.unwrap_or(kind_name),
            kind,
            lockstep,
        })
    }

    /// The spec as JSON with every parameter written out (defaults included).
    pub fn to_value(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "kind": self.kind.name(),
            "name": self.name,
            "params": self.kind.params_json(),
        });
        if let Some(l) = &self.lockstep {
            v["lockstep"] = l.clone();
        }
        v
    }

    /// Validates against `limits` and builds the plan.
    pub fn plan(&self, limits: &BenchLimits) -> Result<Plan, Error> {
        self.kind.plan(&self.name, limits)
    }
}

impl Serialize for Spec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Spec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Spec, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Spec::from_value(v).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lockstep_choice_is_kept_and_written_back_and_must_be_an_object() {
        let text = r#"{"kind": "constant_velocity_sweep",
            "lockstep": {"models": ["lugre"], "params": {"lugre": "latest"}}}"#;
        let spec = Spec::from_json(text).unwrap();
        let l = spec.lockstep.clone().unwrap();
        assert_eq!(l["params"]["lugre"], "latest");
        assert_eq!(spec.to_value()["lockstep"], l);
        let plain = Spec::from_json(r#"{"kind": "constant_velocity_sweep"}"#).unwrap();
        assert!(plain.lockstep.is_none() && plain.to_value().get("lockstep").is_none());
        let e = Spec::from_json(r#"{"kind": "constant_velocity_sweep", "lockstep": 3}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lockstep must be an object"), "{e}");
    }
}
