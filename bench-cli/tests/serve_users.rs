//! `[[users]]` on a real `bench serve --sim --config F`: `bench users add` writes only a hash
//! and prints the token once; each role's allowed and refused requests (401 without a user's
//! token, 403 naming the role needed; the e-stop needs none); every mutating request, allowed
//! or refused, read back from the audit log over HTTP (admin) and with `bench audit`.

use crate::daemon::{Daemon, Resp, request};
use crate::util::{bench, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

/// `bench users add NAME --role ROLE --json` on `config`: the token.
fn add_user(config: &Path, name: &str, role: &str) -> String {
    let c = config.to_str().unwrap();
    let o = bench(&[
        "users", "add", name, "--role", role, "--config", c, "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((&v["name"], &v["role"]), (&json!(name), &json!(role)));
    v["token"].as_str().unwrap().to_string()
}

fn call(d: &Daemon, token: Option<&str>, method: &str, path: &str, body: Option<Value>) -> Resp {
    let text = body.map(|b| b.to_string());
    request(
        &d.addr,
        method,
        path,
        text.as_deref().map(str::as_bytes),
        token,
    )
}

/// Asserts `status`, and for a refusal that the message names `needle`.
fn answers(r: &Resp, status: u16, needle: &str) -> Value {
    assert_eq!(r.status, status, "{}", r.text());
    let v = r.json();
    if status >= 400 {
        assert!(v["error"].as_str().unwrap().contains(needle), "{v}");
    }
    v
}

#[test]
fn each_role_is_allowed_and_refused_its_requests_and_every_change_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bench.toml");
    std::fs::write(&config, bench_daemon::config::SIM_TOML).unwrap();
    let (viewer, operator, admin) = (
        add_user(&config, "vic", "viewer"),
        add_user(&config, "olly", "operator"),
        add_user(&config, "ada", "admin"),
    );
    assert!(viewer.len() >= 32 && viewer != operator && operator != admin);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(!text.contains(&admin) && text.matches("$argon2id$").count() == 3);
    let c = config.to_str().unwrap();
    let again = bench(&["users", "add", "ada", "--role", "viewer", "--config", c]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text, "unchanged");
    let listed = stdout(&bench(&["users", "list", "--config", c, "--json"]));
    assert_eq!(
        serde_json::from_str::<Value>(&listed).unwrap(),
        json!([{"name": "vic", "role": "viewer"}, {"name": "olly", "role": "operator"},
               {"name": "ada", "role": "admin"}])
    );

    let db = dir.path().join("runs.db");
    let d = Daemon::in_process(&["--sim", "--config", c], &db);
    let (v, o, a) = (
        Some(viewer.as_str()),
        Some(operator.as_str()),
        Some(admin.as_str()),
    );
    // Reads: a user's token, any role.
    answers(&call(&d, None, "GET", "/api/runs", None), 401, "no token");
    answers(
        &call(&d, Some("x".repeat(43).as_str()), "GET", "/api/runs", None),
        401,
        "no user",
    );
    answers(&call(&d, v, "GET", "/api/runs", None), 200, "");
    answers(&call(&d, None, "GET", "/api/health", None), 200, "");
    // Changes: operator.
    let pause = json!({"paused": true});
    answers(
        &call(&d, v, "PUT", "/api/queue", Some(pause.clone())),
        403,
        "needs the operator role: vic has the viewer role",
    );
    answers(&call(&d, o, "PUT", "/api/queue", Some(pause)), 200, "");
    let spec = json!({"kind": "constant_velocity_sweep", "name": "tiny", "params": {
        "velocities": [0.5], "directions": "positive", "settle_s": 0.3,
        "measure_s": 0.5, "repeats": 1}});
    let id = answers(&call(&d, o, "POST", "/api/runs", Some(spec)), 201, "")["id"]
        .as_i64()
        .unwrap();
    let run = format!("/api/runs/{id}");
    let tags = json!({"add": ["good", "night"], "notes": "bearing re-greased"});
    answers(
        &call(&d, v, "PATCH", &run, Some(tags.clone())),
        403,
        "operator",
    );
    let after = answers(&call(&d, o, "PATCH", &run, Some(tags)), 200, "");
    assert_eq!(
        after,
        json!({"tags": ["good", "night"], "notes": "bearing re-greased"})
    );
    let bad = json!({"add": ["two words"]});
    answers(
        &call(&d, o, "PATCH", &run, Some(bad)),
        400,
        "letters, digits",
    );
    let replaced = json!({"tags": ["checked"], "remove": ["absent"]});
    let after = answers(&call(&d, o, "PATCH", &run, Some(replaced)), 200, "");
    assert_eq!(after["tags"], json!(["checked"]));
    let stored = call(&d, a, "GET", &run, None).json();
    assert_eq!(stored["notes"], "bearing re-greased", "{stored}");
    // Admin: latched faults and the audit log.
    answers(
        &call(&d, o, "POST", "/api/faults/reset", None),
        403,
        "needs the admin role: olly has the operator role",
    );
    answers(&call(&d, a, "POST", "/api/faults/reset", None), 200, "");
    answers(&call(&d, o, "GET", "/api/audit", None), 403, "admin");
    answers(&call(&d, o, "POST", &format!("{run}/abort"), None), 202, "");
    // The e-stop needs no token.
    answers(&call(&d, None, "POST", "/api/estop", None), 200, "");

    let log = audit_until(&d, a, 11);
    let row = |i: usize| -> (&str, &str, &str, i64, bool) {
        let e = &log[i];
        (
            e["user"].as_str().unwrap_or("-"),
            e["method"].as_str().unwrap(),
            e["path"].as_str().unwrap(),
            e["status"].as_i64().unwrap(),
            e["allowed"].as_bool().unwrap(),
        )
    };
    let rows: Vec<_> = (0..log.len()).rev().map(row).collect();
    assert_eq!(
        rows,
        [
            ("vic", "PUT", "/api/queue", 403, false),
            ("olly", "PUT", "/api/queue", 200, true),
            ("olly", "POST", "/api/runs", 201, true),
            ("vic", "PATCH", run.as_str(), 403, false),
            ("olly", "PATCH", run.as_str(), 200, true),
            ("olly", "PATCH", run.as_str(), 400, true),
            ("olly", "PATCH", run.as_str(), 200, true),
            ("olly", "POST", "/api/faults/reset", 403, false),
            ("ada", "POST", "/api/faults/reset", 200, true),
            ("olly", "POST", &format!("{run}/abort"), 202, true),
            ("-", "POST", "/api/estop", 200, true),
        ]
    );
    // Oldest last: who created and who aborted the run, found by its id; the edit's old value.
    let created = &log[8];
    assert_eq!(
        (&created["run_id"], &created["role"]),
        (&json!(id), &json!("operator"))
    );
    assert!(
        created["remote"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:")
    );
    assert_eq!(log[1]["run_id"], id);
    let edit: Value = serde_json::from_str(log[4]["detail"].as_str().unwrap()).unwrap();
    assert_eq!(edit["before"]["tags"], json!(["good", "night"]));
    assert_eq!(edit["after"]["tags"], json!(["checked"]));
    let vic = call(&d, a, "GET", "/api/audit?user=vic&limit=5", None).json();
    assert_eq!(vic.as_array().unwrap().len(), 2, "{vic}");
    drop(d);
    let cli = bench(&[
        "audit",
        "--db",
        db.to_str().unwrap(),
        "--user",
        "ada",
        "--json",
    ]);
    let cli: Value = serde_json::from_str(&stdout(&cli)).unwrap();
    assert_eq!(cli[0]["path"], "/api/faults/reset");
}

/// The audit log once it holds `n` entries (the e-stop's is written after its answer).
fn audit_until(d: &Daemon, admin: Option<&str>, n: usize) -> Vec<Value> {
    for _ in 0..100 {
        let r = call(d, admin, "GET", "/api/audit", None);
        let log = answers(&r, 200, "");
        if log.as_array().unwrap().len() >= n {
            return log.as_array().unwrap().clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the audit log did not reach {n} entries");
}

#[test]
fn a_shared_token_beside_users_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bench.toml");
    std::fs::write(&config, bench_daemon::config::SIM_TOML).unwrap();
    add_user(&config, "ada", "admin");
    let c = config.to_str().unwrap();
    let db = dir.path().join("runs.db");
    let o = bench(&[
        "serve",
        "--sim",
        "--config",
        c,
        "--token",
        "0123456789abcdef-bench",
        "--db",
        db.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("[[users]]"), "{}", stderr(&o));
}
