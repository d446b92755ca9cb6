//! Errors of the experiments crate: one type, lowercase messages naming the field, its value and
//! the limit or rule.

use std::fmt;

/// Which bench limit a value breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// `BenchLimits::torque_nm`.
    Torque,
    /// `BenchLimits::velocity_rad_s`.
    Velocity,
    /// `BenchLimits::position_window_rad` (a symmetric window around the run's start).
    Position,
}

impl LimitKind {
    fn unit(self) -> &'static str {
        match self {
            LimitKind::Torque => "N m",
            LimitKind::Velocity => "rad/s",
            LimitKind::Position => "rad",
        }
    }
}

impl fmt::Display for LimitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitKind::Torque => "torque limit",
            LimitKind::Velocity => "velocity limit",
            LimitKind::Position => "position window",
        })
    }
}

/// Why a spec, a plan or an analysis was rejected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The spec is not valid JSON/TOML, names an unknown kind, or has an unknown or mistyped field.
    #[error("spec: {0}")]
    Parse(String),
    /// One field of the spec cannot be read (an unknown kind, an unknown or mistyped field):
    /// `field` is its dotted path (`kind`, `params.velocities[1]`), taken from the
    /// deserialiser's position, never from the message. Shown path first, as a limit or a
    /// rule is: `params.settle_s: invalid type: string "long", expected f64`.
    #[error("{field}: {message}")]
    Field {
        /// The spec field, dotted with indices.
        field: String,
        /// What is wrong with it (serde's message).
        message: String,
    },
    /// A value exceeds a bench limit: `params.velocities[3] (12 rad/s) exceeds the velocity
    /// limit (10 rad/s)`.
    #[error("{field} ({} {}) exceeds the {which} ({})", fmt_num(*.value), .which.unit(), limit_text(*.which, *.limit))]
    Limit {
        /// The spec field, dotted with indices (`params.velocities[3]`), or a segment label.
        field: String,
        /// The offending value (a magnitude) in the limit's unit.
        value: f64,
        /// Which limit.
        which: LimitKind,
        /// The limit's value.
        limit: f64,
    },
    /// A value breaks a rule of its kind: "params.repeats (0) must be >= 1".
    #[error("{field} ({value}) {rule}")]
    Invalid {
        /// The spec field, dotted.
        field: String,
        /// The offending value, as written.
        value: String,
        /// The rule, phrased after the value.
        rule: String,
    },
    /// The bench limits themselves are unusable: "bench limit period_s (0) must be > 0".
    #[error("bench limit {field} ({value}) {rule}")]
    BadLimits {
        /// The `BenchLimits` field.
        field: &'static str,
        /// Its value.
        value: f64,
        /// The rule.
        rule: &'static str,
    },
    /// The samples do not fit the plan (no sample of a segment the analysis needs, etc.).
    #[error("analysis: {0}")]
    Analysis(String),
}

fn fmt_num(x: f64) -> String {
    // Six significant digits, printed shortest: 60.000000001 → 60, 1.23456789e-5 → 0.0000123457.
    let rounded: f64 = format!("{x:.5e}").parse().unwrap_or(x);
    format!("{rounded}")
}

fn limit_text(which: LimitKind, limit: f64) -> String {
    match which {
        LimitKind::Position => format!("±{} rad", fmt_num(limit)),
        _ => format!("{} {}", fmt_num(limit), which.unit()),
    }
}

impl Error {
    /// A field that cannot be read.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Field {
            field: field.into(),
            message: message.into(),
        }
    }

    /// A deserialisation error at the path where it happened (under `prefix`, e.g. `params`);
    /// an error at the root is named by `prefix` itself, or `spec` without one.
    pub(crate) fn at_path(prefix: &str, e: serde_path_to_error::Error<serde_json::Error>) -> Error {
        let path = e.path().to_string();
        let field = match (prefix, path.as_str()) {
            ("", ".") => "spec".to_string(),
            (p, ".") => p.to_string(),
            ("", path) => path.to_string(),
            (p, path) => format!("{p}.{path}"),
        };
        let message = e.into_inner().to_string();
        Error::Field { field, message }
    }

    /// A field breaking a rule.
    pub fn invalid(
        field: impl Into<String>,
        value: impl fmt::Display,
        rule: impl Into<String>,
    ) -> Error {
        Error::Invalid {
            field: field.into(),
            value: value.to_string(),
            rule: rule.into(),
        }
    }

    /// A value beyond a bench limit.
    pub fn limit(field: impl Into<String>, value: f64, which: LimitKind, limit: f64) -> Error {
        Error::Limit {
            field: field.into(),
            value,
            which,
            limit,
        }
    }
}

/// Field checks shared by every kind; `field` is the dotted name used in messages.
pub(crate) mod check {
    use super::Error;

    /// Finite and > 0.
    pub(crate) fn positive(field: &str, x: f64) -> Result<(), Error> {
        if x.is_finite() && x > 0.0 {
            Ok(())
        } else {
            Err(Error::invalid(field, x, "must be > 0"))
        }
    }

    /// Finite and >= 0.
    pub(crate) fn non_negative(field: &str, x: f64) -> Result<(), Error> {
        if x.is_finite() && x >= 0.0 {
            Ok(())
        } else {
            Err(Error::invalid(field, x, "must be >= 0"))
        }
    }

    /// Finite.
    pub(crate) fn finite(field: &str, x: f64) -> Result<(), Error> {
        if x.is_finite() {
            Ok(())
        } else {
            Err(Error::invalid(field, x, "must be finite"))
        }
    }

    /// At least `min` (an integer count).
    pub(crate) fn at_least(field: &str, n: u32, min: u32) -> Result<(), Error> {
        if n >= min {
            Ok(())
        } else {
            Err(Error::invalid(field, n, format!("must be >= {min}")))
        }
    }

    /// Non-empty list.
    pub(crate) fn non_empty<T>(field: &str, v: &[T]) -> Result<(), Error> {
        if v.is_empty() {
            Err(Error::invalid(field, "[]", "must not be empty"))
        } else {
            Ok(())
        }
    }
}
