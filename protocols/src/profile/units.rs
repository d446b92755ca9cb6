//! Engineering units a profile may declare, and their conversion to SI.
//!
//! A signal's value is `(raw × scale + offset) × factor`, where `factor` converts the declared
//! unit to its SI unit (rpm → rad/s is 2π/60). Everything above the profile sees SI only.

use std::f64::consts::PI;

/// A declared engineering unit and its SI equivalent.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// As written in the profile (`"rpm"`, `"mN m"`, `""`).
    pub declared: String,
    /// The SI unit values are reported in (`"rad/s"`, `"N m"`, `""`).
    pub si: &'static str,
    /// Multiply a value in the declared unit by this to get SI.
    pub factor: f64,
}

/// `(declared, si, factor)` for every known unit.
const UNITS: &[(&str, &str, f64)] = &[
    ("", "", 1.0),
    ("count", "count", 1.0),
    ("%", "%", 1.0),
    ("rad", "rad", 1.0),
    ("mrad", "rad", 1e-3),
    ("deg", "rad", PI / 180.0),
    ("rev", "rad", 2.0 * PI),
    ("rad/s", "rad/s", 1.0),
    ("deg/s", "rad/s", PI / 180.0),
    ("rev/s", "rad/s", 2.0 * PI),
    ("rpm", "rad/s", 2.0 * PI / 60.0),
    ("N m", "N m", 1.0),
    ("mN m", "N m", 1e-3),
    ("cN m", "N m", 1e-2),
    ("kN m", "N m", 1e3),
    ("N", "N", 1.0),
    ("kg", "kg", 1.0),
    ("g", "kg", 1e-3),
    ("s", "s", 1.0),
    ("ms", "s", 1e-3),
    ("us", "s", 1e-6),
    ("Hz", "Hz", 1.0),
    ("A", "A", 1.0),
    ("mA", "A", 1e-3),
    ("V", "V", 1.0),
    ("W", "W", 1.0),
    ("degC", "degC", 1.0),
];

impl Unit {
    /// Looks a declared unit up (`"Nm"` and `"N·m"` are accepted for `"N m"`).
    pub fn parse(declared: &str) -> Option<Unit> {
        let canon = match declared {
            "Nm" | "N·m" | "N.m" => "N m",
            "mNm" | "mN·m" => "mN m",
            other => other,
        };
        UNITS
            .iter()
            .find(|(d, _, _)| *d == canon)
            .map(|&(_, si, factor)| Unit {
                declared: declared.to_string(),
                si,
                factor,
            })
    }

    /// The declared units the profile format knows, for error messages.
    pub fn known() -> String {
        UNITS
            .iter()
            .map(|(d, _, _)| format!("\"{d}\""))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
