//! The link layer against a real tokio-modbus slave, over TCP and over RTU on a pty.

use std::sync::atomic::Ordering;
use std::time::Duration;

use protocols::profile::Table;
use protocols::{Error, Link, Profile};

use crate::util::{SlaveState, sim_drive};
use crate::{Bench, Kind, bench_test};

fn image() -> SlaveState {
    let mut holding: Vec<u16> = vec![0; 0x30];
    holding[0] = 99;
    holding[1] = 100;
    holding[10] = 10;
    holding[11] = 11;
    SlaveState::default().with_unit(1, holding, None)
}

async fn link(bench: &Bench, timeout_ms: u64, max_response_ms: u64) -> Link {
    let mut cfg = bench.config(&sim_drive());
    cfg.timeout = Duration::from_millis(timeout_ms);
    cfg.max_response = Duration::from_millis(max_response_ms);
    Link::open(cfg).await.unwrap()
}

async fn reads_and_writes_every_function(kind: Kind) {
    let bench = Bench::start(kind, image()).await;
    let mut l = link(&bench, 1000, 200).await;
    assert_eq!(l.read(1, Table::Holding, 0, 2).await.unwrap(), [99, 100]);
    l.write(1, Table::Holding, 20, &[7]).await.unwrap();
    l.write(1, Table::Holding, 21, &[8, 9]).await.unwrap();
    assert_eq!(l.read(1, Table::Holding, 20, 3).await.unwrap(), [7, 8, 9]);
    // FC23: the write happens before the read.
    let r = l.read_write(1, 20, 3, 22, &[42]).await.unwrap();
    assert_eq!(r, [7, 8, 42]);
    l.write(1, Table::Coil, 3, &[1]).await.unwrap();
    assert_eq!(l.read(1, Table::Coil, 2, 3).await.unwrap(), [0, 1, 0]);
    let s = l.stats();
    assert_eq!((s.requests, s.ok), (7, 7), "{s:?}");
    assert_eq!(
        s.timeouts + s.crc_errors + s.framing_errors + s.exceptions,
        0
    );
}
bench_test!(reads_and_writes_every_function);

async fn illegal_address_is_an_exception_naming_the_register(kind: Kind) {
    let bench = Bench::start(kind, image()).await;
    let mut l = link(&bench, 1000, 200).await;
    let err = l.read(1, Table::Holding, 0x0100, 2).await.unwrap_err();
    match &err {
        Error::Exception { code, register } => {
            assert_eq!(code.0, 2);
            assert_eq!(register.address, 0x0100);
        }
        other => panic!("{other:?}"),
    }
    assert!(!err.is_link_error());
    assert_eq!(
        err.to_string(),
        "device exception: illegal data address (2) for holding register 0x0100..0x0101"
    );
    // Through a profile the message names the signal.
    let text = std::fs::read_to_string(crate::util::profile_path("sim-drive.toml"))
        .unwrap()
        .replace(
            "address = 0x0022, type = \"u16\"",
            "address = 0x0122, type = \"u16\"",
        );
    let p = std::sync::Arc::new(Profile::from_toml_str(&text, "moved.toml").unwrap());
    let io = protocols::DeviceIo::new(p, l.shared());
    let err = io.read_signal("fault_code").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "device exception: illegal data address (2) for signal 'fault_code' at holding register 0x0122"
    );
    // An exception is an answer: the link stays in step.
    let v = io.read_signal("statusword").await.unwrap();
    assert_eq!(v.raw.as_f64(), 0.0);
    let s = io.link().lock().await.stats();
    assert_eq!((s.exceptions, s.resyncs), (2, 0), "{s:?}");
}
bench_test!(illegal_address_is_an_exception_naming_the_register);

async fn timeout_then_late_reply_is_never_taken_for_fresh_data(kind: Kind) {
    let bench = Bench::start(kind, image()).await;
    let mut l = link(&bench, 100, 500).await;
    // The slave answers the read of 0..2 = [99, 100] after 250 ms, beyond the 100 ms timeout
    // (within the device's 500 ms maximum response time).
    bench.state.lock().unwrap().delay_next = Some(Duration::from_millis(250));
    let err = l.read(1, Table::Holding, 0, 2).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(err.is_link_error());
    // The next read of 10..12 must see [10, 11], never the late [99, 100].
    assert_eq!(l.read(1, Table::Holding, 10, 2).await.unwrap(), [10, 11]);
    assert_eq!(l.read(1, Table::Holding, 0, 2).await.unwrap(), [99, 100]);
    assert_eq!(l.read(1, Table::Holding, 10, 2).await.unwrap(), [10, 11]);
    let s = l.stats();
    assert_eq!(
        (s.timeouts, s.resyncs, s.reopens, s.ok),
        (1, 1, 1, 3),
        "{s:?}"
    );
}
bench_test!(timeout_then_late_reply_is_never_taken_for_fresh_data);

async fn a_retried_request_survives_one_lost_reply(kind: Kind) {
    let bench = Bench::start(kind, image()).await;
    let mut l = link(&bench, 100, 300).await;
    l.set_retries(1);
    bench.state.lock().unwrap().delay_next = Some(Duration::from_millis(250));
    assert_eq!(l.read(1, Table::Holding, 0, 2).await.unwrap(), [99, 100]);
    // A unit that never answers: the error after the retry's timeout too.
    let err = l.read(7, Table::Holding, 0, 1).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    let s = l.stats();
    assert_eq!((s.requests, s.timeouts, s.ok), (4, 3, 1), "{s:?}");
}
bench_test!(a_retried_request_survives_one_lost_reply);

async fn silent_unit_times_out(kind: Kind) {
    let bench = Bench::start(kind, image()).await;
    let mut l = link(&bench, 100, 100).await;
    let err = l.read(7, Table::Holding, 0, 1).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    // One request, one timeout, nothing sent again: the link gave up after its timeout.
    let s = l.stats();
    assert_eq!((s.requests, s.timeouts, s.ok), (1, 1, 0), "{s:?}");
    assert_eq!(l.read(1, Table::Holding, 0, 1).await.unwrap(), [99]);
}
bench_test!(silent_unit_times_out);

async fn wrong_echo_and_short_reply_are_protocol_errors(kind: Kind) {
    let bench = Bench::start(kind, image()).await;
    let mut l = link(&bench, 1000, 200).await;
    bench.state.lock().unwrap().bad_echo_next = true;
    let err = l.write(1, Table::Holding, 20, &[5]).await.unwrap_err();
    assert!(
        matches!(&err, Error::Protocol { reason, .. } if reason.contains("write echo 0x0015 = 0x0005, sent 0x0014 = 0x0005")),
        "{err:?}"
    );
    bench.state.lock().unwrap().short_next = true;
    let err = l.read(1, Table::Holding, 10, 2).await.unwrap_err();
    assert!(
        matches!(&err, Error::Protocol { reason, .. } if reason.contains("asked for 2 registers, got 1")),
        "{err:?}"
    );
    assert_eq!(l.read(1, Table::Holding, 10, 2).await.unwrap(), [10, 11]);
    let s = l.stats();
    assert_eq!((s.framing_errors, s.resyncs), (2, 2), "{s:?}");
}
bench_test!(wrong_echo_and_short_reply_are_protocol_errors);

#[tokio::test]
async fn rtu_corrupted_crc_is_detected_and_counted() {
    let bench = Bench::start(Kind::Rtu, image()).await;
    // A timeout far beyond any round trip of a loaded machine: an answer well before it was
    // judged from the bytes.
    let mut l = link(&bench, 60_000, 50).await;
    let rtu = bench.rtu.as_ref().unwrap();
    rtu.bridge.corrupt_next_reply.store(true, Ordering::SeqCst);
    let t0 = std::time::Instant::now();
    let err = l.read(1, Table::Holding, 0, 2).await.unwrap_err();
    assert!(
        matches!(&err, Error::Protocol { reason, .. } if reason.contains("crc mismatch")),
        "{err:?}"
    );
    // Detected from the bytes, not by waiting for the timeout.
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert_eq!(l.read(1, Table::Holding, 0, 2).await.unwrap(), [99, 100]);
    let s = l.stats();
    assert_eq!((s.crc_errors, s.timeouts, s.ok), (1, 0, 1), "{s:?}");
}

/// A reply later than the device's maximum response time reaches the wait for the next
/// request's reply (the link has already reopened): it is dropped there when it cannot be that
/// reply (another unit, another function), and cleared when it came before the request.
#[tokio::test]
async fn rtu_never_takes_a_late_reply_for_the_next_one() {
    let bench = Bench::start(Kind::Rtu, image().with_unit(2, vec![7, 8, 9], None)).await;
    // A 150 ms timeout, a device that promises 100 ms: the next request leaves 150 ms after
    // the one that timed out, and the simulated slave (one request at a time) answers it
    // right after its late reply.
    let mut l = link(&bench, 150, 100).await;
    let late = |ms| bench.state.lock().unwrap().delay_next = Some(Duration::from_millis(ms));
    // Unit 1's [99, 100] comes at 250 ms, while the link waits for unit 2's reply.
    late(250);
    let err = l.read(1, Table::Holding, 0, 2).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert_eq!(l.read(2, Table::Holding, 0, 3).await.unwrap(), [7, 8, 9]);
    // The same unit, another function: a read's reply while a write's is awaited.
    late(250);
    assert!(l.read(1, Table::Holding, 0, 2).await.is_err());
    l.write(1, Table::Holding, 20, &[5]).await.unwrap();
    assert_eq!(l.read(1, Table::Holding, 20, 1).await.unwrap(), [5]);
    // The same shape of reply, already there when the next request leaves.
    late(170);
    assert!(l.read(1, Table::Holding, 0, 2).await.is_err());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(l.read(1, Table::Holding, 10, 2).await.unwrap(), [10, 11]);
    let s = l.stats();
    assert_eq!(
        (
            s.timeouts,
            s.stale_replies,
            s.ok,
            s.crc_errors + s.framing_errors
        ),
        (3, 2, 4, 0),
        "{s:?}"
    );
}

#[tokio::test]
async fn rtu_keeps_the_inter_frame_gap() {
    let bench = Bench::start(Kind::Rtu, image()).await;
    let mut cfg = bench.config(&sim_drive());
    cfg.gap = Duration::from_millis(5);
    cfg.timeout = Duration::from_millis(1000);
    // A pty is not a USB adapter: no latency timer to warn about.
    assert_eq!(
        protocols::usb_latency_timer_ms(std::path::Path::new(
            &bench.rtu.as_ref().unwrap().endpoint()
        )),
        None
    );
    let mut l = Link::open(cfg).await.unwrap();
    for _ in 0..10 {
        l.read(1, Table::Holding, 0, 2).await.unwrap();
    }
    let arrivals = bench.state.lock().unwrap().arrivals.clone();
    assert_eq!(arrivals.len(), 10);
    for w in arrivals.windows(2) {
        let d = w[1] - w[0];
        assert!(
            d >= Duration::from_millis(5),
            "requests {d:?} apart, gap is 5 ms"
        );
    }
}

#[tokio::test]
async fn tcp_reconnects_after_disconnect() {
    let mut bench = Bench::start(Kind::Tcp, image()).await;
    let mut l = link(&bench, 1000, 20).await;
    assert_eq!(l.read(1, Table::Holding, 0, 1).await.unwrap(), [99]);
    bench.tcp.as_mut().unwrap().disconnect_all().await;
    let err = l.read(1, Table::Holding, 0, 1).await.unwrap_err();
    assert!(err.is_link_error(), "{err:?}");
    assert!(!l.is_open());
    assert_eq!(l.read(1, Table::Holding, 0, 1).await.unwrap(), [99]);
    let s = l.stats();
    assert_eq!((s.resyncs, s.reopens, s.ok), (1, 1, 2), "{s:?}");
}

#[tokio::test]
async fn tcp_connect_refused_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let cfg = protocols::LinkConfig::tcp(addr.to_string(), &sim_drive());
    let err = Link::open(cfg).await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("transport: connect tcp://{addr}")),
        "{err}"
    );
}

#[tokio::test]
async fn rtu_reopens_a_port_that_went_away_and_came_back() {
    // A USB adapter unplugged and plugged back: the path vanishes, then reappears.
    let bench = Bench::start(Kind::Rtu, image()).await;
    let dir = std::env::temp_dir().join(format!("protocols-replug-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link_path = dir.join("ttyUSB0");
    let target = bench.rtu.as_ref().unwrap().endpoint();
    std::os::unix::fs::symlink(&target, &link_path).unwrap();
    let mut cfg = protocols::LinkConfig::serial(&link_path, None, &sim_drive());
    cfg.timeout = Duration::from_millis(150);
    cfg.max_response = Duration::from_millis(500);
    let mut l = Link::open(cfg).await.unwrap();
    assert_eq!(l.read(1, Table::Holding, 0, 1).await.unwrap(), [99]);
    // Unplugged: a reply goes missing (it comes late, within the device's 500 ms) and the
    // path disappears.
    std::fs::remove_file(&link_path).unwrap();
    bench.state.lock().unwrap().delay_next = Some(Duration::from_millis(300));
    let err = l.read(1, Table::Holding, 0, 1).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    let err = l.read(1, Table::Holding, 0, 1).await.unwrap_err();
    assert!(
        matches!(&err, Error::Transport { context, .. } if context.contains("ttyUSB0")),
        "{err:?}"
    );
    // Plugged back in: the next request reopens the port.
    std::os::unix::fs::symlink(&target, &link_path).unwrap();
    assert_eq!(l.read(1, Table::Holding, 10, 2).await.unwrap(), [10, 11]);
    let s = l.stats();
    assert_eq!(
        (s.timeouts, s.transport_errors, s.reopens),
        (1, 1, 1),
        "{s:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
