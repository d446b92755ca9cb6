//! Modbus links: TCP, or RTU over any serial path (a USB adapter, a pty), on tokio-modbus.
//!
//! A [`Link`] makes one request per call and never retries. It adds what tokio-modbus leaves to
//! the caller:
//!
//! - **A timeout on every request** ([`LinkConfig::timeout`]).
//! - **Resynchronisation** after a timeout, a framing/CRC error or a reply that does not match
//!   the request: the tokio-modbus context is dropped at once (closing the socket or port), and
//!   before the next request the link waits until the device's longest reply time has passed
//!   since the failed request was sent, reopens, and (serial) flushes the input buffer. A late
//!   reply therefore lands in a closed socket or a flushed buffer and is never taken as the
//!   answer to a later request (RTU frames carry no transaction id).
//! - **Inter-frame silence**: no request leaves earlier than [`LinkConfig::gap`] after the last
//!   reply (t3.5, or the device's longer gap), nor earlier than one gap after a serial port is
//!   opened (the line's last traffic may be another master's).
//! - **Echo and byte-count checks**: write replies must echo address and value/count, read
//!   replies must carry exactly the registers asked for.
//! - **CRC errors are detected and counted**: on serial links a tap checks the CRC as soon as a
//!   reply of the expected length has arrived, so a corrupted reply fails fast instead of
//!   turning into a timeout.
//! - **Counters** ([`LinkStats`]) of requests, timeouts, CRC/framing errors, exceptions and
//!   resyncs.

use std::borrow::Cow;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;
use tokio_modbus::client::{Client, Context};
use tokio_modbus::prelude::SlaveContext;
use tokio_modbus::{Request, Response, Slave};
use tokio_serial::SerialPortBuilderExt;

use crate::error::{Error, ExceptionCode, RegisterRef};
use crate::profile::{Parity, Profile, SerialSettings, Table, crc_ok};

/// Where a link goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// Modbus TCP to `host:port`.
    Tcp(String),
    /// Modbus RTU on a serial device path (`/dev/ttyUSB0`, `/dev/pts/3`).
    Serial {
        /// Device path.
        path: PathBuf,
        /// Line settings.
        settings: SerialSettings,
    },
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp(a) => write!(f, "tcp://{a}"),
            Endpoint::Serial { path, settings } => {
                write!(f, "rtu:{}@{}", path.display(), settings.baud)
            }
        }
    }
}

/// How a link behaves. Build it from a profile with [`LinkConfig::tcp`] or
/// [`LinkConfig::serial`] and adjust fields as needed.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// Timeout of one request (and of a TCP connect).
    pub timeout: Duration,
    /// Longest a device may take to answer; after a failure the link stays quiet until this
    /// long after the failed request was sent.
    pub max_response: Duration,
    /// Silence kept between a reply and the next request.
    pub gap: Duration,
}

impl LinkConfig {
    /// TCP with the profile's timing (no inter-frame gap on TCP).
    pub fn tcp(addr: impl Into<String>, profile: &Profile) -> LinkConfig {
        LinkConfig {
            endpoint: Endpoint::Tcp(addr.into()),
            timeout: profile.timing.timeout,
            max_response: profile.timing.max_response,
            gap: Duration::ZERO,
        }
    }

    /// RTU on `path` with the profile's serial settings (baud overridden when given) and
    /// timing; the gap is the profile's, or t3.5 at that baud.
    pub fn serial(path: impl Into<PathBuf>, baud: Option<u32>, profile: &Profile) -> LinkConfig {
        let mut settings = profile
            .transport
            .serial
            .unwrap_or_else(SerialSettings::default_rtu);
        if let Some(b) = baud {
            settings.baud = b;
        }
        LinkConfig {
            endpoint: Endpoint::Serial {
                path: path.into(),
                settings,
            },
            timeout: profile.timing.timeout,
            max_response: profile.timing.max_response,
            gap: profile.timing.gap(Some(&settings)),
        }
    }
}

/// Counters of what happened on a link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LinkStats {
    /// Requests sent.
    pub requests: u64,
    /// Requests answered with a matching, well-formed reply.
    pub ok: u64,
    /// Modbus exception replies.
    pub exceptions: u64,
    /// Requests that got no reply in time.
    pub timeouts: u64,
    /// Replies whose CRC was wrong.
    pub crc_errors: u64,
    /// Replies that were incomplete, malformed or not the answer to the request (unit,
    /// function, echo or byte count mismatch).
    pub framing_errors: u64,
    /// I/O failures (connect refused, port gone, connection reset).
    pub transport_errors: u64,
    /// Times the link was dropped to resynchronise.
    pub resyncs: u64,
    /// Successful reopens after a resync.
    pub reopens: u64,
}

/// What the serial tap knows about the reply it is waiting for.
#[derive(Debug, Default)]
struct TapState {
    /// Length of a normal reply to the pending request.
    expect: Option<usize>,
    /// Bytes received since the request was sent.
    rx: Vec<u8>,
    /// A reply of the expected length arrived with a bad CRC.
    crc_error: bool,
}

/// A pass-through stream that watches replies for CRC errors (serial links only).
#[derive(Debug)]
struct Tap<T> {
    inner: T,
    state: Arc<StdMutex<TapState>>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Tap<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let new = &buf.filled()[before..];
                if new.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                let mut st = this.state.lock().unwrap_or_else(|e| e.into_inner());
                st.rx.extend_from_slice(new);
                if let Some(normal) = st.expect
                    && st.rx.len() >= 2
                {
                    let need = if st.rx[1] & 0x80 != 0 { 5 } else { normal };
                    if st.rx.len() >= need && !crc_ok(&st.rx[..need]) {
                        st.crc_error = true;
                        let hex = hex(&st.rx[..need]);
                        drop(st);
                        buf.set_filled(before);
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("crc mismatch in reply [{hex}]"),
                        )));
                    }
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tap<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Length of a normal RTU reply to `req`.
fn reply_len(req: &Request<'_>) -> usize {
    match req {
        Request::ReadCoils(_, n) | Request::ReadDiscreteInputs(_, n) => {
            5 + usize::from(*n).div_ceil(8)
        }
        Request::ReadHoldingRegisters(_, n)
        | Request::ReadInputRegisters(_, n)
        | Request::ReadWriteMultipleRegisters(_, n, _, _) => 5 + 2 * usize::from(*n),
        _ => 8,
    }
}

/// One Modbus connection (a TCP socket, or a serial line shared by several units).
pub struct Link {
    cfg: LinkConfig,
    ctx: Option<Context>,
    tap: Option<Arc<StdMutex<TapState>>>,
    /// No request before this instant (inter-frame gap, resync wait).
    quiet_until: Instant,
    stats: LinkStats,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("endpoint", &self.cfg.endpoint)
            .field("open", &self.ctx.is_some())
            .field("stats", &self.stats)
            .finish()
    }
}

/// A link shared by the clients of the devices on it (drive and sensor on one RS-485 bus).
pub type SharedLink = Arc<tokio::sync::Mutex<Link>>;

impl Link {
    /// Opens the link (connects TCP, opens and flushes the serial port).
    pub async fn open(cfg: LinkConfig) -> Result<Link, Error> {
        let mut link = Link {
            cfg,
            ctx: None,
            tap: None,
            quiet_until: Instant::now(),
            stats: LinkStats::default(),
        };
        link.reopen().await?;
        Ok(link)
    }

    /// Wraps the link for sharing between clients.
    pub fn shared(self) -> SharedLink {
        Arc::new(tokio::sync::Mutex::new(self))
    }

    /// The configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Counters so far.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// True while the link is open (false after a failure, until the next request reopens it).
    pub fn is_open(&self) -> bool {
        self.ctx.is_some()
    }

    async fn reopen(&mut self) -> Result<(), Error> {
        self.ctx = None;
        self.tap = None;
        let endpoint = self.cfg.endpoint.clone();
        let opened = match &endpoint {
            Endpoint::Tcp(addr) => {
                let connect = tokio::net::TcpStream::connect(addr.as_str());
                match tokio::time::timeout(
                    self.cfg.timeout.max(Duration::from_millis(100)),
                    connect,
                )
                .await
                {
                    Err(_) => Err(Error::Timeout {
                        context: format!("connect {endpoint}"),
                        after: self.cfg.timeout,
                    }),
                    Ok(Err(e)) => Err(Error::Transport {
                        context: format!("connect {endpoint}"),
                        source: e,
                    }),
                    Ok(Ok(stream)) => {
                        let _ = stream.set_nodelay(true);
                        Ok(tokio_modbus::client::tcp::attach_slave(stream, Slave(0xFF)))
                    }
                }
            }
            Endpoint::Serial { path, settings } => match open_serial(path, settings) {
                Err(e) => Err(Error::Transport {
                    context: format!("open {endpoint}"),
                    source: e,
                }),
                Ok(port) => {
                    // Another master may have used the line a moment ago (the process before
                    // this one): a device that needs a long silence before a frame (the
                    // Delta's 10 ms) hears the first request only after a full gap.
                    self.quiet_until = self.quiet_until.max(Instant::now() + self.cfg.gap);
                    let state = Arc::new(StdMutex::new(TapState::default()));
                    self.tap = Some(state.clone());
                    Ok(tokio_modbus::client::rtu::attach_slave(
                        Tap { inner: port, state },
                        Slave(1),
                    ))
                }
            },
        };
        match opened {
            Ok(ctx) => {
                self.ctx = Some(ctx);
                Ok(())
            }
            Err(e) => {
                self.stats.transport_errors += 1;
                Err(e)
            }
        }
    }

    /// Drops the connection and keeps the line quiet until the device can no longer be
    /// answering the request sent at `sent`.
    fn resync(&mut self, sent: Instant) {
        self.ctx = None;
        self.tap = None;
        self.stats.resyncs += 1;
        let now = Instant::now();
        self.quiet_until = (sent + self.cfg.max_response + self.cfg.gap).max(now + self.cfg.gap);
    }

    async fn transact(
        &mut self,
        unit: u8,
        req: Request<'static>,
        what: &RegisterRef,
    ) -> Result<Response, Error> {
        if self.ctx.is_none() {
            wait_until(self.quiet_until).await;
            self.reopen().await?;
            self.stats.reopens += 1;
        }
        wait_until(self.quiet_until).await;
        let expect = reply_len(&req);
        if let Some(tap) = &self.tap {
            let mut st = tap.lock().unwrap_or_else(|e| e.into_inner());
            st.expect = Some(expect);
            st.rx.clear();
            st.crc_error = false;
        }
        let ctx = self
            .ctx
            .as_mut()
            .expect("BUG: link context missing after reopen");
        ctx.set_slave(Slave(unit));
        self.stats.requests += 1;
        let context = || format!("{} {what} (unit {unit})", op_name(&req));
        let sent = Instant::now();
        let result = tokio::time::timeout(self.cfg.timeout, ctx.call(req.clone())).await;
        let (rx_len, crc_error) = match &self.tap {
            Some(tap) => {
                let st = tap.lock().unwrap_or_else(|e| e.into_inner());
                (st.rx.len(), st.crc_error)
            }
            None => (0, false),
        };
        match result {
            Err(_) => {
                self.resync(sent);
                if rx_len > 0 {
                    self.stats.framing_errors += 1;
                    Err(Error::Protocol {
                        context: context(),
                        reason: format!(
                            "incomplete or unparsable reply: {rx_len} bytes, expected {expect}, within {} ms",
                            self.cfg.timeout.as_secs_f64() * 1e3
                        ),
                    })
                } else {
                    self.stats.timeouts += 1;
                    Err(Error::Timeout {
                        context: context(),
                        after: self.cfg.timeout,
                    })
                }
            }
            Ok(Err(tokio_modbus::Error::Transport(e))) => {
                self.resync(sent);
                if crc_error {
                    self.stats.crc_errors += 1;
                    Err(Error::Protocol {
                        context: context(),
                        reason: e.to_string(),
                    })
                } else if e.kind() == io::ErrorKind::InvalidData {
                    self.stats.framing_errors += 1;
                    Err(Error::Protocol {
                        context: context(),
                        reason: e.to_string(),
                    })
                } else {
                    self.stats.transport_errors += 1;
                    Err(Error::Transport {
                        context: context(),
                        source: e,
                    })
                }
            }
            Ok(Err(tokio_modbus::Error::Protocol(p))) => {
                self.resync(sent);
                self.stats.framing_errors += 1;
                Err(Error::Protocol {
                    context: context(),
                    reason: p.to_string(),
                })
            }
            Ok(Ok(Err(code))) => {
                self.quiet_until = Instant::now() + self.cfg.gap;
                self.stats.exceptions += 1;
                Err(Error::Exception {
                    code: ExceptionCode(u8::from(code)),
                    register: what.clone(),
                })
            }
            Ok(Ok(Ok(resp))) => {
                self.quiet_until = Instant::now() + self.cfg.gap;
                if let Err(reason) = check_reply(&req, &resp) {
                    self.resync(sent);
                    self.stats.framing_errors += 1;
                    return Err(Error::Protocol {
                        context: context(),
                        reason,
                    });
                }
                self.stats.ok += 1;
                Ok(resp)
            }
        }
    }

    /// Reads `count` registers (or coils, as 0/1) from `table` at `address` of `unit`.
    pub async fn read(
        &mut self,
        unit: u8,
        table: Table,
        address: u16,
        count: u16,
    ) -> Result<Vec<u16>, Error> {
        let what = RegisterRef {
            table,
            address,
            count,
            signal: None,
        };
        let req = match table {
            Table::Coil => Request::ReadCoils(address, count),
            Table::DiscreteInput => Request::ReadDiscreteInputs(address, count),
            Table::Input => Request::ReadInputRegisters(address, count),
            Table::Holding => Request::ReadHoldingRegisters(address, count),
        };
        match self.transact(unit, req, &what).await? {
            Response::ReadCoils(bits) | Response::ReadDiscreteInputs(bits) => Ok(bits
                .into_iter()
                .take(usize::from(count))
                .map(u16::from)
                .collect()),
            Response::ReadInputRegisters(w) | Response::ReadHoldingRegisters(w) => Ok(w),
            other => Err(bug(other)),
        }
    }

    /// Writes registers (FC06 for one, FC16 for several) or coils (FC05 / FC15, non-zero =
    /// on) and checks the echo.
    pub async fn write(
        &mut self,
        unit: u8,
        table: Table,
        address: u16,
        data: &[u16],
    ) -> Result<(), Error> {
        let what = RegisterRef {
            table,
            address,
            count: data.len() as u16,
            signal: None,
        };
        let req = match (table, data) {
            (Table::Holding, [one]) => Request::WriteSingleRegister(address, *one),
            (Table::Holding, _) => {
                Request::WriteMultipleRegisters(address, Cow::Owned(data.to_vec()))
            }
            (Table::Coil, [one]) => Request::WriteSingleCoil(address, *one != 0),
            (Table::Coil, _) => Request::WriteMultipleCoils(
                address,
                Cow::Owned(data.iter().map(|w| *w != 0).collect()),
            ),
            (t, _) => {
                return Err(Error::Protocol {
                    context: format!("write {what}"),
                    reason: format!("a {t} cannot be written"),
                });
            }
        };
        self.transact(unit, req, &what).await.map(|_| ())
    }

    /// FC23: writes `data` at `write_address` and reads `read_count` holding registers at
    /// `read_address` in one transaction (the write happens first).
    pub async fn read_write(
        &mut self,
        unit: u8,
        read_address: u16,
        read_count: u16,
        write_address: u16,
        data: &[u16],
    ) -> Result<Vec<u16>, Error> {
        let what = RegisterRef {
            table: Table::Holding,
            address: read_address,
            count: read_count,
            signal: None,
        };
        let req = Request::ReadWriteMultipleRegisters(
            read_address,
            read_count,
            write_address,
            Cow::Owned(data.to_vec()),
        );
        match self.transact(unit, req, &what).await? {
            Response::ReadWriteMultipleRegisters(w) => Ok(w),
            other => Err(bug(other)),
        }
    }
}

/// Waits until `deadline` (tokio's clock) with sub-millisecond accuracy: tokio's timer
/// rounds up to whole milliseconds and would stretch a 1.75 ms t3.5 to up to ~3 ms. The
/// remaining time is measured on tokio's clock but waited out on the real one
/// ([`crate::timing::sleep_until_precise`]).
async fn wait_until(deadline: Instant) {
    let rest = deadline.saturating_duration_since(Instant::now());
    if !rest.is_zero() {
        crate::timing::sleep_until_precise(std::time::Instant::now() + rest).await;
    }
}

fn bug(resp: Response) -> Error {
    Error::Protocol {
        context: "BUG".into(),
        reason: format!("reply {resp:?} passed the checks for another request"),
    }
}

fn op_name(req: &Request<'_>) -> &'static str {
    match req {
        Request::ReadCoils(..)
        | Request::ReadDiscreteInputs(..)
        | Request::ReadHoldingRegisters(..)
        | Request::ReadInputRegisters(..) => "read",
        Request::ReadWriteMultipleRegisters(..) => "read/write (FC23)",
        _ => "write",
    }
}

/// Checks that a reply answers `req`: echoes of writes, counts of reads.
fn check_reply(req: &Request<'_>, resp: &Response) -> Result<(), String> {
    match (req, resp) {
        (Request::ReadCoils(_, n), Response::ReadCoils(v))
        | (Request::ReadDiscreteInputs(_, n), Response::ReadDiscreteInputs(v)) => {
            // Coil replies are padded to whole bytes.
            if v.len() < usize::from(*n) || v.len() >= usize::from(*n) + 8 {
                return Err(format!("asked for {n} coils, got {}", v.len()));
            }
        }
        (Request::ReadHoldingRegisters(_, n), Response::ReadHoldingRegisters(v))
        | (Request::ReadInputRegisters(_, n), Response::ReadInputRegisters(v))
        | (
            Request::ReadWriteMultipleRegisters(_, n, _, _),
            Response::ReadWriteMultipleRegisters(v),
        ) => {
            if v.len() != usize::from(*n) {
                return Err(format!("asked for {n} registers, got {}", v.len()));
            }
        }
        (Request::WriteSingleRegister(a, w), Response::WriteSingleRegister(ra, rw)) => {
            if (a, w) != (ra, rw) {
                return Err(format!(
                    "write echo 0x{ra:04X} = 0x{rw:04X}, sent 0x{a:04X} = 0x{w:04X}"
                ));
            }
        }
        (Request::WriteMultipleRegisters(a, d), Response::WriteMultipleRegisters(ra, rn)) => {
            if *a != *ra || d.len() != usize::from(*rn) {
                return Err(format!(
                    "write echo 0x{ra:04X} × {rn}, sent 0x{a:04X} × {}",
                    d.len()
                ));
            }
        }
        (Request::WriteSingleCoil(a, c), Response::WriteSingleCoil(ra, rc)) => {
            if (a, c) != (ra, rc) {
                return Err(format!("coil echo 0x{ra:04X} = {rc}, sent 0x{a:04X} = {c}"));
            }
        }
        (Request::WriteMultipleCoils(a, d), Response::WriteMultipleCoils(ra, rn)) => {
            if *a != *ra || d.len() != usize::from(*rn) {
                return Err(format!(
                    "coil echo 0x{ra:04X} × {rn}, sent 0x{a:04X} × {}",
                    d.len()
                ));
            }
        }
        (req, resp) => return Err(format!("reply {resp:?} does not answer {req:?}")),
    }
    Ok(())
}

/// The latency timer (ms) of a USB serial adapter behind `path` (`/dev/ttyUSB0`, or a
/// `/dev/serial/by-id/...` link), from `/sys/bus/usb-serial/devices/<tty>/latency_timer`;
/// `None` when the path is not a USB serial adapter. FTDI adapters default to 16 ms, which
/// caps a Modbus RTU link at about 30–60 transactions per second: set it to 1.
pub fn usb_latency_timer_ms(path: &std::path::Path) -> Option<u32> {
    let real = std::fs::canonicalize(path).ok()?;
    let name = real.file_name()?.to_str()?;
    let sys = format!("/sys/bus/usb-serial/devices/{name}/latency_timer");
    std::fs::read_to_string(sys).ok()?.trim().parse().ok()
}

fn open_serial(
    path: &std::path::Path,
    s: &SerialSettings,
) -> io::Result<tokio_serial::SerialStream> {
    let parity = match s.parity {
        Parity::None => tokio_serial::Parity::None,
        Parity::Even => tokio_serial::Parity::Even,
        Parity::Odd => tokio_serial::Parity::Odd,
    };
    let data_bits = if s.data_bits == 7 {
        tokio_serial::DataBits::Seven
    } else {
        tokio_serial::DataBits::Eight
    };
    let stop_bits = if s.stop_bits == 2 {
        tokio_serial::StopBits::Two
    } else {
        tokio_serial::StopBits::One
    };
    let path = path.to_string_lossy().into_owned();
    // Shared, not exclusive (no TIOCEXCL, a shared flock): a reopen must succeed while another
    // descriptor of the same tty stays open (the holder of a pty pair, a line monitor).
    let port = tokio_serial::new(path, s.baud)
        .parity(parity)
        .data_bits(data_bits)
        .stop_bits(stop_bits)
        .exclusive(false)
        .open_native_async()
        .map_err(io::Error::from)?;
    tokio_serial::SerialPort::clear(&port, tokio_serial::ClearBuffer::Input)
        .map_err(io::Error::from)?;
    Ok(port)
}
