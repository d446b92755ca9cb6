//! The OpenAPI 3.1 document of the REST API, written by hand (`/api/openapi.json`).

use serde_json::{Value, json};

fn err(desc: &str) -> Value {
    json!({"description": desc, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn ok_json(desc: &str, schema: Value) -> Value {
    json!({"description": desc, "content": {"application/json": {"schema": schema}}})
}

fn id_param(name: &str, what: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": what, "schema": {"type": "integer"}})
}

fn q(name: &str, desc: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": desc, "schema": schema})
}

fn body(desc: &str, schema: Value) -> Value {
    json!({"required": true, "description": desc, "content": {"application/json": {"schema": schema}}})
}

fn any_obj() -> Value {
    json!({"type": "object"})
}

/// The dates `since` and `until` take (days up to 28, so that every generated one exists).
const DATE_PATTERN: &str = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z)?$";

/// The document.
pub fn document() -> Value {
    let kinds: Value = experiments::Kind::NAMES.iter().copied().collect();
    let spec = json!({"$ref": "#/components/schemas/Spec"});
    let e400 = err("Malformed JSON or bad query parameter");
    let e401 = err("Missing or wrong bearer token (a token is configured)");
    let e404 = err("Unknown id");
    let e409 = err("Conflict: bench busy, e-stop latched, run not running or waiting");
    let e422 = err(
        "Valid JSON that breaks a rule (unknown kind or parameter, value beyond a bench limit); `field` names it",
    );
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "frictionbench bench serve",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "REST API of the friction bench daemon. JSON everywhere; errors are {\"error\", \"field\"}. Times are RFC 3339 UTC; units SI. A configured token (required beyond loopback) is needed by every POST/PUT/DELETE but POST /api/estop (`Authorization: Bearer <token>`), with --token-for-reads by GETs too (header or ?access_token=). Bodies must be application/json; Host must name the server; a foreign Origin on a POST/PUT/DELETE is refused; none of this applies to POST /api/estop, which nothing refuses. Duplicate keys in a body are refused (400)."
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error", "field"], "properties": {
                    "error": {"type": "string", "description": "Message naming the field and the limit or rule"},
                    "field": {"type": ["string", "null"], "description": "e.g. params.velocities[1], batch[2].params.repeats"}}},
                "Spec": {"type": "object", "required": ["kind"], "description": "The spec document of `bench run` (see GET /api/experiments/kinds)", "properties": {
                    "kind": {"enum": kinds.clone()}, "name": {"type": ["string", "null"]}, "params": {"type": ["object", "null"], "description": "null: the kind's defaults"}}},
                "Sample": {"type": "object", "properties": {
                    "t": {"type": "number", "description": "run time [s]"}, "x": {"type": "number", "description": "position [rad or m]"},
                    "v": {"type": "number"}, "u_cmd": {"type": "number", "description": "commanded torque [N m]"},
                    "torque_motor": {"type": "number"}, "torque_sensor": {"type": ["number", "null"]},
                    "segment": {"type": "integer"}, "flags": {"type": "integer"}}},
                "QueueItem": {"type": "object", "properties": {
                    "run_id": {"type": "integer"}, "kind": {"type": "string"}, "name": {"type": "string"},
                    "priority": {"type": "integer"}, "position": {"type": "integer", "description": "1 = next"},
                    "estimate_s": {"type": "number", "description": "estimated duration [s]"},
                    "starts_in_s": {"type": "number", "description": "estimated wait before it starts [s]"},
                    "eta_s": {"type": "number", "description": "estimated time until it ends [s]"}}},
                "Queue": {"type": "object", "properties": {
                    "paused": {"type": "boolean"}, "on_failure": {"enum": ["continue", "stop"]},
                    "estop": {"type": "boolean"},
                    "running": {"type": ["object", "null"], "description": "{run_id, kind, name, estimate_s, remaining_s}"},
                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/QueueItem"}},
                    "waiting": {"type": "integer", "description": "every waiting run, listed or not"},
                    "truncated": {"type": "boolean", "description": "only the first runs are listed (`limit`; the live `queue` event lists 100)"},
                    "eta_total_s": {"type": "number", "description": "until the last item ends [s]"}}},
                "ScheduleEntry": {"type": "object", "properties": {
                    "id": {"type": "integer"}, "run_at": {"type": "string", "format": "date-time"},
                    "recurrence": {"enum": [null, "nightly", "weekly"]}, "priority": {"type": "integer"},
                    "next_run_at": {"type": ["string", "null"], "format": "date-time"},
                    "state": {"enum": ["pending", "done", "failed"]}, "last_run_id": {"type": ["integer", "null"]},
                    "spec": {"$ref": "#/components/schemas/Spec"}, "batch": {"type": "array", "items": {"$ref": "#/components/schemas/Spec"}},
                    "sweep": {"$ref": "#/components/schemas/Sweep"}}},
                "Sweep": {"type": "object", "required": ["spec", "param", "values"], "properties": {
                    "spec": {"$ref": "#/components/schemas/Spec"},
                    "param": {"type": "string", "description": "Dotted path with optional [i] indices into the spec document, e.g. params.velocities, params.settle_s or params.velocities.to; each value replaces what is there"},
                    "values": {"type": "array", "minItems": 1, "maxItems": 1000}}},
                "NewSchedule": {"type": "object", "description": "Exactly one of spec, batch, sweep. Every spec is checked first (422 names the batch index or sweep value and the field).", "properties": {
                    "run_at": {"type": ["string", "null"], "format": "date-time", "description": "default: now"},
                    "recurrence": {"enum": [null, "nightly", "weekly"]}, "priority": {"type": "integer", "minimum": -1000, "maximum": 1000},
                    "spec": {"$ref": "#/components/schemas/Spec"}, "batch": {"type": "array", "items": {"$ref": "#/components/schemas/Spec"}, "minItems": 1, "maxItems": 1000},
                    "sweep": {"$ref": "#/components/schemas/Sweep"}}}
            }
        }
    });
    let mut paths = serde_json::Map::new();
    paths.insert("/api/health".into(), json!({"get": {"summary": "Liveness (it answers) and readiness (`ready`: the bench is connected and no e-stop is latched); never needs the token", "responses": {"200": ok_json("ok", json!({"type": "object", "properties": {"status": {"const": "ok"}, "version": {"type": "string"}, "ready": {"type": "boolean"}, "bench": {"type": "object", "properties": {"connected": {"type": "boolean"}, "estop": {"type": "boolean"}}}, "loop_running": {"type": "boolean"}, "queue": {"type": "object", "properties": {"paused": {"type": "boolean"}, "waiting": {"type": "integer"}}}}}))}}}));
    paths.insert("/api/bench".into(), json!({"get": {"summary": "Bench status: source, connection, busy, run, e-stop, limits, live values, lockstep models", "responses": {"200": ok_json("status", json!({"type": "object", "properties": {
                "lab": {"type": "boolean", "description": "a lab view (bench serve --lab): read-only, no bench attached, every POST/PUT/DELETE 409"},
                "source": {"type": "string"}, "connected": {"type": "boolean"}, "busy": {"type": "boolean"},
                "run_id": {"type": ["integer", "null"]}, "estop": {"type": "boolean"}, "paused": {"type": "boolean"},
                "limits": any_obj(), "live": {"type": "object", "description": "{phase, t, segment, segments, label, sample, samples, overruns, dropped_batches}"},
                "models": {"type": "array", "items": {"type": "string"}}}}))}}}));
    paths.insert("/api/experiments/kinds".into(), json!({"get": {"summary": "Experiment kinds: description, parameters in declaration order (unit, description, default, JSON type, choices), defaults, the parameters' JSON Schema, and the estimated duration of the defaults on this bench", "responses": {"200": ok_json("kinds", json!({"type": "array", "items": {"type": "object", "properties": {
        "kind": {"type": "string"},
        "description": {"type": "string"},
        "params": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"},
            "unit": {"type": "string", "description": "SI unit, \"\" if none"},
            "description": {"type": "string"},
            "default": {},
            "type": {"description": "JSON Schema type(s) of the value"},
            "choices": {"type": ["array", "null"], "items": {"type": "string"}},
        }}},
        "defaults": any_obj(),
        "schema": {"type": "object", "description": "JSON Schema (2020-12) of the kind's params"},
        "estimate_s": {"type": ["number", "null"]},
    }}}))}}}));
    paths.insert("/api/experiments/check".into(), json!({"post": {"summary": "Check a spec against the bench limits (nothing is created)", "requestBody": body("spec document", spec.clone()),
                "responses": {"200": ok_json("valid", json!({"type": "object", "properties": {"ok": {"const": true}, "estimate_s": {"type": "number"}, "max_s": {"type": "number"}, "segments": {"type": "integer"}, "spec": spec.clone()}})), "400": e400, "401": e401, "422": e422}}}));
    paths.insert("/api/runs".into(), json!({
                "get": {"summary": "Runs, newest first", "parameters": [
                    q("kind", "experiment kind", json!({"enum": kinds.clone()})),
                    q("bench", "bench id (bench.toml `bench_id`; `sim` for the simulated bench)", json!({"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"})),
                    q("status", "queued, running, completed, aborted, failed, interrupted", json!({"enum": ["queued", "running", "completed", "aborted", "failed", "interrupted"]})),
                    q("since", "created at or after (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC)", json!({"type": "string", "pattern": DATE_PATTERN})),
                    q("until", "created before (as since)", json!({"type": "string", "pattern": DATE_PATTERN})),
                    q("tag", "only runs with this tag (`bench runs tag`)", json!({"type": "string"})),
                    q("limit", "page size", json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 50})),
                    q("offset", "rows to skip", json!({"type": "integer", "minimum": 0, "default": 0}))],
                    "responses": {"200": ok_json("page", json!({"type": "object", "properties": {"runs": {"type": "array", "items": any_obj()}, "total": {"type": "integer"}}})), "400": e400.clone()}},
                "post": {"summary": "Create a run (status queued at once): enqueue it, or start it now", "parameters": [
                    q("start", "`now`: start at once (409 if the bench is busy or the e-stop latched); absent: enqueue", json!({"enum": ["now"]})),
                    q("priority", "queue priority, higher first", json!({"type": "integer", "default": 0, "minimum": -1000, "maximum": 1000}))],
                    "requestBody": body("spec document", spec.clone()),
                    "responses": {"201": ok_json("created", json!({"type": "object", "properties": {"id": {"type": "integer"}, "status": {"enum": ["queued", "running"]}, "position": {"type": "integer", "description": "0 = running, 1 = next"}, "eta_s": {"type": "number", "description": "estimated time until it ends [s]"}}})),
                        "400": e400.clone(), "401": e401.clone(), "409": e409.clone(), "422": e422.clone()}}
            }));
    paths.insert("/api/runs/{id}".into(), json!({"get": {"summary": "One run (status, timing, interruption log, results, spec, models, comparisons)", "parameters": [id_param("id", "run id")], "responses": {"200": ok_json("run", any_obj()), "404": e404.clone()}}}));
    paths.insert("/api/runs/{id}/results".into(), json!({"get": {"summary": "The run's analysis", "parameters": [id_param("id", "run id")], "responses": {"200": ok_json("analysis", any_obj()), "404": e404.clone(), "409": err("The run has no results (yet): its status says why")}}}));
    paths.insert("/api/runs/{id}/samples".into(), json!({"get": {"summary": "Samples by run time range with decimation, with every lockstep model's output", "parameters": [id_param("id", "run id"),
                q("from", "first run time [s]", json!({"type": "number"})), q("to", "last run time [s]", json!({"type": "number"})),
                q("every", "keep samples whose index is a multiple of this", json!({"type": "integer", "minimum": 1, "maximum": 1_000_000_000_u64, "default": 1})),
                q("format", "json (columnar) or csv (as bench runs export)", json!({"enum": ["json", "csv"], "default": "json"}))],
                "responses": {"200": {"description": "columnar JSON {models, idx, t, x, v, u_cmd, torque_motor, torque_sensor, segment, flags, outputs: {model: [...]}} (NaN as null) or CSV", "content": {"application/json": {"schema": any_obj()}, "text/csv": {"schema": {"type": "string"}}}}, "400": e400.clone(), "404": e404.clone(), "503": err("Four sample downloads are already going")}}}));
    paths.insert("/api/runs/{id}/export".into(), json!({"get": {"summary": "The whole run as a file (Content-Disposition: attachment)", "parameters": [id_param("id", "run id"), q("format", "csv, json or parquet, streamed page by page (columns idx, t, x, v, u_cmd, torque_motor, torque_sensor, segment, flags, then one per model output named by its id; JSON is {run, columns, rows}; Parquet carries units as field metadata and run, spec, units and software version as file metadata)", json!({"enum": ["csv", "json", "parquet"], "default": "csv"})), q("units", "CSV: `true` adds a first line `# units: ...` with each column's unit; JSON: a `units` array after `columns`", json!({"type": "boolean", "default": false}))],
                "responses": {"200": {"description": "file", "content": {"text/csv": {"schema": {"type": "string"}}, "application/json": {"schema": {"type": "object"}}, "application/vnd.apache.parquet": {"schema": {"type": "string", "contentEncoding": "binary"}}}}, "400": e400.clone(), "404": e404.clone(), "503": err("Four sample downloads are already going")}}}));
    paths.insert("/api/runs/{id}/stop".into(), json!({"post": {"summary": "Finish the current segment, then end (status aborted, reason \"stop requested\"); a waiting run is removed from the queue", "parameters": [id_param("id", "run id")], "responses": {"202": ok_json("requested", any_obj()), "401": e401.clone(), "404": e404.clone(), "409": e409.clone()}}}));
    paths.insert("/api/runs/{id}/abort".into(), json!({"post": {"summary": "Safe state now (status aborted); a waiting run is cancelled (reason \"removed from the queue\")", "parameters": [id_param("id", "run id")], "responses": {"202": ok_json("requested", any_obj()), "401": e401.clone(), "404": e404.clone(), "409": e409.clone()}}}));
    paths.insert("/api/estop".into(), json!({"post": {"summary": "E-stop, latched: needs no token, waits in no queue and is refused for nothing (any content type, body, Origin or host name); aborts the running run (or, with none, opens the drive link itself), answers once the drive reads back disabled (`safe_state.confirmed`), pauses the queue; the reason ({\"reason\"} in JSON, reason= in a form, else the body as text, at most 500 bytes) is persisted with the latch and the sender (`from`) logged", "requestBody": {"required": false, "content": {"application/json": {"schema": {}}, "application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {"reason": {"type": "string"}}}}, "text/plain": {"schema": {"type": "string"}}}}, "responses": {"200": ok_json("latched", json!({"type": "object", "properties": {"estop": {"const": true}, "paused": {"const": true}, "aborted_run": {"type": ["integer", "null"]}, "safe_state": {"type": "object", "properties": {"aborted_run": {"type": ["integer", "null"]}, "confirmed": {"type": "boolean"}, "after_us": {"type": "number"}, "detail": {"type": "string"}}}, "from": {"type": "object", "properties": {"remote": {"type": ["string", "null"]}, "origin": {"type": ["string", "null"]}, "host": {"type": ["string", "null"]}}}}}))}}}));
    paths.insert("/api/faults/reset".into(), json!({"post": {"summary": "Clear a latched drive fault (an operator's action: no run ever clears one); refused while a run is running", "responses": {"200": ok_json("reset", json!({"type": "object", "properties": {"was_faulted": {"type": "boolean"}, "fault_code": {"type": ["integer", "null"]}, "cleared": {"type": "boolean"}, "status": {"type": ["integer", "null"]}}})), "401": e401.clone(), "409": e409.clone(), "502": ok_json("the drive could not be reached", any_obj())}}}));
    paths.insert("/api/estop/reset".into(), json!({"post": {"summary": "Clear the e-stop latch (the queue stays paused: resume with PUT /api/queue {\"paused\": false})", "responses": {"200": ok_json("cleared", any_obj()), "401": e401.clone()}}}));
    paths.insert("/api/queue".into(), json!({
                "get": {"summary": "The queue with ETAs", "parameters": [q("limit", "list only the first runs (the count and the ETA cover them all)", json!({"type": "integer", "minimum": 0, "maximum": 1_000_000}))], "responses": {"200": ok_json("queue", json!({"$ref": "#/components/schemas/Queue"})), "400": e400.clone()}},
                "put": {"summary": "Reorder (a permutation of the waiting run ids), pause/resume, failure policy; all checked before any is applied", "requestBody": body("edits", json!({"type": "object", "properties": {"order": {"type": "array", "items": {"type": "integer"}}, "paused": {"type": "boolean"}, "on_failure": {"enum": ["continue", "stop"]}}})),
                    "responses": {"200": ok_json("queue", json!({"$ref": "#/components/schemas/Queue"})), "400": e400.clone(), "401": e401.clone(), "409": err("Resuming while the e-stop is latched"), "422": e422.clone()}}
            }));
    paths.insert("/api/queue/{run_id}".into(), json!({"delete": {"summary": "Remove a waiting run (status aborted, reason \"removed from the queue\")", "parameters": [id_param("run_id", "run id")], "responses": {"204": {"description": "removed"}, "401": e401.clone(), "404": e404.clone(), "409": err("The run is running or finished")}}}));
    paths.insert("/api/schedule".into(), json!({
                "get": {"summary": "Schedule entries", "responses": {"200": ok_json("entries", json!({"type": "array", "items": {"$ref": "#/components/schemas/ScheduleEntry"}}))}},
                "post": {"summary": "Add an entry: at run_at (and every night or week) its specs are enqueued with its priority", "requestBody": body("entry", json!({"$ref": "#/components/schemas/NewSchedule"})),
                    "responses": {"201": ok_json("entry", json!({"$ref": "#/components/schemas/ScheduleEntry"})), "400": e400.clone(), "401": e401.clone(), "422": e422.clone()}}
            }));
    paths.insert("/api/schedule/{id}".into(), json!({"delete": {"summary": "Delete an entry", "parameters": [id_param("id", "entry id")], "responses": {"204": {"description": "deleted"}, "401": e401.clone(), "404": e404.clone()}}}));
    paths.insert("/api/models".into(), json!({"get": {"summary": "Friction models with parameter docs, units and defaults", "responses": {"200": ok_json("catalogue", json!({}))}}}));
    paths.insert("/api/parameter-sets".into(), json!({"get": {"summary": "Parameter sets, newest first", "parameters": [q("model", "model id", json!({"type": "string"}))], "responses": {"200": ok_json("sets", json!({"type": "array", "items": any_obj()})), "400": e400.clone()}}}));
    paths.insert("/api/parameter-sets/{id}".into(), json!({"get": {"summary": "One parameter set", "parameters": [id_param("id", "parameter set id")], "responses": {"200": ok_json("set", any_obj()), "404": e404.clone()}}}));
    let running = json!({"type": "object", "properties": {"id": {"type": "integer"}, "what": {"type": "string"}, "started": {"type": "string"}, "elapsed_s": {"type": "number"}, "timeout_s": {"type": "number"}, "max_threads": {"type": ["integer", "null"]}, "cancelling": {"type": "boolean"},
        "progress": {"type": "object", "properties": {"fit": {"type": "integer"}, "iter": {"type": "integer"}, "best_mse": {"type": "number"}}}}});
    let timeout =
        json!({"type": "number", "exclusiveMinimum": 0, "maximum": 86400, "default": 600});
    paths.insert("/api/fits".into(), json!({
                "get": {"summary": "Fits and comparisons in progress, with their progress (also `fit` events on /api/live)", "responses": {"200": ok_json("fits", json!({"type": "object", "properties": {"fits": {"type": "array", "items": running}}}))}},
                "post": {"summary": "Fit a model to a stored run (as bench fit --run --json, in the daemon's process) within timeout_s (default 600 s; the fit stops there with termination timeout); the result is saved as a parameter set",
                "requestBody": body("fit", json!({"type": "object", "required": ["model", "procedure", "run"], "properties": {"model": {"type": "string"}, "procedure": {"type": "string"}, "run": {"type": "integer"}, "given": any_obj(), "name": {"type": "string"}, "segments": {"type": "string", "description": "A..B"}, "t_range": {"type": "string", "description": "A..B [s]"}, "timeout_s": timeout.clone()}})),
                "responses": {"201": ok_json("fitted", json!({"type": "object", "properties": {"parameter_set_id": {"type": "integer"}, "fit_id": {"type": "integer"}, "report": any_obj()}})), "400": e400.clone(), "401": e401.clone(), "404": e404.clone(), "409": err("Cancelled by DELETE /api/fits/{id}: nothing was stored"), "422": e422.clone(), "503": err("Two fits or comparisons already going (one while a run is on the bench)")}}}));
    paths.insert("/api/fits/{id}".into(), json!({"delete": {"summary": "Cancel a fit or comparison in progress: it stops at its next iteration, stores nothing, and its request answers 409", "parameters": [{"name": "id", "in": "path", "required": true, "description": "fit id (fit_id, GET /api/fits)", "schema": {"type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991_u64}}], "responses": {"200": ok_json("cancelling", json!({"type": "object", "properties": {"cancelled": {"type": "integer"}}})), "401": e401.clone(), "404": err("No such fit in progress"), "422": e422.clone()}}}));
    paths.insert("/api/comparisons".into(), json!({"post": {"summary": "Fit models on estimation runs and score them on validation runs (as bench compare --json); stored with the runs",
                "requestBody": body("comparison", json!({"type": "object", "required": ["estimate", "validate", "models"], "properties": {"estimate": {"type": "array", "items": {"type": "integer"}}, "validate": {"type": "array", "items": {"type": "integer"}}, "models": {"type": "array", "items": {"type": "string"}}, "replay": {"enum": ["velocity", "torque"]}, "max_iters": {"type": "integer"}, "timeout_s": timeout}})),
                "responses": {"201": ok_json("table", any_obj()), "400": e400.clone(), "401": e401.clone(), "404": e404.clone(), "409": err("Cancelled by DELETE /api/fits/{id}: nothing was stored"), "422": e422.clone(), "503": err("Two fits or comparisons already going (one while a run is on the bench)")}}}));
    paths.insert("/api/live".into(), json!({"get": {"summary": "Server-Sent Events: sample ({idx, sample, outputs, models}, <= 100 Hz), status (as GET /api/bench, 5 Hz), run ({run_id, status}), queue (as GET /api/queue), fit ({fit_id, progress: {fit, iter, best_mse}}, <= 4 Hz per fit), dropped ({frames}: frames this client lost by reading too slowly)", "responses": {"200": {"description": "event stream", "content": {"text/event-stream": {"schema": {"type": "object", "required": ["data"], "properties": {"event": {"enum": ["sample", "status", "run", "queue", "fit", "dropped"]}, "data": {"type": "string", "description": "the event's JSON"}, "id": {"type": "string"}, "retry": {"type": "integer"}}}}}}}}}));
    paths.insert("/api/openapi.json".into(), json!({"get": {"summary": "This document", "responses": {"200": ok_json("OpenAPI 3.1", any_obj())}}}));
    paths.insert("/metrics".into(), json!({"get": {"summary": "Prometheus text format (0.0.4): gauges frictionbench_queue_length, queue_paused, estop_latched, bench_connected, schedule_entries, live_clients, check_workers_busy, run_active, run_id, run_time_seconds, run_overruns, run_dropped_batches, run_samples (the run ones of the running or last run)", "responses": {"200": {"description": "exposition text", "content": {"text/plain": {"schema": {"type": "string"}}}}}}}));
    for ops in paths.values_mut() {
        for (method, op) in ops.as_object_mut().into_iter().flatten() {
            guarded(method, op);
        }
    }
    doc["paths"] = Value::Object(paths);
    doc
}

/// The answers of the checks every request passes (`guard.rs`, the body limit, the pool).
fn guarded(method: &str, op: &mut Value) {
    let path_is_heavy = op["summary"].as_str().is_some_and(|s| {
        s.starts_with("Check a spec")
            || s.starts_with("Create a run")
            || s.starts_with("Add an entry")
    });
    let has_body = op.get("requestBody").is_some();
    let op_summary = op["summary"].as_str().unwrap_or_default().to_string();
    let Some(r) = op["responses"].as_object_mut() else {
        return;
    };
    let mut add = |code: &str, desc: &str| {
        r.entry(code).or_insert_with(|| err(desc));
    };
    add(
        "421",
        "Host does not name this server (its address, localhost or an allowed_hosts entry)",
    );
    if method != "get" {
        add(
            "403",
            "Origin is a different host:port than Host (a cross-site request)",
        );
        add(
            "409",
            "A lab view (bench serve --lab): read-only, no bench attached",
        );
        add(
            "415",
            "A request body that is not Content-Type: application/json",
        );
    } else if !op_summary.starts_with("Liveness") {
        add(
            "401",
            "Missing or wrong bearer token (with --token-for-reads; not /api/health)",
        );
    }
    if has_body {
        add("413", "Body over 2 MiB");
    }
    if path_is_heavy {
        add("503", "No plan-check worker free within 0.5 s");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_endpoint_is_documented() {
        let doc = super::document();
        let paths = doc["paths"].as_object().unwrap();
        assert_eq!(paths.len(), 27);
        for (p, ops) in paths {
            for (m, op) in ops.as_object().unwrap() {
                assert!(op["responses"].is_object(), "{m} {p}");
                assert!(op["responses"]["421"].is_object(), "{m} {p}");
            }
        }
        let post_runs = &paths["/api/runs"]["post"]["responses"];
        for code in ["403", "413", "415", "503"] {
            assert!(post_runs[code].is_object(), "{code}");
        }
        assert!(paths["/api/health"]["get"]["responses"]["401"].is_null());
    }
}
