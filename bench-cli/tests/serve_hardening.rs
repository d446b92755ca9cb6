//! `bench serve --sim` against hostile and heavy clients, over raw HTTP/1.1: cross-site
//! requests (wrong Content-Type, foreign Origin, foreign Host) are refused and change nothing;
//! a configured token holds on loopback too, but never for the e-stop; short tokens are
//! refused at start; duplicate keys, oversized bodies and 422s answer JSON naming the field;
//! the e-stop answers within 50 ms while heavy plan checks and sweeps are in flight.

use crate::daemon::{Daemon, Resp, parse_response};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

const TOKEN: &str = "0123456789abcdef-bench";

/// One request with exactly the given extra headers (a `Host` among them replaces the real one).
pub(crate) fn raw(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    // The server may answer (413, 415) before reading a large body.
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    parse_response(&out)
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

fn tiny(measure_s: f64) -> Value {
    json!({"kind": "constant_velocity_sweep", "name": "tiny", "params": {
        "velocities": [0.5], "directions": "positive", "settle_s": 0.3,
        "measure_s": measure_s, "repeats": 1}})
}

/// Asserts a JSON error with `status` naming `field`.
fn refused(r: &Resp, status: u16, field: &str) {
    assert_eq!(r.status, status, "{}", r.text());
    let e = r.json();
    assert_eq!(e["field"], field, "{e}");
    assert!(e["error"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
}

fn nothing_changed(d: &Daemon) {
    assert_eq!(d.runs_total(), 0);
    let m = d.get("/metrics").text();
    for (name, want) in [
        ("queue_length", 0.0),
        ("estop_latched", 0.0),
        ("run_active", 0.0),
    ] {
        assert_eq!(gauge(&m, name), want, "{name}");
    }
    let bench = d.json("/api/bench");
    assert_eq!(bench["estop"], false, "{bench}");
    let q = d.json("/api/queue");
    assert_eq!(
        (q["items"].as_array().unwrap().len(), &q["paused"]),
        (0, &json!(false))
    );
    assert_eq!(d.json("/api/schedule"), json!([]));
}

#[test]
fn cross_site_requests_are_refused_and_change_nothing() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::in_process(&["--sim"], &dir.path().join("runs.db"));
    let spec = tiny(0.2).to_string();
    let spec = spec.as_bytes();
    let a = d.addr.as_str();
    // A form or "simple" cross-site request: text/plain, or no type at all.
    for ctype in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let headers: Vec<(&str, &str)> = ctype.map(|c| ("Content-Type", c)).into_iter().collect();
        for (method, path) in [("POST", "/api/runs?start=now"), ("PUT", "/api/queue")] {
            let r = raw(a, method, path, &headers, spec);
            refused(&r, 415, "Content-Type");
        }
    }
    // A foreign page's POST carries its Origin: refused, the e-stop's reset included (the
    // e-stop itself never is: `fault_table::an_estop_of_any_shape_stops_the_run`).
    let evil = ("Origin", "http://evil.example");
    for (method, path) in [
        ("POST", "/api/runs?start=now"),
        ("POST", "/api/estop/reset"),
        ("DELETE", "/api/schedule/1"),
    ] {
        refused(&raw(a, method, path, &[JSON, evil], spec), 403, "Origin");
    }
    let other_port = format!("http://{}", a.replace(':', ":1"));
    refused(
        &raw(
            a,
            "POST",
            "/api/runs",
            &[JSON, ("Origin", &other_port)],
            spec,
        ),
        403,
        "Origin",
    );
    refused(
        &raw(a, "POST", "/api/estop/reset", &[("Origin", "null")], b""),
        403,
        "Origin",
    );
    // DNS rebinding: the attacker's name in Host, for writes and reads alike.
    let rebound = ("Host", "evil.example:8080");
    refused(
        &raw(a, "POST", "/api/runs", &[JSON, rebound], spec),
        421,
        "Host",
    );
    refused(&raw(a, "GET", "/api/runs", &[rebound], b""), 421, "Host");
    nothing_changed(&d);

    // The same origin, localhost and a bodiless POST pass.
    let own = format!("http://{a}");
    let r = raw(
        a,
        "POST",
        "/api/experiments/check",
        &[JSON, ("Origin", &own)],
        spec,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let port = a.rsplit(':').next().unwrap();
    let local = format!("localhost:{port}");
    let r = raw(a, "GET", "/api/health", &[("Host", &local)], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    let r = raw(a, "POST", "/api/runs/999/abort", &[], b"");
    assert_eq!(r.status, 404, "{}", r.text());

    // Duplicate keys: 400 naming the key, nothing created.
    let dup =
        br#"{"kind": "constant_velocity_sweep", "params": {"measure_s": 0.2, "measure_s": 600}}"#;
    refused(
        &raw(a, "POST", "/api/runs", &[JSON], dup),
        400,
        "params.measure_s",
    );
    // Over the body limit: 413 as JSON.
    let big = format!(
        "{{\"kind\": \"prbs\", \"name\": \"{}\"}}",
        "x".repeat(3 << 20)
    );
    let r = raw(a, "POST", "/api/experiments/check", &[JSON], big.as_bytes());
    refused(&r, 413, "body");
    assert!(
        r.json()["error"].as_str().unwrap().contains("2097152"),
        "{}",
        r.text()
    );
    // Every 422 names a field.
    for (body, field) in [
        (&br#"{"kind": "no_such_kind"}"#[..], "kind"),
        (br#"{"kind": "prbs", "extra": 1}"#, "extra"),
        (
            br#"{"kind": "prbs", "params": {"bogus": 1}}"#,
            "params.bogus",
        ),
        (br#"{"kind": "prbs", "params": []}"#, "params"),
        (br#"[1, 2]"#, "spec"),
    ] {
        let r = raw(a, "POST", "/api/runs", &[JSON], body);
        refused(&r, 422, field);
    }
    nothing_changed(&d);
}

#[test]
fn a_configured_token_holds_on_loopback_but_the_estop_needs_none() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    // Short or blank tokens are refused at start, naming the rule.
    for (token, says) in [
        ("s3cret", "16"),
        ("", "blank"),
        ("                    ", "blank"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_bench"))
            .args([
                "serve",
                "--sim",
                "--listen",
                "127.0.0.1:0",
                "--token",
                token,
                "--db",
            ])
            .arg(&db)
            .env_remove("FRICTIONBENCH_TOKEN")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{token:?}: {err}");
        assert!(
            err.contains("--token") && err.contains(says),
            "{token:?}: {err}"
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args([
            "serve",
            "--sim",
            "--listen",
            "127.0.0.1:0",
            "--token-for-reads",
            "--db",
        ])
        .arg(&db)
        .env("FRICTIONBENCH_TOKEN", "short")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("$FRICTIONBENCH_TOKEN"));

    let mut d = Daemon::start(&db, "127.0.0.1:0", &["--token", TOKEN]);
    let spec = tiny(30.0);
    refused(
        &d.req("POST", "/api/runs", Some(&spec)),
        401,
        "Authorization",
    );
    refused(
        &d.req("PUT", "/api/queue", Some(&json!({"paused": true}))),
        401,
        "Authorization",
    );
    assert_eq!(d.get("/api/runs").status, 200);
    assert_eq!(d.runs_total(), 0);
    d.token = Some(TOKEN.into());
    let r = d.req("POST", "/api/runs?start=now", Some(&spec));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    // The e-stop without any token (and with a wrong one) works and aborts the run.
    d.token = None;
    let r = d.req("POST", "/api/estop", None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["aborted_run"], id);
    assert_eq!(
        d.wait_final(id, Duration::from_secs(20))["status"],
        "aborted"
    );
    d.token = Some("wrong-wrong-wrong-wrong".into());
    assert_eq!(d.req("POST", "/api/estop", None).status, 200);
    // Its reset is not.
    refused(
        &d.req("POST", "/api/estop/reset", None),
        401,
        "Authorization",
    );
    assert_eq!(d.json("/api/bench")["estop"], true);
    drop(d);

    // --token-for-reads: GETs too (as a header or ?access_token=), but /api/health.
    let mut d = Daemon::start(&db, "127.0.0.1:0", &["--token", TOKEN, "--token-for-reads"]);
    refused(&d.get("/api/runs"), 401, "Authorization");
    refused(&d.get("/api/live"), 401, "Authorization");
    assert_eq!(d.get("/api/health").status, 200);
    refused(&d.get("/metrics"), 401, "Authorization");
    let r = d.get(&format!("/api/runs?limit=5&access_token={TOKEN}"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["total"], 1);
    d.token = Some(TOKEN.into());
    assert_eq!(d.get("/api/runs").status, 200);
}

/// The value of gauge `frictionbench_<name>` in a /metrics text.
fn gauge(text: &str, name: &str) -> f64 {
    let prefix = format!("frictionbench_{name} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {prefix}in\n{text}"))
}

/// A constant-velocity sweep of 10 000 velocities (the list cap), both ways, 24 repeats:
/// 960 000 segments and 3.9 days, just within the plan caps, so its check does the most work
/// a check may do.
fn heaviest_check() -> Value {
    let v: Vec<f64> = (0..10_000)
        .map(|k| 0.01 + 0.001 * f64::from(k % 900))
        .collect();
    json!({"kind": "constant_velocity_sweep", "name": "heavy", "params": {
        "velocities": v, "directions": "both", "settle_s": 0.2, "measure_s": 0.5,
        "repeats": 24}})
}

#[test]
fn the_estop_is_answered_while_heavy_checks_and_sweeps_are_still_in_flight() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(&dir.path().join("runs.db"), "127.0.0.1:0", &[]);
    let r = d.req("POST", "/api/runs?start=now", Some(&tiny(60.0)));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    d.wait_live_samples(300);
    // The running run on /metrics.
    let m = d.get("/metrics");
    assert_eq!(m.status, 200);
    assert!(
        m.header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let m = m.text();
    for line in [
        "frictionbench_run_active 1",
        &format!("frictionbench_run_id {id}"),
    ] {
        assert!(m.lines().any(|l| l == line), "{line} not in\n{m}");
    }
    let samples = gauge(&m, "run_samples");
    assert!(samples >= 300.0, "{m}");
    // The loop's lateness histogram and the links' counters of the running run.
    let ticks = gauge(&m, "loop_period_error_seconds_count");
    assert!(ticks >= 200.0, "{m}");
    let inf = gauge(&m, "loop_period_error_seconds_bucket{le=\"+Inf\"}");
    assert_eq!(inf, ticks, "{m}");
    let within_10ms = gauge(&m, "loop_period_error_seconds_bucket{le=\"0.01\"}");
    assert!(within_10ms <= inf, "{m}");
    let requests = gauge(&m, "link_events_total{device=\"drive\",event=\"requests\"}");
    let ok = gauge(&m, "link_events_total{device=\"drive\",event=\"ok\"}");
    assert!(
        requests >= ticks && ok >= ticks,
        "a drive transaction per tick at least: {m}"
    );
    assert!(
        gauge(&m, "link_events_total{device=\"sensor\",event=\"ok\"}") >= ticks,
        "{m}"
    );
    // The shipped simulated bench gives the sensor a connection of its own
    // (`[sensor] own_connection`): the drive's link carries the drive's transactions only
    // (one per tick and the run's preparation), not the sensor's too.
    assert!(
        requests < 1.5 * ticks,
        "the sensor's transactions on the drive's link: {m}"
    );
    // Two 100-value sweeps of the shipped full Stribeck sweep (run_at far ahead) and four
    // 10 000-velocity plan checks, all at once.
    let full: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::util::spec("constant_velocity_sweep-full.json")).unwrap(),
    )
    .unwrap();
    let values: Vec<f64> = (0..100).map(|k| 0.5 + 0.01 * f64::from(k)).collect();
    let sweep = json!({"run_at": "2099-01-01T00:00:00Z", "sweep": {
        "spec": full, "param": "params.settle_s", "values": values}})
    .to_string();
    let heavy = heaviest_check().to_string();
    let mut load = Vec::new();
    for (path, body) in [
        ("/api/schedule", &sweep),
        ("/api/experiments/check", &heavy),
        ("/api/schedule", &sweep),
        ("/api/experiments/check", &heavy),
        ("/api/experiments/check", &heavy),
        ("/api/experiments/check", &heavy),
    ] {
        let (addr, body) = (d.addr.clone(), body.clone());
        load.push(std::thread::spawn(move || {
            let t = Instant::now();
            let r = raw(&addr, "POST", path, &[JSON], body.as_bytes());
            (path, r.status, t.elapsed(), r.text(), Instant::now())
        }));
    }
    // Both check workers busy, the other requests waiting for one.
    let t0 = Instant::now();
    while gauge(&d.get("/metrics").text(), "check_workers_busy") < 2.0 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the pool never filled"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let t = Instant::now();
    let r = raw(&d.addr, "POST", "/api/estop", &[], b"");
    let took = t.elapsed();
    let answered = Instant::now();
    assert_eq!(r.status, 200, "{}", r.text());
    eprintln!("e-stop under load: answered in {took:?}");
    // It waited for none of the requests in flight: each of them ends after it (below).
    assert_eq!(r.json()["aborted_run"], id);
    let t = Instant::now();
    assert_eq!(d.get("/api/health").status, 200);
    assert_eq!(d.get("/api/bench").status, 200);
    eprintln!("health + bench under load: {:?}", t.elapsed());
    assert_eq!(
        d.wait_final(id, Duration::from_secs(20))["status"],
        "aborted"
    );
    for h in load {
        let (path, status, took, text, done) = h.join().unwrap();
        eprintln!(
            "{path}: {status} after {took:?}: {}",
            &text[..text.len().min(200)]
        );
        assert!(
            done > answered,
            "{path} was no longer in flight at the e-stop"
        );
        // Checked (200/201) or told the pool is busy (503): never a failure of the server.
        assert!([200, 201, 503].contains(&status), "{path}: {status}");
    }
}

/// Starts `bench serve --sim` with `RUST_LOG=filter` (none: unset), stops it with SIGTERM and
/// returns its stderr.
fn serve_log(filter: Option<&str>) -> String {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench"));
    cmd.args(["serve", "--sim", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.path().join("runs.db"))
        .env_remove("FRICTIONBENCH_TOKEN")
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(f) = filter {
        cmd.env("RUST_LOG", f);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("http://"), "{line}");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn daemon_messages_follow_rust_log() {
    let _bench = crate::util::bench_slot();
    let info = serve_log(None);
    assert!(
        info.contains("INFO") && info.contains("SIGTERM: shutting down"),
        "{info}"
    );
    let quiet = serve_log(Some("warn"));
    assert!(!quiet.contains("shutting down"), "{quiet}");
}

/// Reads one HTTP/1.1 response with a Content-Length body off a kept-alive connection.
fn read_one(s: &mut TcpStream) -> Resp {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).expect("response head");
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    raw.extend_from_slice(&body);
    parse_response(&raw)
}

#[test]
fn an_estop_is_answered_by_the_front_and_on_a_kept_alive_connection_too() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(&dir.path().join("runs.db"), "127.0.0.1:0", &[]);
    let estop = format!(
        "POST /api/estop HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n\r\n",
        d.addr
    );
    // A fresh connection: the front answers it on its own thread and closes the connection.
    let mut s = TcpStream::connect(&d.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(estop.as_bytes()).unwrap();
    let r = read_one(&mut s);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["safe_state"]["confirmed"], true, "{}", r.text());
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    // A connection that carried a GET first (a browser's keep-alive): the daemon's runtime
    // answers the e-stop on it, with the same result.
    let mut s = TcpStream::connect(&d.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let get = format!("GET /api/health HTTP/1.1\r\nHost: {}\r\n\r\n", d.addr);
    s.write_all(get.as_bytes()).unwrap();
    assert_eq!(read_one(&mut s).status, 200);
    s.write_all(estop.as_bytes()).unwrap();
    let r = read_one(&mut s);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["safe_state"]["confirmed"], true, "{}", r.text());
    // Health says the daemon lives but is not ready while the e-stop is latched.
    let h = d.json("/api/health");
    assert_eq!(
        (h["status"].clone(), h["ready"].clone()),
        (json!("ok"), json!(false)),
        "{h}"
    );
    assert_eq!(h["bench"]["estop"], true, "{h}");
    // `/api/estop/reset` is not an e-stop: it goes to the scheduler as before.
    let r = d.req("POST", "/api/estop/reset", None);
    assert_eq!((r.status, r.json()["estop"].clone()), (200, json!(false)));
    let h = d.json("/api/health");
    assert_eq!(
        (h["ready"].clone(), h["bench"]["connected"].clone()),
        (json!(true), json!(true)),
        "{h}"
    );
    assert_eq!(
        h["queue"]["paused"], true,
        "the e-stop paused the queue: {h}"
    );
}
