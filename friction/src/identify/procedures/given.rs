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
            .ok_or_else(|| FitError::Config {
                field: format!("given.{name}"),
                value: f64::NAN,
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Offset {
    /// No offset (absent or `false`).
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
            None => Err(FitError::Config {
                field: "given.offset".into(),
                value: f64::NAN,
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

/// A string given value.
pub(crate) fn given_str<'a>(given: &'a Given, name: &str) -> Option<&'a str> {
    given.get(name).and_then(Value::as_str)
}
