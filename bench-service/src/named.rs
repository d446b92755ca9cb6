//! A JSON value read into a type with an error that keeps the key serde names when a field is
//! missing or unknown. serde_json's and serde_urlencoded's errors keep only their message, so
//! the field a 4xx names would have to be read back out of that text.

use serde::de::{
    self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, VariantAccess,
    Visitor,
};
use serde_json::{Map, Value};
use std::fmt;

/// Reads `value` into `T`; an error names its field by its dotted path
/// ([`NamedError::field_at`] of `serde_path_to_error`'s path).
pub fn from_value<'de, T: de::Deserialize<'de>>(
    value: &'de Value,
) -> Result<T, serde_path_to_error::Error<NamedError>> {
    serde_path_to_error::deserialize(ValueDe { value, text: false })
}

/// Reads a query string's parameters (`key` → its text, or a list of texts) into `T`: a text
/// is read as the number or boolean `T` asks for, as serde_urlencoded reads one.
pub fn from_query<'de, T: de::Deserialize<'de>>(
    params: &'de Value,
) -> Result<T, serde_path_to_error::Error<NamedError>> {
    serde_path_to_error::deserialize(ValueDe {
        value: params,
        text: true,
    })
}

/// A deserialisation error: serde's message, and the key it names when a field is missing or
/// unknown (serde reports those at the enclosing object).
#[derive(Debug)]
pub struct NamedError {
    message: String,
    key: Option<String>,
}

impl NamedError {
    /// The field the error is about, given the path it happened at: the path, with the key
    /// a missing or unknown field error names; `body` for the value as a whole.
    pub fn field_at(&self, path: &str) -> String {
        let path = (path != ".").then_some(path);
        match (path, self.key.as_deref()) {
            (Some(p), Some(k)) if p == k || p.ends_with(&format!(".{k}")) => p.to_string(),
            (Some(p), Some(k)) => format!("{p}.{k}"),
            (None, Some(k)) => k.to_string(),
            (Some(p), None) => p.to_string(),
            (None, None) => "body".into(),
        }
    }
}

impl fmt::Display for NamedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for NamedError {}

impl de::Error for NamedError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        NamedError {
            message: msg.to_string(),
            key: None,
        }
    }

    fn missing_field(field: &'static str) -> Self {
        NamedError {
            message: Worded::missing_field(field).0,
            key: Some(field.into()),
        }
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        NamedError {
            message: Worded::unknown_field(field, expected).0,
            key: Some(field.into()),
        }
    }
}

/// serde's own wording of an error (the trait's provided methods).
struct Worded(String);

impl fmt::Display for Worded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Worded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Worded {}

impl de::Error for Worded {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Worded(msg.to_string())
    }
}

/// A JSON value as a serde deserializer; with `text`, a string is also read as the number or
/// boolean asked for.
struct ValueDe<'de> {
    value: &'de Value,
    text: bool,
}

impl<'de> ValueDe<'de> {
    fn of(&self, value: &'de Value) -> ValueDe<'de> {
        ValueDe {
            value,
            text: self.text,
        }
    }

    /// A query's text, to be read as a number or boolean.
    fn text(&self) -> Option<&'de str> {
        match self.value {
            Value::String(s) if self.text => Some(s),
            _ => None,
        }
    }
}

/// `deserialize_$kind`: a query's text parsed as `$t` (a text that is not one goes to the
/// visitor as text, which names what it expected), any other value as it is.
macro_rules! from_text {
    ($($method:ident $t:ty => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NamedError> {
            match self.text() {
                Some(s) => match s.parse::<$t>() {
                    Ok(n) => visitor.$visit(n),
                    Err(_) => visitor.visit_borrowed_str(s),
                },
                None => self.deserialize_any(visitor),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ValueDe<'de> {
    type Error = NamedError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NamedError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, Some(f)) => visitor.visit_f64(f),
                _ => Err(de::Error::custom(format!("the number {n} is out of range"))),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => {
                let mut seq = Items {
                    items: items.iter(),
                    parent: &self,
                };
                let out = visitor.visit_seq(&mut seq)?;
                match seq.items.len() {
                    0 => Ok(out),
                    _ => Err(de::Error::invalid_length(
                        items.len(),
                        &"fewer elements in array",
                    )),
                }
            }
            Value::Object(map) => {
                let mut entries = Entries {
                    entries: map.iter(),
                    pending: None,
                    parent: &self,
                };
                let out = visitor.visit_map(&mut entries)?;
                match entries.entries.len() {
                    0 => Ok(out),
                    _ => Err(de::Error::invalid_length(
                        map.len(),
                        &"fewer elements in map",
                    )),
                }
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NamedError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, NamedError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, NamedError> {
        match self.value {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Value::Object(map) if map.len() == 1 => {
                let (variant, value) = map.iter().next().expect("one entry");
                visitor.visit_enum(Variant {
                    variant,
                    value: self.of(value),
                })
            }
            other => Err(de::Error::invalid_type(unexpected(other), &"string or map")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NamedError> {
        visitor.visit_unit()
    }

    from_text! {
        deserialize_bool bool => visit_bool,
        deserialize_i8 i8 => visit_i8,
        deserialize_i16 i16 => visit_i16,
        deserialize_i32 i32 => visit_i32,
        deserialize_i64 i64 => visit_i64,
        deserialize_u8 u8 => visit_u8,
        deserialize_u16 u16 => visit_u16,
        deserialize_u32 u32 => visit_u32,
        deserialize_u64 u64 => visit_u64,
        deserialize_f32 f32 => visit_f32,
        deserialize_f64 f64 => visit_f64,
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map
        struct identifier
    }
}

/// The value as serde names it in an error.
fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(n) => n
            .as_f64()
            .map_or(de::Unexpected::Other("number"), de::Unexpected::Float),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// The items of an array.
struct Items<'a, 'de> {
    items: std::slice::Iter<'de, Value>,
    parent: &'a ValueDe<'de>,
}

impl<'de> SeqAccess<'de> for Items<'_, 'de> {
    type Error = NamedError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, NamedError> {
        self.items
            .next()
            .map(|v| seed.deserialize(self.parent.of(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The entries of an object.
struct Entries<'a, 'de> {
    entries: serde_json::map::Iter<'de>,
    pending: Option<&'de Value>,
    parent: &'a ValueDe<'de>,
}

impl<'de> MapAccess<'de> for Entries<'_, 'de> {
    type Error = NamedError;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, NamedError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.pending = Some(value);
        let key: de::value::BorrowedStrDeserializer<'de, NamedError> =
            de::value::BorrowedStrDeserializer::new(key);
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, NamedError> {
        let value = self
            .pending
            .take()
            .ok_or_else(|| de::Error::custom("a value asked for before its key"))?;
        seed.deserialize(self.parent.of(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An externally tagged enum's variant (`{"variant": value}`).
struct Variant<'de> {
    variant: &'de str,
    value: ValueDe<'de>,
}

impl<'de> EnumAccess<'de> for Variant<'de> {
    type Error = NamedError;
    type Variant = ValueDe<'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, ValueDe<'de>), NamedError> {
        let name: de::value::BorrowedStrDeserializer<'de, NamedError> =
            de::value::BorrowedStrDeserializer::new(self.variant);
        Ok((seed.deserialize(name)?, self.value))
    }
}

impl<'de> VariantAccess<'de> for ValueDe<'de> {
    type Error = NamedError;

    fn unit_variant(self) -> Result<(), NamedError> {
        match self.value {
            Value::Null => Ok(()),
            other => Err(de::Error::invalid_type(unexpected(other), &"unit variant")),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, NamedError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, NamedError> {
        de::Deserializer::deserialize_any(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, NamedError> {
        de::Deserializer::deserialize_any(self, visitor)
    }
}

/// A query string's parameters as a JSON object of texts, a key in `lists` as a list of its
/// texts; the key given twice that is not a list is the error.
pub fn query_params(text: &str, lists: &[&str]) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    for (k, v) in form_urlencoded::parse(text.as_bytes()) {
        let (k, v) = (k.into_owned(), Value::String(v.into_owned()));
        match map.get_mut(&k) {
            Some(Value::Array(list)) => list.push(v),
            Some(_) => return Err(k),
            None if lists.contains(&k.as_str()) => drop(map.insert(k, Value::Array(vec![v]))),
            None => drop(map.insert(k, v)),
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Plan {
        name: String,
        steps: Vec<Step>,
        limit: Option<u32>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
    #[allow(dead_code)]
    enum Step {
        Hold { seconds: f64 },
        Ramp { to: f64, rate: f64 },
    }

    /// The field an error names, and its message.
    fn refusal(v: Value) -> (String, String) {
        let e = from_value::<Plan>(&v).expect_err("refused");
        (
            e.inner().field_at(&e.path().to_string()),
            e.inner().to_string(),
        )
    }

    #[test]
    fn a_missing_or_unknown_key_is_named_by_its_path_with_serdes_words() {
        let (field, message) = refusal(json!({"steps": []}));
        assert_eq!(
            (field.as_str(), message.as_str()),
            ("name", "missing field `name`")
        );
        let (field, message) = refusal(json!({"name": "a", "steps": [], "limt": 3}));
        assert_eq!(field, "limt");
        assert_eq!(
            message,
            "unknown field `limt`, expected one of `name`, `steps`, `limit`"
        );
        // Inside an internally tagged enum, serde reads the step through its own buffer.
        let steps = json!([{"kind": "hold", "seconds": 1.0}, {"kind": "ramp", "to": 1.0}]);
        let (field, message) = refusal(json!({"name": "a", "steps": steps}));
        assert_eq!(
            (field.as_str(), message.as_str()),
            ("steps[1].rate", "missing field `rate`")
        );
        let (field, message) = refusal(json!({"name": "a", "steps": [], "limit": -1}));
        assert_eq!(field, "limit");
        assert_eq!(message, "invalid value: integer `-1`, expected u32");
    }

    #[test]
    fn a_query_reads_its_texts_as_the_numbers_asked_for_and_names_a_bad_one() {
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Page {
            limit: Option<u32>,
            q: Option<String>,
            all: Option<bool>,
        }
        let params = Value::Object(query_params("limit=20&q=12&all=true", &[]).unwrap());
        let page: Page = from_query(&params).unwrap();
        let want = Page {
            limit: Some(20),
            q: Some("12".into()),
            all: Some(true),
        };
        assert_eq!(page, want);
        let params = Value::Object(query_params("limit=many", &[]).unwrap());
        let e = from_query::<Page>(&params).expect_err("not a number");
        assert_eq!(e.inner().field_at(&e.path().to_string()), "limit");
        assert_eq!(
            e.inner().to_string(),
            "invalid type: string \"many\", expected u32"
        );
        let params = Value::Object(query_params("page=2", &[]).unwrap());
        let e = from_query::<Page>(&params).expect_err("unknown");
        assert_eq!(e.inner().field_at(&e.path().to_string()), "page");
        assert_eq!(query_params("q=1&q=2", &[]).unwrap_err(), "q");
        let listed = query_params("tag=a&tag=b", &["tag"]).unwrap();
        assert_eq!(listed["tag"], json!(["a", "b"]));
    }
}
