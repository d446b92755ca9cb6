//! The fault table's e-stop row in every request shape: JSON, a form, text, none, a foreign
//! origin or host, and `bench estop`; each ends the run with the drive read back disabled.

use crate::daemon::Daemon;
use crate::fault_table::{Bench, Wire, disabled_by_the_daemon};
use crate::util::{bench, bench_slot, stderr, stdout, wait_for_samples};
use serde_json::Value;
use std::time::Duration;

/// Nothing about an e-stop request refuses it (issue 31): each shape below, sent while a run is
/// going, aborts the run, the daemon confirms the drive disabled, the drive reads back disabled
/// over Modbus, the reason is what the body said and the run's log names the sender.
#[test]
fn an_estop_of_any_shape_stops_the_run() {
    use crate::serve_hardening::raw;
    let _slot = bench_slot();
    let b = Bench::new(Wire::Tcp);
    let daemon = Daemon::start_on(
        &["--config", b.cfg.to_str().unwrap()],
        std::path::Path::new(&b.db),
        "127.0.0.1:0",
        &[],
    );
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(&b.spec).unwrap()).unwrap();
    const JSON: (&str, &str) = ("Content-Type", "application/json");
    const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");
    const TEXT: (&str, &str) = ("Content-Type", "text/plain");
    let huge = vec![b'x'; 5 << 20];
    /// (what, headers, body, the reason it gives)
    type Shape<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a [u8], String);
    let shapes: Vec<Shape> = vec![
        ("JSON", vec![JSON], br#"{"reason": "json"}"#, "json".into()),
        // What `curl -d '{"reason": "operator"}'` sends: a form content type.
        (
            "curl -d",
            vec![FORM],
            br#"{"reason": "operator"}"#,
            "operator".into(),
        ),
        (
            "a form field",
            vec![FORM],
            b"reason=door+open",
            "door open".into(),
        ),
        (
            "plain text",
            vec![TEXT],
            b"hand in the bench",
            "hand in the bench".into(),
        ),
        ("no type, no body", vec![], b"", "POST /api/estop".into()),
        (
            "broken JSON",
            vec![JSON],
            br#"{"reason": "#,
            r#"{"reason":"#.into(),
        ),
        (
            "a foreign origin",
            vec![JSON, ("Origin", "http://evil.example")],
            br#"{"reason": "cross-site"}"#,
            "cross-site".into(),
        ),
        (
            "Origin null",
            vec![("Origin", "null")],
            b"",
            "POST /api/estop".into(),
        ),
        (
            "another host name",
            vec![("Host", "evil.example:8080"), TEXT],
            b"rebound",
            "rebound".into(),
        ),
        ("over the body limit", vec![TEXT], &huge, "x".repeat(500)),
    ];
    for (shape, headers, body, reason) in shapes {
        let r = daemon.req("POST", "/api/runs?start=now", Some(&spec));
        assert_eq!(r.status, 201, "{shape}: {}", r.text());
        let id = r.json()["id"].as_i64().unwrap();
        wait_for_samples(&b.db, id, 200);
        let r = raw(&daemon.addr, "POST", "/api/estop", &headers, body);
        assert_eq!(r.status, 200, "{shape}: {}", r.text());
        let e = r.json();
        assert_eq!(e["aborted_run"], id, "{shape}: {e}");
        assert_eq!(e["safe_state"]["confirmed"], true, "{shape}: {e}");
        assert!(
            e["from"]["remote"]
                .as_str()
                .is_some_and(|a| a.starts_with("127.0.0.1:")),
            "{e}"
        );
        let run = daemon.wait_final(id, Duration::from_secs(10));
        assert_eq!(run["status"], "aborted", "{shape}");
        assert_eq!(run["status_reason"], format!("e-stop: {reason}"), "{shape}");
        disabled_by_the_daemon(&b, &run);
        let log = run["interruption_log"].to_string();
        assert!(
            log.contains("e-stop requested from 127.0.0.1:"),
            "{shape}: {log}"
        );
        let r = daemon.req("POST", "/api/estop/reset", None);
        assert_eq!(r.status, 200, "{shape}: {}", r.text());
        // The next run starts at once: its sensor zero waits for the shaft to settle.
    }
    // `bench estop --url`: the same from the command line; exit 0 once confirmed.
    let r = daemon.req("POST", "/api/runs?start=now", Some(&spec));
    let id = r.json()["id"].as_i64().unwrap();
    wait_for_samples(&b.db, id, 200);
    let url = format!("http://{}/", daemon.addr);
    let o = bench(&["estop", "--url", &url, "--reason", "from the CLI"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(&format!("run {id} aborted")),
        "{}",
        stdout(&o)
    );
    let run = daemon.wait_final(id, Duration::from_secs(10));
    assert_eq!(run["status_reason"], "e-stop: from the CLI");
    disabled_by_the_daemon(&b, &run);
    // Nobody listening: exit 1 with the URL named.
    let o = bench(&["estop", "--url", "http://127.0.0.1:9/"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("http://127.0.0.1:9/"), "{}", stderr(&o));
}
