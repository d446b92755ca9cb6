//! A procedure's options as its own serde type: `given` is parsed once, where the procedure
//! starts, into that type (a bad value's error naming its key; a key the type lacks is refused
//! before, [`super::Procedure::check_given`]), and the JSON Schema every front end reads (`GET
//! /api/procedures`, the dashboard's fit form, `bench fit`) is derived from the same type, so
//! the keys, their types, defaults and meanings are written once. Options several procedures
//! take are groups ([`super::shared`]) `#[serde(flatten)]`ed into the type.

use super::options::FORCE;
use super::{Given, Offset};
use crate::identify::FitError;
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings, json_schema};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// A procedure's options type: its JSON Schema and the check of `given` against it.
#[derive(Clone, Copy, Debug)]
pub struct Typed {
    /// The JSON Schema of the options (an object).
    schema_of: fn() -> Value,
    /// Parses the procedure's own keys of `given` into the type, only to check them.
    check: fn(&Given) -> Result<(), FitError>,
}

/// The options type `T` as the registry holds it.
pub const fn typed<T: DeserializeOwned + JsonSchema>() -> Typed {
    Typed {
        schema_of: schema_of::<T>,
        check: |own| parse::<T>(own).map(drop),
    }
}

impl Typed {
    /// The JSON Schema, taking any other key when `open` (the model's parameters).
    pub fn schema(&self, open: bool) -> Value {
        let mut s = (self.schema_of)();
        s["additionalProperties"] = Value::Bool(open);
        s
    }

    /// The keys.
    pub fn names(&self) -> Vec<String> {
        (self.schema_of)()["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether the procedure's own keys of `given` parse.
    pub fn check(&self, own: &Given) -> Result<(), FitError> {
        (self.check)(own)
    }
}

/// `own` (the procedure's keys of `given`; `null` counts as absent) as `T`; an error names the
/// key at fault, e.g. "given.fn_load is refused: must be a number > 0 (got -1)".
pub fn parse<T: DeserializeOwned>(own: &Given) -> Result<T, FitError> {
    let present: Map<String, Value> = own
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let refused = |key: &dyn std::fmt::Display, e: &serde_json::Error| FitError::Setting {
        field: format!("given.{key}"),
        rule: format!("is refused: {e}"),
    };
    let e = match serde_path_to_error::deserialize(Value::Object(present.clone())) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    if e.path().iter().next().is_some() {
        return Err(refused(e.path(), e.inner()));
    }
    // A key of a `#[serde(flatten)]`ed group (shared options) is read from serde's buffer,
    // which keeps no path: the key at fault is the one that is refused on its own (every
    // option has a default, so one key alone parses unless its value is bad).
    for (key, value) in &present {
        let alone = Value::Object(Map::from_iter([(key.clone(), value.clone())]));
        if let Err(e) = serde_path_to_error::deserialize::<_, T>(alone) {
            return Err(match e.path().iter().next() {
                Some(_) => refused(e.path(), e.inner()),
                None => refused(key, e.inner()),
            });
        }
    }
    Err(refused(e.path(), e.inner()))
}

/// The JSON Schema of `T` as the fit form reads it: subschemas inline, each property titled by
/// its key, and an optional key's type without `null` (absent and `null` mean the same).
fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(o) = schema.as_object_mut() {
        o.remove("title");
        o.remove("description");
    }
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (key, p) in props.iter_mut() {
            p["title"] = Value::String(key.clone());
            as_enum(p);
            if let Some(Value::Array(types)) = p.get("type") {
                let not_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                p["type"] = match not_null.as_slice() {
                    [one] => one.clone(),
                    _ => Value::Array(not_null),
                };
            }
        }
    }
    schema
}

/// A choice of strings (a unit-variant enum, each variant documented, which schemars writes as
/// `oneOf` of `const`s) as the fit form reads it: `enum`.
fn as_enum(p: &mut Value) {
    let Some(Value::Array(variants)) = p.get("oneOf") else {
        return;
    };
    let consts: Option<Vec<Value>> = variants.iter().map(|v| v.get("const").cloned()).collect();
    if let (Some(consts), Some(o)) = (consts, p.as_object_mut()) {
        o.remove("oneOf");
        o.insert("type".into(), "string".into());
        o.insert("enum".into(), Value::Array(consts));
    }
}

/// The options of a procedure that takes only `offset`.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffsetOnly {
    /// A constant in the measured force: true fits it (params.offset), a number is a known offset subtracted first
    #[serde(default)]
    pub offset: Offset,
}

/// Replicates of a bootstrap (`given.bootstrap`): a whole number in
/// [`MIN_REPLICATES`](crate::identify::stats::MIN_REPLICATES)`..=100000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Replicates(pub usize);

/// The largest [`Replicates`].
const MAX_REPLICATES: usize = 100_000;

impl<'de> Deserialize<'de> for Replicates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Replicates, D::Error> {
        let n = u64::deserialize(d)?;
        let min = crate::identify::stats::MIN_REPLICATES;
        usize::try_from(n)
            .ok()
            .filter(|n| (min..=MAX_REPLICATES).contains(n))
            .map(Replicates)
            .ok_or_else(|| {
                D::Error::custom(format!(
                    "must be a whole number of replicates in {min}..={MAX_REPLICATES} (got {n})"
                ))
            })
    }
}

impl JsonSchema for Replicates {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Replicates".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let min = crate::identify::stats::MIN_REPLICATES;
        json_schema!({"type": "integer", "minimum": min, "maximum": MAX_REPLICATES})
    }
}

/// A whole number in `MIN..=MAX` (`3` or `3.0`, as a JSON number may be written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Whole<const MIN: u64, const MAX: u64>(pub u64);

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Whole<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if x.fract() == 0.0 && x >= MIN as f64 && x <= MAX as f64 {
            Ok(Whole(x as u64))
        } else if MAX == u64::MAX {
            Err(D::Error::custom(format!(
                "must be a whole number >= {MIN} (got {x})"
            )))
        } else {
            Err(D::Error::custom(format!(
                "must be a whole number in {MIN}..={MAX} (got {x})"
            )))
        }
    }
}

impl<const MIN: u64, const MAX: u64> JsonSchema for Whole<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("Whole_{MIN}_{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        if MAX == u64::MAX {
            json_schema!({"type": "integer", "minimum": MIN})
        } else {
            json_schema!({"type": "integer", "minimum": MIN, "maximum": MAX})
        }
    }
}

/// A number > 0.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Positive(pub f64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Positive, D::Error> {
        let x = f64::deserialize(d)?;
        if x > 0.0 && x.is_finite() {
            Ok(Positive(x))
        } else {
            Err(D::Error::custom(format!("must be a number > 0 (got {x})")))
        }
    }
}

impl JsonSchema for Positive {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Positive".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "number", "exclusiveMinimum": 0})
    }
}

impl<'de> Deserialize<'de> for Offset {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Offset, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(false) | Value::Null => Ok(Offset::None),
            Value::Bool(true) => Ok(Offset::Fit),
            v => v.as_f64().filter(|c| c.is_finite()).map(Offset::Known).ok_or_else(|| {
                D::Error::custom(format!(
                    "must be true (fit a constant offset), false, or a known offset [{FORCE}] (got {v})"
                ))
            }),
        }
    }
}

impl Serialize for Offset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Offset::None => s.serialize_bool(false),
            Offset::Fit => s.serialize_bool(true),
            Offset::Known(c) => s.serialize_f64(c),
        }
    }
}

impl JsonSchema for Offset {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Offset".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["boolean", "number"], "x-unit": FORCE})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Options of a procedure, as a procedure file declares them.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Opts {
        /// A load.
        #[serde(default = "one")]
        #[schemars(extend("x-unit" = "N"))]
        load: Positive,
        /// A level.
        level: Option<Positive>,
        /// The offset.
        #[serde(default)]
        offset: Offset,
        /// A choice.
        #[serde(default)]
        hold: Hold,
    }

    #[derive(Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Hold {
        /// Straight lines between samples.
        #[default]
        Linear,
        /// Each sample held.
        Zoh,
    }

    fn one() -> Positive {
        Positive(1.0)
    }

    fn given(v: Value) -> Given {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn given_is_parsed_with_defaults_and_null_as_absent() {
        let o: Opts = parse(&given(json!({"level": 2.0, "offset": true}))).unwrap();
        assert_eq!(
            (o.load, o.level, o.offset),
            (Positive(1.0), Some(Positive(2.0)), Offset::Fit)
        );
        assert_eq!(o.hold, Hold::Linear);
        let o: Opts = parse(&given(json!({"load": null, "offset": -0.5, "hold": "zoh"}))).unwrap();
        assert_eq!(o.hold, Hold::Zoh);
        assert_eq!(
            (o.load, o.level, o.offset),
            (Positive(1.0), None, Offset::Known(-0.5))
        );
    }

    #[test]
    fn a_bad_value_is_refused_naming_its_key() {
        let e = parse::<Opts>(&given(json!({"load": -1})))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "given.load is refused: must be a number > 0 (got -1)");
        let e = parse::<Opts>(&given(json!({"offset": "yes"})))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("given.offset is refused: must be true"),
            "{e}"
        );
        let e = parse::<Opts>(&given(json!({"level": [1]})))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("given.level is refused: invalid type"), "{e}");
    }

    /// Every procedure's options take each default their schema states, and refuse a value
    /// of no option's type naming the key (through a flattened group too).
    #[test]
    fn each_procedures_options_take_their_defaults_and_refuse_a_wrong_type() {
        for p in super::super::PROCEDURES {
            let schema = p.options.schema(false);
            let props = schema["properties"].as_object().unwrap();
            assert!(!props.is_empty(), "{}", p.name);
            for (key, prop) in props {
                let alone = |v: Value| Given::from_iter([(key.clone(), v)]);
                if let Some(d) = prop.get("default") {
                    assert_eq!(
                        p.options.check(&alone(d.clone())),
                        Ok(()),
                        "{}.{key}",
                        p.name
                    );
                }
                let e = p
                    .options
                    .check(&alone(json!([true])))
                    .unwrap_err()
                    .to_string();
                let rest = e.strip_prefix(&format!("given.{key}")).unwrap_or_default();
                assert!(
                    rest.starts_with(" is refused: ") || rest.starts_with('['),
                    "{}: {e}",
                    p.name
                );
                assert_eq!(prop["title"], *key);
                assert!(
                    prop["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{}.{key}",
                    p.name
                );
            }
        }
    }

    #[test]
    fn a_whole_number_is_one_written_either_way_within_its_bounds() {
        type W = Whole<1, 10>;
        assert_eq!(serde_json::from_value::<W>(json!(3.0)).unwrap(), Whole(3));
        assert_eq!(serde_json::from_value::<W>(json!(10)).unwrap(), Whole(10));
        for bad in [json!(0), json!(2.5), json!(11)] {
            let e = serde_json::from_value::<W>(bad).unwrap_err().to_string();
            assert!(e.starts_with("must be a whole number in 1..=10"), "{e}");
        }
    }

    #[test]
    fn the_schema_comes_from_the_type() {
        let s = schema_of::<Opts>();
        assert_eq!(s["additionalProperties"], false);
        let load = &s["properties"]["load"];
        assert_eq!(load["type"], "number");
        assert_eq!(load["exclusiveMinimum"], 0);
        assert_eq!(load["default"], 1.0);
        assert_eq!(load["x-unit"], "N");
        assert_eq!(load["title"], "load");
        assert_eq!(load["description"], "A load.");
        assert_eq!(s["properties"]["level"]["type"], "number");
        assert_eq!(s["properties"]["offset"]["default"], false);
        assert_eq!(
            s["properties"]["offset"]["type"],
            json!(["boolean", "number"])
        );
    }
}
