//! `[[notify]]` end to end: `bench serve --sim` in process tells a webhook (an axum server on
//! 127.0.0.1:0 in this test) and a mail relay (Python's aiosmtpd, `$FRICTIONBENCH_SMTP_PYTHON`)
//! of a run's end, the queue pausing and the e-stop; a failed attempt is retried and every
//! attempt is in the audit log; an endpoint that never answers delays no run.

use crate::cli_serve::tiny;
use crate::daemon::Daemon;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a test waits for a notification before it fails (a guard, not a measurement).
const PATIENCE: Duration = Duration::from_secs(60);

/// The shipped simulated bench's bench.toml with `extra` appended, in `dir` (with `--sim` its
/// bench id is `sim`).
pub(crate) fn config_with(dir: &Path, extra: &str) -> PathBuf {
    let text = format!("{}\n{extra}", bench_daemon::config::SIM_TOML);
    let path = dir.join("bench.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A webhook receiver on its own thread: each POST's JSON body goes to the returned channel,
/// answered with the next of `statuses` (then 200).
pub(crate) fn webhook(statuses: Vec<u16>) -> (String, mpsc::Receiver<Value>) {
    let (tx, rx) = mpsc::channel();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let statuses = std::sync::Arc::new(std::sync::Mutex::new(statuses.into_iter()));
            let app = axum::Router::new().route(
                "/hook",
                axum::routing::post(move |body: String| {
                    let status = statuses.lock().unwrap().next().unwrap_or(200);
                    let _ = tx.send(serde_json::from_str::<Value>(&body).unwrap());
                    async move { axum::http::StatusCode::from_u16(status).unwrap() }
                }),
            );
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    (url, rx)
}

pub(crate) fn next(rx: &mpsc::Receiver<Value>) -> Value {
    rx.recv_timeout(PATIENCE).expect("a notification")
}

/// The audit log's notification attempts, oldest first.
fn attempts(d: &Daemon) -> Vec<Value> {
    let log = d.json("/api/audit");
    let mut v: Vec<Value> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["method"] == "NOTIFY")
        .cloned()
        .collect();
    v.reverse();
    v
}

/// The audit log's notification attempts once there are `n` (the entry is appended after the
/// target has answered, so it may trail the receiver's copy).
fn attempts_once(d: &Daemon, n: usize) -> Vec<Value> {
    let t0 = std::time::Instant::now();
    loop {
        let log = attempts(d);
        if log.len() >= n || t0.elapsed() > PATIENCE {
            return log;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_webhook_is_told_of_a_runs_end_and_a_pause_retried_and_audited() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    // The first attempt is refused (503), the second accepted.
    let (url, rx) = webhook(vec![503]);
    let cfg = config_with(
        dir.path(),
        &format!(
            "[[notify]]\nurl = \"{url}\"\nevents = [\"run_completed\", \"queue_paused\"]\n\
             backoff_s = 0.05\n"
        ),
    );
    let d = Daemon::in_process(
        &["--sim", "--config", cfg.to_str().unwrap()],
        &dir.path().join("runs.db"),
    );
    let r = d.req("POST", "/api/runs", Some(&tiny("told", 0.3)));
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    assert_eq!(d.wait_final(id, PATIENCE)["status"], "completed");
    let (refused, told) = (next(&rx), next(&rx));
    assert_eq!(refused, told, "the retry carries the same notice");
    assert_eq!(told["event"], "run_completed", "{told}");
    assert_eq!(
        (&told["run_id"], &told["bench_id"]),
        (&json!(id), &json!("sim"))
    );
    assert_eq!(told["run_name"], "told");
    assert!(
        told["text"]
            .as_str()
            .unwrap()
            .contains(&format!("run {id} (told) completed"))
    );
    // A pause is news; nothing was sent for the run's start.
    let r = d.req("PUT", "/api/queue", Some(&json!({"paused": true})));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(next(&rx)["event"], "queue_paused");
    let log = attempts_once(&d, 3);
    let seen: Vec<_> = log
        .iter()
        .map(|e| {
            (
                e["status"].as_i64().unwrap(),
                e["allowed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [(503, false), (200, true), (200, true)], "{log:?}");
    assert!(log.iter().all(|e| e["path"] == url.as_str()), "{log:?}");
    let detail: Value = serde_json::from_str(log[0]["detail"].as_str().unwrap()).unwrap();
    assert_eq!(
        (&detail["event"], &detail["attempt"]),
        (&json!("run_completed"), &json!(1))
    );
    assert!(
        detail["error"].as_str().unwrap().contains("503"),
        "{detail}"
    );
    assert_eq!(log[0]["run_id"], id);
}

/// Whether the peer of `s` still holds the connection open (it has neither closed nor reset it).
fn still_open(s: &mut std::net::TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn an_endpoint_that_never_answers_delays_no_run_and_no_request() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    // Accepts the connection and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", silent.local_addr().unwrap());
    let cfg = config_with(
        dir.path(),
        &format!("[[notify]]\nurl = \"{url}\"\nevents = [\"run_completed\"]\nattempts = 1\n"),
    );
    let d = Daemon::in_process(
        &["--sim", "--config", cfg.to_str().unwrap()],
        &dir.path().join("runs.db"),
    );
    let first = d.req("POST", "/api/runs", Some(&tiny("first", 0.2))).json()["id"]
        .as_i64()
        .unwrap();
    assert_eq!(d.wait_final(first, PATIENCE)["status"], "completed");
    // The first run's notice is on its way, unanswered...
    let (mut held, _) = silent.accept().unwrap();
    // ... while a second run is queued, runs and completes, and requests are answered.
    let second = d.req("POST", "/api/runs", Some(&tiny("second", 0.2)));
    assert_eq!(second.status, 201, "{}", second.text());
    let second = second.json()["id"].as_i64().unwrap();
    assert_eq!(d.wait_final(second, PATIENCE)["status"], "completed");
    assert_eq!(d.json("/api/health")["status"], "ok");
    assert!(
        still_open(&mut held),
        "the notifier gave up on the silent endpoint before the second run completed: the \
         run waited for it"
    );
    assert_eq!(
        attempts(&d),
        Vec::<Value>::new(),
        "no attempt has ended yet"
    );
}

/// aiosmtpd on a port of its own choosing; its printed messages.
struct SmtpReceiver {
    child: Child,
    port: u16,
    lines: mpsc::Receiver<Value>,
}

impl Drop for SmtpReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn smtp_receiver() -> Option<SmtpReceiver> {
    let Some(python) = std::env::var_os("FRICTIONBENCH_SMTP_PYTHON") else {
        assert!(
            std::env::var_os("FRICTIONBENCH_REQUIRE_PG").is_none(),
            "FRICTIONBENCH_SMTP_PYTHON is not set (scripts/test.sh makes target/smtpenv)"
        );
        eprintln!("skipped: FRICTIONBENCH_SMTP_PYTHON is not set");
        return None;
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/smtp_receiver.py"
    );
    let mut child = Command::new(python)
        .arg(script)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start aiosmtpd");
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = out.next().unwrap().unwrap().trim().parse().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in out.map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str(&line).unwrap());
        }
    });
    Some(SmtpReceiver { child, port, lines })
}

#[test]
fn a_mail_relay_is_told_of_the_estop_and_the_aborted_run_with_its_reason() {
    let Some(relay) = smtp_receiver() else { return };
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_with(
        dir.path(),
        &format!(
            "[[notify]]\nsmtp = {{ host = \"127.0.0.1\", port = {}, from = \"bench@lab.example\", \
             to = [\"ops@lab.example\", \"night@lab.example\"] }}\n\
             events = [\"run_aborted\", \"estop\"]\n",
            relay.port
        ),
    );
    let d = Daemon::in_process(
        &["--sim", "--config", cfg.to_str().unwrap()],
        &dir.path().join("runs.db"),
    );
    let id = d.req("POST", "/api/runs", Some(&tiny("long", 30.0))).json()["id"]
        .as_i64()
        .unwrap();
    d.wait_live_samples(5);
    let r = d.req(
        "POST",
        "/api/estop",
        Some(&json!({"reason": "door opened"})),
    );
    assert!(r.status < 300, "{}", r.text());
    let run = d.wait_final(id, PATIENCE);
    assert_eq!(run["status"], "aborted", "{run}");
    let mut mails: Vec<Value> = (0..2)
        .map(|_| relay.lines.recv_timeout(PATIENCE).expect("a mail"))
        .collect();
    mails.sort_by_key(|m| {
        m["data"]
            .as_str()
            .unwrap()
            .contains("X-Frictionbench-Event: estop")
    });
    let (aborted, estop) = (&mails[0], &mails[1]);
    for m in &mails {
        assert_eq!(m["from"], "bench@lab.example");
        assert_eq!(m["to"], json!(["ops@lab.example", "night@lab.example"]));
    }
    let text = aborted["data"].as_str().unwrap();
    assert!(
        text.contains("X-Frictionbench-Event: run_aborted"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Subject: bench sim: run {id} (long) was aborted")),
        "{text}"
    );
    assert!(text.contains("\"reason_code\": \"estop\""), "{text}");
    let text = estop["data"].as_str().unwrap();
    assert!(
        text.contains("Subject: bench sim: e-stop latched"),
        "{text}"
    );
    let log = attempts_once(&d, 2);
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(
        log.iter()
            .all(|e| e["status"] == 250 && e["allowed"] == true),
        "{log:?}"
    );
}
