//! What `power_rls` takes in `given`.

use super::{ALPHA, Discretisation, P_N};
use crate::identify::procedures::shared::ForceTerms;
use crate::identify::procedures::typed::Positive;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The options of `power_rls`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
pub struct PowerRlsOptions {
    /// Bandwidth of the state-variable filter
    #[serde(default = "p_n")]
    #[schemars(extend("x-unit" = "rad/s"))]
    pub p_n: Positive,
    /// Speeds below it are left out (absent: from the data)
    #[schemars(extend("x-unit" = "rad/s or m/s"))]
    pub v_min: Option<Positive>,
    /// Initial covariance scale
    #[serde(default = "alpha")]
    pub alpha: Positive,
    /// Discretisation of the filter
    #[serde(default)]
    pub discretisation: Discretisation,
    /// Weighting of the samples by speed
    #[serde(default)]
    pub eta: Eta,
    /// Largest gap, in sample steps, resampled across (a larger one splits the record)
    #[serde(default = "max_gap_steps")]
    pub max_gap_steps: Positive,
    /// Offset, per direction, known load.
    #[serde(flatten)]
    pub terms: ForceTerms,
}

/// The weighting `given.eta` reports the estimate of (all three are computed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Eta {
    /// `eta = v^2`: the power equation.
    #[default]
    V2,
    /// `eta = 1`.
    One,
    /// `eta = 1` above `v_min`, else 0.
    Threshold,
}

fn p_n() -> Positive {
    Positive(P_N)
}
fn alpha() -> Positive {
    Positive(ALPHA)
}
fn max_gap_steps() -> Positive {
    Positive(10.0)
}
