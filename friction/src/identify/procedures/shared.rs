//! Groups of options several procedures take, each written once and `#[serde(flatten)]`ed
//! into a procedure's options type ([`super::typed`]): the keys stay top-level in `given`.

use super::typed::{Replicates, Whole};
use super::{Offset, checked_load, no_fitted_offset_with};
use crate::Load;
use crate::identify::FitError;
use schemars::JsonSchema;
use serde::Deserialize;

/// The terms of the measured force besides the friction law a regression or a replay takes:
/// a constant offset, friction per direction and a known load on the plant.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
pub struct ForceTerms {
    /// A constant in the measured force: true fits it (params.offset), a number is a known offset subtracted first
    #[serde(default)]
    pub offset: Offset,
    /// Fit the positive direction in params and the negative in params.negative
    #[serde(default)]
    pub asymmetric: bool,
    /// A known load: {"kind": "pendulum", mass, length, bottom}, {"kind": "spring", stiffness, rest} or {"kind": "constant", force}
    pub load: Option<Load>,
}

impl ForceTerms {
    /// `asymmetric`, refused with a fitted offset (the offset and the two Coulomb levels
    /// trade off exactly).
    pub fn asymmetric(&self) -> Result<bool, FitError> {
        no_fitted_offset_with(self.asymmetric, self.offset)
    }

    /// The known load, checked against its rules (none when absent).
    pub fn load(&self) -> Result<Load, FitError> {
        Ok(self.load.map(checked_load).transpose()?.unwrap_or_default())
    }
}

/// The seed of random draws: a whole number in `0..=u32::MAX`.
pub type Seed = Whole<0, { u32::MAX as u64 }>;

/// A moving-block bootstrap of the intervals and the seed of the random draws.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
pub struct Bootstrap {
    /// Bootstrap replicates for the intervals (absent: no bootstrap)
    pub bootstrap: Option<Replicates>,
    /// Seed of the random draws (bootstrap, population)
    #[serde(default = "seed")]
    pub seed: Seed,
}

impl Bootstrap {
    /// Replicates and seed, `None` without `bootstrap`.
    pub fn replicates(&self) -> Option<(usize, u64)> {
        self.bootstrap.map(|n| (n.0, self.seed.0))
    }
}

/// The seed when none is given.
pub fn seed() -> Seed {
    Whole(1)
}
