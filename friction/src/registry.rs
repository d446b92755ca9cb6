//! Builds any model from `{"model": ID, "params": {...}}` and lists every model.

use crate::model::{FrictionModel, Model, ModelDef, ParamDoc};
use crate::{BuildError, models};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A model choice as users write it: `{"model": "lugre", "params": {"sigma0": 1e5}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Model id.
    pub model: String,
    /// Parameters; missing ones take the model's defaults.
    #[serde(default = "empty_object")]
    pub params: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// One registry row: what `bench models` lists and how to build the model.
#[derive(Clone, Copy, Debug)]
pub struct ModelEntry {
    /// Model id.
    pub id: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// Parameter docs in field order.
    pub params: &'static [ParamDoc],
    /// Whether a `negative` parameter set is accepted.
    pub asymmetric: bool,
    build: fn(Value) -> Result<Box<dyn FrictionModel>, BuildError>,
    defaults: fn() -> Value,
}

impl ModelEntry {
    const fn of<M: ModelDef>() -> ModelEntry {
        ModelEntry {
            id: M::ID,
            description: M::DESCRIPTION,
            params: M::PARAMS,
            asymmetric: M::ASYMMETRIC,
            build: build::<M>,
            defaults: defaults::<M>,
        }
    }

    /// The default parameters as a JSON object.
    pub fn defaults(&self) -> Value {
        (self.defaults)()
    }

    /// Builds the model from a (possibly partial) parameter object.
    pub fn build(&self, params: Value) -> Result<Box<dyn FrictionModel>, BuildError> {
        (self.build)(params)
    }
}

fn defaults<M: ModelDef>() -> Value {
    let mut v = serde_json::to_value(M::Params::default()).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        map.remove("negative");
    }
    v
}

/// Overlays `given` on the defaults; a `negative` object is overlaid on the full positive set,
/// so a user writes only what differs for negative motion.
fn merge_params<M: ModelDef>(given: Value) -> Result<Value, BuildError> {
    let bad = |reason: String| BuildError::BadParams {
        model: M::ID.to_string(),
        reason,
    };
    let Value::Object(mut given) = given else {
        return Err(bad("params must be a JSON object".into()));
    };
    let negative = given.remove("negative");
    let Value::Object(mut full) = defaults::<M>() else {
        return Err(bad("BUG: defaults are not an object".into()));
    };
    for (k, v) in given {
        if !full.contains_key(&k) {
            let known: Vec<&str> = M::PARAMS.iter().map(|p| p.name).collect();
            return Err(bad(format!(
                "unknown parameter '{k}' (expected one of: {})",
                known.join(", ")
            )));
        }
        full.insert(k, v);
    }
    match negative {
        None | Some(Value::Null) => {}
        Some(Value::Object(neg)) if M::ASYMMETRIC => {
            let mut n = full.clone();
            for (k, v) in neg {
                if !n.contains_key(&k) {
                    return Err(bad(format!("unknown parameter 'negative.{k}'")));
                }
                n.insert(k, v);
            }
            full.insert("negative".into(), Value::Object(n));
        }
        Some(_) if M::ASYMMETRIC => {
            return Err(bad("negative must be a JSON object of parameters".into()));
        }
        Some(_) => {
            return Err(bad(format!(
                "model '{}' has no separate parameter set for negative motion",
                M::ID
            )));
        }
    }
    Ok(Value::Object(full))
}

fn build<M: ModelDef>(given: Value) -> Result<Box<dyn FrictionModel>, BuildError> {
    let full = merge_params::<M>(given)?;
    let params: M::Params = serde_json::from_value(full).map_err(|e| BuildError::BadParams {
        model: M::ID.to_string(),
        reason: e.to_string(),
    })?;
    let model = Model::<M>::new(params).map_err(|source| BuildError::Invalid {
        model: M::ID.to_string(),
        source,
    })?;
    Ok(Box::new(model))
}

/// Every model, in the order of the list.
pub static MODELS: &[ModelEntry] = &[
    ModelEntry::of::<models::coulomb::Coulomb>(),
    ModelEntry::of::<models::viscous::Viscous>(),
    ModelEntry::of::<models::coulomb_viscous::CoulombViscous>(),
    ModelEntry::of::<models::static_coulomb_viscous::StaticCoulombViscous>(),
    ModelEntry::of::<models::stribeck_exp::StribeckExp>(),
    ModelEntry::of::<models::stribeck_lorentz::StribeckLorentz>(),
    ModelEntry::of::<models::tustin::Tustin>(),
    ModelEntry::of::<models::static_armstrong::StaticArmstrong>(),
    ModelEntry::of::<models::rising_static::RisingStatic>(),
    ModelEntry::of::<models::frictional_memory::FrictionalMemory>(),
    ModelEntry::of::<models::seven_parameter::SevenParameter>(),
    ModelEntry::of::<models::ruina::Ruina>(),
    ModelEntry::of::<models::karnopp::Karnopp>(),
    ModelEntry::of::<models::dahl::Dahl>(),
    ModelEntry::of::<models::lugre::LuGre>(),
    ModelEntry::of::<models::elasto_plastic::ElastoPlastic>(),
    ModelEntry::of::<models::modified_dahl::ModifiedDahl>(),
    ModelEntry::of::<models::m2::M2>(),
    ModelEntry::of::<models::gms::Gms>(),
    ModelEntry::of::<models::specker::Specker>(),
    ModelEntry::of::<models::hybrid::Hybrid>(),
    ModelEntry::of::<models::nnaji::Nnaji>(),
    ModelEntry::of::<models::improved_static::ImprovedStatic>(),
    ModelEntry::of::<models::improved_armstrong::ImprovedArmstrong>(),
    ModelEntry::of::<models::improved_lugre::ImprovedLuGre>(),
];

/// Looks a model up by id.
pub fn entry(id: &str) -> Result<&'static ModelEntry, BuildError> {
    MODELS
        .iter()
        .find(|e| e.id == id)
        .ok_or_else(|| BuildError::UnknownModel {
            id: id.to_string(),
            known: MODELS.iter().map(|e| e.id).collect::<Vec<_>>().join(", "),
        })
}

/// Builds the model a spec names, with its parameters over the defaults.
pub fn build_model(spec: &ModelSpec) -> Result<Box<dyn FrictionModel>, BuildError> {
    entry(&spec.model)?.build(spec.params.clone())
}

/// Key of a spec's `params` that holds a force offset in the measurement rather than a model
/// parameter (docs/src/identification.md#offset).
pub const OFFSET_KEY: &str = "offset";

/// The force offset a spec carries under `params.offset` [N or N m] (0 without one), and the
/// spec without it. A parameter set fitted with an offset is used this way: the offset is
/// subtracted from the measured force the model sees, never added to its friction.
pub fn split_offset(spec: &ModelSpec) -> Result<(ModelSpec, f64), BuildError> {
    let mut params = spec.params.clone();
    let offset = match params.as_object_mut().and_then(|p| p.remove(OFFSET_KEY)) {
        None | Some(Value::Null) => 0.0,
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| BuildError::BadParams {
                model: spec.model.clone(),
                reason: format!("offset must be a number [N or N m] (got {v})"),
            })?,
    };
    Ok((
        ModelSpec {
            model: spec.model.clone(),
            params,
        },
        offset,
    ))
}

/// The model list as JSON (`bench models --json`, the REST `/api/models`).
pub fn catalogue() -> Value {
    Value::Array(
        MODELS
            .iter()
            .map(|e| {
                let defaults = e.defaults();
                let params: Vec<Value> = e
                    .params
                    .iter()
                    .map(|p| {
                        serde_json::json!({
                            "name": p.name, "unit": p.unit, "description": p.description,
                            "default": defaults.get(p.name).cloned().unwrap_or(Value::Null),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "id": e.id, "description": e.description, "asymmetric": e.asymmetric, "params": params,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_param_doc_names_a_default_field_and_back() {
        for e in MODELS {
            let Value::Object(d) = e.defaults() else {
                panic!("{}: defaults not an object", e.id)
            };
            let docs: Vec<&str> = e.params.iter().map(|p| p.name).collect();
            let fields: Vec<&str> = d.keys().map(String::as_str).collect();
            for f in &fields {
                assert!(docs.contains(f), "{}: field {f} has no ParamDoc", e.id);
            }
            for p in &docs {
                assert!(fields.contains(p), "{}: ParamDoc {p} is not a field", e.id);
            }
        }
    }

    #[test]
    fn ids_are_unique_and_defaults_build() {
        for (i, e) in MODELS.iter().enumerate() {
            assert!(
                MODELS[..i].iter().all(|o| o.id != e.id),
                "duplicate id {}",
                e.id
            );
            let m = e
                .build(serde_json::json!({}))
                .unwrap_or_else(|err| panic!("{}: {err}", e.id));
            assert_eq!(m.id(), e.id);
        }
    }

    #[test]
    fn unknown_model_and_parameter_are_named() {
        let err = build_model(&ModelSpec {
            model: "nope".into(),
            params: empty_object(),
        })
        .unwrap_err();
        assert!(err.to_string().contains("unknown model 'nope'"), "{err}");
        let err = build_model(&ModelSpec {
            model: "lugre".into(),
            params: serde_json::json!({"sigma9": 1}),
        })
        .unwrap_err();
        assert!(err.to_string().contains("sigma9"), "{err}");
    }

    #[test]
    fn invalid_value_names_field_and_rule() {
        let err = build_model(&ModelSpec {
            model: "lugre".into(),
            params: serde_json::json!({"fs": 0.5}),
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "model 'lugre': parameter fs (0.5) must be >= fc (1)"
        );
        let err = build_model(&ModelSpec {
            model: "lugre".into(),
            params: serde_json::json!({"sigma0": -1.0}),
        })
        .unwrap_err();
        assert!(err.to_string().contains("sigma0 (-1) must be > 0"), "{err}");
    }

    #[test]
    fn negative_set_overlays_the_positive_one() {
        let spec = ModelSpec {
            model: "lugre".into(),
            params: serde_json::json!({"fc": 2.0, "fs": 3.0, "negative": {"fs": 4.0}}),
        };
        let m = build_model(&spec).unwrap();
        assert_eq!(m.params_json()["negative"]["fc"], 2.0);
        assert_eq!(m.params_json()["negative"]["fs"], 4.0);
        let bad = ModelSpec {
            model: "lugre".into(),
            params: serde_json::json!({"negative": {"fs": 0.1}}),
        };
        assert!(
            build_model(&bad)
                .unwrap_err()
                .to_string()
                .contains("negative.fs")
        );
    }

    #[test]
    fn an_offset_is_split_from_the_parameters() {
        let spec = ModelSpec {
            model: "coulomb_viscous".into(),
            params: serde_json::json!({"fc": 1.0, "offset": -0.25}),
        };
        assert!(build_model(&spec).is_err());
        let (bare, offset) = split_offset(&spec).unwrap();
        assert_eq!(offset, -0.25);
        assert!(build_model(&bare).is_ok());
        let bad = ModelSpec {
            model: "coulomb_viscous".into(),
            params: serde_json::json!({"offset": "x"}),
        };
        assert!(
            split_offset(&bad)
                .unwrap_err()
                .to_string()
                .contains("offset")
        );
    }

    #[test]
    fn the_asymmetric_models_are_these() {
        let mut ids: Vec<&str> = MODELS
            .iter()
            .filter(|e| e.asymmetric)
            .map(|e| e.id)
            .collect();
        ids.sort_unstable();
        assert_eq!(
            ids,
            [
                "coulomb_viscous",
                "gms",
                "improved_armstrong",
                "improved_lugre",
                "improved_static",
                "karnopp",
                "lugre",
                "static_armstrong",
                "static_coulomb_viscous",
                "stribeck_exp",
                "stribeck_lorentz",
                "tustin",
                "viscous",
            ]
        );
        // A symmetric model refuses a negative set, naming the reason.
        let err = build_model(&ModelSpec {
            model: "dahl".into(),
            params: serde_json::json!({"negative": {}}),
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("no separate parameter set"),
            "{err}"
        );
    }

    #[test]
    fn gms_negative_set_overlays_the_positive_one_and_shares_the_elements() {
        let spec = ModelSpec {
            model: "gms".into(),
            params: serde_json::json!({
                "k": [2e4, 1e4], "alpha": [0.5, 0.5], "fc": 2.0, "fs": 3.0,
                "negative": {"fc": 1.5, "fs": 2.5}
            }),
        };
        let m = build_model(&spec).unwrap();
        let p = m.params_json();
        // Copied from the positive set: the elements and everything not given.
        assert_eq!(p["negative"]["k"], serde_json::json!([2e4, 1e4]));
        assert_eq!(p["negative"]["alpha"], serde_json::json!([0.5, 0.5]));
        assert_eq!(p["negative"]["vs"], p["vs"]);
        assert_eq!(p["negative"]["fc"], 1.5);
        assert_eq!(p["negative"]["fs"], 2.5);
        assert!(p["negative"].get("negative").is_none());
        // The steady state follows each side's levels.
        let fast = 1.0;
        let pos = m.steady_state(fast).unwrap() - p["sigma2"].as_f64().unwrap() * fast;
        let neg = m.steady_state(-fast).unwrap() + p["sigma2"].as_f64().unwrap() * fast;
        assert!(
            (pos - 2.0).abs() < 1e-9 && (neg + 1.5).abs() < 1e-9,
            "{pos} {neg}"
        );
        // Differing elements are rejected with the field and the rule.
        let err = build_model(&ModelSpec {
            model: "gms".into(),
            params: serde_json::json!({"negative": {"k": [1e4, 1e4, 1e4, 1e4]}}),
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("negative.k") && err.contains("shared"),
            "{err}"
        );
        let err = build_model(&ModelSpec {
            model: "gms".into(),
            params: serde_json::json!({"negative": {"fs": 0.5}}),
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("negative.fs"), "{err}");
    }
}
