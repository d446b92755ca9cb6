//! `bench serve --sim` over real HTTP (raw HTTP/1.1 on `std::net::TcpStream`): a spec posted
//! runs and its samples come back (JSON, CSV, Parquet); bad input is 4xx and changes nothing;
//! the bearer token on a non-loopback listener; e-stop and stop; ten live clients, one never
//! reading. The daemon harness is `daemon.rs`; the queue's tests are `serve_queue.rs`.

use crate::daemon::{Daemon, request};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// A quick spec: 0.3 s settle + `measure_s` at 0.5 rad/s.
pub(crate) fn tiny(name: &str, measure_s: f64) -> Value {
    json!({"kind": "constant_velocity_sweep", "name": name, "params": {
        "velocities": [0.5], "directions": "positive", "settle_s": 0.3,
        "measure_s": measure_s, "repeats": 1}})
}

#[test]
fn a_posted_spec_runs_and_its_samples_come_back_as_json_csv_and_parquet() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(&dir.path().join("runs.db"), "127.0.0.1:0", &[]);
    assert_eq!(d.json("/api/health")["status"], "ok");
    let r = d.req("POST", "/api/runs", Some(&tiny("served", 0.7)));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    let id = created["id"].as_i64().unwrap();
    assert!(["queued", "running"].contains(&created["status"].as_str().unwrap()));
    assert!(created["eta_s"].as_f64().unwrap() >= 1.0, "{created}");
    let run = d.wait_final(id, Duration::from_secs(30));
    assert_eq!(run["status"], "completed", "{run}");
    // Nothing interrupted it; the watchdog read back is in its run log, not its interruptions.
    assert_eq!(run["interruption_log"], serde_json::json!([]), "{run}");
    assert!(
        run["run_log"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["reason"].as_str().unwrap().ends_with("s (read back)")),
        "{run}"
    );
    // One sample per control period over the settle and measure segments (1 s at 1 kHz);
    // periods a loaded machine makes the loop miss are skipped, not recorded twice.
    let n = run["sample_count"].as_u64().unwrap();
    assert!(n >= 500, "{n} samples");
    assert!(d.get(&format!("/api/runs/{id}/results")).status == 200);

    // JSON, columnar, all of it.
    let s = d.json(&format!("/api/runs/{id}/samples"));
    let models: Vec<String> = serde_json::from_value(s["models"].clone()).unwrap();
    assert!(models.contains(&"lugre".to_string()), "{models:?}");
    for col in [
        "idx",
        "t",
        "x",
        "v",
        "u_cmd",
        "torque_motor",
        "torque_sensor",
        "segment",
        "flags",
    ] {
        assert_eq!(s[col].as_array().unwrap().len() as u64, n, "{col}");
    }
    for m in &models {
        assert_eq!(s["outputs"][m].as_array().unwrap().len() as u64, n, "{m}");
    }
    let t: Vec<f64> = serde_json::from_value(s["t"].clone()).unwrap();
    assert!(t.windows(2).all(|w| w[1] > w[0]));
    assert!(
        t[t.len() - 1] >= 0.7,
        "the measure segment alone lasts 0.7 s: {t:?}"
    );
    // A range, decimated.
    let part = d.json(&format!("/api/runs/{id}/samples?from=0.2&to=0.6&every=10"));
    let idx: Vec<u64> = serde_json::from_value(part["idx"].clone()).unwrap();
    let pt: Vec<f64> = serde_json::from_value(part["t"].clone()).unwrap();
    assert!(!idx.is_empty() && idx.iter().all(|i| i % 10 == 0));
    assert!(pt.iter().all(|t| (0.2..=0.6).contains(t)), "{pt:?}");
    // CSV: the same rows as `bench runs export`.
    let csv = d.get(&format!("/api/runs/{id}/samples?format=csv"));
    assert_eq!(csv.status, 200);
    assert!(csv.header("content-type").unwrap().starts_with("text/csv"));
    let text = csv.text();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags,"));
    assert_eq!(header.split(',').count(), 9 + models.len());
    assert_eq!(lines.count() as u64, n);
    let export = d.get(&format!("/api/runs/{id}/export?format=csv"));
    assert_eq!(export.status, 200);
    assert!(
        export
            .header("content-disposition")
            .unwrap()
            .contains("attachment")
    );
    assert_eq!(export.text().lines().count() as u64, n + 1);

    // Parquet: magic at both ends, the row count in its footer.
    let pq = d.get(&format!("/api/runs/{id}/export?format=parquet"));
    assert_eq!(pq.status, 200);
    assert!(
        pq.header("content-disposition")
            .unwrap()
            .contains(".parquet")
    );
    let b = &pq.body;
    assert_eq!((&b[..4], &b[b.len() - 4..]), (&b"PAR1"[..], &b"PAR1"[..]));
    let path = dir.path().join("run.parquet");
    std::fs::write(&path, b).unwrap();
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(reader.metadata().file_metadata().num_rows() as u64, n);
    let names: Vec<&str> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(names.join(","), header, "the CSV's column names");
    // `units=true`: one comment line before the same CSV; a bad value is a 400 naming it.
    let with = d.get(&format!("/api/runs/{id}/export?format=csv&units=true"));
    assert_eq!(with.status, 200);
    let with = with.text();
    let (line, rest) = with.split_once('\n').unwrap();
    assert!(line.starts_with("# units: 1,s,rad,rad/s,"), "{line}");
    assert_eq!(rest, d.get(&format!("/api/runs/{id}/export")).text());
    let bad = d.get(&format!("/api/runs/{id}/export?units=yes"));
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["field"], "units");

    // The listing, the catalogue, the OpenAPI document, the dashboard placeholder.
    let page = d.json("/api/runs?kind=constant_velocity_sweep&status=completed&limit=10");
    assert_eq!(page["total"], 1);
    assert_eq!(page["runs"][0]["id"], id);
    // Every kind's defaults plan on this bench; its parameters carry units, in declaration order.
    let kinds = d.json("/api/experiments/kinds");
    for k in kinds.as_array().unwrap() {
        assert!(k["estimate_s"].as_f64().is_some_and(|s| s > 0.0), "{k}");
        assert!(!k["params"].as_array().unwrap().is_empty(), "{k}");
    }
    let sweep = &kinds[0];
    assert_eq!(sweep["kind"], "constant_velocity_sweep");
    assert_eq!(sweep["params"][0]["name"], "velocities");
    assert_eq!(sweep["params"][0]["unit"], "rad/s");
    assert_eq!(sweep["params"][1]["choices"][2], "negative");
    assert_eq!(sweep["schema"]["additionalProperties"], false);
    let doc = d.json("/api/openapi.json");
    assert_eq!(doc["openapi"], "3.1.0");
    for p in [
        "/api/runs",
        "/api/runs/{id}/samples",
        "/api/queue",
        "/api/schedule",
        "/api/live",
        "/api/estop",
    ] {
        assert!(doc["paths"].get(p).is_some(), "{p}");
    }
    let home = d.get("/");
    assert_eq!(home.status, 200);
    assert!(
        home.text().contains("npm ci && npm run build")
            || home.text().contains("npm ci &amp;&amp; npm run build")
    );
}

#[test]
fn bad_requests_are_4xx_name_the_field_and_change_nothing() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let beyond = json!({"kind": "constant_velocity_sweep", "params": {"velocities": [0.1, 500.0]}});
    let r = d.req("POST", "/api/runs", Some(&beyond));
    assert_eq!(r.status, 422, "{}", r.text());
    let e = r.json();
    assert_eq!(e["field"], "params.velocities[1]");
    assert!(
        e["error"].as_str().unwrap().contains("velocity limit"),
        "{e}"
    );
    let malformed = request(&d.addr, "POST", "/api/runs", Some(b"{\"kind\": "), None);
    assert_eq!(malformed.status, 400, "{}", malformed.text());
    assert!(malformed.json()["error"].is_string());
    assert_eq!(d.get("/api/runs/999").status, 404);
    assert_eq!(d.get("/api/runs/999").json()["field"], "id");
    // A batch: the index and the field.
    let sched = json!({"run_at": "2030-01-01T00:00:00Z", "batch": [tiny("a", 0.5), beyond]});
    let r = d.req("POST", "/api/schedule", Some(&sched));
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["field"], "batch[1].params.velocities[1]");
    // A mistyped parameter: its path from the typed reading, in the field and leading the message.
    let mistyped = json!({"kind": "frictional_lag", "params": {"amplitude_rad_s": "big"}});
    let sched = json!({"run_at": "2030-01-01T00:00:00Z", "batch": [tiny("a", 0.5), mistyped]});
    let r = d.req("POST", "/api/schedule", Some(&sched));
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json()["field"], "batch[1].params.amplitude_rad_s");
    let error = r.json()["error"].as_str().unwrap().to_string();
    let head = "batch[1].params.amplitude_rad_s: invalid type: string \"big\"";
    assert!(error.starts_with(head), "{error}");
    // A start in the past (a wrong year) would move the bench at once: refused, nothing kept.
    let past = json!({"run_at": "2020-01-01T02:00:00Z", "batch": [tiny("a", 0.5), tiny("b", 0.5)]});
    let r = d.req("POST", "/api/schedule", Some(&past));
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json()["field"], "run_at", "{}", r.text());
    assert!(r.text().contains("start_if_past"), "{}", r.text());

    let bad: Vec<(&str, &str, Option<&[u8]>, u16)> = vec![
        ("POST", "/api/runs", Some(b"[1,2]"), 422),
        ("POST", "/api/runs", Some(b"{\"kind\": \"no_such_kind\"}"), 422),
        ("POST", "/api/runs", Some(b"{\"kind\": \"prbs\", \"params\": {\"bogus\": 1}}"), 422),
        ("POST", "/api/runs", Some(b"{\"kind\": \"prbs\", \"extra\": 1}"), 422),
        ("POST", "/api/runs", Some(b""), 400),
        ("POST", "/api/runs", Some(b"\xff\xfe"), 400),
        ("POST", "/api/runs?start=later", Some(b"{\"kind\": \"prbs\"}"), 400),
        ("POST", "/api/runs?priority=high", Some(b"{\"kind\": \"prbs\"}"), 400),
        ("POST", "/api/runs?priority=99999999", Some(b"{\"kind\": \"prbs\"}"), 422),
        ("POST", "/api/experiments/check", Some(b"null"), 422),
        ("GET", "/api/runs/abc", None, 404),
        ("GET", "/api/runs/-1/samples", None, 404),
        ("GET", "/api/runs/99999999999999999999999", None, 404),
        ("GET", "/api/runs/999/results", None, 404),
        ("GET", "/api/runs/999/export?format=parquet", None, 404),
        ("GET", "/api/runs?limit=5000", None, 400),
        ("GET", "/api/runs?limit=-1", None, 400),
        ("GET", "/api/runs?status=bogus", None, 400),
        ("GET", "/api/runs?since=yesterday", None, 400),
        ("GET", "/api/runs?bogus=1", None, 400),
        ("GET", "/api/runs?offset=x", None, 400),
        ("PUT", "/api/queue", Some(b"{\"order\": [12345]}"), 422),
        ("PUT", "/api/queue", Some(b"{\"paused\": \"yes\"}"), 422),
        ("PUT", "/api/queue", Some(b"{\"on_failure\": \"explode\"}"), 422),
        ("PUT", "/api/queue", Some(b"{\"paused\": false, \"extra\": 1}"), 422),
        ("PUT", "/api/queue", Some(b"{oops"), 400),
        ("DELETE", "/api/queue/999", None, 404),
        ("POST", "/api/runs/999/abort", None, 404),
        ("POST", "/api/runs/999/stop", None, 404),
        ("POST", "/api/schedule", Some(b"{\"run_at\": \"tomorrow\", \"spec\": {\"kind\": \"prbs\"}}"), 422),
        ("POST", "/api/schedule", Some(b"{\"recurrence\": \"hourly\", \"spec\": {\"kind\": \"prbs\"}}"), 422),
        ("POST", "/api/schedule", Some(b"{\"spec\": {\"kind\": \"prbs\"}, \"batch\": []}"), 422),
        ("POST", "/api/schedule", Some(b"{\"batch\": []}"), 422),
        ("POST", "/api/schedule", Some(b"{\"sweep\": {\"spec\": {\"kind\": \"prbs\"}, \"param\": \"params.periods\", \"values\": [1, 0]}}"), 422),
        ("POST", "/api/schedule", Some(b"{\"sweep\": {\"spec\": {\"kind\": \"prbs\"}, \"param\": \"kind.x\", \"values\": [1]}}"), 422),
        ("DELETE", "/api/schedule/999", None, 404),
        ("DELETE", "/api/schedule/x", None, 404),
        ("POST", "/api/fits", Some(b"{}"), 422),
        ("POST", "/api/fits", Some(b"{\"model\": \"lugre\", \"procedure\": \"static_curve\", \"run\": 999}"), 404),
        ("POST", "/api/comparisons", Some(b"{\"estimate\": [999], \"validate\": [999], \"models\": [\"lugre\"]}"), 404),
        ("POST", "/api/comparisons", Some(b"{\"estimate\": [\"--db\"], \"validate\": [1], \"models\": [\"lugre\"]}"), 422),
        ("GET", "/api/parameter-sets/999", None, 404),
        ("GET", "/api/nope", None, 404),
        ("PATCH", "/api/queue", Some(b"{}"), 405),
        // 33 tags (duplicates count): over the 32 the document allows.
        ("PATCH", "/api/runs/999", Some(br#"{"add": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r","s","t","u","v","w","x","y","z","a0","b0","c0","d0","e0","f0","a"]}"#), 400),
    ];
    for (method, path, body, want) in &bad {
        let r = request(&d.addr, method, path, *body, None);
        assert_eq!(r.status, *want, "{method} {path}: {}", r.text());
        if r.status != 405 {
            assert!(
                r.json()["error"].is_string(),
                "{method} {path}: {}",
                r.text()
            );
        }
    }
    // The sweep names the value.
    let r = request(&d.addr, "POST", "/api/schedule", bad[33].2, None);
    assert_eq!(
        r.json()["field"],
        "sweep.values[1].params.periods",
        "{}",
        r.text()
    );
    // Nothing changed.
    assert_eq!(d.runs_total(), 0);
    let q = d.json("/api/queue");
    assert_eq!(
        (q["items"].as_array().unwrap().len(), &q["paused"]),
        (0, &json!(false))
    );
    assert_eq!(d.json("/api/schedule"), json!([]));
}

#[test]
fn a_non_loopback_listener_needs_the_token_for_mutating_calls() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    // No token: refuses to start.
    let o = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["serve", "--sim", "--listen", "0.0.0.0:0", "--db"])
        .arg(&db)
        .env_remove("FRICTIONBENCH_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("token"));

    let mut d = Daemon::start(&db, "0.0.0.0:0", &["--token", "s3cret-s3cret-s3cret"]);
    assert_eq!(d.get("/api/health").status, 200);
    let spec = tiny("auth", 0.2);
    let r = d.req("POST", "/api/runs", Some(&spec));
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(r.json()["field"], "Authorization");
    d.token = Some("wrong".into());
    assert_eq!(d.req("POST", "/api/runs", Some(&spec)).status, 401);
    assert_eq!(
        d.req("PUT", "/api/queue", Some(&json!({"paused": true})))
            .status,
        401
    );
    assert_eq!(d.req("DELETE", "/api/schedule/1", None).status, 401);
    assert_eq!(d.req("POST", "/api/faults/reset", None).status, 401);
    assert_eq!(d.req("POST", "/api/estop/reset", None).status, 401);
    assert_eq!(d.runs_total(), 0);
    assert_eq!(d.json("/api/bench")["estop"], false);
    // The e-stop only makes the bench safer: it needs no token.
    let e = d.req("POST", "/api/estop", None);
    assert_eq!(e.status, 200, "{}", e.text());
    assert_eq!(e.json()["safe_state"]["confirmed"], true);
    assert_eq!(d.json("/api/bench")["estop"], true);
    d.token = Some("s3cret-s3cret-s3cret".into());
    assert_eq!(d.req("POST", "/api/estop/reset", None).status, 200);
    assert_eq!(
        d.req("PUT", "/api/queue", Some(&json!({"paused": true})))
            .status,
        200
    );
    assert_eq!(d.req("POST", "/api/runs", Some(&spec)).status, 201);
    assert_eq!(d.runs_total(), 1);
}

#[test]
fn estop_aborts_the_run_disables_the_drive_latches_and_stop_finishes_the_segment() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(&dir.path().join("runs.db"), "127.0.0.1:0", &[]);
    // E-stop with nothing running still latches.
    let long = tiny("long", 20.0);
    let r = d.req("POST", "/api/runs?start=now", Some(&long));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    d.wait_live_samples(500);
    // Busy: start=now is refused, nothing created.
    let total = d.runs_total();
    assert_eq!(
        d.req("POST", "/api/runs?start=now", Some(&tiny("x", 0.2)))
            .status,
        409
    );
    assert_eq!(d.runs_total(), total);

    let r = d.req("POST", "/api/estop", None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["aborted_run"], id);
    let run = d.wait_final(id, Duration::from_secs(10));
    assert_eq!(run["status"], "aborted", "{run}");
    assert_eq!(run["reason_code"], "estop", "{run}");
    let log: Vec<String> = run["interruption_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reason"].as_str().unwrap().to_string())
        .collect();
    assert!(log.iter().any(|l| l.contains("e-stop")), "{log:?}");
    let disabled = log
        .iter()
        .find(|l| l.contains("drive disabled") && l.contains("after the stop decision"))
        .unwrap_or_else(|| panic!("no drive-disabled line: {log:?}"));
    eprintln!("e-stop: run {id}: {disabled}");
    // Latched: the queue is paused, nothing starts, resuming is refused until reset.
    let bench = d.json("/api/bench");
    assert_eq!(
        (bench["estop"].as_bool(), bench["busy"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(
        d.req("POST", "/api/runs?start=now", Some(&tiny("x", 0.2)))
            .status,
        409
    );
    assert_eq!(
        d.req("PUT", "/api/queue", Some(&json!({"paused": false})))
            .status,
        409
    );
    assert_eq!(d.runs_total(), total);
    // A second e-stop in any state is fine.
    assert_eq!(d.req("POST", "/api/estop", None).status, 200);
    assert_eq!(d.req("POST", "/api/estop/reset", None).status, 200);
    assert_eq!(d.json("/api/bench")["estop"], false);
    assert_eq!(d.json("/api/queue")["paused"], true);

    // Stop: the current segment (settle, then measure) ends, then the run.
    let r = d.req("POST", "/api/runs?start=now", Some(&long));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    let t0 = Instant::now();
    while d.json("/api/bench")["live"]["samples"]
        .as_u64()
        .unwrap_or(0)
        < 100
    {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        d.req("POST", &format!("/api/runs/{id}/stop"), None).status,
        202
    );
    let run = d.wait_final(id, Duration::from_secs(30));
    assert_eq!(run["status"], "aborted");
    assert_eq!(run["status_reason"], "stop requested");
    assert_eq!(run["reason_code"], "operator_stop");
    // `/metrics` counts both by code.
    let m = d.get("/metrics").text();
    for code in ["estop", "operator_stop"] {
        let line = format!("frictionbench_runs_stopped_total{{reason_code=\"{code}\"}} 1");
        assert!(m.contains(&line), "{line} in\n{m}");
    }
    // Abort of a finished run: 409.
    assert_eq!(
        d.req("POST", &format!("/api/runs/{id}/abort"), None).status,
        409
    );
}

#[test]
fn ten_live_clients_one_never_reading_do_not_hold_up_the_run() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(&dir.path().join("runs.db"), "127.0.0.1:0", &[]);
    let open = |addr: &str| {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET /api/live HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
        )
        .unwrap();
        s
    };
    // The stuck client: connected, never reads.
    let stuck = open(&d.addr);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let readers: Vec<_> = (0..9)
        .map(|_| {
            let s = open(&d.addr);
            let ready = ready_tx.clone();
            std::thread::spawn(move || {
                s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                let mut r = BufReader::new(s);
                let mut line = String::new();
                // Headers.
                while r.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
                    line.clear();
                }
                ready.send(()).unwrap();
                let (mut event, mut idx, mut dropped) = (String::new(), Vec::new(), 0u64);
                loop {
                    line.clear();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let l = line.trim_end();
                    if let Some(e) = l.strip_prefix("event: ") {
                        event = e.to_string();
                    } else if let Some(data) = l.strip_prefix("data: ") {
                        let v: Value = serde_json::from_str(data).unwrap();
                        match event.as_str() {
                            "sample" => idx.push(v["idx"].as_u64().unwrap()),
                            "dropped" => dropped += v["frames"].as_u64().unwrap(),
                            "run" if v["status"] == "completed" => break,
                            _ => {}
                        }
                    }
                }
                (idx, dropped)
            })
        })
        .collect();
    for _ in 0..9 {
        ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    }
    let r = d.req("POST", "/api/runs?start=now", Some(&tiny("live", 3.7)));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    let run = d.wait_final(id, Duration::from_secs(30));
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["dropped_batches"], 0);
    let n = run["sample_count"].as_u64().unwrap();
    for (k, h) in readers.into_iter().enumerate() {
        let (idx, dropped) = h.join().unwrap();
        assert!(idx.len() >= 100, "client {k}: {} samples", idx.len());
        let (first, last) = (idx[0], *idx.last().unwrap());
        assert!(
            first < n / 5 && last > n * 4 / 5,
            "client {k}: {first}..{last} of {n}"
        );
        assert!(idx.windows(2).all(|w| w[1] > w[0]));
        if k == 0 {
            eprintln!(
                "live: client 0 got {} samples ({dropped} dropped)",
                idx.len()
            );
        }
    }
    eprintln!(
        "live: run {id}: {n} samples, {} overruns, period error p99 {} us, max {} us",
        run["timing"]["overruns"],
        run["timing"]["period_error_p99_us"],
        run["timing"]["period_error_max_us"]
    );
    drop(stuck);
}
