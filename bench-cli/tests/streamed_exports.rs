//! Downloads of a long run stream: an hour at 1 kHz (3.6 M samples, two model outputs) written
//! straight into a store, then fetched through `bench serve` as CSV, JSON rows, columnar JSON
//! and Parquet. Each download holds every sample (counted in what arrived) while the server's
//! peak memory grows by at most 64 MB.

use crate::daemon::Daemon;
use run_store::{Batch, Finish, NewRun, Recorder, RecorderConfig, Sample, Store};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const SAMPLES: u64 = 3_600_000;
const MODELS: [&str; 2] = ["coulomb_viscous", "lugre"];
const GROWTH_LIMIT_KB: u64 = 64 * 1024;

/// Writes the hour-long run; returns its id.
fn record_an_hour(db: &std::path::Path) -> i64 {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Store::open(db).await.unwrap();
        let id = store
            .create_run(&NewRun {
                kind: "validation_profile".into(),
                name: "an hour at 1 kHz".into(),
                spec: serde_json::json!({"kind": "validation_profile"}),
                bench_config: serde_json::json!({}),
                device_profiles: serde_json::json!({}),
                software_version: "test".into(),
                notes: None,
                models: MODELS.iter().map(|m| m.to_string()).collect(),
                period_s: Some(1e-3),
            })
            .await
            .unwrap();
        let recorder = Recorder::start(&store, id, RecorderConfig::default())
            .await
            .unwrap();
        let sender = recorder.sender();
        let per_batch = 10_000;
        for b in 0..SAMPLES / per_batch {
            let mut batch = Batch::with_capacity(b * per_batch, per_batch as usize, 2);
            for k in b * per_batch..(b + 1) * per_batch {
                let t = k as f64 * 1e-3;
                let s = Sample {
                    t,
                    x: (0.1 * t).sin(),
                    v: 0.1 * (0.1 * t).cos(),
                    u_cmd: 0.5,
                    torque_motor: 1.0,
                    torque_sensor: 1.0 + 1e-3 * (t % 1.0),
                    segment: (k / 60_000) as u32,
                    flags: 0,
                };
                batch.push(s, &[1.0, 1.1]);
            }
            sender.send(batch).await.unwrap();
        }
        let summary = recorder.close(Finish::completed(None)).await.unwrap();
        assert_eq!(summary.samples, SAMPLES);
        store.close().await;
        id
    })
}

/// A line of /proc/PID/status, in kB.
fn status_kb(pid: u32, key: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// GETs `path` and passes the de-chunked body to `sink` as it arrives; returns the status.
fn download(addr: &str, path: &str, sink: &mut impl Write) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut r = BufReader::with_capacity(1 << 16, s);
    let mut head = String::new();
    while !head.ends_with("\r\n\r\n") {
        assert!(r.read_line(&mut head).unwrap() > 0, "no response head");
    }
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "streamed, not sized in advance: {head}"
    );
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let mut size = String::new();
        r.read_line(&mut size).unwrap();
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            return status;
        }
        let mut left = n;
        while left > 0 {
            let k = left.min(buf.len());
            r.read_exact(&mut buf[..k]).unwrap();
            sink.write_all(&buf[..k]).unwrap();
            left -= k;
        }
        r.read_line(&mut size).unwrap();
    }
}

/// Counts bytes, newlines, `],[` and keeps the first and last bytes of a body.
#[derive(Default)]
struct Tally {
    bytes: u64,
    newlines: u64,
    row_breaks: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Write for Tally {
    /// Counted with memchr, whose search keeps its speed in this test's unoptimised build
    /// (the tally reads every byte of several hundred megabytes).
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let row_breaks = |s: &[u8]| memchr::memmem::find_iter(s, b"],[").count() as u64;
        self.bytes += b.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', b).count() as u64;
        let mut joined = self.tail.clone();
        joined.extend_from_slice(b);
        self.row_breaks += row_breaks(&joined) - row_breaks(&self.tail);
        if self.head.len() < 256 {
            self.head.extend(b.iter().take(256 - self.head.len()));
        }
        self.tail = joined[joined.len().saturating_sub(256)..].to_vec();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Downloads `path` from a fresh daemon on `db`; returns what arrived and the peak growth [kB].
fn through_a_fresh_daemon(db: &std::path::Path, path: &str, sink: &mut impl Write) -> u64 {
    let d = Daemon::start(db, "127.0.0.1:0", &[]);
    assert_eq!(d.get("/api/runs").status, 200);
    let before = status_kb(d.pid(), "VmRSS:");
    assert_eq!(download(&d.addr, path, sink), 200);
    status_kb(d.pid(), "VmHWM:").saturating_sub(before)
}

#[test]
fn an_hour_long_run_downloads_whole_in_every_format_with_bounded_server_memory() {
    let _bench = crate::util::bench_slot();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hour.db");
    let id = record_an_hour(&db);

    let mut csv = Tally::default();
    let grew = through_a_fresh_daemon(&db, &format!("/api/runs/{id}/export?format=csv"), &mut csv);
    eprintln!(
        "csv: {} MB, server peak +{} MB",
        csv.bytes >> 20,
        grew >> 10
    );
    assert_eq!(csv.newlines, SAMPLES + 1, "a header and every sample");
    assert!(csv.head.starts_with(
        b"idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags,coulomb_viscous,lugre\n0,0,0,"
    ));
    let tail = String::from_utf8_lossy(&csv.tail).into_owned();
    assert!(tail.contains("\n3599999,3599.99"), "{tail}");
    assert!(grew <= GROWTH_LIMIT_KB, "csv: server peak grew {grew} kB");

    let mut rows = Tally::default();
    let grew = through_a_fresh_daemon(
        &db,
        &format!("/api/runs/{id}/export?format=json"),
        &mut rows,
    );
    eprintln!(
        "json rows: {} MB, server peak +{} MB",
        rows.bytes >> 20,
        grew >> 10
    );
    assert_eq!(rows.row_breaks, SAMPLES - 1, "every sample a row");
    assert!(rows.head.starts_with(b"{\"run\":"));
    assert!(
        rows.tail.ends_with(b"1.0,1.1]]}\n") || rows.tail.ends_with(b"1,1.1]]}\n"),
        "{}",
        String::from_utf8_lossy(&rows.tail)
    );
    assert!(grew <= GROWTH_LIMIT_KB, "json: server peak grew {grew} kB");

    let mut cols = Tally::default();
    let grew = through_a_fresh_daemon(
        &db,
        &format!("/api/runs/{id}/samples?format=json&every=10"),
        &mut cols,
    );
    eprintln!(
        "columnar json (every 10th): {} MB, server peak +{} MB",
        cols.bytes >> 20,
        grew >> 10
    );
    assert!(
        cols.head
            .starts_with(b"{\"models\":[\"coulomb_viscous\",\"lugre\"],\"idx\":[0,10,20,")
    );
    assert!(
        cols.tail.ends_with(b"]}}"),
        "{}",
        String::from_utf8_lossy(&cols.tail)
    );
    assert!(
        grew <= GROWTH_LIMIT_KB,
        "columnar json: server peak grew {grew} kB"
    );

    let file = dir.path().join("hour.parquet");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    let grew = through_a_fresh_daemon(
        &db,
        &format!("/api/runs/{id}/export?format=parquet"),
        &mut out,
    );
    drop(out);
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let meta = reader.metadata();
    eprintln!(
        "parquet: {} MB in {} row groups, server peak +{} MB",
        std::fs::metadata(&file).unwrap().len() >> 20,
        meta.num_row_groups(),
        grew >> 10
    );
    assert_eq!(meta.file_metadata().num_rows() as u64, SAMPLES);
    assert!(
        grew <= GROWTH_LIMIT_KB,
        "parquet: server peak grew {grew} kB"
    );
}
