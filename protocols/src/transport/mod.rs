//! Modbus links: TCP, or RTU over any serial path (a USB adapter, a pty), on tokio-modbus.
//!
//! A [`Link`] makes one request per call and, unless told to ([`Link::set_retries`]), never
//! retries. It adds what tokio-modbus leaves to the caller:
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
//! - **Late replies are dropped, not taken** (serial links): the input is cleared as each
//!   request is written, and a whole frame with a good CRC from another unit or for another
//!   function is counted and skipped while the wait for the real reply goes on ([`serial`]).
//! - **CRC errors are detected and counted**: on serial links a tap checks the CRC as soon as a
//!   reply of the expected length has arrived, so a corrupted reply fails fast instead of
//!   turning into a timeout.
//! - **Counters** ([`LinkStats`]) of requests, timeouts, CRC/framing errors, exceptions and
//!   resyncs, late replies.
//!
//! Here: the [`Link`] and its one request path. Around it, one job each: where a link goes and
//! how it behaves ([`config`]), the serial line and its CRC tap ([`serial`]), the checks that a
//! reply answers its request ([`reply`]), and the register operations ([`requests`]).

use std::io;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use tokio::time::Instant;
use tokio_modbus::client::{Client, Context};
use tokio_modbus::prelude::SlaveContext;
use tokio_modbus::{Request, Response, Slave};

use crate::error::{Error, ExceptionCode, RegisterRef};

mod config;
mod reply;
mod requests;
mod serial;

pub use config::{Endpoint, LinkConfig, LinkStats};
use reply::{check_reply, op_name};
pub use serial::usb_latency_timer_ms;
use serial::{Expected, Tap, TapState, open_serial};

/// One Modbus connection (a TCP socket, or a serial line shared by several units).
pub struct Link {
    cfg: LinkConfig,
    ctx: Option<Context>,
    tap: Option<Arc<StdMutex<TapState>>>,
    /// No request before this instant (inter-frame gap, resync wait).
    quiet_until: Instant,
    /// Times a request that failed on the link is sent again ([`Link::set_retries`]).
    retries: u32,
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
            retries: 0,
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

    /// Sends a request that failed on the link (no reply, a garbled or mismatched one, a
    /// transport error; never an exception) up to `n` more times before the error reaches the
    /// caller, each after the resync wait. 0 (the default) for a control loop, which judges
    /// its own misses on time; 1 for preparing a device, where one frame lost on a noisy line
    /// or held by a busy PC should not end a run. The retried failures still count in
    /// [`LinkStats`].
    pub fn set_retries(&mut self, n: u32) {
        self.retries = n;
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
        let mut left = self.retries;
        loop {
            match self.transact_once(unit, req.clone(), what).await {
                Err(e) if left > 0 && e.is_link_error() => left -= 1,
                done => return done,
            }
        }
    }

    async fn transact_once(
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
        let expected = Expected::of(unit, &req);
        if let Some(tap) = &self.tap {
            let mut st = tap.lock().unwrap_or_else(|e| e.into_inner());
            st.expect(expected);
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
                let mut st = tap.lock().unwrap_or_else(|e| e.into_inner());
                self.stats.stale_replies += std::mem::take(&mut st.stale);
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
                            "incomplete or unparsable reply: {rx_len} bytes, expected {}, within {} ms",
                            expected.len,
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
