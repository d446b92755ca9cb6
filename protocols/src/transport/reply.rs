//! Whether a reply answers its request (echoes of writes, counts of reads), and how a request
//! is named in errors.

use tokio_modbus::{Request, Response};

use crate::error::Error;

pub(super) fn bug(resp: Response) -> Error {
    Error::Protocol {
        context: "BUG".into(),
        reason: format!("reply {resp:?} passed the checks for another request"),
    }
}

pub(super) fn op_name(req: &Request<'_>) -> &'static str {
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
pub(super) fn check_reply(req: &Request<'_>, resp: &Response) -> Result<(), String> {
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
