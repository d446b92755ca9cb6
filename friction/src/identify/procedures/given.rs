//! Reading the values the user gives (`given`): the model's parameters as known values, the
//! offset, and the rules options share (options types: [`super::typed`]).

use super::Given;
use crate::identify::FitError;
use serde_json::Value;

/// A numeric given value, or an error naming it.
pub(crate) fn given_f64(given: &Given, name: &str) -> Result<Option<f64>, FitError> {
    match given.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| FitError::Setting {
                field: format!("given.{name}"),
                rule: format!("must be a finite number (got {v})"),
            }),
    }
}

/// What `given.offset` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Offset {
    /// No offset (absent or `false`).
    #[default]
    None,
    /// Fit a constant offset (`true`).
    Fit,
    /// A known offset [N or N m], subtracted from the measurement.
    Known(f64),
}

impl Offset {
    /// True when an offset is fitted.
    pub fn fitted(self) -> bool {
        self == Offset::Fit
    }

    /// The known value (0 unless [`Offset::Known`]).
    pub fn known(self) -> f64 {
        match self {
            Offset::Known(c) => c,
            _ => 0.0,
        }
    }
}

/// `given.asymmetric = true` with a fitted offset is refused: over moving samples
/// `[v > 0] + [v < 0] = 1`, so a constant and the two Coulomb levels trade off exactly.
pub(crate) fn no_fitted_offset_with(asymmetric: bool, offset: Offset) -> Result<bool, FitError> {
    if asymmetric && offset.fitted() {
        return Err(FitError::Setting {
            field: "given.offset".into(),
            rule: "cannot be fitted with given.asymmetric = true: a constant offset c and the two Coulomb levels (fc + c, negative.fc - c) explain the data equally well; give a known offset [N or N m] or none".into(),
        });
    }
    Ok(asymmetric)
}

/// A known load that keeps its rules, or an error naming the field (`given.load.length`).
pub(crate) fn checked_load(load: crate::Load) -> Result<crate::Load, FitError> {
    load.validate().map_err(|e| FitError::Config {
        field: format!("given.load.{}", e.field),
        value: e.value,
        rule: format!("must be {}", e.rule),
    })?;
    Ok(load)
}
