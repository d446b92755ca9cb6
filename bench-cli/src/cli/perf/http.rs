//! What the HTTP benchmarks share: a `bench serve --sim` child, one-shot HTTP/1.1 requests and
//! live-stream readers.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The `bench serve --sim` child, killed on drop.
#[derive(Debug)]
pub struct Daemon {
    child: Child,
    /// host:port.
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_daemon() -> anyhow::Result<Daemon> {
    let dir = tempfile::tempdir()?;
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "serve",
            "--sim",
            "--listen",
            "127.0.0.1:0",
            "--web",
            "/nonexistent",
        ])
        .arg("--db")
        .arg(dir.path().join("perf-estop.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line)?;
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|u| u.split('/').next())
        .ok_or_else(|| anyhow::anyhow!("bench serve did not start: {line}"))?
        .to_string();
    Ok(Daemon {
        child,
        addr,
        _dir: dir,
    })
}

/// One HTTP/1.1 request with a JSON body; returns (status, JSON body or null).
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> anyhow::Result<(u16, Value)> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let (status, rest) = request_raw(addr, method, path, "application/json", body.as_bytes())?;
    Ok((status, serde_json::from_slice(&rest).unwrap_or(Value::Null)))
}

/// One HTTP/1.1 request with a body of `content_type`; returns (status, body bytes).
pub fn request_raw(
    addr: &str,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> anyhow::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )?;
    s.write_all(body)?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let rest = raw.get(split + 4..).unwrap_or_default().to_vec();
    Ok((status, rest))
}

/// SSE clients that read and discard for as long as the daemon lives.
pub fn live_clients(addr: &str, n: usize) -> anyhow::Result<()> {
    for _ in 0..n {
        let mut s = TcpStream::connect(addr)?;
        write!(
            s,
            "GET /api/live HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
        )?;
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
        });
    }
    Ok(())
}
