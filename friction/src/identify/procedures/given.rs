//! Reading the values the user gives (`given`): numbers, strings, the offset and the bootstrap.

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

/// A positive given value, or an error naming it.
pub(crate) fn given_positive(given: &Given, name: &str) -> Result<Option<f64>, FitError> {
    match given_f64(given, name)? {
        Some(x) if x <= 0.0 => Err(FitError::Config {
            field: format!("given.{name}"),
            value: x,
            rule: "must be > 0".into(),
        }),
        x => Ok(x),
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

/// `given.offset`: `true`, `false` or a number.
pub(crate) fn given_offset(given: &Given) -> Result<Offset, FitError> {
    match given.get("offset") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(Offset::None),
        Some(Value::Bool(true)) => Ok(Offset::Fit),
        Some(v) => match v.as_f64().filter(|x| x.is_finite()) {
            Some(c) => Ok(Offset::Known(c)),
            None => Err(FitError::Setting {
                field: "given.offset".into(),
                rule: format!(
                    "must be true (fit a constant offset), false, or a known offset [N or N m] (got {v})"
                ),
            }),
        },
    }
}

/// `given.bootstrap` (replicates, at least [`crate::identify::stats::MIN_REPLICATES`]) and
/// `given.seed` (default 1); `None` without `bootstrap`.
pub(crate) fn given_bootstrap(given: &Given) -> Result<Option<(usize, u64)>, FitError> {
    let Some(n) = given_f64(given, "bootstrap")? else {
        return Ok(None);
    };
    let min = crate::identify::stats::MIN_REPLICATES as f64;
    if n.fract() != 0.0 || !(min..=100_000.0).contains(&n) {
        return Err(FitError::Config {
            field: "given.bootstrap".into(),
            value: n,
            rule: format!("must be a whole number of replicates in {min}..=100000"),
        });
    }
    let seed = given_f64(given, "seed")?.unwrap_or(1.0);
    if seed.fract() != 0.0 || seed < 0.0 {
        return Err(FitError::Config {
            field: "given.seed".into(),
            value: seed,
            rule: "must be a whole number >= 0".into(),
        });
    }
    Ok(Some((n as usize, seed as u64)))
}

/// A boolean given value, or an error naming it.
pub(crate) fn given_bool(given: &Given, name: &str) -> Result<Option<bool>, FitError> {
    match given.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(FitError::Setting {
            field: format!("given.{name}"),
            rule: format!("must be true or false (got {v})"),
        }),
    }
}

/// `given.asymmetric = true` with a fitted offset is refused: over moving samples
/// `[v > 0] + [v < 0] = 1`, so a constant and the two Coulomb levels trade off exactly.
pub(crate) fn asymmetric_without_fitted_offset(
    given: &Given,
    offset: Offset,
) -> Result<bool, FitError> {
    let asymmetric = given_bool(given, "asymmetric")?.unwrap_or(false);
    no_fitted_offset_with(asymmetric, offset)
}

/// `asymmetric`, refused with a fitted offset (see [`asymmetric_without_fitted_offset`]).
pub(crate) fn no_fitted_offset_with(asymmetric: bool, offset: Offset) -> Result<bool, FitError> {
    if asymmetric && offset.fitted() {
        return Err(FitError::Setting {
            field: "given.offset".into(),
            rule: "cannot be fitted with given.asymmetric = true: a constant offset c and the two Coulomb levels (fc + c, negative.fc - c) explain the data equally well; give a known offset [N or N m] or none".into(),
        });
    }
    Ok(asymmetric)
}

/// A string given value.
pub(crate) fn given_str<'a>(given: &'a Given, name: &str) -> Option<&'a str> {
    given.get(name).and_then(Value::as_str)
}

/// `given.load`: a known load on the plant ([`crate::load`]), checked; none when absent.
pub(crate) fn given_load(given: &Given) -> Result<crate::Load, FitError> {
    let Some(v) = given.get("load").filter(|v| !v.is_null()) else {
        return Ok(crate::Load::None);
    };
    let load: crate::Load = serde_json::from_value(v.clone()).map_err(|e| FitError::Setting {
        field: "given.load".into(),
        rule: format!(
            "must be {{\"kind\": \"pendulum\", \"mass\", \"length\", \"bottom\"}}, {{\"kind\": \"spring\", \"stiffness\", \"rest\"}} or {{\"kind\": \"constant\", \"force\"}} ({e})"
        ),
    })?;
    checked_load(load)
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
