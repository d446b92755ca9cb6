//! Modbus RTU wire timing, which a pty does not have: frame sizes, character time, t3.5 and the
//! line limit of a transaction (docs/src/real-bench.md#modbus-rtu-line-limits).
//!
//! One transaction on a real line takes
//! `T = (bytes out + bytes back) · 11/baud + 2 · t3.5 + turnaround`: the request's characters,
//! the silence by which the device sees the request's end, the device's turnaround, the reply's
//! characters, and the silence by which the master sees the reply's end before it may send again.
//! The simulator holds each reply back by everything except the master's own final t3.5
//! ([`LineTiming::device_delay_s`]); the master's inter-frame gap supplies that one.

use tokio_modbus::{Request, Response};

/// Bits per RTU character: start, 8 data, parity (or a second stop bit), stop.
pub const BITS_PER_CHAR: f64 = 11.0;

/// Timing of one RTU line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineTiming {
    /// Baud rate [bit/s].
    pub baud: u32,
    /// Inter-frame silence t3.5 \[s\]: 3.5 characters up to 19200 baud, 1.75 ms above (the
    /// serial-line spec's recommended fixed value).
    pub t35_s: f64,
    /// Device turnaround between the request's end (after t3.5) and the reply's start \[s\].
    pub turnaround_s: f64,
}

impl LineTiming {
    /// The spec's timing for `baud` with a device turnaround of `turnaround_s`.
    pub fn new(baud: u32, turnaround_s: f64) -> LineTiming {
        let baud = baud.max(1);
        let t35_s = if baud <= 19_200 {
            3.5 * BITS_PER_CHAR / f64::from(baud)
        } else {
            1.75e-3
        };
        LineTiming {
            baud,
            t35_s,
            turnaround_s,
        }
    }

    /// One character on the wire \[s\].
    pub fn char_s(&self) -> f64 {
        BITS_PER_CHAR / f64::from(self.baud)
    }

    /// A whole transaction with `out` request and `back` reply bytes, both silences included \[s\].
    pub fn transaction_s(&self, out: usize, back: usize) -> f64 {
        (out + back) as f64 * self.char_s() + 2.0 * self.t35_s + self.turnaround_s
    }

    /// How long the device holds its reply back after the request arrived in full over a pty:
    /// the transaction less the master's final t3.5 \[s\].
    pub fn device_delay_s(&self, out: usize, back: usize) -> f64 {
        self.transaction_s(out, back) - self.t35_s
    }

    /// The line limit of a cycle of one read of `read_regs` holding registers (FC03) and one
    /// write of `write_regs` registers (FC16) [cycles/s].
    pub fn read_write_cycle_limit_per_s(&self, read_regs: u16, write_regs: u16) -> f64 {
        let read = self.transaction_s(8, 5 + 2 * read_regs as usize);
        let write = self.transaction_s(9 + 2 * write_regs as usize, 8);
        1.0 / (read + write)
    }
}

/// Bytes of the RTU frame (unit id, PDU, CRC) that carries `req`.
pub fn request_frame_len(req: &Request<'_>) -> usize {
    3 + match req {
        Request::ReadCoils(..)
        | Request::ReadDiscreteInputs(..)
        | Request::ReadInputRegisters(..)
        | Request::ReadHoldingRegisters(..)
        | Request::WriteSingleCoil(..)
        | Request::WriteSingleRegister(..) => 5,
        Request::WriteMultipleCoils(_, coils) => 6 + coils.len().div_ceil(8),
        Request::WriteMultipleRegisters(_, words) => 6 + 2 * words.len(),
        Request::ReportServerId => 1,
        Request::MaskWriteRegister(..) => 7,
        Request::ReadWriteMultipleRegisters(_, _, _, words) => 10 + 2 * words.len(),
        Request::ReadDeviceIdentification(..) => 4,
        Request::Custom(_, data) => 1 + data.len(),
    }
}

/// Bytes of the RTU frame that carries `rsp` (an exception reply is 5 bytes).
pub fn response_frame_len(rsp: Option<&Response>) -> usize {
    let Some(rsp) = rsp else {
        return 5;
    };
    3 + match rsp {
        Response::ReadCoils(c) | Response::ReadDiscreteInputs(c) => 2 + c.len().div_ceil(8),
        Response::ReadInputRegisters(w)
        | Response::ReadHoldingRegisters(w)
        | Response::ReadWriteMultipleRegisters(w) => 2 + 2 * w.len(),
        Response::WriteSingleCoil(..)
        | Response::WriteMultipleCoils(..)
        | Response::WriteSingleRegister(..)
        | Response::WriteMultipleRegisters(..) => 5,
        Response::ReportServerId(_, _, data) => 3 + data.len(),
        Response::MaskWriteRegister(..) => 7,
        // Not served by the simulator; a rough size.
        Response::ReadDeviceIdentification(_) => 8,
        Response::Custom(_, data) => 1 + data.len(),
    }
}

/// The precise waits live in `protocols` (the client's inter-frame gap needs them too); one
/// copy, re-exported here for the emulation and the benchmark's raw client.
pub use protocols::timing::{sleep_until_blocking, sleep_until_precise};

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn frame_sizes_match_the_spec() {
        assert_eq!(request_frame_len(&Request::ReadHoldingRegisters(0, 4)), 8);
        assert_eq!(
            response_frame_len(Some(&Response::ReadHoldingRegisters(vec![0; 4]))),
            13
        );
        assert_eq!(
            request_frame_len(&Request::WriteMultipleRegisters(0, Cow::Owned(vec![0; 2]))),
            13
        );
        assert_eq!(
            response_frame_len(Some(&Response::WriteMultipleRegisters(0, 2))),
            8
        );
        assert_eq!(
            request_frame_len(&Request::ReadWriteMultipleRegisters(
                0,
                4,
                0,
                Cow::Owned(vec![0; 2])
            )),
            17
        );
    }

    #[test]
    fn line_limits_reproduce_the_table() {
        // docs/src/real-bench.md#modbus-rtu-line-limits: 115200 baud read 4 + write 2 → 11.0 ms → 91 Hz.
        let l = LineTiming::new(115_200, 0.0);
        let hz = l.read_write_cycle_limit_per_s(4, 2);
        assert!((hz - 91.0).abs() < 1.0, "{hz}");
        // 921600: 7.5 ms → 133 Hz.
        let hz = LineTiming::new(921_600, 0.0).read_write_cycle_limit_per_s(4, 2);
        assert!((hz - 133.0).abs() < 1.5, "{hz}");
        // 9600: strict t3.5 = 4.01 ms, cycle 64.2 ms.
        let hz = LineTiming::new(9_600, 0.0).read_write_cycle_limit_per_s(4, 2);
        assert!((hz - 15.6).abs() < 0.2, "{hz}");
    }
}
