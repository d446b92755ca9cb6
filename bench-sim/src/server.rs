//! Serving a bus service over Modbus TCP and over Modbus RTU on a pty.
//!
//! RTU path: the client opens `path` (pty A's slave side). A byte relay copies between pty A's
//! master and pty B, whose other side the tokio-modbus RTU server reads. The relay is where the
//! line can go dead (disconnect) and where reply CRCs are corrupted. The RTU server stops after
//! 20 undecodable bytes in a row, so it runs in a loop over a fresh pty B; the client's path
//! stays the same. [`WireTiming`] holds each reply back by the time the frames would take on a
//! real line at the configured baud rate.

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

    /// When the master put the request on the line: the relay's stamp if it is recent, else now.
    fn request_start(&self, now: Instant) -> Instant {
        let seen = self.base + Duration::from_nanos(self.request_seen_ns.load(Ordering::Relaxed));
        if seen <= now && now - seen < Duration::from_millis(20) {
            seen
        } else {
            now
        }
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

/// Holds each reply back by its wire time at `timing` (a pty has none).
#[derive(Clone, Debug)]
pub struct WireTiming<S> {
    inner: S,
    timing: LineTiming,
    stats: Arc<LineStats>,
}

impl<S> WireTiming<S> {
    /// Wraps `inner` with the timing of `timing`; counts into `stats`.
    pub fn new(inner: S, timing: LineTiming, stats: Arc<LineStats>) -> WireTiming<S> {
        WireTiming {
            inner,
            timing,
            stats,
        }
    }
}

impl<S: BusService> Service for WireTiming<S> {
    type Request = SlaveRequest<'static>;
    type Response = Option<Response>;
    type Exception = ExceptionCode;
    type Future = Reply;

    fn call(&self, req: SlaveRequest<'static>) -> Reply {
        // The line time runs from when the master wrote the request, not from when it got
        // through the relay and the decoder.
        let start = self.stats.request_start(Instant::now());
        let out = timing::request_frame_len(&req.request);
        let fut = self.inner.call(req);
        let timing = self.timing;
        let stats = self.stats.clone();
        Box::pin(async move {
            let called = Instant::now();
            let rsp = fut.await;
            // Device processing (and any injected delay) adds to the line time.
            let start = start + called.elapsed();
            let back = match &rsp {
                Ok(None) => return rsp,
                Ok(Some(r)) => timing::response_frame_len(Some(r)),
                Err(_) => timing::response_frame_len(None),
            };
            let delay = timing.device_delay_s(out, back);
            stats.transactions.fetch_add(1, Ordering::Relaxed);
            stats.ideal_ns.fetch_add(
                (timing.transaction_s(out, back) * 1e9) as u64,
                Ordering::Relaxed,
            );
            timing::sleep_until_precise(start + Duration::from_secs_f64(delay)).await;
            rsp
        })
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
pub async fn serve_rtu<S: BusService>(
    port: RtuPort,
    svc: S,
    faults: Faults,
    stats: Arc<LineStats>,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let RtuPort {
        master: mut line,
        _slave: keep,
        ..
    } = port;
    let mut buf_line = vec![0u8; 512];
    let mut buf_dev = vec![0u8; 512];
    while !*stop.borrow() {
        let (dev_master, mut dev) = SerialStream::pair().map_err(io::Error::other)?;
        let server = tokio_modbus::server::rtu::Server::new(dev_master);
        let mut server_task = tokio::spawn(server.serve_until(svc.clone(), stopped(stop.clone())));
        let mut stopping = std::pin::pin!(stopped(stop.clone()));
        loop {
            tokio::select! {
                _ = &mut stopping => break,
                _ = &mut server_task => break,
                n = line.read(&mut buf_line) => {
                    let n = n?;
                    stats.request_seen();
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
                        continue;
                    }
                    if faults.corrupting() {
                        buf_dev[n - 1] ^= 0x5A;
                        faults.count_corrupted();
                    }
                    line.write_all(&buf_dev[..n]).await?;
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
