//! Request bodies: capped in size (413 with a JSON error, not axum's plain text) and parsed as
//! strict JSON — a key given twice in one object is refused (400 naming it) rather than the
//! last one silently winning, so what a client meant and what runs cannot differ. [`Json`]
//! then reads the body into its serde type: a value of the wrong type, an unknown or a missing
//! field is 422 naming the field by its dotted path (`order[2]`, `sweep.values`).

use super::error::{ApiError, error_doc};
use super::schema::media;
use aide::OperationInput;
use aide::generate::GenContext;
use aide::openapi::{Operation, RequestBody, Response as DocResponse, StatusCode as DocStatus};
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt;

/// Largest request body \[bytes\] (`DefaultBodyLimit` of the router).
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The one route whose body is not JSON but a recording (`POST /api/runs/import`, streamed):
/// the guard lets [`RECORDING_TYPES`] through there.
pub const RECORDING_PATH: &str = "/api/runs/import";

/// Content types a recording may be sent as. Never the types an HTML form or a "simple"
/// cross-site request can send (`text/plain`, forms): those stay refused (415).
pub const RECORDING_TYPES: &[&str] = &[
    "text/csv",
    "text/tab-separated-values",
    "application/octet-stream",
    "application/x-matlab-data",
    "application/vnd.apache.parquet",
    "application/x-parquet",
];

/// Whether `ctype` (a `Content-Type` value) is one of [`RECORDING_TYPES`].
pub fn is_recording_type(ctype: &str) -> bool {
    let media = ctype.split(';').next().unwrap_or_default().trim();
    RECORDING_TYPES
        .iter()
        .any(|t| t.eq_ignore_ascii_case(media))
}

/// The raw body, at most [`MAX_BODY_BYTES`].
#[derive(Debug)]
pub struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        Bytes::from_request(req, state)
            .await
            .map(Body)
            .map_err(|e| {
                let status = e.status();
                let error = if status == StatusCode::PAYLOAD_TOO_LARGE {
                    format!("the body is over the limit of {MAX_BODY_BYTES} bytes (2 MiB)")
                } else {
                    format!("reading the body: {}", e.body_text())
                };
                ApiError {
                    status,
                    error,
                    field: Some("body".into()),
                }
            })
    }
}

/// A body read into `T` (strict JSON, then serde): 400 for what is not JSON, 422 naming the
/// field for what `T` does not take.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let Body(bytes) = Body::from_request(req, state).await?;
        typed(&parse(&bytes)?).map(Json)
    }
}

impl<T: JsonSchema> OperationInput for Json<T> {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        json_body_doc::<T>(ctx, op, true);
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        body_errors(ctx)
    }
}

/// A spec document as sent (strict JSON, any shape): [`super::scheduler::check_value`] checks
/// it and names what it breaks (422 `spec` for what is not an object).
#[derive(Debug)]
pub struct SpecJson(pub Value);

impl<S: Send + Sync> FromRequest<S> for SpecJson {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let Body(bytes) = Body::from_request(req, state).await?;
        parse(&bytes).map(SpecJson)
    }
}

impl OperationInput for SpecJson {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        json_body_doc::<super::scheduler::SpecDoc>(ctx, op, true);
    }

    fn inferred_early_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        body_errors(ctx)
    }
}

/// Documents a JSON request body of schema `T`.
pub fn json_body_doc<T: JsonSchema>(ctx: &mut GenContext, op: &mut Operation, required: bool) {
    let schema = ctx.schema.subschema_for::<T>();
    let description = ctx
        .resolve_schema(&schema)
        .get("description")
        .and_then(|d| d.as_str())
        .map(String::from);
    op.request_body = Some(aide::openapi::ReferenceOr::Item(RequestBody {
        description,
        content: [("application/json".to_string(), media(schema))]
            .into_iter()
            .collect(),
        required,
        extensions: Default::default(),
    }));
}

/// What a JSON body can be refused for before the handler sees it.
fn body_errors(ctx: &mut GenContext) -> Vec<(Option<DocStatus>, DocResponse)> {
    vec![
        (
            Some(DocStatus::Code(400)),
            error_doc(ctx, "Malformed JSON, or a key given twice"),
        ),
        (
            Some(DocStatus::Code(422)),
            error_doc(
                ctx,
                "Valid JSON that breaks a rule (an unknown or missing field, a value of the wrong type or beyond a bench limit); `field` names it",
            ),
        ),
    ]
}

/// Reads a parsed body (a JSON object) into `T`: 422 naming the field (its dotted path) it
/// breaks; an item of a list is named by the list (`order`, not `order[2]`: the message says
/// which), as the service always named it.
pub fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, ApiError> {
    if !v.is_object() {
        // serde would take a list for a struct, field by field.
        return Err(ApiError::unprocessable(
            "body",
            "the body must be a JSON object".into(),
        ));
    }
    crate::named::from_value(v).map_err(|e| {
        let at = e.inner().field_at(&e.path().to_string());
        let mut field = at.as_str();
        while let Some(list) = field.strip_suffix(']').and_then(|f| f.rsplit_once('[')) {
            field = list.0;
        }
        ApiError::unprocessable(field, format!("{at}: {}", e.inner()))
    })
}

/// Parses JSON, refusing duplicate keys: 400 naming the key (dotted path) or the syntax error.
pub fn parse(body: &[u8]) -> Result<Value, ApiError> {
    let dup = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed = Strict {
        path: String::new(),
        dup: &dup,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    parsed.map_err(|e| match dup.into_inner() {
        Some(path) => ApiError::bad_request(
            Some(&path),
            format!("duplicate key '{path}' in the body: give each key once"),
        ),
        None => ApiError::bad_request(Some("body"), format!("the body is not valid JSON: {e}")),
    })
}

/// A JSON value at `path`; records the first duplicate key's path in `dup`.
struct Strict<'a> {
    path: String,
    dup: &'a RefCell<Option<String>>,
}

impl Strict<'_> {
    fn child(&self, step: &str) -> String {
        if self.path.is_empty() {
            step.to_string()
        } else if step.starts_with('[') {
            format!("{}{step}", self.path)
        } else {
            format!("{}.{step}", self.path)
        }
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Strict {
            path: self.child(&format!("[{}]", out.len())),
            dup: self.dup,
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = self.child(&key);
            if out.contains_key(&key) {
                *self.dup.borrow_mut() = Some(path.clone());
                return Err(de::Error::custom(format!("duplicate key '{path}'")));
            }
            let v = map.next_value_seed(Strict {
                path,
                dup: self.dup,
            })?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_refused_with_their_path() {
        let e = parse(br#"{"kind": "prbs", "params": {"periods": 1, "periods": 9}}"#).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.field.as_deref(), Some("params.periods"));
        let e = parse(br#"[{"a": 1}, {"b": 1, "b": 2}]"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("[1].b"));
        let e = parse(br#"{"a": 1} x"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("body"));
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Edit {
        order: Option<Vec<i64>>,
        paused: Option<bool>,
        inner: Option<Inner>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        values: Vec<f64>,
    }

    #[test]
    fn typed_bodies_name_the_field_they_break() {
        let field = |text: &str| {
            let e = typed::<Edit>(&parse(text.as_bytes()).unwrap()).unwrap_err();
            assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", e.error);
            let field = e.field.as_deref().unwrap();
            assert!(e.error.contains(field), "{}", e.error);
            e.field.unwrap()
        };
        assert_eq!(field(r#"{"order": [1, "x"]}"#), "order");
        let e = typed::<Edit>(&parse(br#"{"order": [1, "x"]}"#).unwrap()).unwrap_err();
        assert!(e.error.starts_with("order[1]: invalid type"), "{}", e.error);
        assert_eq!(field(r#"{"paused": "yes"}"#), "paused");
        assert_eq!(field(r#"{"extra": 1}"#), "extra");
        assert_eq!(field(r#"{"inner": {}}"#), "inner.values");
        assert_eq!(field(r#"{"inner": {"values": [1], "x": 2}}"#), "inner.x");
        assert_eq!(field("[1, 2]"), "body");
        assert!(typed::<Edit>(&parse(br#"{"paused": true}"#).unwrap()).is_ok());
    }

    #[test]
    fn strict_parsing_gives_what_serde_json_gives() {
        let text =
            br#"{"a": [1, -2, 3.5, 1e300, "s", null, true, {"b": {}}], "c": 18446744073709551615}"#;
        let want: Value = serde_json::from_slice(text).unwrap();
        assert_eq!(parse(text).unwrap(), want);
    }
}
