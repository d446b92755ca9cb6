//! The T7's Modbus service: FC03/FC04 reads, FC06/FC16 writes and LabJack's Modbus Feedback
//! (function 76: a list of read and write frames in one request, as `async_labjack` and LJM
//! send them), each in front of the simulated bench.

use super::DaqShared;
use super::image::words;
use crate::faults::Reply;
use protocols::daq::DaqType;
use std::sync::Arc;
use tokio_modbus::server::Service;
use tokio_modbus::{ExceptionCode, Request, Response, SlaveRequest};

/// Modbus Feedback's function code.
const MBFB: u8 = 76;

/// The emulated DAQ as a Modbus service (every unit id).
#[derive(Clone, Debug)]
pub struct DaqService {
    pub(crate) shared: Arc<DaqShared>,
}

impl Service for DaqService {
    type Request = SlaveRequest<'static>;
    type Response = Option<Response>;
    type Exception = ExceptionCode;
    type Future = Reply;

    fn call(&self, req: SlaveRequest<'static>) -> Reply {
        self.shared.feed.feed();
        let out = self.serve(&req.request);
        Box::pin(async move { out.map(Some) })
    }
}

impl DaqService {
    fn serve(&self, req: &Request<'_>) -> Result<Response, ExceptionCode> {
        match req {
            Request::ReadHoldingRegisters(a, n) => {
                self.read(*a, *n).map(Response::ReadHoldingRegisters)
            }
            Request::ReadInputRegisters(a, n) => {
                self.read(*a, *n).map(Response::ReadInputRegisters)
            }
            Request::WriteSingleRegister(a, v) => {
                self.write(*a, &[*v])?;
                Ok(Response::WriteSingleRegister(*a, *v))
            }
            Request::WriteMultipleRegisters(a, w) => {
                self.write(*a, w)?;
                Ok(Response::WriteMultipleRegisters(*a, w.len() as u16))
            }
            Request::Custom(MBFB, bytes) => self
                .feedback(bytes)
                .map(|b| Response::Custom(MBFB, b.into())),
            _ => Err(ExceptionCode::IllegalFunction),
        }
    }

    /// `n` words from `at`, value by value; a read that starts inside a value is refused.
    fn read(&self, at: u16, n: u16) -> Result<Vec<u16>, ExceptionCode> {
        let s = &self.shared;
        let mut image = s.lock();
        let mut out = Vec::with_capacity(usize::from(n));
        let mut a = at;
        let mut i_flash = 0;
        while out.len() < usize::from(n) {
            let (reg, i) = s
                .profile
                .at_address(a)
                .ok_or(ExceptionCode::IllegalDataAddress)?;
            let (reg, i) = if reg.name == "INTERNAL_FLASH_READ" {
                i_flash += 1;
                (reg, i_flash - 1)
            } else {
                (reg, i)
            };
            let raw = image.read(&s.profile, reg, i, &s.bench, &s.options)?;
            out.extend(words(reg.ty, raw));
            if reg.name != "INTERNAL_FLASH_READ" {
                a = a
                    .checked_add(reg.ty.words())
                    .ok_or(ExceptionCode::IllegalDataAddress)?;
            }
        }
        out.truncate(usize::from(n));
        Ok(out)
    }

    /// Writes `w` from `at`, whole values only; stream and DAC side effects follow.
    fn write(&self, at: u16, w: &[u16]) -> Result<(), ExceptionCode> {
        let s = &self.shared;
        let mut a = at;
        let mut rest = w;
        while !rest.is_empty() {
            let (reg, _) = s
                .profile
                .at_address(a)
                .ok_or(ExceptionCode::IllegalDataAddress)?;
            let k = usize::from(reg.ty.words());
            if rest.len() < k {
                return Err(ExceptionCode::IllegalDataValue);
            }
            let raw = match reg.ty {
                DaqType::U16 => u32::from(rest[0]),
                _ => (u32::from(rest[0]) << 16) | u32::from(rest[1]),
            };
            let name = reg.name.clone();
            s.lock().write(&s.profile, a, raw)?;
            s.after_write(&name, raw)?;
            a = a.wrapping_add(k as u16);
            rest = &rest[k..];
        }
        Ok(())
    }

    /// Modbus Feedback: frames `[0 = read | 1 = write][address u16][registers u8]` (writes
    /// followed by their data), done in order; the reply is the reads' data concatenated.
    fn feedback(&self, bytes: &[u8]) -> Result<Vec<u8>, ExceptionCode> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let [kind, hi, lo, n, ..] = *rest else {
                return Err(ExceptionCode::IllegalDataValue);
            };
            let at = u16::from_be_bytes([hi, lo]);
            rest = &rest[4..];
            match kind {
                0 => out.extend(
                    self.read(at, n.into())?
                        .iter()
                        .flat_map(|w| w.to_be_bytes()),
                ),
                1 => {
                    let len = 2 * usize::from(n);
                    let data = rest.get(..len).ok_or(ExceptionCode::IllegalDataValue)?;
                    let w: Vec<u16> = data
                        .chunks_exact(2)
                        .map(|c| u16::from_be_bytes([c[0], c[1]]))
                        .collect();
                    self.write(at, &w)?;
                    rest = &rest[len..];
                }
                _ => return Err(ExceptionCode::IllegalDataValue),
            }
        }
        Ok(out)
    }
}
