//! A `bench serve` daemon and raw HTTP/1.1 to it (`std::net::TcpStream`): the harness of every
//! test that talks to a real daemon. A child process where the test is about the process
//! (signals, SIGKILL, its memory, the CLI); in process (`bench_service::run` on port 0, on a
//! thread of its own) where it is about the API.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `bench serve` daemon: a process killed on drop (SIGKILL), or the service in this process
/// shut down on drop (gracefully: the running run aborted, the store closed).
pub(crate) struct Daemon {
    host: Host,
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
            host: Host::Process(child),
            addr: host,
            token: None,
        }
    }

    /// `bench serve --sim` (or `--config FILE` with `bench_args`) as a library call in this
    /// process: `bench_service::run` on 127.0.0.1:0 on a runtime of its own thread.
    pub(crate) fn in_process(bench_args: &[&str], db: &Path) -> Daemon {
        let mut opts = bench_service::Options {
            sim: false,
            lab: false,
            config: None,
            listen: "127.0.0.1:0".parse().unwrap(),
            db: Some(db.to_path_buf()),
            web: Some("/nonexistent/web/dist".into()),
            token: None,
            token_for_reads: false,
            create: false,
        };
        let mut args = bench_args.iter();
        while let Some(arg) = args.next() {
            match *arg {
                "--sim" => opts.sim = true,
                "--lab" => opts.lab = true,
                "--config" => opts.config = Some(args.next().expect("--config FILE").into()),
                "--token" => {
                    opts.token = Some((args.next().expect("--token T").to_string(), "--token"))
                }
                other => panic!("Daemon::in_process does not take {other}"),
            }
        }
        let listener = std::net::TcpListener::bind(opts.listen).unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, up) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap();
            let served = rt.block_on(async move {
                let _ = ready.send(());
                bench_service::run(listener, opts, async move {
                    let _ = stopped.await;
                })
                .await
            });
            served.expect("bench_service::run");
        });
        up.recv().unwrap();
        let d = Daemon {
            host: Host::InProcess {
                stop: Some(stop),
                thread: Some(thread),
            },
            addr,
            token: None,
        };
        // The listener is bound: connections wait in its backlog until the service answers.
        d.get("/api/health");
        d
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
        match &self.host {
            Host::Process(child) => child.id(),
            Host::InProcess { .. } => std::process::id(),
        }
    }

    pub(crate) fn runs_total(&self) -> i64 {
        self.json("/api/runs")["total"].as_i64().unwrap()
    }
}

/// Where the daemon runs.
enum Host {
    Process(Child),
    InProcess {
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
}

impl Drop for Daemon {
    fn drop(&mut self) {
        match &mut self.host {
            Host::Process(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Host::InProcess { stop, thread } => {
                let _ = stop.take().map(|s| s.send(()));
                if let Some(t) = thread.take()
                    && t.join().is_err()
                    && !std::thread::panicking()
                {
                    panic!("the in-process daemon panicked");
                }
            }
        }
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
