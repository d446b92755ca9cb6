//! The kinds catalogue (`GET /api/experiments/kinds`, the dashboard's launch forms): every kind
//! with its description, its parameters in declaration order with unit, description, default,
//! JSON type and choices, and the full JSON Schema. One source of truth: the doc comments of
//! the `Params` structs, read through `schemars`; a unit is the `\[...\]` of a field's doc.

use super::Kind;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};

/// Every kind with its parameter documentation and defaults.
pub fn catalogue() -> Value {
    Value::Array(
        Kind::NAMES
            .iter()
            .filter_map(|n| Kind::defaults(n).ok())
            .map(|k| describe(&k))
            .collect(),
    )
}

fn describe(kind: &Kind) -> Value {
    let schema = kind.params_schema();
    let defaults = kind.params_json();
    let description = schema["description"]
        .as_str()
        .map(|d| {
            let prefix = format!("Parameters of `{}`: ", kind.name());
            let d = unescape(d.strip_prefix(&prefix).unwrap_or(d));
            let mut chars = d.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    let params: Vec<Value> = kind
        .param_names()
        .into_iter()
        .map(|name| {
            let prop = &schema["properties"][&name];
            let doc = prop["description"].as_str().unwrap_or("");
            json!({
                "name": name,
                "unit": unit_of(doc),
                "description": unescape(doc),
                "default": defaults.get(&name).cloned().unwrap_or(Value::Null),
                "type": type_of(prop, &schema),
                "choices": choices_of(prop, &schema),
            })
        })
        .collect();
    json!({
        "kind": kind.name(),
        "description": description,
        "params": params,
        "defaults": defaults,
        "schema": schema,
    })
}

/// The unit a doc comment gives in `\[...\]` (rustdoc's escaped brackets), `""` if none.
fn unit_of(doc: &str) -> String {
    doc.split_once("\\[")
        .and_then(|(_, rest)| rest.split_once("\\]"))
        .map(|(unit, _)| unit.trim().to_string())
        .unwrap_or_default()
}

/// A doc comment as one line of plain text: rustdoc's escapes removed, lines joined.
fn unescape(doc: &str) -> String {
    doc.replace("\\[", "[")
        .replace("\\]", "]")
        .replace('\n', " ")
}

/// `#/$defs/Name` → the definition it points at; anything else unchanged.
fn resolve<'a>(s: &'a Value, root: &'a Value) -> &'a Value {
    s["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .map(|name| &root["$defs"][name])
        .unwrap_or(s)
}

/// The JSON type(s) a parameter takes: `"number"`, `["number", "null"]`, ...
fn type_of(prop: &Value, root: &Value) -> Value {
    let s = resolve(prop, root);
    if let Some(t) = s.get("type") {
        return t.clone();
    }
    let mut types: Vec<Value> = Vec::new();
    for member in ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| s[*k].as_array())
        .flatten()
    {
        let t = type_of(member, root);
        for t in t.as_array().cloned().unwrap_or_else(|| vec![t]) {
            if !t.is_null() && !types.contains(&t) {
                types.push(t);
            }
        }
    }
    match types.len() {
        0 => Value::Null,
        1 => types.remove(0),
        _ => Value::Array(types),
    }
}

/// The values of a field that is one of a fixed set of strings, else `null`.
fn choices_of(prop: &Value, root: &Value) -> Value {
    let s = resolve(prop, root);
    if let Some(e) = s["enum"].as_array() {
        return Value::Array(e.clone());
    }
    let consts: Option<Vec<Value>> = s["oneOf"].as_array().map(|m| {
        m.iter()
            .map(|m| resolve(m, root)["const"].clone())
            .collect()
    });
    match consts {
        Some(c) if !c.is_empty() && c.iter().all(Value::is_string) => Value::Array(c),
        _ => Value::Null,
    }
}

/// The top-level keys of a JSON object text in the order written: serde writes a struct's
/// fields in declaration order, which is the order the docs present them in.
pub(super) fn keys_in_order(text: &str) -> Vec<String> {
    struct Keys(Vec<String>);
    struct KeysVisitor;
    impl<'de> Visitor<'de> for KeysVisitor {
        type Value = Keys;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
            let mut keys = Vec::new();
            while let Some(k) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                keys.push(k);
            }
            Ok(Keys(keys))
        }
    }
    impl<'de> Deserialize<'de> for Keys {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
            d.deserialize_map(KeysVisitor)
        }
    }
    serde_json::from_str::<Keys>(text)
        .map(|k| k.0)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_come_from_the_escaped_brackets() {
        assert_eq!(
            unit_of("Ramp rates `m` \\[N m/s\\], magnitudes; default [0.05]."),
            "N m/s"
        );
        assert_eq!(unit_of("Directions; default both."), "");
        assert_eq!(unescape("a \\[s\\]\nb"), "a [s] b");
    }

    #[test]
    fn keys_keep_the_written_order() {
        assert_eq!(
            keys_in_order(r#"{"b": 1, "a": {"z": 0, "c": 1}, "c": [1]}"#),
            ["b", "a", "c"]
        );
    }
}
