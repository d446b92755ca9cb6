//! The RTU side of a link: opening a serial line (a USB adapter, a pty) and the tap between
//! the line and tokio-modbus's RTU codec.
//!
//! RTU frames carry no transaction id, so the tap decides what may be taken for the reply to
//! the request just sent:
//! - bytes that arrived **before the request** cannot answer it: the input buffer is cleared
//!   as the request is written;
//! - a complete frame with an intact CRC from **another unit or for another function** is a
//!   late reply to an earlier request (a device past its maximum response time, or a PC that
//!   held the bytes in its serial layer): it is dropped and counted, and the wait for the real
//!   reply goes on;
//! - the reply's CRC is checked as soon as a reply of the expected length has arrived, so a
//!   corrupted reply fails fast instead of turning into a timeout.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context as TaskContext, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_modbus::Request;
use tokio_serial::{ClearBuffer, SerialPort, SerialPortBuilderExt, SerialStream};

use crate::profile::{Parity, SerialSettings, crc_ok};

/// The reply the tap is waiting for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Expected {
    pub(super) unit: u8,
    pub(super) function: u8,
    /// Length of a normal reply.
    pub(super) len: usize,
}

impl Expected {
    /// The reply to `req` sent to `unit`.
    pub(super) fn of(unit: u8, req: &Request<'_>) -> Expected {
        Expected {
            unit,
            function: req.function_code().value(),
            len: reply_len(req),
        }
    }

    /// Whether a frame starting with `head` can be this reply: None until enough is known.
    /// A reply from this unit for this function is taken, even with a wrong byte count: that
    /// is a malformed reply to report, not a late one to skip.
    fn admits(&self, head: &[u8]) -> Option<bool> {
        let (&unit, &function) = (head.first()?, head.get(1)?);
        Some(unit == self.unit && function & 0x7F == self.function)
    }
}

/// What the serial tap knows about the reply it is waiting for.
#[derive(Debug, Default)]
pub(super) struct TapState {
    /// The pending request's reply.
    pub(super) expect: Option<Expected>,
    /// The request has not been written yet: clear the input before it is.
    pub(super) clear_before_write: bool,
    /// Bytes of the reply passed on since the request was sent.
    pub(super) rx: Vec<u8>,
    /// Bytes received but not passed on: the start of what may be a late frame.
    held: Vec<u8>,
    /// A reply of the expected length arrived with a bad CRC.
    pub(super) crc_error: bool,
    /// Late replies to earlier requests dropped so far.
    pub(super) stale: u64,
}

impl TapState {
    /// Readies the tap for the reply to a new request.
    pub(super) fn expect(&mut self, expected: Expected) {
        self.expect = Some(expected);
        self.clear_before_write = true;
        self.rx.clear();
        self.held.clear();
        self.crc_error = false;
    }

    /// Drops the late frames at the head of the held bytes; returns how many bytes may be
    /// passed on (all, unless the head may still turn out to be a late frame).
    fn sift(&mut self) -> usize {
        let Some(expected) = self.expect else {
            return self.held.len();
        };
        while self.rx.is_empty() {
            match expected.admits(&self.held) {
                None => return 0,
                Some(true) => break,
                Some(false) => match frame_len(&self.held) {
                    // A function whose reply length we cannot tell: let the codec judge.
                    None => break,
                    Some(n) if self.held.len() < n => return 0,
                    Some(n) if crc_ok(&self.held[..n]) => {
                        self.held.drain(..n);
                        self.stale += 1;
                    }
                    Some(_) => break,
                },
            }
        }
        self.held.len()
    }

    /// Checks the reply's CRC once a reply of the expected length has been passed on.
    fn crc_failure(&mut self) -> Option<io::Error> {
        let normal = self.expect?.len;
        if self.rx.len() < 2 {
            return None;
        }
        let need = if self.rx[1] & 0x80 != 0 { 5 } else { normal };
        if self.rx.len() < need || crc_ok(&self.rx[..need]) {
            return None;
        }
        self.crc_error = true;
        Some(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("crc mismatch in reply [{}]", hex(&self.rx[..need])),
        ))
    }
}

/// Whether replies to `function` give their byte count in their third byte.
fn carries_byte_count(function: u8) -> bool {
    matches!(function, 0x01..=0x04 | 0x17)
}

/// Length of the reply frame starting `head` (None: not known yet, or an unknown function).
fn frame_len(head: &[u8]) -> Option<usize> {
    let function = *head.get(1)?;
    if function & 0x80 != 0 {
        return Some(5);
    }
    match function {
        f if carries_byte_count(f) => Some(5 + usize::from(*head.get(2)?)),
        0x05 | 0x06 | 0x0F | 0x10 => Some(8),
        _ => None,
    }
}

/// A serial stream seen through the tap (serial links only).
#[derive(Debug)]
pub(super) struct Tap {
    pub(super) inner: SerialStream,
    pub(super) state: Arc<StdMutex<TapState>>,
}

impl AsyncRead for Tap {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if let Some(passed) = this.pass_on(buf) {
                return Poll::Ready(passed);
            }
            let before = buf.filled().len();
            match Pin::new(&mut this.inner).poll_read(cx, buf) {
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
            if buf.filled().len() == before {
                return Poll::Ready(Ok(()));
            }
            let mut st = this.state();
            st.held.extend_from_slice(&buf.filled()[before..]);
            buf.set_filled(before);
        }
    }
}

impl Tap {
    fn state(&self) -> std::sync::MutexGuard<'_, TapState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Passes on what the held bytes may give (None: nothing yet, read on).
    fn pass_on(&mut self, buf: &mut ReadBuf<'_>) -> Option<io::Result<()>> {
        let mut guard = self.state();
        let st = &mut *guard;
        let n = st.sift().min(buf.remaining());
        if n == 0 {
            return None;
        }
        st.rx.extend_from_slice(&st.held[..n]);
        let failure = st.crc_failure();
        if failure.is_none() {
            buf.put_slice(&st.held[..n]);
        }
        st.held.drain(..n);
        Some(failure.map_or(Ok(()), Err))
    }
}

impl AsyncWrite for Tap {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if std::mem::take(&mut self.state().clear_before_write) {
            self.inner
                .clear(ClearBuffer::Input)
                .map_err(io::Error::from)?;
        }
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

pub(super) fn open_serial(
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
