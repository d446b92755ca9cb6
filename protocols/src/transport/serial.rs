//! The RTU side of a link: opening a serial line (a USB adapter, a pty) and the tap that
//! checks each reply's CRC as soon as a reply of the expected length has arrived.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context as TaskContext, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_modbus::Request;
use tokio_serial::SerialPortBuilderExt;

use crate::profile::{Parity, SerialSettings, crc_ok};

/// What the serial tap knows about the reply it is waiting for.
#[derive(Debug, Default)]
pub(super) struct TapState {
    /// Length of a normal reply to the pending request.
    pub(super) expect: Option<usize>,
    /// Bytes received since the request was sent.
    pub(super) rx: Vec<u8>,
    /// A reply of the expected length arrived with a bad CRC.
    pub(super) crc_error: bool,
}

/// A pass-through stream that watches replies for CRC errors (serial links only).
#[derive(Debug)]
pub(super) struct Tap<T> {
    pub(super) inner: T,
    pub(super) state: Arc<StdMutex<TapState>>,
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
pub(super) fn reply_len(req: &Request<'_>) -> usize {
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
