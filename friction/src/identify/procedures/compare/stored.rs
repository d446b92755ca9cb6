//! What a stored comparison records of how it was made (its `options`, beside its [`Table`]):
//! one type for both writers, `bench compare` / `POST /api/comparisons` and the campaign's
//! comparison, so that the REST schema and the dashboard read one shape. A key only one writer
//! knows is absent from the other's record.
//!
//! [`Table`]: super::Table

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How the data drove the models, as the comparison was asked for (an inverse comparison fits
/// by IDIM-LS instead of replaying).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReplayName {
    /// The measured velocity drives each model; the residual is friction.
    Velocity,
    /// The applied torque drives each model coupled to the plant mass; the residual is position.
    Torque,
    /// Each model fitted by IDIM-LS on one `t, x, u` record; the residual is the force.
    Inverse,
}

/// The CSV files used besides runs (not stored with the comparison, named here).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CsvFiles {
    /// Estimation files.
    pub estimate: Vec<String>,
    /// Validation files.
    pub validate: Vec<String>,
}

/// A stored parameter set a model's fit started from (the bench's own fits of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StartSource {
    /// The set's id.
    pub set_id: i64,
    /// The set's name.
    pub set_name: String,
    /// The model the set is of (a contained model's set may start a larger one).
    pub model: String,
    /// The values taken from it.
    pub values: Map<String, Value>,
    /// What was taken, in words.
    pub note: String,
}

/// A stored comparison's `options`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StoredOptions {
    /// How the data drove the models.
    pub replay: ReplayName,
    /// `|v|` below this is presliding \[m/s or rad/s\].
    pub presliding_velocity: f64,
    /// Displacement since the last reversal within which motion is presliding \[m or rad\].
    #[serde(default)]
    pub presliding_displacement: Option<f64>,
    /// Plant mass or inertia of a torque replay \[kg or kg m²\] (null otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    /// Levenberg–Marquardt iteration cap per model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iters: Option<u64>,
    /// Wall-time budget per model fit \[s\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// Whether a constant force offset was fitted per model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<bool>,
    /// The IDIM-LS options of an inverse comparison (empty otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<Map<String, Value>>,
    /// CSV files used besides runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<CsvFiles>,
    /// The stored sets each model's fit started from, by model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_from: Option<BTreeMap<String, Vec<StartSource>>>,
    /// How the velocity was read (the campaign's: the encoder's centred difference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<String>,
    /// The speed between samples of the replay (the campaign's: `displacement`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    /// The first seconds of each validation run replayed but not scored \[s\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_warmup_s: Option<f64>,
    /// The campaign whose comparison this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<i64>,
    /// Which parameters were scored (the campaign's: each model's final campaign set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
}

impl StoredOptions {
    /// The options of `replay` with the presliding speed `presliding_velocity`, nothing else set.
    pub fn new(replay: ReplayName, presliding_velocity: f64) -> StoredOptions {
        StoredOptions {
            replay,
            presliding_velocity,
            presliding_displacement: None,
            mass: None,
            max_iters: None,
            timeout_s: None,
            offset: None,
            given: None,
            csv: None,
            start_from: None,
            velocity: None,
            speed: None,
            validation_warmup_s: None,
            campaign: None,
            params: None,
        }
    }
}
