//! The schema of `GET /api/runs/{id}`: run_store's `Run` as it serialises, with the
//! comparisons, chain, campaign and sensors the handler adds. Written out here (the store's
//! types carry no schema) so that the dashboard's types are generated from it; the kind's
//! analysis (`results`), the spec and the snapshots stay free-form.

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

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // Built in parts: one `json!` of every field passes the macro's recursion limit.
        let mut props = Map::new();
        for part in [
            the_run(),
            its_record(),
            its_counts(),
            what_the_handler_adds(),
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
fn its_record() -> Value {
    json!({
        "spec": {"description": "The experiment spec (an import: its source, columns and units)."},
        "bench_config": {"description": "The bench configuration snapshot (`geometry`, `lockstep_sets`)."},
        "device_profiles": {"description": "The device profiles snapshot."},
        "software_version": {"type": "string"},
        "notes": {"type": ["string", "null"], "description": "The operator's notes."},
        "tags": {"type": "array", "items": {"type": "string"}},
        "models": {"type": "array", "items": {"type": "string"}, "description": "Lockstep model ids."},
        "period_s": {"type": ["number", "null"], "description": "Nominal control period [s]."},
        "results": {"description": "The kind's analysis, once stored (null before)."},
        "continues": {"type": ["integer", "null"], "description": "The run this one continues."}
    })
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
fn what_the_handler_adds() -> Value {
    let ids = json!({"type": "array", "items": {"type": "integer"}});
    let comparison = json!({"type": "object",
        "required": ["id", "created_at", "estimate_runs", "validate_runs", "models", "options", "table"],
        "properties": {"id": {"type": "integer"}, "uuid": {"type": "string"}, "created_at": {"type": "string"},
            "estimate_runs": ids, "validate_runs": ids,
            "models": {"type": "array", "items": {"type": "string"}}, "options": {}, "table": {}}});
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
