//! What `idim_ls` takes in `given`: its options, and the model's parameters it holds fixed.

use super::MAX_GAP_STEPS;
use crate::identify::procedures::options::{INERTIA, SPEED};
use crate::identify::procedures::shared::{Bootstrap, ForceTerms};
use crate::identify::procedures::typed::{Positive, Whole};
use schemars::JsonSchema;
use serde::Deserialize;

/// The options of `idim_ls`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
pub struct IdimLsOptions {
    /// Offset, per direction, known load.
    #[serde(flatten)]
    pub terms: ForceTerms,
    /// Known inertia (absent: fitted, or from the model's parameters)
    #[schemars(extend("x-unit" = INERTIA))]
    pub j: Option<Positive>,
    /// How the record is conditioned.
    #[serde(flatten)]
    pub conditioning: Conditioning,
    /// Bootstrap intervals.
    #[serde(flatten)]
    pub bootstrap: Bootstrap,
}

/// How a `t, x, u` record is conditioned for the regression: a fit's own, and a held-out
/// record's, conditioned as its fit was.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
pub struct Conditioning {
    /// Cut-off of the position filter (absent: from the bandwidth of u)
    #[schemars(extend("x-unit" = "Hz"))]
    pub cutoff_hz: Option<Positive>,
    /// Decimation factor after the filter (absent: from the bandwidth of u)
    pub decimation: Option<Whole<1, { u64::MAX }>>,
    /// Largest gap, in sample steps, resampled across (a larger one splits the record)
    #[serde(default = "max_gap_steps")]
    pub max_gap_steps: Positive,
    /// Speeds below it are left out (absent: 5 % of the speed's 99th percentile)
    #[schemars(extend("x-unit" = SPEED))]
    pub v_min: Option<Positive>,
    /// The force is a drive's held command (zero-order hold), not a measurement
    #[serde(default)]
    pub force_held: bool,
}

impl Default for Conditioning {
    /// Everything from the data.
    fn default() -> Conditioning {
        Conditioning {
            cutoff_hz: None,
            decimation: None,
            max_gap_steps: max_gap_steps(),
            v_min: None,
            force_held: false,
        }
    }
}

fn max_gap_steps() -> Positive {
    Positive(MAX_GAP_STEPS)
}

/// The model's parameters `idim_ls` holds fixed when given (known values).
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub struct Known {
    /// Viscous coefficient.
    pub fv: Option<f64>,
    /// Coulomb level.
    pub fc: Option<f64>,
    /// Breakaway level (second stage).
    pub fs: Option<f64>,
    /// Stribeck speed (second stage).
    pub vs: Option<f64>,
    /// Stribeck exponent (second stage; absent: the model's default).
    pub delta: Option<f64>,
}
