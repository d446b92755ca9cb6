//! The crate's one error type, in two layers as in tokio-modbus:
//! "could not talk" ([`Error::Transport`], [`Error::Protocol`], [`Error::Timeout`]) and "device
//! said no" ([`Error::Exception`]), plus [`Error::Profile`] for a bad register map and the
//! client-side rejections ([`Error::OutOfRange`], [`Error::WriteRate`], [`Error::Sequence`],
//! [`Error::Unsupported`]). [`Error::kind`] sorts them for callers that count faults: a value
//! refused by a profile's limits is an [`ErrorKind::Limit`], never a communications fault.

use std::fmt;
use std::time::Duration;

use crate::table::Table;

/// A register a request addressed, for error messages: table, PDU address and signal name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterRef {
    /// Register table.
    pub table: Table,
    /// First PDU (0-based) address of the request.
    pub address: u16,
    /// Number of registers or coils the request covered.
    pub count: u16,
    /// The profile signal at that address, when the request was for one signal.
    pub signal: Option<String>,
}

impl fmt::Display for RegisterRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.signal {
            write!(f, "signal '{s}' at ")?;
        }
        write!(f, "{} 0x{:04X}", self.table, self.address)?;
        if self.count > 1 {
            write!(
                f,
                "..0x{:04X}",
                u32::from(self.address) + u32::from(self.count) - 1
            )?;
        }
        Ok(())
    }
}

/// A Modbus exception code as the device sent it (1 = illegal function, 2 = illegal data
/// address, 3 = illegal data value, 4 = server device failure, 6 = busy, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExceptionCode(pub u8);

impl ExceptionCode {
    /// Illegal data address (2): the register does not exist on the device.
    pub const ILLEGAL_DATA_ADDRESS: ExceptionCode = ExceptionCode(2);
    /// Illegal data value (3).
    pub const ILLEGAL_DATA_VALUE: ExceptionCode = ExceptionCode(3);

    /// The name the Modbus application protocol specification gives the code.
    pub fn name(self) -> &'static str {
        match self.0 {
            1 => "illegal function",
            2 => "illegal data address",
            3 => "illegal data value",
            4 => "server device failure",
            5 => "acknowledge",
            6 => "server device busy",
            8 => "memory parity error",
            0x0A => "gateway path unavailable",
            0x0B => "gateway target device failed to respond",
            _ => "unknown exception",
        }
    }
}

impl fmt::Display for ExceptionCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

/// What kind of failure an [`Error`] is, for callers that keep separate fault budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Could not talk: transport, protocol or timeout (the link was resynchronised).
    Link,
    /// The device answered with a Modbus exception.
    Device,
    /// Refused before anything was sent: a value outside a signal's `min`/`max` or its
    /// register type, or a write rate above `timing.max_write_rate_hz`.
    Limit,
    /// A profile file failed to parse or validate.
    Profile,
    /// A multi-step sequence did not reach its expected state.
    Sequence,
    /// The profile lacks what the call needs.
    Unsupported,
}

impl ErrorKind {
    /// A short lower-case name for logs and run records.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Link => "link",
            ErrorKind::Device => "device",
            ErrorKind::Limit => "limit",
            ErrorKind::Profile => "profile",
            ErrorKind::Sequence => "sequence",
            ErrorKind::Unsupported => "unsupported",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The link failed: the port or socket could not be opened, read or written.
    #[error("transport: {context}: {source}")]
    Transport {
        /// What was being done (e.g. "connect 127.0.0.1:502", "read signal 'status'").
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Bytes came back but were not the answer to the request: wrong unit or function code,
    /// wrong byte count, a write echo that does not match.
    #[error("protocol: {context}: {reason}")]
    Protocol {
        /// What was being done.
        context: String,
        /// What did not match.
        reason: String,
    },
    /// The device did not answer within the profile's timeout.
    #[error("timeout: {context}: no reply within {} ms", after.as_secs_f64() * 1e3)]
    Timeout {
        /// What was being done.
        context: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// The device answered with a Modbus exception.
    #[error("device exception: {code} for {register}")]
    Exception {
        /// The exception code.
        code: ExceptionCode,
        /// The registers the refused request addressed.
        register: RegisterRef,
    },
    /// A profile file failed to parse or validate.
    #[error("profile {file}: {field}: {reason}")]
    Profile {
        /// The file (or label) the profile came from.
        file: String,
        /// The entry that broke the rule, e.g. `signal 'torque_cmd' (#3).reg.type`.
        field: String,
        /// The rule, with the value and the limit.
        reason: String,
    },
    /// A value is outside a signal's limits or its register type's range.
    #[error("{signal} = {value} {unit} is out of range: {limit}")]
    OutOfRange {
        /// The signal.
        signal: String,
        /// The rejected value (SI units).
        value: f64,
        /// Its SI unit.
        unit: String,
        /// The limit it broke, e.g. "max 2 N m".
        limit: String,
    },
    /// A plan would write a device faster than its profile allows
    /// (`timing.max_write_rate_hz`, e.g. parameters backed by EEPROM).
    #[error(
        "profile '{profile}': timing.max_write_rate_hz = {max_hz} Hz, a write rate of {rate_hz} Hz exceeds it"
    )]
    WriteRate {
        /// The profile's device name.
        profile: String,
        /// The requested write rate, Hz.
        rate_hz: f64,
        /// The profile's limit, Hz.
        max_hz: f64,
    },
    /// A multi-step sequence (enable, fault reset, ...) did not reach its expected state.
    #[error("sequence '{sequence}' step {step}: {reason}")]
    Sequence {
        /// The sequence name.
        sequence: String,
        /// The 0-based step index.
        step: usize,
        /// What was expected and what was read, or the underlying error.
        reason: String,
    },
    /// The profile lacks what the call needs (a role, a mode, a sequence).
    #[error("profile '{profile}' does not support {what}")]
    Unsupported {
        /// The profile's device name.
        profile: String,
        /// What is missing.
        what: String,
    },
}

impl Error {
    /// True for the "could not talk" layer (transport, protocol, timeout): the request may or
    /// may not have reached the device, and the link was resynchronised.
    pub fn is_link_error(&self) -> bool {
        matches!(
            self,
            Error::Transport { .. } | Error::Protocol { .. } | Error::Timeout { .. }
        )
    }

    /// Which kind of failure this is. A value refused by a profile's limits
    /// ([`Error::OutOfRange`], [`Error::WriteRate`]) is [`ErrorKind::Limit`]: nothing was sent,
    /// so it must not be counted against the link's error budget.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Transport { .. } | Error::Protocol { .. } | Error::Timeout { .. } => {
                ErrorKind::Link
            }
            Error::Exception { .. } => ErrorKind::Device,
            Error::OutOfRange { .. } | Error::WriteRate { .. } => ErrorKind::Limit,
            Error::Profile { .. } => ErrorKind::Profile,
            Error::Sequence { .. } => ErrorKind::Sequence,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
        }
    }

    /// True when a value or rate was refused by the profile before anything was sent.
    pub fn is_limit(&self) -> bool {
        self.kind() == ErrorKind::Limit
    }

    pub(crate) fn profile(
        file: impl Into<String>,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> Error {
        Error::Profile {
            file: file.into(),
            field: field.into(),
            reason: reason.into(),
        }
    }
}
