//! The live stream's events against the schema the service publishes (`LiveEvent` in
//! `GET /api/openapi.json`): every event a real run and a fit on the in-process daemon send,
//! checked by an independent validator (jsonschema-rs from PyPI, in the schemathesis
//! environment scripts/test.sh makes, target/stenv).

use crate::daemon::Daemon;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

/// The six event names the stream documents.
const EVENTS: [&str; 6] = ["sample", "status", "run", "queue", "fit", "dropped"];

/// Reads `GET /api/live` on `addr`, sending each `{event, data}` to `out` until the receiver
/// goes away.
fn listen(addr: &str, out: mpsc::Sender<Value>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET /api/live HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut r = BufReader::new(s);
    let (mut line, mut event) = (String::new(), String::new());
    while r.read_line(&mut line).unwrap_or(0) > 0 {
        let l = line.trim_end();
        if let Some(e) = l.strip_prefix("event: ") {
            event = e.to_string();
        } else if let Some(data) = l.strip_prefix("data: ") {
            let data: Value = serde_json::from_str(data).unwrap();
            if out.send(json!({"event": event, "data": data})).is_err() {
                return;
            }
        }
        line.clear();
    }
}

/// The Python with jsonschema-rs: `$FRICTIONBENCH_SCHEMA_PYTHON` (scripts/test.sh sets it; a
/// full test run fails without it, other runs skip with a note).
pub(crate) fn schema_python() -> Option<String> {
    let python = std::env::var("FRICTIONBENCH_SCHEMA_PYTHON").ok();
    if python.is_none() {
        assert!(
            std::env::var_os("FRICTIONBENCH_REQUIRE_PG").is_none(),
            "FRICTIONBENCH_SCHEMA_PYTHON is not set (scripts/test.sh makes target/stenv)"
        );
        eprintln!("skipped: FRICTIONBENCH_SCHEMA_PYTHON is not set");
    }
    python
}

/// The sweep's static points: enough velocities for a Stribeck curve fit.
fn sweep() -> Value {
    json!({"kind": "constant_velocity_sweep", "name": "live-schema", "params": {
        "velocities": [0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0], "directions": "positive",
        "settle_s": 0.3, "measure_s": 0.3, "repeats": 1}})
}

#[test]
fn every_live_event_of_a_run_and_a_fit_validates_against_the_published_schema() {
    let Some(python) = schema_python() else {
        return;
    };
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let (tx, rx) = mpsc::channel();
    let addr = d.addr.clone();
    std::thread::spawn(move || listen(&addr, tx));
    // The first status says the stream is open before the run starts.
    let first = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    let r = d.req("POST", "/api/runs?start=now", Some(&sweep()));
    assert_eq!(r.status, 201, "{}", r.text());
    let run = r.json()["id"].as_i64().unwrap();
    assert_eq!(
        d.wait_final(run, Duration::from_secs(60))["status"],
        "completed"
    );
    let fit = json!({"model": "stribeck_exp", "procedure": "static_curve", "run": run});
    // Its iterations send `fit` events whether or not the fitted set is valid in the end.
    let answer = d.req("POST", "/api/fits", Some(&fit)).text();
    // Everything up to the fit's events and the status after them.
    let mut events = vec![first];
    let mut seen = BTreeSet::new();
    while !(seen.contains("fit") && seen.contains("run") && seen.contains("sample")) {
        let ev = rx.recv_timeout(Duration::from_secs(20));
        let ev = ev.unwrap_or_else(|_| panic!("only {seen:?} came; the fit answered {answer}"));
        seen.insert(ev["event"].as_str().unwrap().to_string());
        events.push(ev);
    }
    // No client in a test reads slowly enough to lose frames (the server's and the kernel's
    // buffers hold megabytes): `dropped` is the service's own type, serialised.
    let dropped = bench_service::live_events::Dropped { frames: 3 };
    events.push(json!({"event": "dropped", "data": dropped}));
    let names: BTreeSet<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(
        names,
        BTreeSet::from(EVENTS),
        "every kind of event is checked"
    );
    let doc = d.json("/api/openapi.json");
    let bad = validate(&python, &doc, &events, dir.path());
    assert!(
        bad.is_empty(),
        "events outside LiveEvent:\n{}",
        bad.join("\n")
    );
    // The checker sees a wrong one: a `run` event without its status.
    let wrong = [json!({"event": "run", "data": {"run_id": run}})];
    assert_eq!(validate(&python, &doc, &wrong, dir.path()).len(), 1);
}

/// The events (of `events`) that do not validate against `LiveEvent` in `doc`, each with its
/// errors.
fn validate(python: &str, doc: &Value, events: &[Value], dir: &std::path::Path) -> Vec<String> {
    validate_as(python, doc, "LiveEvent", events, dir)
}

/// The values that do not validate against the schema `name` of `doc`'s components, each as
/// its line number (from 1) and its errors.
pub(crate) fn validate_as(
    python: &str,
    doc: &Value,
    name: &str,
    events: &[Value],
    dir: &std::path::Path,
) -> Vec<String> {
    let (doc_file, events_file) = (dir.join("openapi.json"), dir.join("events.jsonl"));
    std::fs::write(&doc_file, doc.to_string()).unwrap();
    let lines: Vec<String> = events.iter().map(Value::to_string).collect();
    std::fs::write(&events_file, lines.join("\n")).unwrap();
    let script = r##"
import json, sys, jsonschema_rs
doc = json.load(open(sys.argv[1]))
v = jsonschema_rs.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema",
    "$ref": "#/components/schemas/" + sys.argv[3], "components": doc["components"]})
for n, line in enumerate(open(sys.argv[2]), 1):
    ev = json.loads(line)
    errs = [f"{e.message} at {list(e.instance_path)}" for e in v.iter_errors(ev)]
    if errs:
        print(n, ev.get("event", ""), "; ".join(errs[:3]))
"##;
    let out = Command::new(python)
        .args(["-c", script])
        .args([&doc_file, &events_file])
        .arg(name)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}
