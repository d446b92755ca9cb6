//! Serving a bus service over Modbus TCP and over Modbus RTU on a pty.
//!
//! RTU path: the client opens `path` (pty A's slave side). A byte relay copies between pty A's
//! master and pty B, whose other side the tokio-modbus RTU server reads. The relay is where the
//! line can go dead (disconnect) and where reply CRCs are corrupted. The RTU server stops after
//! 20 undecodable bytes in a row, so it runs in a loop over a fresh pty B; the client's path
//! stays the same. With wire timing on, the relay holds each reply back until the frames would
//! have crossed a real line at the configured baud rate ([`serve_rtu`]).

use crate::faults::{Faults, Reply};
use crate::timing::{self, LineTiming};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
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

/// Line statistics of an RTU endpoint: what the timing emulation charged.
#[derive(Debug, Default)]
pub struct LineStats {
    transactions: AtomicU64,
    /// Sum of the ideal transaction times [ns].
    ideal_ns: AtomicU64,
    /// Requests their device did not hear: too little silence on the line before them.
    unheard: AtomicU64,
}

impl LineStats {
    /// Transactions answered.
    pub fn transactions(&self) -> u64 {
        self.transactions.load(Ordering::Relaxed)
    }

    /// Sum of the line-limited times of those transactions, both t3.5 included \[s\].
    pub fn ideal_s(&self) -> f64 {
        self.ideal_ns.load(Ordering::Relaxed) as f64 * 1e-9
    }

    /// Requests left unanswered because their device needs a longer silence before a frame
    /// than the line gave it (see [`Silences`]).
    pub fn unheard(&self) -> u64 {
        self.unheard.load(Ordering::Relaxed)
    }
}

/// The silence a device needs on the line before a frame addressed to it, where its profile
/// asks for more than t3.5 (the Delta's "10 ms of silent interval before and after the
/// transmission"). A request that follows the line's last traffic sooner is not heard: to that
/// device the two frames run together and fail their CRC, so it stays silent and the master
/// times out, as on a real line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Silences(pub Vec<(u8, Duration)>);

impl Silences {
    fn needed_by(&self, unit: u8) -> Duration {
        self.0
            .iter()
            .find(|(u, _)| *u == unit)
            .map_or(Duration::ZERO, |(_, d)| *d)
    }
}

/// Length of the RTU reply frame that starts with `head` (unit id, function code, byte
/// count), once enough of it is there to tell; unknown function codes count as complete.
fn reply_frame_len(head: &[u8]) -> Option<usize> {
    let fc = *head.get(1)?;
    if fc & 0x80 != 0 {
        return Some(5);
    }
    match fc {
        0x01..=0x04 | 0x11 | 0x17 => head.get(2).map(|n| 5 + usize::from(*n)),
        0x05 | 0x06 | 0x0F | 0x10 => Some(8),
        0x16 => Some(10),
        _ => Some(head.len()),
    }
}

/// The wire-timing state of the relay: when the pending request went on the line and how long
/// it is, and the reply being assembled.
#[derive(Debug, Default)]
struct Pending {
    /// When the relay got the request's first bytes (the master wrote them then).
    request_start: Option<Instant>,
    /// When the relay last got bytes from the master.
    last_rx: Option<Instant>,
    /// Request bytes so far.
    out: usize,
    /// Reply bytes from the device, not yet forwarded.
    reply: Vec<u8>,
    /// When the last reply had finished arriving at the master on the emulated line (no later
    /// than it had it).
    reply_end: Option<Instant>,
    /// The current request frame goes unheard (too little silence before it).
    unheard: bool,
    /// The line's t3.5 (0 without wire timing).
    t35: Duration,
    /// The silences its devices need (none without wire timing).
    silences: Silences,
}

impl Pending {
    /// Bytes from the master: a silence longer than t3.5 starts a new request frame, which its
    /// device (the frame's first byte) hears only after the silence it needs. Returns whether
    /// the bytes reach the devices.
    fn request_bytes(&mut self, bytes: &[u8], now: Instant, stats: &LineStats) -> bool {
        let Some(&unit) = bytes.first() else {
            return true;
        };
        if self.last_rx.is_none_or(|t| now - t > self.t35) || self.request_start.is_none() {
            let line_busy_until = self.last_rx.max(self.reply_end);
            let silence = line_busy_until.map_or(Duration::MAX, |t| now - t);
            self.unheard = silence < self.silences.needed_by(unit);
            if self.unheard {
                stats.unheard.fetch_add(1, Ordering::Relaxed);
            }
            self.request_start = Some(now);
            self.out = 0;
        }
        self.last_rx = Some(now);
        self.out += bytes.len();
        !self.unheard
    }

    /// When the reply, complete at the device at `ready`, has finished arriving on an
    /// emulated line of `timing`: the request's characters and t3.5 (the device sees the
    /// frame's end), the turnaround, the reply's characters. The device's own processing time
    /// (the simulator's, plus any injected delay) is hidden in the turnaround; only what
    /// exceeds it comes on top.
    fn reply_due(&self, timing: &LineTiming, back: usize, ready: Instant) -> Instant {
        let start = self.request_start.unwrap_or(ready);
        let processing = ready.saturating_duration_since(start).as_secs_f64();
        let c = timing.char_s();
        let due = self.out as f64 * c
            + timing.t35_s
            + timing.turnaround_s.max(processing)
            + back as f64 * c;
        start + Duration::from_secs_f64(due)
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
    master: SerialStream,
    /// Held open so the pty survives clients closing and reopening the path; never read.
    _slave: SerialStream,
    path: String,
}

impl RtuPort {
    /// Makes the pty pair.
    pub fn open() -> io::Result<RtuPort> {
        let (master, slave) = SerialStream::pair().map_err(io::Error::other)?;
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

/// Serves `svc` over the RTU line `port` until `stop` turns true; reopens the server side after
/// the tokio-modbus RTU server gives up on a garbled stream.
///
/// With `timing`, the relay emulates the line: it holds each complete reply until it would have
/// finished arriving on a real line of that baud rate (a pty has no wire time), counted from
/// when the master's request reached the relay (see `Pending::reply_due`). Holding the reply
/// in the relay rather than in the device service keeps the simulator's own pty hop out of the
/// emulated time: the reply is already here when its time comes. A device that needs a longer
/// silence before its frames (`silences`) does not hear a request sent sooner.
pub async fn serve_rtu<S: BusService>(
    port: RtuPort,
    svc: S,
    faults: Faults,
    timing: Option<(LineTiming, Silences)>,
    stats: Arc<LineStats>,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let RtuPort {
        master: mut line,
        _slave: keep,
        ..
    } = port;
    let (timing, silences) = timing.unzip();
    let mut buf_line = vec![0u8; 512];
    let mut buf_dev = vec![0u8; 512];
    let mut pending = Pending {
        t35: Duration::from_secs_f64(timing.map_or(0.0, |t| t.t35_s)),
        silences: silences.unwrap_or_default(),
        ..Pending::default()
    };
    while !*stop.borrow() {
        let (dev_master, mut dev) = SerialStream::pair().map_err(io::Error::other)?;
        let server = tokio_modbus::server::rtu::Server::new(dev_master);
        let mut server_task = tokio::spawn(server.serve_until(svc.clone(), stopped(stop.clone())));
        let mut stopping = std::pin::pin!(stopped(stop.clone()));
        pending.reply.clear();
        loop {
            tokio::select! {
                _ = &mut stopping => break,
                _ = &mut server_task => break,
                n = line.read(&mut buf_line) => {
                    let n = n?;
                    if !pending.request_bytes(&buf_line[..n], Instant::now(), &stats) {
                        continue;
                    }
                    if faults.disconnected() {
                        faults.count_disconnect();
                        continue;
                    }
                    // A failed write means the server side died: restart it.
                    if dev.write_all(&buf_line[..n]).await.is_err() {
                        break;
                    }
                }
                n = dev.read(&mut buf_dev) => {
                    let n = match n {
                        Ok(n) if n > 0 => n,
                        _ => break,
                    };
                    if faults.disconnected() {
                        faults.count_disconnect();
                        pending.reply.clear();
                        continue;
                    }
                    pending.reply.extend_from_slice(&buf_dev[..n]);
                    let Some(len) = reply_frame_len(&pending.reply) else {
                        continue;
                    };
                    if pending.reply.len() < len {
                        continue;
                    }
                    let ready = Instant::now();
                    let mut frame = std::mem::take(&mut pending.reply);
                    if let Some(timing) = &timing {
                        let back = frame.len();
                        let due = pending.reply_due(timing, back, ready);
                        pending.reply_end = Some(due);
                        stats.transactions.fetch_add(1, Ordering::Relaxed);
                        stats.ideal_ns.fetch_add(
                            (timing.transaction_s(pending.out, back) * 1e9) as u64,
                            Ordering::Relaxed,
                        );
                        timing::sleep_until_precise(due).await;
                    }
                    pending.request_start = None;
                    if faults.corrupting() {
                        let last = frame.len() - 1;
                        frame[last] ^= 0x5A;
                        faults.count_corrupted();
                    }
                    line.write_all(&frame).await?;
                }
            }
        }
        server_task.abort();
        // Whatever sat in the dead server's pty is gone with it.
        let _ = line.clear(tokio_serial::ClearBuffer::Output);
    }
    drop(keep);
    Ok(())
}
