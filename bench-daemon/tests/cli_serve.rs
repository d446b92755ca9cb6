//! `bench serve --sim` over real HTTP (raw HTTP/1.1 on `std::net::TcpStream`): a spec posted
//! runs and its samples come back (JSON, CSV, Parquet); bad input is 4xx and changes nothing;
//! the bearer token on a non-loopback listener; queue and schedule survive a restart and a
//! timed entry runs at its time; e-stop and stop; ten live clients, one never reading.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A quick spec: 0.3 s settle + `measure_s` at 0.5 rad/s.
fn tiny(name: &str, measure_s: f64) -> Value {
    json!({"kind": "constant_velocity_sweep", "name": name, "params": {
        "velocities": [0.5], "directions": "positive", "settle_s": 0.3,
        "measure_s": measure_s, "repeats": 1}})
}

/// A `bench serve --sim` process, killed on drop.
pub(crate) struct Daemon {
    child: Child,
    /// host:port to connect to.
    pub(crate) addr: String,
    pub(crate) token: Option<String>,
}

impl Daemon {
    pub(crate) fn start(db: &Path, listen: &str, extra: &[&str]) -> Daemon {
        Daemon::start_on(&["--sim"], db, listen, extra)
    }

    /// `bench serve` on the bench `bench_args` names (`--sim`, or `--config FILE`).
    pub(crate) fn start_on(bench_args: &[&str], db: &Path, listen: &str, extra: &[&str]) -> Daemon {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bench"))
            .arg("serve")
            .args(bench_args)
            .args(["--listen", listen, "--web", "/nonexistent/web/dist"])
            .arg("--db")
            .arg(db)
            .args(extra)
            .env_remove("FRICTIONBENCH_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn bench serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(url) = line.split("http://").nth(1) else {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("bench serve did not start: {line} {err}");
        };
        let host = url
            .split('/')
            .next()
            .unwrap()
            .replace("0.0.0.0", "127.0.0.1");
        Daemon {
            child,
            addr: host,
            token: None,
        }
    }

    pub(crate) fn req(&self, method: &str, path: &str, body: Option<&Value>) -> Resp {
        let text = body.map(Value::to_string);
        request(
            &self.addr,
            method,
            path,
            text.as_deref().map(str::as_bytes),
            self.token.as_deref(),
        )
    }

    pub(crate) fn get(&self, path: &str) -> Resp {
        self.req("GET", path, None)
    }

    pub(crate) fn json(&self, path: &str) -> Value {
        let r = self.get(path);
        assert_eq!(r.status, 200, "GET {path}: {}", r.text());
        r.json()
    }

    /// Polls run `id` until its status is final.
    /// Waits (at most 20 s) until the running run has streamed `n` live samples.
    pub(crate) fn wait_live_samples(&self, n: u64) {
        let t0 = Instant::now();
        while self.json("/api/bench")["live"]["samples"]
            .as_u64()
            .unwrap_or(0)
            < n
        {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the run did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn wait_final(&self, id: i64, within: Duration) -> Value {
        let t0 = Instant::now();
        loop {
            let run = self.json(&format!("/api/runs/{id}"));
            let s = run["status"].as_str().unwrap().to_string();
            if !["queued", "running"].contains(&s.as_str()) {
                return run;
            }
            assert!(t0.elapsed() < within, "run {id} still {s} after {within:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The daemon's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn runs_total(&self) -> i64 {
        self.json("/api/runs")["total"].as_i64().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) headers: String,
    pub(crate) body: Vec<u8>,
}

impl Resp {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// One HTTP/1.1 request (Connection: close); the body de-chunked.
pub(crate) fn request(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    token: Option<&str>,
) -> Resp {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = body.unwrap_or_default();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read response");
    parse_response(&raw)
}

/// A whole HTTP/1.1 response: status, headers, and the body de-chunked.
pub(crate) fn parse_response(raw: &[u8]) -> Resp {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let headers = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = headers.split(' ').nth(1).unwrap().parse().unwrap();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body,
    }
}

pub(crate) fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[eol + 4 + size..];
    }
}

#[test]
fn a_posted_spec_runs_and_its_samples_come_back_as_json_csv_and_parquet() {
    let _bench = crate::util::one_bench_at_a_time();
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
    let _bench = crate::util::one_bench_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(&dir.path().join("runs.db"), "127.0.0.1:0", &[]);
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
    let _bench = crate::util::one_bench_at_a_time();
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
fn queue_and_schedule_survive_a_restart_and_a_timed_entry_runs_at_its_time() {
    let _bench = crate::util::one_bench_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let (a, b, entry) = {
        let d = Daemon::start(&db, "127.0.0.1:0", &[]);
        let q = d.req(
            "PUT",
            "/api/queue",
            Some(&json!({"paused": true, "on_failure": "stop"})),
        );
        assert_eq!(q.status, 200);
        let a = d.req("POST", "/api/runs", Some(&tiny("a", 0.5))).json();
        let b = d
            .req("POST", "/api/runs?priority=5", Some(&tiny("b", 0.5)))
            .json();
        assert_eq!(
            (a["status"].as_str(), b["position"].as_i64()),
            (Some("queued"), Some(1))
        );
        let sweep = json!({"run_at": "2031-01-01T02:00:00Z", "recurrence": "nightly", "priority": 2,
            "sweep": {"spec": tiny("sweep", 0.5), "param": "params.velocities", "values": [[0.2], [0.4]]}});
        let r = d.req("POST", "/api/schedule", Some(&sweep));
        assert_eq!(r.status, 201, "{}", r.text());
        let entry = r.json();
        assert_eq!(entry["next_run_at"], "2031-01-01T02:00:00.000Z");
        (a["id"].as_i64().unwrap(), b["id"].as_i64().unwrap(), entry)
        // Dropped: killed (SIGKILL), no graceful shutdown.
    };
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    let q = d.json("/api/queue");
    assert_eq!(q["paused"], true);
    assert_eq!(q["on_failure"], "stop");
    let order: Vec<(i64, i64)> = q["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["run_id"].as_i64().unwrap(),
                i["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(order, [(b, 5), (a, 0)]);
    assert!(q["eta_total_s"].as_f64().unwrap() >= 1.6, "{q}");
    let sched = d.json("/api/schedule");
    assert_eq!(sched.as_array().unwrap().len(), 1);
    assert_eq!(sched[0]["id"], entry["id"]);
    assert_eq!(sched[0]["recurrence"], "nightly");
    assert_eq!(sched[0]["next_run_at"], entry["next_run_at"]);
    assert_eq!(sched[0]["sweep"]["values"], json!([[0.2], [0.4]]));

    // An entry a few seconds ahead; then resume: b, a, then the timed one.
    let run_at = chrono::Utc::now() + chrono::Duration::seconds(3);
    let run_at = run_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let r = d.req(
        "POST",
        "/api/schedule",
        Some(&json!({"run_at": run_at, "spec": tiny("timed", 0.3)})),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let timed = r.json()["id"].as_i64().unwrap();
    assert_eq!(
        d.req("PUT", "/api/queue", Some(&json!({"paused": false})))
            .status,
        200
    );
    let ra = d.wait_final(a, Duration::from_secs(30));
    let rb = d.wait_final(b, Duration::from_secs(30));
    assert_eq!(
        (ra["status"].as_str(), rb["status"].as_str()),
        (Some("completed"), Some("completed"))
    );
    assert!(
        rb["started_at"].as_str() < ra["started_at"].as_str(),
        "priority 5 first"
    );
    let t0 = Instant::now();
    let last = loop {
        let s = d.json("/api/schedule");
        let e = s
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == timed)
            .unwrap()
            .clone();
        if e["state"] == "done" {
            break e["last_run_id"].as_i64().unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "{e}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let run = d.wait_final(last, Duration::from_secs(30));
    assert_eq!(run["status"], "completed");
    assert_eq!(run["name"], "timed");
    // Its run log says which entry queued it, then that the queue started it.
    let log: Vec<&str> = run["run_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    let queued = format!("queued by schedule entry {timed} (once)");
    assert_eq!(
        log[..2],
        [queued.as_str(), "started by the queue"],
        "{log:?}"
    );
    assert!(
        run["created_at"].as_str().unwrap() >= run_at.as_str(),
        "{} < {run_at}",
        run["created_at"]
    );
    // The nightly entry is still waiting for 2031.
    let s = d.json("/api/schedule");
    assert_eq!(s[0]["state"], "pending");
}

#[test]
fn estop_aborts_the_run_disables_the_drive_latches_and_stop_finishes_the_segment() {
    let _bench = crate::util::one_bench_at_a_time();
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
    let _bench = crate::util::one_bench_at_a_time();
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

/// The waiting run ids, in queue order (all of them).
fn queue_ids(d: &Daemon) -> Vec<i64> {
    d.json("/api/queue")["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["run_id"].as_i64().unwrap())
        .collect()
}

#[test]
fn a_large_queue_is_listed_in_part_kept_in_order_and_comes_back_paused_after_a_kill() {
    let _bench = crate::util::one_bench_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let (before, running) = {
        let d = Daemon::start(&db, "127.0.0.1:0", &[]);
        assert_eq!(
            d.req("PUT", "/api/queue", Some(&json!({"paused": true})))
                .status,
            200
        );
        let values: Vec<Value> = (0..300).map(|k| json!([0.2 + 1e-3 * k as f64])).collect();
        let sweep = json!({"sweep": {"spec": tiny("sweep", 0.5), "param": "params.velocities",
            "values": values}});
        let r = d.req("POST", "/api/schedule", Some(&sweep));
        assert_eq!(r.status, 201, "{}", r.text());
        let t0 = Instant::now();
        while d.json("/api/queue?limit=5")["waiting"] != 300 {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the sweep was not queued"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let part = d.json("/api/queue?limit=5");
        assert_eq!(part["items"].as_array().unwrap().len(), 5);
        assert_eq!(part["truncated"], true);
        let whole = d.json("/api/queue");
        assert_eq!(whole["items"].as_array().unwrap().len(), 300);
        assert_eq!(whole["truncated"], false);
        let eta = |q: &Value| q["eta_total_s"].as_f64().unwrap();
        assert!(
            (eta(&part) - eta(&whole)).abs() < 1e-6 * eta(&whole) && eta(&whole) > 300.0 * 0.8,
            "the ETA counts every run: {} vs {}",
            eta(&part),
            eta(&whole)
        );
        let bad = d.get("/api/queue?limit=many");
        assert_eq!(bad.status, 400);
        assert_eq!(bad.json()["field"], "limit");

        // A run ahead of them all, one taken out of the middle.
        let first = d
            .req("POST", "/api/runs?priority=5", Some(&tiny("first", 30.0)))
            .json();
        assert_eq!(first["position"], 1);
        let ids = queue_ids(&d);
        let gone = ids[10];
        assert_eq!(
            d.req("DELETE", &format!("/api/queue/{gone}"), None).status,
            204
        );
        // Resume: `first` starts; the daemon is killed while it runs.
        assert_eq!(
            d.req("PUT", "/api/queue", Some(&json!({"paused": false})))
                .status,
            200
        );
        d.wait_live_samples(100);
        let before = queue_ids(&d);
        assert_eq!(before.len(), 299);
        assert!(!before.contains(&gone));
        (before, first["id"].as_i64().unwrap())
        // Dropped: SIGKILL, no graceful shutdown.
    };
    let d = Daemon::start(&db, "127.0.0.1:0", &[]);
    let q = d.json("/api/queue");
    assert_eq!(q["paused"], true, "an unclean stop leaves the queue paused");
    assert_eq!(queue_ids(&d), before, "the order survives the kill");
    let run = d.json(&format!("/api/runs/{running}"));
    assert_eq!(run["status"], "interrupted", "{run}");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        d.json("/api/bench")["busy"],
        false,
        "nothing starts by itself"
    );
}
