//! The options a procedure takes in `given`, declared with their type, default and meaning: one
//! declaration per procedure ([`super::Procedure::options`]) from which the key check before a
//! fit, the JSON Schema of `GET /api/procedures` and the dashboard's fit form all come.

use serde_json::{Map, Value, json};

/// The unit of a force or torque, as the bench's geometry has it.
pub const FORCE: &str = "N or N m";
/// The unit of an inertia or a mass.
pub const INERTIA: &str = "kg m² or kg";
/// The unit of a speed.
pub const SPEED: &str = "rad/s or m/s";

/// The lower bound of a number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Min {
    /// Any finite number.
    Any,
    /// Greater than zero.
    Positive,
}

/// What an option's value must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty {
    /// `true` or `false`.
    Bool,
    /// A finite number.
    Number {
        /// Its unit (SI; empty: none).
        unit: &'static str,
        /// Its lower bound.
        min: Min,
    },
    /// A whole number.
    Integer {
        /// The smallest.
        min: u64,
        /// The largest.
        max: u64,
    },
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// `true` (fit a constant), `false`, or a known value.
    Offset {
        /// The known value's unit.
        unit: &'static str,
    },
    /// A JSON object (its keys are checked by the procedure).
    Object,
    /// Parameter names: a list, or one comma-separated string.
    Names,
}

/// An option's default when absent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Default {
    /// None, or one chosen from the data (the description says how).
    FromData,
    /// This boolean.
    Bool(bool),
    /// This number.
    Number(f64),
    /// This string.
    Str(&'static str),
}

/// One key of `given` a procedure takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Opt {
    /// The key.
    pub name: &'static str,
    /// What its value must be.
    pub ty: Ty,
    /// Its value when absent.
    pub default: Default,
    /// One line on what it does.
    pub description: &'static str,
}

impl Opt {
    /// `true` or `false`, `default` when absent.
    pub const fn flag(name: &'static str, default: bool, description: &'static str) -> Opt {
        Opt {
            name,
            ty: Ty::Bool,
            default: Default::Bool(default),
            description,
        }
    }

    /// A number in `unit`, chosen from the data (or not used) when absent.
    pub const fn number(
        name: &'static str,
        unit: &'static str,
        min: Min,
        description: &'static str,
    ) -> Opt {
        Opt {
            name,
            ty: Ty::Number { unit, min },
            default: Default::FromData,
            description,
        }
    }

    /// A whole number in `min..=max`.
    pub const fn integer(
        name: &'static str,
        min: u64,
        max: u64,
        default: Default,
        description: &'static str,
    ) -> Opt {
        Opt {
            name,
            ty: Ty::Integer { min, max },
            default,
            description,
        }
    }

    /// One of `choices`, the first when absent.
    pub const fn choice(
        name: &'static str,
        choices: &'static [&'static str],
        description: &'static str,
    ) -> Opt {
        Opt {
            name,
            ty: Ty::Choice(choices),
            default: Default::Str(choices[0]),
            description,
        }
    }

    /// A JSON object.
    pub const fn object(name: &'static str, description: &'static str) -> Opt {
        Opt {
            name,
            ty: Ty::Object,
            default: Default::FromData,
            description,
        }
    }

    /// The same option with a fixed default.
    pub const fn or(self, default: f64) -> Opt {
        Opt {
            default: Default::Number(default),
            ..self
        }
    }

    /// Checks `value` (`null` counts as absent); the error says what it must be.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        if value.is_null() || self.accepts(value) {
            return Ok(());
        }
        Err(format!("must be {} (got {value})", self.expected()))
    }

    fn accepts(&self, v: &Value) -> bool {
        let finite = v.as_f64().filter(|x| x.is_finite());
        match self.ty {
            Ty::Bool => v.is_boolean(),
            Ty::Number { min, .. } => finite.is_some_and(|x| min == Min::Any || x > 0.0),
            Ty::Integer { min, max } => {
                finite.is_some_and(|x| x.fract() == 0.0 && x >= min as f64 && x <= max as f64)
            }
            Ty::Choice(choices) => v.as_str().is_some_and(|s| choices.contains(&s)),
            Ty::Offset { .. } => v.is_boolean() || finite.is_some(),
            Ty::Object => v.is_object(),
            Ty::Names => {
                v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            }
        }
    }

    /// What a value must be, in words.
    pub fn expected(&self) -> String {
        let unit = |u: &str| {
            if u.is_empty() {
                String::new()
            } else {
                format!(" [{u}]")
            }
        };
        match self.ty {
            Ty::Bool => "true or false".into(),
            Ty::Number {
                unit: u,
                min: Min::Any,
            } => format!("a number{}", unit(u)),
            Ty::Number {
                unit: u,
                min: Min::Positive,
            } => format!("a number > 0{}", unit(u)),
            Ty::Integer { min, max } => format!("a whole number in {min}..={max}"),
            Ty::Choice(c) => format!("one of \"{}\"", c.join("\", \"")),
            Ty::Offset { unit: u } => {
                format!(
                    "true (fit a constant offset), false, or a known offset{}",
                    unit(u)
                )
            }
            Ty::Object => "a JSON object".into(),
            Ty::Names => "a list of parameter names".into(),
        }
    }

    /// Its JSON Schema: type, bounds, enum, default, description (and the unit as `x-unit`).
    pub fn schema(&self) -> Value {
        let mut s = match self.ty {
            Ty::Bool => json!({"type": "boolean"}),
            Ty::Number { unit, min } => {
                let mut s = json!({"type": "number", "x-unit": unit});
                if min == Min::Positive {
                    s["exclusiveMinimum"] = json!(0);
                }
                s
            }
            Ty::Integer { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
            Ty::Choice(c) => json!({"type": "string", "enum": c}),
            Ty::Offset { unit } => json!({"type": ["boolean", "number"], "x-unit": unit}),
            Ty::Object => json!({"type": "object"}),
            Ty::Names => json!({"anyOf": [
                {"type": "array", "items": {"type": "string"}},
                {"type": "string"}
            ]}),
        };
        s["title"] = json!(self.name);
        s["description"] = json!(self.description);
        match self.default {
            Default::FromData => {}
            Default::Bool(b) => s["default"] = json!(b),
            Default::Number(x) => s["default"] = json!(x),
            Default::Str(x) => s["default"] = json!(x),
        }
        s
    }
}

/// The JSON Schema of a `given` object taking `options` (and any other key when
/// `open`, e.g. the model's parameters as known values).
pub fn schema(options: &[Opt], open: bool) -> Value {
    let properties: Map<String, Value> = options
        .iter()
        .map(|o| (o.name.to_string(), o.schema()))
        .collect();
    json!({"type": "object", "properties": properties, "additionalProperties": open})
}

/// `offset`: a constant term in the measured force, fitted or known.
pub const OFFSET: Opt = Opt {
    name: "offset",
    ty: Ty::Offset { unit: FORCE },
    default: Default::Bool(false),
    description: "A constant in the measured force: true fits it (params.offset), a number is a known offset subtracted first",
};
/// `bootstrap`: replicates for bootstrap intervals.
pub const BOOTSTRAP: Opt = Opt::integer(
    "bootstrap",
    crate::identify::stats::MIN_REPLICATES as u64,
    100_000,
    Default::FromData,
    "Bootstrap replicates for the intervals (absent: no bootstrap)",
);
/// `seed`: the random seed of a bootstrap or a population.
pub const SEED: Opt = Opt::integer(
    "seed",
    0,
    u32::MAX as u64,
    Default::Number(1.0),
    "Seed of the random draws (bootstrap, population)",
);
/// `asymmetric`: one friction law per direction.
pub const ASYMMETRIC: Opt = Opt::flag(
    "asymmetric",
    false,
    "Fit the positive direction in params and the negative in params.negative",
);
/// `load`: a known load on the plant.
pub const LOAD: Opt = Opt::object(
    "load",
    "A known load: {\"kind\": \"pendulum\", mass, length, bottom}, {\"kind\": \"spring\", stiffness, rest} or {\"kind\": \"constant\", force}",
);
/// `max_gap_steps`: the largest gap in the samples resampled across.
pub const MAX_GAP_STEPS: Opt = Opt::number(
    "max_gap_steps",
    "",
    Min::Positive,
    "Largest gap, in sample steps, resampled across (a larger one splits the record)",
)
.or(10.0);
/// `j`: a known inertia.
pub const J: Opt = Opt::number(
    "j",
    INERTIA,
    Min::Positive,
    "Known inertia (absent: fitted, or from the model's parameters)",
);
/// `params`: values of the model's parameters (fixed and start values).
pub const PARAMS: Opt = Opt::object(
    "params",
    "Values of the model's parameters: the fixed ones and the start values",
);
/// `max_iters`: an iteration budget.
pub const MAX_ITERS: Opt = Opt::integer(
    "max_iters",
    1,
    1_000_000,
    Default::FromData,
    "Most iterations of the solver",
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every procedure's schema takes its defaults, and each option refuses a value of
    /// another type with the key's expected type in words.
    #[test]
    fn each_option_accepts_its_default_and_refuses_a_wrong_type() {
        for p in super::super::PROCEDURES {
            let super::super::Options::Listed(opts) = p.options else {
                continue;
            };
            for o in opts {
                let schema = o.schema();
                if let Some(d) = schema.get("default") {
                    assert_eq!(o.check(d), Ok(()), "{}.{} default {d}", p.name, o.name);
                }
                let wrong = match o.ty {
                    Ty::Bool | Ty::Offset { .. } | Ty::Names => json!({"a": 1}),
                    _ => json!([true]),
                };
                let e = o.check(&wrong).unwrap_err();
                assert!(e.starts_with(&format!("must be {}", o.expected())), "{e}");
                assert!(!e.contains("NaN"), "{e}");
                assert_eq!(schema["title"], o.name);
                assert!(!o.description.is_empty(), "{}.{}", p.name, o.name);
            }
        }
    }

    #[test]
    fn numbers_integers_and_choices_are_checked_against_their_bounds() {
        assert!(
            J.check(&json!(0.0))
                .unwrap_err()
                .contains("a number > 0 [kg m² or kg]")
        );
        assert!(J.check(&json!(0.2)).is_ok());
        assert!(
            BOOTSTRAP
                .check(&json!(19))
                .unwrap_err()
                .contains("20..=100000")
        );
        assert!(BOOTSTRAP.check(&json!(20.5)).is_err());
        let hold = Opt::choice("hold", &["linear", "zoh"], "");
        assert_eq!(
            hold.check(&json!("foh")).unwrap_err(),
            "must be one of \"linear\", \"zoh\" (got \"foh\")"
        );
        assert!(OFFSET.check(&json!(-0.3)).is_ok() && OFFSET.check(&json!("yes")).is_err());
        assert_eq!(
            schema(&[J], false)["properties"]["j"]["exclusiveMinimum"],
            0
        );
    }
}
