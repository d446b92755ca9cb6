//! Serving a bus service over Modbus TCP and over Modbus RTU on a pty.
//!
//! RTU path: the client opens `path` (pty A's slave side). A raw-byte relay of two threads
//! copies between pty A's master and pty B, whose other side the tokio-modbus RTU server reads.
//! The relay is the line: it stamps each request's arrival, holds each reply until the frames
//! would have crossed a real line at the configured baud rate (a pty has no timing), and is where
//! the line goes dead (disconnect) and reply CRCs are corrupted. Blocking threads sleep on the OS
//! timer, so the timing holds to tens of microseconds. The RTU server stops after 20
//! undecodable bytes in a row, so it runs in a loop over a fresh pty B; the client's path stays
//! the same.

use crate::faults::{Faults, Reply};
use crate::timing::{self, LineTiming};
use serialport::TTYPort;
use std::io;
use std::io::{Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_modbus::server::Service;
use tokio_modbus::{ExceptionCode, Response, SlaveRequest};
use tokio_serial::{SerialPort, SerialStream};

/// A bus service as the servers take it.
pub trait BusService:
    Service<
        Request = SlaveRequest<'static>,
        Response = Option<Response>,
        Exception = ExceptionCode,
        Future = Reply,
    > + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> BusService for S where
    S: Service<
            Request = SlaveRequest<'static>,
            Response = Option<Response>,
            Exception = ExceptionCode,
            Future = Reply,
        > + Clone
        + Send
        + Sync
        + 'static
{
}

/// Line statistics of an RTU endpoint (what the timing emulation charged), and the instant
/// the last request bytes reached the line.
#[derive(Debug)]
pub struct LineStats {
    transactions: AtomicU64,
    /// Sum of the ideal transaction times [ns].
    ideal_ns: AtomicU64,
    base: Instant,
    /// When the relay last received bytes from the master [ns since `base`].
    request_seen_ns: AtomicU64,
}

impl Default for LineStats {
    fn default() -> LineStats {
        LineStats {
            transactions: AtomicU64::new(0),
            ideal_ns: AtomicU64::new(0),
            base: Instant::now(),
            request_seen_ns: AtomicU64::new(0),
        }
    }
}

impl LineStats {
    fn request_seen(&self) {
        let ns = self.base.elapsed().as_nanos() as u64;
        self.request_seen_ns.store(ns, Ordering::Relaxed);
    }

    /// Transactions answered.
    pub fn transactions(&self) -> u64 {
        self.transactions.load(Ordering::Relaxed)
    }

    /// Sum of the line-limited times of those transactions, both t3.5 included [s].
    pub fn ideal_s(&self) -> f64 {
        self.ideal_ns.load(Ordering::Relaxed) as f64 * 1e-9
    }
}

/// A TCP stream that reads end-of-file while the line is cut, so the server closes it.
#[derive(Debug)]
struct Cut {
    stream: TcpStream,
    faults: Faults,
}

impl AsyncRead for Cut {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.faults.disconnected() {
            self.faults.count_disconnect();
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Cut {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Serves `svc` on `listener` (every unit id goes to `svc`) until `stop` turns true.
pub async fn serve_tcp<S: BusService>(
    listener: TcpListener,
    svc: S,
    faults: Faults,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let server = tokio_modbus::server::tcp::Server::new(listener);
    let on_connected = move |stream: TcpStream, _addr| {
        let svc = svc.clone();
        let faults = faults.clone();
        async move {
            if faults.disconnected() {
                faults.count_disconnect();
                return Ok(None);
            }
            stream.set_nodelay(true)?;
            Ok(Some((svc, Cut { stream, faults })))
        }
    };
    server
        .serve_until(&on_connected, |_err| {}, stopped(stop))
        .await
        .map(|_| ())
}

/// The client side of a simulated RS-485 line: a pty path that any serial client can open.
#[derive(Debug)]
pub struct RtuPort {
    master: TTYPort,
    /// Held open so the pty survives clients closing and reopening the path; never read.
    _slave: TTYPort,
    path: String,
}

impl RtuPort {
    /// Makes the pty pair.
    pub fn open() -> io::Result<RtuPort> {
        let (master, slave) = TTYPort::pair().map_err(io::Error::other)?;
        let path = slave
            .name()
            .ok_or_else(|| io::Error::other("BUG: the pty has no path"))?;
        Ok(RtuPort {
            master,
            _slave: slave,
            path,
        })
    }

    /// The path clients open (e.g. `/dev/pts/7`).
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// What the two line threads share.
#[derive(Debug)]
struct Line {
    faults: Faults,
    timing: Option<LineTiming>,
    stats: Arc<LineStats>,
    stop: AtomicBool,
    /// The device side of the present server's pty (the relay writes requests into it).
    device: std::sync::Mutex<Option<TTYPort>>,
    /// The request being received: when its first byte came, bytes so far, last byte's time.
    pending: std::sync::Mutex<Pending>,
}

#[derive(Debug, Default)]
struct Pending {
    start: Option<Instant>,
    out: usize,
    last: Option<Instant>,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Master → device: stamps each request's arrival and forwards it (dropped while disconnected).
fn line_in(line: Arc<Line>, mut master: TTYPort) {
    let _ = master.set_timeout(Duration::from_millis(20));
    let mut buf = [0u8; 512];
    while !line.stop.load(Ordering::Relaxed) {
        let n = match master.read(&mut buf) {
            Ok(n) if n > 0 => n,
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::TimedOut => continue,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
        };
        let now = Instant::now();
        line.stats.request_seen();
        {
            // A silence of t3.5 (or a reply in between) ends a frame: this is a new request.
            let t35 = line.timing.map_or(1.75e-3, |t| t.t35_s);
            let mut p = lock(&line.pending);
            let fresh = p.start.is_none()
                || p.last
                    .is_none_or(|l| now - l > Duration::from_secs_f64(t35));
            if fresh {
                p.start = Some(now);
                p.out = 0;
            }
            p.out += n;
            p.last = Some(now);
        }
        if line.faults.disconnected() {
            line.faults.count_disconnect();
            continue;
        }
        if let Some(dev) = lock(&line.device).as_mut() {
            let _ = dev.write_all(&buf[..n]);
        }
    }
}

/// Device → master for one server's life: holds each reply until its wire time is over, then
/// corrupts its CRC if asked and writes it (dropped while disconnected).
fn line_out(line: Arc<Line>, mut device: TTYPort, mut master: TTYPort) {
    let _ = device.set_timeout(Duration::from_millis(20));
    let mut buf = [0u8; 512];
    while !line.stop.load(Ordering::Relaxed) {
        let n = match device.read(&mut buf) {
            Ok(n) if n > 0 => n,
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::TimedOut => continue,
            // The server side is gone (restart or shutdown).
            Err(_) => return,
        };
        let (start, out) = {
            let mut p = lock(&line.pending);
            let r = (p.start.take(), p.out);
            p.out = 0;
            p.last = None;
            r
        };
        if let Some(t) = line.timing {
            let start = start.unwrap_or_else(Instant::now);
            let delay = t.device_delay_s(out, n);
            line.stats.transactions.fetch_add(1, Ordering::Relaxed);
            line.stats
                .ideal_ns
                .fetch_add((t.transaction_s(out, n) * 1e9) as u64, Ordering::Relaxed);
            timing::sleep_until_blocking(start + Duration::from_secs_f64(delay));
        }
        if line.faults.disconnected() {
            line.faults.count_disconnect();
            continue;
        }
        if line.faults.corrupting() {
            buf[n - 1] ^= 0x5A;
            line.faults.count_corrupted();
        }
        let _ = master.write_all(&buf[..n]);
    }
}

/// Serves `svc` over the RTU line `port` until `stop` turns true.
///
/// Two line threads stand between the client's pty and the tokio-modbus RTU server's pty: they
/// stamp requests, hold replies for their wire time at `timing` (if any), and apply the
/// byte-level faults. The server is restarted behind the same path when it gives up on a
/// garbled stream.
pub async fn serve_rtu<S: BusService>(
    port: RtuPort,
    svc: S,
    faults: Faults,
    timing: Option<LineTiming>,
    stats: Arc<LineStats>,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let RtuPort {
        master,
        _slave: keep,
        ..
    } = port;
    let line = Arc::new(Line {
        faults,
        timing,
        stats,
        stop: AtomicBool::new(false),
        device: std::sync::Mutex::new(None),
        pending: std::sync::Mutex::new(Pending::default()),
    });
    let master_out = master.try_clone_native().map_err(io::Error::other)?;
    let input = {
        let line = line.clone();
        std::thread::Builder::new()
            .name("bench-sim-rtu-in".into())
            .spawn(move || line_in(line, master))?
    };
    let mut outputs = Vec::new();
    while !*stop.borrow() {
        let (dev_master, dev_slave) = TTYPort::pair().map_err(io::Error::other)?;
        *lock(&line.device) = Some(dev_slave.try_clone_native().map_err(io::Error::other)?);
        let out_master = master_out.try_clone_native().map_err(io::Error::other)?;
        let l = line.clone();
        outputs.push(
            std::thread::Builder::new()
                .name("bench-sim-rtu-out".into())
                .spawn(move || line_out(l, dev_slave, out_master))?,
        );
        let server = tokio_modbus::server::rtu::Server::new(
            SerialStream::try_from(dev_master).map_err(io::Error::other)?,
        );
        // Returns on shutdown, or with an error when the server gives up on garbage.
        let _ = server.serve_until(svc.clone(), stopped(stop.clone())).await;
        *lock(&line.device) = None;
    }
    line.stop.store(true, Ordering::Relaxed);
    let _ = tokio::task::spawn_blocking(move || {
        let _ = input.join();
        for o in outputs {
            let _ = o.join();
        }
        drop(keep);
    })
    .await;
    Ok(())
}
