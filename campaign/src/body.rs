//! What a client asks a daemon's campaign to do ([`StartCampaign`]): the body of
//! `POST /api/campaigns` and the `campaign` of a schedule entry, one type for both, read into
//! a checked [`Request`].

use super::{DEFAULT_MODELS, Request, RequestError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The budget when none is given \[min\] (as `bench characterise`).
pub const DEFAULT_BUDGET_MIN: f64 = 20.0;

/// A campaign asked of the daemon: `POST /api/campaigns`, or a schedule entry's `campaign`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartCampaign {
    /// Models to fit and compare (default all four).
    #[schemars(length(min = 1))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<CampaignModel>>,
    /// Bench time the campaign may use \[min\] (default 20, at most 1440): a step that would
    /// run past it is not started.
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 1440))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_min: Option<f64>,
}

impl StartCampaign {
    /// The request it makes, checked (the error names `models` or `budget_min`).
    pub fn request(&self) -> Result<Request, RequestError> {
        let request = Request {
            models: match &self.models {
                Some(ms) => ms.iter().map(|m| m.id().to_string()).collect(),
                None => DEFAULT_MODELS.map(String::from).to_vec(),
            },
            budget_min: self.budget_min.unwrap_or(DEFAULT_BUDGET_MIN),
            truth: None,
            sim_params: None,
        };
        request.check()?;
        Ok(request)
    }
}

/// A model a campaign fits in the documented order ([`super::KNOWN_MODELS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CampaignModel {
    /// Coulomb and viscous friction.
    CoulombViscous,
    /// Stribeck curve, exponential.
    StribeckExp,
    /// LuGre.
    Lugre,
    /// Generalized Maxwell-slip.
    Gms,
}

impl CampaignModel {
    /// The model id.
    pub fn id(self) -> &'static str {
        match self {
            CampaignModel::CoulombViscous => "coulomb_viscous",
            CampaignModel::StribeckExp => "stribeck_exp",
            CampaignModel::Lugre => "lugre",
            CampaignModel::Gms => "gms",
        }
    }
}
