//! `POST /api/runs/import` against a real `bench serve`: the body streamed and hashed, the
//! cap with 413, the content types, and the run stored as `bench runs import` stores it.

use crate::cli_import::{EXCEL_COLUMNS, excel_csv, mat_file, simulated_rows};
use sha2::{Digest, Sha256};

/// A POST of `body` with `ctype` to the daemon; `length`: a Content-Length to declare instead
/// of the body's (the body is then not sent).
pub(crate) fn post_file(
    d: &crate::daemon::Daemon,
    path: &str,
    ctype: &str,
    body: &[u8],
    length: Option<u64>,
) -> crate::daemon::Resp {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(&d.addr).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let auth = d
        .token
        .as_deref()
        .map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n{auth}Content-Type: {ctype}\r\n\
         Content-Length: {}\r\n\r\n",
        d.addr,
        length.unwrap_or(body.len() as u64)
    )
    .unwrap();
    if length.is_none() {
        s.write_all(body).unwrap();
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    crate::daemon::parse_response(&raw)
}

#[test]
fn post_api_runs_import_streams_checks_and_stores_like_the_command() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let token = "import-token-0123456789";
    let mut d = crate::daemon::Daemon::in_process(
        &["--sim", "--token", token],
        &dir.path().join("runs.db"),
    );
    let rows = simulated_rows();
    let text = excel_csv(&rows);
    let query = format!(
        "/api/runs/import?file=bench.csv&name=uploaded&columns={}",
        EXCEL_COLUMNS.replace(' ', "%20")
    );
    // Mutating: the token is needed.
    let r = post_file(&d, &query, "text/csv", text.as_bytes(), None);
    assert_eq!(r.status, 401, "{}", r.text());
    d.token = Some(token.into());
    // Form and plain-text bodies stay refused; a JSON body is not a recording.
    for ctype in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json",
    ] {
        let r = post_file(&d, &query, ctype, text.as_bytes(), None);
        assert_eq!(r.status, 415, "{ctype}: {}", r.text());
    }
    // Past the cap: 413 naming it, before a byte of the body is read.
    let r = post_file(&d, &query, "text/csv", b"", Some(2 << 30));
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("1073741824 bytes"),
        "{}",
        r.text()
    );
    // A refused file: 422 naming the line and column; nothing stored.
    let bad = text.replacen("\r\n0e0;", "\r\nzero;", 1);
    let r = post_file(&d, &query, "text/csv", bad.as_bytes(), None);
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json()["field"], "body");
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("bench.csv: line 3, column 'Time': 'zero"),
        "{}",
        r.text()
    );
    assert_eq!(d.runs_total(), 0);
    // A bad option: 422 naming it.
    let r = post_file(
        &d,
        "/api/runs/import?file=a.csv&geometry=polar",
        "text/csv",
        text.as_bytes(),
        None,
    );
    assert_eq!(
        (r.status, r.json()["field"].as_str()),
        (422, Some("geometry")),
        "{}",
        r.text()
    );
    let r = post_file(
        &d,
        "/api/runs/import?file=a.csv&colums=t=t",
        "text/csv",
        text.as_bytes(),
        None,
    );
    assert_eq!(
        (r.status, r.json()["field"].as_str()),
        (400, Some("colums")),
        "{}",
        r.text()
    );
    // Well over the 2 MiB of a JSON body: streamed, imported.
    let mut big = text.clone();
    for copy in 1.. {
        if big.len() >= 3 << 20 {
            break;
        }
        let shift = copy as f64 * (rows.last().unwrap()[0] + 1.0);
        for r in &rows {
            let mut r = *r;
            r[0] += shift;
            let cells: Vec<String> = r
                .iter()
                .map(|x| format!("{x:e}").replace('.', ","))
                .collect();
            big.push_str(&cells.join(";"));
            big.push_str("\r\n");
        }
    }
    let r = post_file(&d, &query, "text/csv", big.as_bytes(), None);
    assert_eq!(r.status, 201, "{}", r.text());
    let report = r.json();
    assert_eq!(report["source"]["bytes"], big.len() as u64);
    assert_eq!(
        report["source"]["sha256"],
        format!("{:x}", Sha256::digest(big.as_bytes()))
    );
    let id = report["run_id"].as_i64().unwrap();
    let run = d.json(&format!("/api/runs/{id}"));
    assert_eq!(
        (run["kind"].as_str(), run["name"].as_str()),
        (Some("imported"), Some("uploaded"))
    );
    let listed = d.json("/api/runs?kind=imported");
    assert_eq!(listed["total"], 1);
    // A MAT-file as octet-stream: the format from the file name.
    let t: Vec<f64> = (0..500).map(|k| k as f64 * 1e-3).collect();
    let mat = mat_file(&[("t", &t), ("qm", &t)]);
    let r = post_file(
        &d,
        "/api/runs/import?file=rec.mat&columns=t=t,x=qm&scale=x=0.5",
        "application/octet-stream",
        &mat,
        None,
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["scales"]["x"], 0.5);
    assert_eq!(d.runs_total(), 2);
    // No upload file is left beside the database.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".import-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
