//! The schema of `GET /api/runs/{id}`: run_store's `Run` as it serialises, with the
//! comparisons, chain, campaign and sensors the handler adds. Written out here (the store's
//! types carry no schema) so that the dashboard's types are generated from it. The kind's
//! analysis (`results`) is `experiments::Results` as it serialises (or an import's statistics),
//! the spec is the stored document (a kind's or an import's), the bench snapshot names the
//! fields the dashboard reads (the rest is the daemon's configuration, passed through), the
//! device profiles are `bench_daemon`'s `DeviceProfiles`, and each comparison's `options` and
//! `table` are friction's `StoredOptions` and `Table`, the types their writers serialise.

use friction::identify::procedures::compare::{StoredOptions, Table};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};
use std::borrow::Cow;

/// A stored run with everything but its samples.
#[derive(Debug, serde::Serialize)]
#[serde(transparent)]
pub struct RunRecord(pub Value);

impl JsonSchema for RunRecord {
    fn schema_name() -> Cow<'static, str> {
        "RunRecord".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        // Built in parts: one `json!` of every field passes the macro's recursion limit.
        let mut props = Map::new();
        for part in [
            the_run(),
            its_record(generator),
            its_counts(),
            what_the_handler_adds(generator),
        ] {
            if let Value::Object(m) = part {
                props.extend(m);
            }
        }
        // Every field is always written (the store's `Run` skips none).
        let required: Vec<Value> = props.keys().cloned().map(Value::String).collect();
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("required".into(), Value::Array(required));
        schema.insert("properties".into(), Value::Object(props));
        Schema::from(schema)
    }
}

/// A stored comparison as `GET /api/runs/{id}` lists it (run_store's `Comparison`): its
/// `options` and `table` are friction's types as they serialise.
#[derive(Debug, serde::Serialize, JsonSchema)]
pub struct StoredComparison {
    /// Comparison id.
    pub id: i64,
    /// UUID, kept by every store the comparison is pushed to.
    pub uuid: String,
    /// Creation time (RFC 3339 UTC).
    pub created_at: String,
    /// Runs the models were fitted on.
    pub estimate_runs: Vec<i64>,
    /// Runs the models were scored on.
    pub validate_runs: Vec<i64>,
    /// The model choices as given (`ID`, `ID=p1+p2`, `ID=none`).
    pub models: Vec<String>,
    /// How it was made.
    #[schemars(with = "StoredOptions")]
    pub options: Value,
    /// The models ranked, with their scores per regime.
    #[schemars(with = "Table")]
    pub table: Value,
}

/// What the run is and where it stands.
fn the_run() -> Value {
    json!({
        "id": {"type": "integer", "description": "Run id (this store's own)."},
        "uuid": {"type": "string", "description": "Kept by every store it is pushed to."},
        "bench_id": {"type": "string", "description": "The bench it was recorded on ('' before benches had one)."},
        "kind": {"type": "string", "description": "Experiment kind."},
        "name": {"type": "string", "description": "The spec's name."},
        "status": {"type": "string", "enum": ["queued", "running", "completed", "aborted", "failed", "interrupted"]},
        "status_reason": {"type": ["string", "null"], "description": "Why it ended so."},
        "reason_code": {"type": ["string", "null"], "description": "The stable code of that reason (`drive_fault`, `estop`, ...)."},
        "created_at": {"type": "string", "description": "RFC 3339 UTC."},
        "started_at": {"type": ["string", "null"]},
        "finished_at": {"type": ["string", "null"]}
    })
}

/// What it ran with, as recorded.
fn its_record(generator: &mut SchemaGenerator) -> Value {
    let results = generator.subschema_for::<experiments::Results>().to_value();
    let profiles = generator
        .subschema_for::<bench_daemon::config::DeviceProfiles>()
        .to_value();
    json!({
        "spec": {"description": "The experiment spec as stored (an import: its source, columns and units).",
            "oneOf": [kind_spec(), import_spec()]},
        "bench_config": bench_config(),
        "device_profiles": {"description": "The device profiles snapshot (null for an imported recording's).",
            "oneOf": [{"type": "null"}, profiles]},
        "software_version": {"type": "string"},
        "notes": {"type": ["string", "null"], "description": "The operator's notes."},
        "tags": {"type": "array", "items": {"type": "string"}},
        "models": {"type": "array", "items": {"type": "string"}, "description": "Lockstep model ids."},
        "period_s": {"type": ["number", "null"], "description": "Nominal control period [s]."},
        "results": {"description": "The kind's analysis, once stored (null before); an import's: what the recording holds.",
            "oneOf": [{"type": "null"}, results, import_results()]},
        "continues": {"type": ["integer", "null"], "description": "The run this one continues."}
    })
}

/// The spec of a run of an experiment kind: `experiments::Spec::to_value`, every parameter
/// written out (each kind's in `GET /api/experiments/kinds`).
fn kind_spec() -> Value {
    json!({"type": "object", "required": ["kind", "name", "params"], "properties": {
        "kind": {"type": "string", "enum": experiments::Kind::NAMES},
        "name": {"type": "string"},
        "params": {"type": "object", "description": "The kind's parameters."},
        "lockstep": {"type": "object", "description": "The run's own lockstep models (`models`, `params`)."}}})
}

/// The spec recording-import stores with an imported run.
fn import_spec() -> Value {
    let by_role = |t: &str| json!({"type": "object", "additionalProperties": {"type": t}});
    json!({"type": "object", "required": ["kind", "name", "source", "columns", "units", "geometry"],
        "properties": {
        "kind": {"const": "imported"},
        "name": {"type": "string"},
        "source": {"type": "object", "required": ["file", "bytes", "sha256", "format"], "properties": {
            "file": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0},
            "sha256": {"type": "string"}, "format": {"type": "string"},
            "read": {"description": "How the file was read (format-specific)."}}},
        "columns": {"description": "The file column of each role.", "allOf": [by_role("string")]},
        "scales": {"description": "The scale of each scaled role.", "allOf": [by_role("number")]},
        "units": {"description": "The SI unit each role is stored in.", "allOf": [by_role("string")]},
        "stated_units": {"description": "The unit the file stated for each role.", "allOf": [by_role("string")]},
        "geometry": {"type": "string", "enum": ["rotary", "linear"]},
        "geometry_source": {"type": "string"},
        "stored_as": by_role("string")}})
}

/// An imported run's results: recording-import's `Stats`, tagged `imported`.
fn import_results() -> Value {
    let s = json!({"type": ["number", "null"]});
    json!({"type": "object", "required": ["kind", "samples", "uniform", "ranges"], "properties": {
        "kind": {"const": "imported"},
        "samples": {"type": "integer", "minimum": 0},
        "t_first": s, "t_last": s, "dt_min": s, "dt_max": s, "dt_mean": s, "largest_gap_at": s,
        "uniform": {"type": "boolean"},
        "ranges": {"type": "object", "description": "[smallest, largest] stored value by role.",
            "additionalProperties": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}}}})
}

/// The bench configuration snapshot: the daemon's configuration as it serialises, with the
/// lockstep sets resolved at creation (an import's: its geometry and `imported`).
fn bench_config() -> Value {
    let set = json!({"type": "object", "required": ["model", "source"], "properties": {
        "model": {"type": "string"}, "source": {"type": "string"},
        "set_id": {"type": ["integer", "null"]}, "set_name": {"type": ["string", "null"]}}});
    json!({"type": ["object", "null"], "description": "The bench configuration snapshot.",
        "additionalProperties": true, "properties": {
        "geometry": {"type": "string", "enum": ["rotary", "linear"]},
        "source": {"type": ["string", "null"], "description": "The configuration file it was read from."},
        "bench_id": {"type": "string"},
        "imported": {"type": "boolean", "description": "An imported recording's (no bench ran it)."},
        "lockstep_sets": {"type": "array", "items": set, "description": "Where each lockstep model's parameters came from."}}})
}

/// Its timing, sample counts and logs.
fn its_counts() -> Value {
    let log = json!({"type": "array", "items": {"type": "object", "required": ["at", "t", "reason"],
        "properties": {"at": {"type": "string"}, "t": {"type": ["number", "null"]}, "reason": {"type": "string"}}}});
    let us = json!({"type": ["number", "null"]});
    json!({
        "timing": {"type": "object", "required": ["overruns"], "properties": {
            "period_error_p50_us": us, "period_error_p99_us": us, "period_error_max_us": us,
            "period_error_p999_us": us, "tick_work_p50_us": us,
            "overruns": {"type": "integer", "minimum": 0}}},
        "dropped_batches": {"type": "integer", "minimum": 0},
        "dropped_samples": {"type": "integer", "minimum": 0},
        "sample_count": {"type": "integer", "minimum": 0},
        "interruption_log": log,
        "run_log": log
    })
}

/// The comparisons that use it, its chain, its campaign and what it read each sensor with.
fn what_the_handler_adds(generator: &mut SchemaGenerator) -> Value {
    let comparison = generator.subschema_for::<StoredComparison>().to_value();
    let step = json!({"type": "object", "required": ["id", "step"],
        "properties": {"id": {"type": "integer"}, "step": {"type": "string"}}});
    let sensor = json!({"type": "object", "required": ["sensor", "calibration_id", "overdue", "note", "zero"],
        "properties": {"sensor": {"type": "string"}, "calibration_id": {"type": ["integer", "null"]},
            "overdue": {"type": "boolean"}, "note": {"type": ["string", "null"]}, "zero": {"type": ["number", "null"]}}});
    json!({
        "comparisons": {"type": "array", "items": comparison},
        "chain": {"type": "array", "items": {"type": "integer"}, "description": "Its chain of continuations, first run first."},
        "campaign": {"description": "The campaign it is a step of.", "oneOf": [{"type": "null"}, step]},
        "sensors": {"type": "array", "items": sensor}
    })
}
