//! Errors of the friction library.

use std::fmt;

/// A parameter that breaks a model's rule, e.g. "fs (0.8) must be >= fc (1.2)".
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// The parameter's name as the registry names it (`bench models`) (e.g. `sigma0`, or `negative.fs`).
    pub field: String,
    /// Its offending value.
    pub value: f64,
    /// The rule it breaks, phrased after the value (e.g. "must be > 0").
    pub rule: String,
}

impl ParamError {
    /// Builds an error for `field` holding `value` that breaks `rule`.
    pub fn new(field: impl Into<String>, value: f64, rule: impl Into<String>) -> ParamError {
        ParamError {
            field: field.into(),
            value,
            rule: rule.into(),
        }
    }

    /// The same error for a field nested under `prefix` (e.g. the negative-motion set).
    pub fn nested(mut self, prefix: &str) -> ParamError {
        self.field = format!("{prefix}.{}", self.field);
        self
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}) {}", self.field, self.value, self.rule)
    }
}

impl std::error::Error for ParamError {}

/// Why a model could not be built from a `{"model": ID, "params": {...}}` document.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No model has this id.
    #[error("unknown model '{id}' (known: {known})")]
    UnknownModel {
        /// The id asked for.
        id: String,
        /// Every known id, comma separated.
        known: String,
    },
    /// The parameters are not a JSON object of the model's fields.
    #[error("model '{model}': bad parameters: {reason}")]
    BadParams {
        /// The model id.
        model: String,
        /// What serde said (names the field).
        reason: String,
    },
    /// A parameter breaks a rule of the model.
    #[error("model '{model}': parameter {source}")]
    Invalid {
        /// The model id.
        model: String,
        /// The rule broken.
        source: ParamError,
    },
}

/// Checks shared by every model's `validate`.
pub(crate) mod check {
    use super::ParamError;

    /// `value` must be finite.
    pub(crate) fn finite(field: &str, value: f64) -> Result<(), ParamError> {
        if value.is_finite() {
            Ok(())
        } else {
            Err(ParamError::new(field, value, "must be finite"))
        }
    }

    /// `value` must be finite and > 0.
    pub(crate) fn positive(field: &str, value: f64) -> Result<(), ParamError> {
        finite(field, value)?;
        if value > 0.0 {
            Ok(())
        } else {
            Err(ParamError::new(field, value, "must be > 0"))
        }
    }

    /// `value` must be finite and >= 0.
    pub(crate) fn non_negative(field: &str, value: f64) -> Result<(), ParamError> {
        finite(field, value)?;
        if value >= 0.0 {
            Ok(())
        } else {
            Err(ParamError::new(field, value, "must be >= 0"))
        }
    }

    /// `value` (named `field`) must be >= `other` (named `other_field`).
    pub(crate) fn at_least(
        field: &str,
        value: f64,
        other_field: &str,
        other: f64,
    ) -> Result<(), ParamError> {
        if value >= other {
            Ok(())
        } else {
            Err(ParamError::new(
                field,
                value,
                format!("must be >= {other_field} ({other})"),
            ))
        }
    }
}
