//! Schemas of what the document cannot learn from a Rust type: JSON kept as written (a run's
//! record, a catalogue) and types of other crates, described here once.

/// A JSON value sent as it is, documented by a literal schema: `opaque!(Name, "what", {...})`.
macro_rules! opaque {
    ($(#[$doc:meta])* $name:ident, $schema:tt) => {
        $(#[$doc])*
        #[derive(Debug, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(pub serde_json::Value);

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!($schema)
            }
        }
    };
}

pub(crate) use opaque;

opaque!(
    /// A live sample (`NaN` readings as `null`).
    Sample,
    {"type": "object", "properties": {
        "t": {"type": ["number", "null"], "description": "run time [s]"},
        "x": {"type": ["number", "null"], "description": "position [rad or m]"},
        "v": {"type": ["number", "null"], "description": "velocity [rad/s or m/s]"},
        "u_cmd": {"type": ["number", "null"], "description": "command in the drive mode's unit"},
        "torque_motor": {"type": ["number", "null"], "description": "drive torque [N m or N]"},
        "torque_sensor": {"type": ["number", "null"], "description": "sensor torque [N m or N]"},
        "segment": {"type": "integer"}, "flags": {"type": "integer"}}}
);

opaque!(
    /// The bench's limits (SI units).
    Limits,
    {"type": "object", "properties": {
        "torque_nm": {"type": "number"}, "velocity_rad_s": {"type": "number"},
        "position_window_rad": {"type": "number"}, "period_s": {"type": "number"},
        "encoder_counts_per_rev": {"type": "integer"},
        "max_plan_duration_s": {"type": "number"}, "max_plan_segments": {"type": "integer"}}}
);

opaque!(
    /// One stored object of the run store (a run, a parameter set, an analysis, a table).
    Record,
    {"type": "object"}
);

opaque!(
    /// Stored objects, newest first.
    Records,
    {"type": "array", "items": {"type": "object"}}
);

/// The dates `since` and `until` take (days up to 28, so that every generated one exists).
pub const DATE_PATTERN: &str = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z)?$";

/// A media type of the document with `schema`.
pub fn media(schema: schemars::Schema) -> aide::openapi::MediaType {
    aide::openapi::MediaType {
        schema: Some(aide::openapi::SchemaObject {
            json_schema: schema,
            example: None,
            external_docs: None,
        }),
        ..Default::default()
    }
}

/// A response of the document: `description`, its body one of `content` (type, schema).
pub fn response(
    description: &str,
    content: Vec<(&str, schemars::Schema)>,
) -> aide::openapi::Response {
    aide::openapi::Response {
        description: description.into(),
        content: content
            .into_iter()
            .map(|(t, s)| (t.to_string(), media(s)))
            .collect(),
        ..Default::default()
    }
}

/// `r` as an operation's one answer, with status `code`.
pub fn only(
    code: u16,
    r: Option<aide::openapi::Response>,
) -> Vec<(Option<aide::openapi::StatusCode>, aide::openapi::Response)> {
    r.map(|r| (Some(aide::openapi::StatusCode::Code(code)), r))
        .into_iter()
        .collect()
}
