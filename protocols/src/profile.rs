//! Device profiles: a TOML file → a validated register map with roles, sequences, poll groups,
//! timing, limits and test vectors. Pure: no I/O beyond reading the file.
//!
//! # The file format
//!
//! ```toml
//! [device]
//! name = "frictionbench simulated drive"
//! kind = "drive"                      # drive | torque_sensor
//! protocols = ["modbus-tcp", "modbus-rtu"]
//!
//! [transport]
//! unit_id = 1
//! fc23 = true                         # read/write multiple (FC23) allowed
//! serial = { baud = 115200, parity = "even", data_bits = 8, stop_bits = 1 }
//!
//! [timing]                            # all optional
//! timeout_ms = 50                     # per request
//! max_response_ms = 50                # longest the device may take (waited out on resync)
//! inter_frame_gap_ms = 1.75           # default: t3.5 from the baud rate (1.75 ms above 19200)
//! turnaround_ms = 0.5
//!
//! [encoding]
//! word_order = "CDAB"                 # default for multi-register signals
//! address_base = 0                    # 1 when addresses are written 1-based
//!
//! [modes]                             # value written to the role = "mode" signal
//! torque = 10
//! velocity = 9
//! position = 8
//!
//! [status]                            # patterns on the role = "status" signal
//! enabled = { mask = 0x006F, value = 0x0027 }
//! fault = { mask = 0x0008, value = 0x0008 }
//!
//! [[signal]]
//! name = "torque_cmd"
//! role = "torque_command"
//! reg = { table = "holding", address = 0x0010, type = "i32" }
//! eng = { scale = 0.1, unit = "mN m", access = "rw", min = -2000, max = 2000 }
//!
//! [[sequence]]
//! name = "enable"
//! steps = [ { write = "controlword", value = 0x06 }, { wait_ms = 1 },
//!           { expect = "statusword", mask = 0x6F, value = 0x21, timeout_ms = 200 } ]
//!
//! [[poll_group]]
//! name = "fast"
//! rate_hz = 100
//! merge_gap = 2
//!
//! [[test_vector]]
//! signal = "torque_cmd"
//! registers = [0xFC18, 0xFFFF]        # in the signal's word order
//! value = -100.0                      # in the signal's declared unit (mN m here)
//! frames = ["01 10 00 10 00 02 04 FC 18 FF FF 43 44"]  # optional RTU frames, CRC checked
//! ```
//!
//! A signal's SI value is `(raw × scale × 10^-decimals + offset) × unit factor`, where
//! `decimals` is 0 unless `eng.scale_exp_from` names another signal holding the number of
//! decimal places (weighing transmitters). `min`/`max` are in the declared unit. Commands,
//! feedback and sequence values are SI everywhere above this module: position rad, velocity
//! rad/s, torque N m, times s.
//!
//! Every validation failure is an [`Error::Profile`] naming the file, the entry (for example
//! `signal 'torque_cmd' (#4).eng.max`) and the rule it broke.

mod codec;
mod units;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

pub use codec::{BitRange, DataType, RawValue, WordOrder, crc_ok, crc16, decode, encode};
pub use units::Unit;

use crate::error::Error;

/// The four Modbus data tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// Read/write bits (FC01, FC05, FC15).
    Coil,
    /// Read-only bits (FC02).
    DiscreteInput,
    /// Read-only registers (FC04).
    Input,
    /// Read/write registers (FC03, FC06, FC16, FC23).
    Holding,
}

impl Table {
    /// The profile spelling.
    pub fn name(self) -> &'static str {
        match self {
            Table::Coil => "coil",
            Table::DiscreteInput => "discrete",
            Table::Input => "input",
            Table::Holding => "holding",
        }
    }

    /// True for the bit tables (coils, discrete inputs).
    pub fn is_bits(self) -> bool {
        matches!(self, Table::Coil | Table::DiscreteInput)
    }

    fn parse(s: &str) -> Option<Table> {
        [
            Table::Coil,
            Table::DiscreteInput,
            Table::Input,
            Table::Holding,
        ]
        .into_iter()
        .find(|t| t.name() == s)
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Table::Coil => "coil",
            Table::DiscreteInput => "discrete input",
            Table::Input => "input register",
            Table::Holding => "holding register",
        })
    }
}

/// Whether a signal may be read, written or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Read,
    /// Write only (reading is not expected to be meaningful).
    Write,
    /// Read and write.
    ReadWrite,
}

impl Access {
    /// May be read.
    pub fn readable(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite)
    }
    /// May be written.
    pub fn writable(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
}

/// What kind of device a profile describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// A servo drive (clients: [`crate::Drive`]).
    Drive,
    /// A torque sensor or load-cell transmitter (clients: [`crate::TorqueSensor`]).
    TorqueSensor,
}

/// A wire protocol a device speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Modbus RTU over RS-485 (or a pty).
    ModbusRtu,
    /// Modbus TCP.
    ModbusTcp,
}

/// Drive operating modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The command is a motor torque (N m).
    Torque,
    /// The command is a velocity (rad/s); the drive closes the speed loop.
    Velocity,
    /// The command is a position (rad); the drive closes the position loop.
    Position,
}

impl Mode {
    /// All modes.
    pub const ALL: [Mode; 3] = [Mode::Torque, Mode::Velocity, Mode::Position];

    /// The profile spelling (`[modes]` keys).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Torque => "torque",
            Mode::Velocity => "velocity",
            Mode::Position => "position",
        }
    }

    /// The role of the command signal this mode uses.
    pub fn command_role(self) -> Role {
        match self {
            Mode::Torque => Role::TorqueCommand,
            Mode::Velocity => Role::VelocityCommand,
            Mode::Position => Role::PositionCommand,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Semantic roles: the rest of the code speaks roles, never addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// CiA 402-style control word (written by sequences).
    ControlWord,
    /// A single enable register or coil (1 = on), for drives without a control word.
    Enable,
    /// Operating mode selector (values in `[modes]`).
    Mode,
    /// Operating mode as the drive reports it.
    ModeDisplay,
    /// Status word (patterns in `[status]`).
    Status,
    /// Active fault / alarm code (0 = none).
    FaultCode,
    /// Torque command, N m.
    TorqueCommand,
    /// Velocity command, rad/s (alias `speed_command`).
    VelocityCommand,
    /// Position command, rad.
    PositionCommand,
    /// Position feedback, rad.
    PositionFeedback,
    /// Velocity feedback, rad/s (alias `speed_feedback`).
    VelocityFeedback,
    /// Motor torque feedback, N m.
    TorqueFeedback,
    /// A torque sensor's measured torque, N m.
    MeasuredTorque,
    /// Communication watchdog timeout, s.
    WatchdogTimeout,
    /// A counter the device increments when it publishes new data.
    Heartbeat,
}

const ROLES: &[(&str, Role)] = &[
    ("control_word", Role::ControlWord),
    ("enable", Role::Enable),
    ("mode", Role::Mode),
    ("mode_display", Role::ModeDisplay),
    ("status", Role::Status),
    ("fault_code", Role::FaultCode),
    ("torque_command", Role::TorqueCommand),
    ("velocity_command", Role::VelocityCommand),
    ("speed_command", Role::VelocityCommand),
    ("position_command", Role::PositionCommand),
    ("position_feedback", Role::PositionFeedback),
    ("velocity_feedback", Role::VelocityFeedback),
    ("speed_feedback", Role::VelocityFeedback),
    ("torque_feedback", Role::TorqueFeedback),
    ("measured_torque", Role::MeasuredTorque),
    ("watchdog_timeout", Role::WatchdogTimeout),
    ("heartbeat", Role::Heartbeat),
];

impl Role {
    /// The canonical profile spelling.
    pub fn name(self) -> &'static str {
        ROLES
            .iter()
            .find(|(_, r)| *r == self)
            .map(|(n, _)| *n)
            .unwrap_or("BUG: unnamed role")
    }

    /// Parses a profile spelling (aliases included).
    pub fn parse(s: &str) -> Option<Role> {
        ROLES.iter().find(|(n, _)| *n == s).map(|(_, r)| *r)
    }

    /// The SI unit a signal with this role must resolve to, if the role has one.
    pub fn si_unit(self) -> Option<&'static str> {
        match self {
            Role::PositionCommand | Role::PositionFeedback => Some("rad"),
            Role::VelocityCommand | Role::VelocityFeedback => Some("rad/s"),
            Role::TorqueCommand | Role::TorqueFeedback | Role::MeasuredTorque => Some("N m"),
            Role::WatchdogTimeout => Some("s"),
            _ => None,
        }
    }

    fn must_write(self) -> bool {
        matches!(
            self,
            Role::ControlWord
                | Role::Enable
                | Role::Mode
                | Role::TorqueCommand
                | Role::VelocityCommand
                | Role::PositionCommand
                | Role::WatchdogTimeout
        )
    }

    fn must_read(self) -> bool {
        matches!(
            self,
            Role::ModeDisplay
                | Role::Status
                | Role::FaultCode
                | Role::PositionFeedback
                | Role::VelocityFeedback
                | Role::TorqueFeedback
                | Role::MeasuredTorque
                | Role::Heartbeat
        )
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `[device]`: what the profile describes.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Human name.
    pub name: String,
    /// Drive or torque sensor.
    pub kind: DeviceKind,
    /// Manufacturer, if any.
    pub vendor: Option<String>,
    /// Model designation, if any.
    pub model: Option<String>,
    /// Where the register map comes from (manual, page).
    pub source: Option<String>,
    /// Free notes.
    pub notes: Option<String>,
    /// Protocols the device speaks.
    pub protocols: Vec<Protocol>,
}

/// Serial parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parity {
    /// No parity bit.
    None,
    /// Even parity.
    Even,
    /// Odd parity.
    Odd,
}

/// Serial line settings (RTU).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SerialSettings {
    /// Baud rate.
    pub baud: u32,
    /// Parity.
    pub parity: Parity,
    /// Data bits (7 or 8).
    pub data_bits: u8,
    /// Stop bits (1 or 2).
    pub stop_bits: u8,
}

impl SerialSettings {
    /// 115200 baud, 8E1.
    pub fn default_rtu() -> SerialSettings {
        SerialSettings {
            baud: 115_200,
            parity: Parity::Even,
            data_bits: 8,
            stop_bits: 1,
        }
    }

    /// Bits per character on the wire (start + data + parity + stop).
    pub fn bits_per_char(&self) -> u32 {
        1 + u32::from(self.data_bits)
            + u32::from(self.parity != Parity::None)
            + u32::from(self.stop_bits)
    }

    /// Duration of one character at `baud`.
    pub fn char_time(&self) -> Duration {
        Duration::from_secs_f64(f64::from(self.bits_per_char()) / f64::from(self.baud))
    }

    /// The Modbus serial-line t3.5 silence: 3.5 characters up to 19200 baud, 1.75 ms above.
    pub fn t35(&self) -> Duration {
        if self.baud > 19_200 {
            Duration::from_micros(1750)
        } else {
            self.char_time().mul_f64(3.5)
        }
    }
}

/// `[transport]`: unit id and capabilities.
#[derive(Debug, Clone, PartialEq)]
pub struct TransportSettings {
    /// Modbus unit (slave) id.
    pub unit_id: u8,
    /// Default serial settings for RTU.
    pub serial: Option<SerialSettings>,
    /// FC23 (read/write multiple registers) is supported.
    pub fc23: bool,
    /// Most registers one read may cover (≤ 125).
    pub max_read_registers: u16,
    /// Most registers one write may cover (≤ 123).
    pub max_write_registers: u16,
}

/// `[timing]`: per-device timing.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Timeout of one request.
    pub timeout: Duration,
    /// Longest the device may take to answer; waited out when resynchronising.
    pub max_response: Duration,
    /// Silence between frames; `None` = the serial t3.5.
    pub inter_frame_gap: Option<Duration>,
    /// Device turnaround (reply delay) the simulator emulates and budgets assume.
    pub turnaround: Duration,
    /// Retries the control loop may spend per cycle (this crate never retries).
    pub retries: u32,
    /// Highest rate at which commands should be written (EEPROM-backed parameters), if limited.
    pub max_write_rate_hz: Option<f64>,
}

impl Timing {
    /// The silence to keep between frames on a serial line with `serial` settings.
    pub fn gap(&self, serial: Option<&SerialSettings>) -> Duration {
        self.inter_frame_gap.unwrap_or_else(|| {
            serial
                .copied()
                .unwrap_or_else(SerialSettings::default_rtu)
                .t35()
        })
    }
}

/// One named value in the register map.
#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    /// Unique name.
    pub name: String,
    /// Semantic role, if any.
    pub role: Option<Role>,
    /// Free description.
    pub description: Option<String>,
    /// The address or meaning is not confirmed by a cited manual.
    pub unverified: bool,
    /// Register table.
    pub table: Table,
    /// PDU (0-based) address of the first register.
    pub address: u16,
    /// Data type.
    pub ty: DataType,
    /// Word order (multi-register types).
    pub word_order: WordOrder,
    /// Bit range for bool/bits fields of a register.
    pub bits: Option<BitRange>,
    /// Raw → declared unit factor.
    pub scale: f64,
    /// Added after scaling, in the declared unit.
    pub offset: f64,
    /// Declared unit and its SI conversion.
    pub unit: Unit,
    /// Read/write access.
    pub access: Access,
    /// Lowest value a write may carry, SI.
    pub min: Option<f64>,
    /// Highest value a write may carry, SI.
    pub max: Option<f64>,
    /// Poll group name, if polled.
    pub poll: Option<String>,
    /// Name of the signal holding the number of decimal places, if any.
    pub scale_exp_from: Option<String>,
}

impl Signal {
    /// Number of registers (or coils) the signal covers.
    pub fn registers(&self) -> u16 {
        if self.table.is_bits() {
            1
        } else {
            self.ty.registers()
        }
    }

    /// The SI unit of [`Signal::decode`] results and [`Signal::encode`] arguments.
    pub fn si_unit(&self) -> &'static str {
        self.unit.si
    }

    fn len_error(&self, got: usize) -> Error {
        Error::Protocol {
            context: format!("decode signal '{}'", self.name),
            reason: format!("got {got} registers, the signal needs {}", self.registers()),
        }
    }

    /// Decodes the raw value from exactly [`Signal::registers`] registers (coils as 0/1).
    pub fn decode_raw(&self, regs: &[u16]) -> Result<RawValue, Error> {
        decode(self.ty, self.word_order, self.bits, regs).ok_or_else(|| self.len_error(regs.len()))
    }

    /// Raw value → SI, with `decimals` decimal places (0 unless `scale_exp_from`).
    pub fn raw_to_si(&self, raw: RawValue, decimals: i32) -> f64 {
        let declared = raw.as_f64() * self.scale * 10f64.powi(-decimals) + self.offset;
        declared * self.unit.factor
    }

    /// Registers → SI value.
    pub fn decode(&self, regs: &[u16]) -> Result<f64, Error> {
        self.decode_with_decimals(regs, 0)
    }

    /// Registers → SI value with the decimal places read from the `scale_exp_from` signal.
    pub fn decode_with_decimals(&self, regs: &[u16], decimals: i32) -> Result<f64, Error> {
        Ok(self.raw_to_si(self.decode_raw(regs)?, decimals))
    }

    /// SI value → raw value, after checking the signal's `min`/`max`. Integer types round to
    /// the nearest count.
    pub fn si_to_raw(&self, si: f64) -> Result<RawValue, Error> {
        let out = |limit: String| Error::OutOfRange {
            signal: self.name.clone(),
            value: si,
            unit: self.unit.si.to_string(),
            limit,
        };
        if !si.is_finite() {
            return Err(out("not a finite number".into()));
        }
        if let Some(min) = self.min
            && si < min - 1e-12 * min.abs().max(1.0)
        {
            return Err(out(format!("min {min} {}", self.unit.si)));
        }
        if let Some(max) = self.max
            && si > max + 1e-12 * max.abs().max(1.0)
        {
            return Err(out(format!("max {max} {}", self.unit.si)));
        }
        let raw = (si / self.unit.factor - self.offset) / self.scale;
        if !self.ty.is_integer() {
            return Ok(RawValue::Float(raw));
        }
        let r = raw.round();
        let (lo, hi) = self.ty.raw_range();
        let (lo, hi) = match (self.ty, self.bits) {
            (DataType::Bits, Some((a, b))) => (0.0, f64::from((1u32 << (b - a + 1)) - 1)),
            _ => (lo, hi),
        };
        if r < lo || r > hi {
            return Err(out(format!(
                "raw {r} outside the {} range [{lo}, {hi}]",
                self.ty
            )));
        }
        Ok(match self.ty {
            DataType::I16 | DataType::I32 | DataType::I64 => RawValue::Signed(r as i64),
            DataType::Bool => RawValue::Bool(r != 0.0),
            _ => RawValue::Unsigned(r as u64),
        })
    }

    /// Raw value → registers.
    pub fn encode_raw(&self, raw: RawValue) -> Result<Vec<u16>, Error> {
        encode(self.ty, self.word_order, self.bits, raw).ok_or_else(|| Error::OutOfRange {
            signal: self.name.clone(),
            value: raw.as_f64(),
            unit: "raw".into(),
            limit: format!("does not fit {}", self.ty),
        })
    }

    /// SI value → registers, limits checked.
    pub fn encode(&self, si: f64) -> Result<Vec<u16>, Error> {
        self.encode_raw(self.si_to_raw(si)?)
    }
}

/// A named mask/value pattern on the status signal (`[status]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusPattern {
    /// Name (`enabled`, `fault`, ...).
    pub name: String,
    /// Bits that matter.
    pub mask: u64,
    /// Their required value.
    pub value: u64,
}

impl StatusPattern {
    /// True when `raw & mask == value`.
    pub fn matches(&self, raw: u64) -> bool {
        raw & self.mask == self.value
    }
}

/// One step of a [`Sequence`].
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write a value to a signal.
    Write {
        /// Signal name.
        signal: String,
        /// Value, SI.
        value: f64,
        /// The encoded registers.
        registers: Vec<u16>,
    },
    /// Wait.
    Wait(Duration),
    /// Read a signal until `raw & mask == value`, or fail after `timeout`.
    Expect {
        /// Signal name (integer type).
        signal: String,
        /// Bits that matter.
        mask: u64,
        /// Required value of those bits.
        value: u64,
        /// How long to keep reading.
        timeout: Duration,
    },
}

/// A named multi-step procedure (`enable`, `disable`, `fault_reset`, `after_command`,
/// `mode_torque`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// Name.
    pub name: String,
    /// Steps, in order.
    pub steps: Vec<Step>,
}

/// A set of signals read together at a rate.
#[derive(Debug, Clone, PartialEq)]
pub struct PollGroup {
    /// Name.
    pub name: String,
    /// Rate, Hz.
    pub rate_hz: f64,
    /// Registers of gap that may be read over to merge two signals into one request.
    pub merge_gap: u16,
}

/// A known encoding from a manual or from the design: registers → value, and/or RTU frames.
#[derive(Debug, Clone, PartialEq)]
pub struct TestVector {
    /// Signal name.
    pub signal: String,
    /// Registers in wire order.
    pub registers: Option<Vec<u16>>,
    /// The value, in the signal's declared unit.
    pub value: Option<f64>,
    /// Decimal places (for `scale_exp_from` signals).
    pub decimals: i32,
    /// Absolute tolerance on `value`.
    pub tolerance: f64,
    /// Complete RTU frames (CRC included) that carry the registers or address the signal.
    pub frames: Vec<Vec<u8>>,
    /// Where it comes from.
    pub note: Option<String>,
}

/// A contiguous read covering one or more signals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBlock {
    /// Table.
    pub table: Table,
    /// First address.
    pub start: u16,
    /// Number of registers or coils.
    pub count: u16,
    /// Indices into [`Profile::signals`] of the signals inside.
    pub signals: Vec<usize>,
}

impl ReadBlock {
    /// The registers of `signal` within a reply `data` to this block.
    pub fn slice<'a>(&self, signal: &Signal, data: &'a [u16]) -> Option<&'a [u16]> {
        let from = usize::from(signal.address.checked_sub(self.start)?);
        data.get(from..from + usize::from(signal.registers()))
    }
}

/// A validated device profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The file (or label) it was loaded from.
    pub file: String,
    /// `[device]`.
    pub device: Device,
    /// `[transport]`.
    pub transport: TransportSettings,
    /// `[timing]`.
    pub timing: Timing,
    /// `[[signal]]`, in file order.
    pub signals: Vec<Signal>,
    /// `[modes]`: mode → value of the `mode` signal.
    pub modes: BTreeMap<Mode, i64>,
    /// `[status]` patterns.
    pub status: Vec<StatusPattern>,
    /// `[[sequence]]`.
    pub sequences: Vec<Sequence>,
    /// `[[poll_group]]`.
    pub poll_groups: Vec<PollGroup>,
    /// `[[test_vector]]`, all checked at load.
    pub test_vectors: Vec<TestVector>,
}

impl Profile {
    /// Reads and validates a profile file.
    pub fn load(path: impl AsRef<Path>) -> Result<Profile, Error> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::profile(&file, "file", format!("cannot read: {e}")))?;
        Profile::from_toml_str(&text, &file)
    }

    /// Parses and validates profile text; `file` labels errors.
    pub fn from_toml_str(text: &str, file: &str) -> Result<Profile, Error> {
        let raw: RawProfile = toml::from_str(text).map_err(|e| {
            let field = match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}")
                }
                None => "toml".to_string(),
            };
            Error::profile(file, field, e.message().trim().to_string())
        })?;
        validate(raw, file)
    }

    /// The signal called `name`.
    pub fn signal(&self, name: &str) -> Option<&Signal> {
        self.signals.iter().find(|s| s.name == name)
    }

    /// Index of the signal called `name` in [`Profile::signals`].
    pub fn signal_index(&self, name: &str) -> Option<usize> {
        self.signals.iter().position(|s| s.name == name)
    }

    /// The signal with `role`.
    pub fn role(&self, role: Role) -> Option<&Signal> {
        self.signals.iter().find(|s| s.role == Some(role))
    }

    /// The signal with `role`, or [`Error::Unsupported`].
    pub fn require_role(&self, role: Role) -> Result<&Signal, Error> {
        self.role(role)
            .ok_or_else(|| self.unsupported(format!("role '{role}'")))
    }

    /// The sequence called `name`.
    pub fn sequence(&self, name: &str) -> Option<&Sequence> {
        self.sequences.iter().find(|s| s.name == name)
    }

    /// The status pattern called `name`.
    pub fn status_pattern(&self, name: &str) -> Option<&StatusPattern> {
        self.status.iter().find(|p| p.name == name)
    }

    /// The mode whose `[modes]` value is `value`.
    pub fn mode_from_value(&self, value: i64) -> Option<Mode> {
        self.modes
            .iter()
            .find(|(_, v)| **v == value)
            .map(|(m, _)| *m)
    }

    /// Modes the drive can be put in (by `[modes]` or a `mode_<name>` sequence) and has a
    /// command signal for.
    pub fn supported_modes(&self) -> Vec<Mode> {
        Mode::ALL
            .into_iter()
            .filter(|m| {
                (self.modes.contains_key(m) || self.sequence(&format!("mode_{m}")).is_some())
                    && self.role(m.command_role()).is_some()
            })
            .collect()
    }

    /// The gap to keep between frames with the profile's own serial settings.
    pub fn inter_frame_gap(&self) -> Duration {
        self.timing.gap(self.transport.serial.as_ref())
    }

    /// Groups `signals` (indices) into contiguous reads per table, merging neighbours closer
    /// than `merge_gap` registers and never exceeding `max_read_registers`.
    pub fn plan_reads(&self, signals: &[usize], merge_gap: u16) -> Vec<ReadBlock> {
        let mut idx: Vec<usize> = signals.to_vec();
        idx.sort_by_key(|&i| (self.signals[i].table, self.signals[i].address, i));
        idx.dedup();
        let max = u32::from(self.transport.max_read_registers);
        let mut blocks: Vec<ReadBlock> = Vec::new();
        for i in idx {
            let s = &self.signals[i];
            let end = u32::from(s.address) + u32::from(s.registers());
            let max_here = if s.table.is_bits() { 2000 } else { max };
            if let Some(b) = blocks.last_mut() {
                let b_end = u32::from(b.start) + u32::from(b.count);
                if b.table == s.table
                    && u32::from(s.address) <= b_end + u32::from(merge_gap)
                    && end.max(b_end) - u32::from(b.start) <= max_here
                {
                    b.count = (end.max(b_end) - u32::from(b.start)) as u16;
                    b.signals.push(i);
                    continue;
                }
            }
            blocks.push(ReadBlock {
                table: s.table,
                start: s.address,
                count: s.registers(),
                signals: vec![i],
            });
        }
        blocks
    }

    /// Read plan of a poll group (`None` if there is no such group).
    pub fn poll_plan(&self, group: &str) -> Option<Vec<ReadBlock>> {
        let g = self.poll_groups.iter().find(|g| g.name == group)?;
        let members: Vec<usize> = (0..self.signals.len())
            .filter(|&i| self.signals[i].poll.as_deref() == Some(group))
            .collect();
        Some(self.plan_reads(&members, g.merge_gap))
    }

    /// Read plan of every readable signal (contiguous signals merged, no gaps read over).
    pub fn readable_plan(&self) -> Vec<ReadBlock> {
        let all: Vec<usize> = (0..self.signals.len())
            .filter(|&i| self.signals[i].access.readable())
            .collect();
        self.plan_reads(&all, 0)
    }

    /// The range of addresses the profile's signals cover in `table` (first..end), if any: what
    /// a device serving this map answers without an illegal-address exception.
    pub fn extent(&self, table: Table) -> Option<std::ops::Range<u32>> {
        let mut it = self.signals.iter().filter(|s| s.table == table);
        let first = it.next()?;
        let mut lo = u32::from(first.address);
        let mut hi = lo + u32::from(first.registers());
        for s in it {
            lo = lo.min(u32::from(s.address));
            hi = hi.max(u32::from(s.address) + u32::from(s.registers()));
        }
        Some(lo..hi)
    }

    /// Re-checks every test vector (they are checked at load too); returns how many passed.
    pub fn check_test_vectors(&self) -> Result<usize, Error> {
        for (i, tv) in self.test_vectors.iter().enumerate() {
            check_vector(self, i, tv)?;
        }
        Ok(self.test_vectors.len())
    }

    pub(crate) fn unsupported(&self, what: String) -> Error {
        Error::Unsupported {
            profile: self.device.name.clone(),
            what,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The TOML schema as written (strings parsed during validation, for precise errors).

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    device: RawDevice,
    #[serde(default)]
    transport: RawTransport,
    #[serde(default)]
    timing: RawTiming,
    #[serde(default)]
    encoding: RawEncoding,
    #[serde(default)]
    modes: BTreeMap<String, i64>,
    #[serde(default)]
    status: BTreeMap<String, RawPattern>,
    #[serde(default, rename = "signal")]
    signals: Vec<RawSignal>,
    #[serde(default, rename = "sequence")]
    sequences: Vec<RawSequence>,
    #[serde(default, rename = "poll_group")]
    poll_groups: Vec<RawPollGroup>,
    #[serde(default, rename = "test_vector")]
    test_vectors: Vec<RawTestVector>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: String,
    kind: String,
    vendor: Option<String>,
    model: Option<String>,
    source: Option<String>,
    notes: Option<String>,
    #[serde(default)]
    protocols: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTransport {
    #[serde(default = "one")]
    unit_id: i64,
    serial: Option<RawSerial>,
    #[serde(default)]
    fc23: bool,
    #[serde(default = "max_read")]
    max_read_registers: i64,
    #[serde(default = "max_write")]
    max_write_registers: i64,
}

impl Default for RawTransport {
    fn default() -> Self {
        RawTransport {
            unit_id: 1,
            serial: None,
            fc23: false,
            max_read_registers: 125,
            max_write_registers: 123,
        }
    }
}

fn one() -> i64 {
    1
}
fn max_read() -> i64 {
    125
}
fn max_write() -> i64 {
    123
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSerial {
    baud: i64,
    #[serde(default = "parity_even")]
    parity: String,
    #[serde(default = "eight")]
    data_bits: i64,
    #[serde(default = "one")]
    stop_bits: i64,
}

fn parity_even() -> String {
    "even".into()
}
fn eight() -> i64 {
    8
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTiming {
    timeout_ms: Option<f64>,
    max_response_ms: Option<f64>,
    inter_frame_gap_ms: Option<f64>,
    turnaround_ms: Option<f64>,
    retries: Option<i64>,
    max_write_rate_hz: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawEncoding {
    word_order: Option<String>,
    #[serde(default)]
    address_base: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPattern {
    mask: i64,
    value: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignal {
    name: String,
    role: Option<String>,
    description: Option<String>,
    #[serde(default)]
    unverified: bool,
    reg: RawReg,
    #[serde(default)]
    eng: RawEng,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReg {
    #[serde(default = "holding")]
    table: String,
    address: i64,
    #[serde(rename = "type")]
    ty: String,
    word_order: Option<String>,
    bits: Option<Vec<i64>>,
}

fn holding() -> String {
    "holding".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawEng {
    scale: Option<f64>,
    offset: Option<f64>,
    unit: Option<String>,
    access: Option<String>,
    min: Option<f64>,
    max: Option<f64>,
    poll: Option<String>,
    scale_exp_from: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSequence {
    name: String,
    steps: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    write: Option<String>,
    expect: Option<String>,
    wait_ms: Option<f64>,
    value: Option<f64>,
    mask: Option<i64>,
    timeout_ms: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPollGroup {
    name: String,
    rate_hz: f64,
    #[serde(default)]
    merge_gap: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTestVector {
    signal: String,
    registers: Option<Vec<i64>>,
    value: Option<f64>,
    #[serde(default)]
    decimals: i64,
    tolerance: Option<f64>,
    #[serde(default)]
    frames: Vec<String>,
    note: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Validation.

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err<T>(&self, field: impl Into<String>, reason: impl Into<String>) -> Result<T, Error> {
        Err(Error::profile(self.file, field, reason))
    }
}

fn ms(ctx: &Ctx<'_>, field: &str, v: f64, allow_zero: bool) -> Result<Duration, Error> {
    if !v.is_finite() || v < 0.0 || (!allow_zero && v == 0.0) {
        let rule = if allow_zero { "≥ 0" } else { "> 0" };
        return ctx.err(field, format!("{v} ms must be finite and {rule}"));
    }
    if v > 3_600_000.0 {
        return ctx.err(field, format!("{v} ms exceeds the limit of 3600000 ms"));
    }
    Ok(Duration::from_secs_f64(v / 1e3))
}

fn validate(raw: RawProfile, file: &str) -> Result<Profile, Error> {
    let ctx = Ctx { file };

    // [device]
    let d = &raw.device;
    if d.name.trim().is_empty() {
        return ctx.err("device.name", "must not be empty");
    }
    let kind = match d.kind.as_str() {
        "drive" => DeviceKind::Drive,
        "torque_sensor" => DeviceKind::TorqueSensor,
        other => {
            return ctx.err(
                "device.kind",
                format!("'{other}' is not one of \"drive\", \"torque_sensor\""),
            );
        }
    };
    let mut protocols = Vec::new();
    for (i, p) in d.protocols.iter().enumerate() {
        protocols.push(match p.as_str() {
            "modbus-rtu" => Protocol::ModbusRtu,
            "modbus-tcp" => Protocol::ModbusTcp,
            other => {
                return ctx.err(
                    format!("device.protocols[{i}]"),
                    format!("'{other}' is not one of \"modbus-rtu\", \"modbus-tcp\""),
                );
            }
        });
    }
    if protocols.is_empty() {
        protocols = vec![Protocol::ModbusRtu, Protocol::ModbusTcp];
    }
    let device = Device {
        name: d.name.clone(),
        kind,
        vendor: d.vendor.clone(),
        model: d.model.clone(),
        source: d.source.clone(),
        notes: d.notes.clone(),
        protocols,
    };

    // [transport]
    let t = &raw.transport;
    if !(0..=247).contains(&t.unit_id) {
        return ctx.err(
            "transport.unit_id",
            format!("{} must be in 0..=247", t.unit_id),
        );
    }
    if !(1..=125).contains(&t.max_read_registers) {
        return ctx.err(
            "transport.max_read_registers",
            format!("{} must be in 1..=125", t.max_read_registers),
        );
    }
    if !(1..=123).contains(&t.max_write_registers) {
        return ctx.err(
            "transport.max_write_registers",
            format!("{} must be in 1..=123", t.max_write_registers),
        );
    }
    let serial = match &t.serial {
        None => None,
        Some(s) => {
            if !(300..=4_000_000).contains(&s.baud) {
                return ctx.err(
                    "transport.serial.baud",
                    format!("{} must be in 300..=4000000", s.baud),
                );
            }
            let parity = match s.parity.as_str() {
                "none" => Parity::None,
                "even" => Parity::Even,
                "odd" => Parity::Odd,
                other => {
                    return ctx.err(
                        "transport.serial.parity",
                        format!("'{other}' is not one of \"none\", \"even\", \"odd\""),
                    );
                }
            };
            if !(7..=8).contains(&s.data_bits) {
                return ctx.err(
                    "transport.serial.data_bits",
                    format!("{} must be 7 or 8", s.data_bits),
                );
            }
            if !(1..=2).contains(&s.stop_bits) {
                return ctx.err(
                    "transport.serial.stop_bits",
                    format!("{} must be 1 or 2", s.stop_bits),
                );
            }
            Some(SerialSettings {
                baud: s.baud as u32,
                parity,
                data_bits: s.data_bits as u8,
                stop_bits: s.stop_bits as u8,
            })
        }
    };
    let transport = TransportSettings {
        unit_id: t.unit_id as u8,
        serial,
        fc23: t.fc23,
        max_read_registers: t.max_read_registers as u16,
        max_write_registers: t.max_write_registers as u16,
    };

    // [timing]
    let tm = &raw.timing;
    let timeout = ms(
        &ctx,
        "timing.timeout_ms",
        tm.timeout_ms.unwrap_or(100.0),
        false,
    )?;
    let max_response = match tm.max_response_ms {
        Some(v) => ms(&ctx, "timing.max_response_ms", v, false)?,
        None => timeout,
    };
    let inter_frame_gap = match tm.inter_frame_gap_ms {
        Some(v) => Some(ms(&ctx, "timing.inter_frame_gap_ms", v, true)?),
        None => None,
    };
    let turnaround = ms(
        &ctx,
        "timing.turnaround_ms",
        tm.turnaround_ms.unwrap_or(0.0),
        true,
    )?;
    if turnaround >= timeout {
        return ctx.err(
            "timing.turnaround_ms",
            format!(
                "{} ms must be below timing.timeout_ms ({} ms)",
                turnaround.as_secs_f64() * 1e3,
                timeout.as_secs_f64() * 1e3
            ),
        );
    }
    let retries = tm.retries.unwrap_or(0);
    if !(0..=10).contains(&retries) {
        return ctx.err("timing.retries", format!("{retries} must be in 0..=10"));
    }
    if let Some(r) = tm.max_write_rate_hz
        && !(r.is_finite() && r > 0.0)
    {
        return ctx.err(
            "timing.max_write_rate_hz",
            format!("{r} must be finite and > 0"),
        );
    }
    let timing = Timing {
        timeout,
        max_response,
        inter_frame_gap,
        turnaround,
        retries: retries as u32,
        max_write_rate_hz: tm.max_write_rate_hz,
    };

    // [encoding]
    let default_order = match &raw.encoding.word_order {
        None => WordOrder::Abcd,
        Some(s) => WordOrder::parse(s).ok_or_else(|| {
            Error::profile(
                file,
                "encoding.word_order",
                format!("'{s}' is not one of \"ABCD\", \"CDAB\", \"BADC\", \"DCBA\""),
            )
        })?,
    };
    let base = raw.encoding.address_base;
    if base != 0 && base != 1 {
        return ctx.err("encoding.address_base", format!("{base} must be 0 or 1"));
    }

    // [[poll_group]] (before signals, which reference them)
    let mut poll_groups = Vec::new();
    for (i, g) in raw.poll_groups.iter().enumerate() {
        let f = format!("poll_group '{}' (#{i})", g.name);
        if g.name.is_empty() || poll_groups.iter().any(|p: &PollGroup| p.name == g.name) {
            return ctx.err(f, "name must be non-empty and unique");
        }
        if !(g.rate_hz.is_finite() && g.rate_hz > 0.0 && g.rate_hz <= 10_000.0) {
            return ctx.err(
                format!("{f}.rate_hz"),
                format!("{} must be in (0, 10000]", g.rate_hz),
            );
        }
        if !(0..=125).contains(&g.merge_gap) {
            return ctx.err(
                format!("{f}.merge_gap"),
                format!("{} must be in 0..=125", g.merge_gap),
            );
        }
        poll_groups.push(PollGroup {
            name: g.name.clone(),
            rate_hz: g.rate_hz,
            merge_gap: g.merge_gap as u16,
        });
    }

    // [[signal]]
    let mut signals: Vec<Signal> = Vec::new();
    for (i, s) in raw.signals.iter().enumerate() {
        let f = format!("signal '{}' (#{i})", s.name);
        signals.push(validate_signal(
            &ctx,
            &f,
            s,
            default_order,
            base,
            &poll_groups,
        )?);
        if !s
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            || s.name.is_empty()
        {
            return ctx.err(
                format!("{f}.name"),
                "must be non-empty lower-case ascii letters, digits and '_'",
            );
        }
        if signals[..i].iter().any(|o| o.name == s.name) {
            return ctx.err(format!("{f}.name"), "is used by an earlier signal");
        }
        if let Some(role) = signals[i].role
            && let Some(o) = signals[..i].iter().find(|o| o.role == Some(role))
        {
            return ctx.err(
                format!("{f}.role"),
                format!("role '{role}' is already taken by signal '{}'", o.name),
            );
        }
    }
    // Overlaps: only allowed when one side is a bit field or both are read-only.
    for (i, a) in signals.iter().enumerate() {
        for b in &signals[..i] {
            let (a0, a1) = (a.address as u32, a.address as u32 + a.registers() as u32);
            let (b0, b1) = (b.address as u32, b.address as u32 + b.registers() as u32);
            let fieldish = |s: &Signal| matches!(s.ty, DataType::Bool | DataType::Bits);
            if a.table == b.table
                && a0 < b1
                && b0 < a1
                && !(fieldish(a) || fieldish(b))
                && !(a.access == Access::Read && b.access == Access::Read)
            {
                return ctx.err(
                    format!("signal '{}' (#{i}).reg.address", a.name),
                    format!(
                        "0x{:04X}..0x{:04X} overlaps signal '{}' (0x{:04X}..0x{:04X}); \
                         overlaps are allowed only for bool/bits fields or between read-only signals",
                        a0,
                        a1 - 1,
                        b.name,
                        b0,
                        b1 - 1
                    ),
                );
            }
        }
    }
    // scale_exp_from references.
    for (i, s) in signals.iter().enumerate() {
        if let Some(src) = &s.scale_exp_from {
            match signals.iter().find(|o| &o.name == src) {
                Some(o)
                    if o.ty.is_integer() && o.access.readable() && o.scale_exp_from.is_none() => {}
                _ => {
                    return ctx.err(
                        format!("signal '{}' (#{i}).eng.scale_exp_from", s.name),
                        format!("'{src}' must name a readable integer signal"),
                    );
                }
            }
        }
    }

    // [modes]
    let mut modes = BTreeMap::new();
    for (k, v) in &raw.modes {
        let m = Mode::ALL
            .into_iter()
            .find(|m| m.name() == k)
            .ok_or_else(|| {
                Error::profile(
                    file,
                    format!("modes.{k}"),
                    "is not one of \"torque\", \"velocity\", \"position\"",
                )
            })?;
        let Some(sig) = signals.iter().find(|s| s.role == Some(Role::Mode)) else {
            return ctx.err(
                format!("modes.{k}"),
                "needs a signal with role = \"mode\" to write the value to",
            );
        };
        if let Err(e) = sig
            .si_to_raw(*v as f64 * sig.unit.factor)
            .and_then(|r| sig.encode_raw(r))
        {
            return ctx.err(format!("modes.{k}"), format!("{v} cannot be written: {e}"));
        }
        if let Some((other, _)) = modes.iter().find(|(_, ov)| *ov == v) {
            return ctx.err(
                format!("modes.{k}"),
                format!("value {v} is also used by mode '{other}'"),
            );
        }
        modes.insert(m, *v);
    }

    // [status]
    let mut status = Vec::new();
    for (k, p) in &raw.status {
        let f = format!("status.{k}");
        let Some(sig) = signals.iter().find(|s| s.role == Some(Role::Status)) else {
            return ctx.err(f, "needs a signal with role = \"status\"");
        };
        if !sig.ty.is_integer() {
            return ctx.err(
                f,
                format!("status signal '{}' must be an integer type", sig.name),
            );
        }
        if p.mask <= 0 || p.value < 0 || p.value & !p.mask != 0 {
            return ctx.err(
                f,
                format!(
                    "mask 0x{:X} must be > 0 and value 0x{:X} must lie within it",
                    p.mask, p.value
                ),
            );
        }
        status.push(StatusPattern {
            name: k.clone(),
            mask: p.mask as u64,
            value: p.value as u64,
        });
    }

    // [[sequence]]
    let mut sequences: Vec<Sequence> = Vec::new();
    for (i, sq) in raw.sequences.iter().enumerate() {
        let f = format!("sequence '{}' (#{i})", sq.name);
        if sq.name.is_empty() || sequences.iter().any(|o| o.name == sq.name) {
            return ctx.err(f, "name must be non-empty and unique");
        }
        if sq.steps.is_empty() {
            return ctx.err(format!("{f}.steps"), "must have at least one step");
        }
        let mut steps = Vec::new();
        for (j, st) in sq.steps.iter().enumerate() {
            steps.push(validate_step(
                &ctx,
                &format!("{f}.steps[{j}]"),
                st,
                &signals,
            )?);
        }
        sequences.push(Sequence {
            name: sq.name.clone(),
            steps,
        });
    }

    let mut profile = Profile {
        file: file.to_string(),
        device,
        transport,
        timing,
        signals,
        modes,
        status,
        sequences,
        poll_groups,
        test_vectors: Vec::new(),
    };
    check_device_rules(&ctx, &profile)?;

    // [[test_vector]]
    for (i, tv) in raw.test_vectors.iter().enumerate() {
        let f = format!("test_vector #{i} ('{}')", tv.signal);
        let registers = match &tv.registers {
            None => None,
            Some(r) => {
                let mut out = Vec::new();
                for (k, v) in r.iter().enumerate() {
                    out.push(u16::try_from(*v).map_err(|_| {
                        Error::profile(
                            file,
                            format!("{f}.registers[{k}]"),
                            format!("{v} is not a 16-bit register value (0..=65535)"),
                        )
                    })?);
                }
                Some(out)
            }
        };
        let mut frames = Vec::new();
        for (k, text) in tv.frames.iter().enumerate() {
            frames.push(parse_hex(text).ok_or_else(|| {
                Error::profile(
                    file,
                    format!("{f}.frames[{k}]"),
                    "must be hex bytes separated by spaces, e.g. \"01 03 00 50 00 02 C4 1A\"",
                )
            })?);
        }
        let tolerance = tv.tolerance.unwrap_or(1e-9);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return ctx.err(format!("{f}.tolerance"), format!("{tolerance} must be ≥ 0"));
        }
        let vector = TestVector {
            signal: tv.signal.clone(),
            registers,
            value: tv.value,
            decimals: tv.decimals.clamp(-18, 18) as i32,
            tolerance,
            frames,
            note: tv.note.clone(),
        };
        check_vector(&profile, i, &vector)?;
        profile.test_vectors.push(vector);
    }
    Ok(profile)
}

fn validate_signal(
    ctx: &Ctx<'_>,
    f: &str,
    s: &RawSignal,
    default_order: WordOrder,
    base: i64,
    groups: &[PollGroup],
) -> Result<Signal, Error> {
    let role = match &s.role {
        None => None,
        Some(r) => Some(Role::parse(r).ok_or_else(|| {
            let known: Vec<&str> = ROLES.iter().map(|(n, _)| *n).collect();
            Error::profile(
                ctx.file,
                format!("{f}.role"),
                format!("'{r}' is not a known role ({})", known.join(", ")),
            )
        })?),
    };
    let table = Table::parse(&s.reg.table).ok_or_else(|| {
        Error::profile(
            ctx.file,
            format!("{f}.reg.table"),
            format!(
                "'{}' is not one of \"holding\", \"input\", \"coil\", \"discrete\"",
                s.reg.table
            ),
        )
    })?;
    let ty = DataType::parse(&s.reg.ty).ok_or_else(|| {
        let known: Vec<&str> = DataType::ALL.iter().map(|t| t.name()).collect();
        Error::profile(
            ctx.file,
            format!("{f}.reg.type"),
            format!("'{}' is not one of {}", s.reg.ty, known.join(", ")),
        )
    })?;
    let word_order = match &s.reg.word_order {
        None => default_order,
        Some(w) => WordOrder::parse(w).ok_or_else(|| {
            Error::profile(
                ctx.file,
                format!("{f}.reg.word_order"),
                format!("'{w}' is not one of \"ABCD\", \"CDAB\", \"BADC\", \"DCBA\""),
            )
        })?,
    };
    let pdu = s.reg.address - base;
    if !(0..=0xFFFF).contains(&pdu) {
        return ctx.err(
            format!("{f}.reg.address"),
            format!(
                "{} (address_base {base}) is outside 0..=65535",
                s.reg.address
            ),
        );
    }
    let count = if table.is_bits() { 1 } else { ty.registers() };
    if pdu + i64::from(count) > 0x1_0000 {
        return ctx.err(
            format!("{f}.reg.address"),
            format!("0x{pdu:04X} + {count} registers runs past 0xFFFF"),
        );
    }
    if table.is_bits() && ty != DataType::Bool {
        return ctx.err(
            format!("{f}.reg.type"),
            format!(
                "a {} holds one bit: the type must be \"bool\", not \"{ty}\"",
                table
            ),
        );
    }
    let bits = match &s.reg.bits {
        None => {
            if ty == DataType::Bits {
                return ctx.err(
                    format!("{f}.reg.bits"),
                    "type \"bits\" needs bits = [lo, hi]",
                );
            }
            None
        }
        Some(b) => {
            if !matches!(ty, DataType::Bool | DataType::Bits) || table.is_bits() {
                return ctx.err(
                    format!("{f}.reg.bits"),
                    "bits = [lo, hi] applies only to bool/bits types in holding or input registers",
                );
            }
            if b.len() != 2 || !(0..=15).contains(&b[0]) || !(0..=15).contains(&b[1]) || b[0] > b[1]
            {
                return ctx.err(
                    format!("{f}.reg.bits"),
                    format!("{b:?} must be [lo, hi] with 0 ≤ lo ≤ hi ≤ 15"),
                );
            }
            if ty == DataType::Bool && b[0] != b[1] {
                return ctx.err(
                    format!("{f}.reg.bits"),
                    format!("a bool is one bit: {b:?} must have lo = hi"),
                );
            }
            Some((b[0] as u8, b[1] as u8))
        }
    };
    let scale = s.eng.scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale != 0.0) {
        return ctx.err(
            format!("{f}.eng.scale"),
            format!("{scale} must be finite and non-zero"),
        );
    }
    let offset = s.eng.offset.unwrap_or(0.0);
    if !offset.is_finite() {
        return ctx.err(
            format!("{f}.eng.offset"),
            format!("{offset} must be finite"),
        );
    }
    let declared = s.eng.unit.clone().unwrap_or_default();
    let unit = Unit::parse(&declared).ok_or_else(|| {
        Error::profile(
            ctx.file,
            format!("{f}.eng.unit"),
            format!("'{declared}' is not a known unit ({})", Unit::known()),
        )
    })?;
    if let Some(r) = role
        && let Some(si) = r.si_unit()
        && unit.si != si
    {
        return ctx.err(
            format!("{f}.eng.unit"),
            format!(
                "role '{r}' needs a unit that converts to {si}, but '{declared}' converts to '{}'",
                unit.si
            ),
        );
    }
    let access = match s.eng.access.as_deref().unwrap_or("r") {
        "r" => Access::Read,
        "w" => Access::Write,
        "rw" => Access::ReadWrite,
        other => {
            return ctx.err(
                format!("{f}.eng.access"),
                format!("'{other}' is not one of \"r\", \"w\", \"rw\""),
            );
        }
    };
    if access.writable() && matches!(table, Table::Input | Table::DiscreteInput) {
        return ctx.err(
            format!("{f}.eng.access"),
            format!("a {table} is read-only: access must be \"r\""),
        );
    }
    if access.writable() && ty == DataType::Bits || access.writable() && bits.is_some() {
        return ctx.err(
            format!("{f}.eng.access"),
            "bit fields of a register are read-only (writing one would clobber its neighbours)",
        );
    }
    if let Some(r) = role {
        if r.must_write() && !access.writable() {
            return ctx.err(
                format!("{f}.eng.access"),
                format!("role '{r}' is written: access must be \"w\" or \"rw\""),
            );
        }
        if r.must_read() && !access.readable() {
            return ctx.err(
                format!("{f}.eng.access"),
                format!("role '{r}' is read: access must be \"r\" or \"rw\""),
            );
        }
    }
    for (name, v) in [("min", s.eng.min), ("max", s.eng.max)] {
        if let Some(v) = v
            && !v.is_finite()
        {
            return ctx.err(format!("{f}.eng.{name}"), format!("{v} must be finite"));
        }
    }
    if let (Some(lo), Some(hi)) = (s.eng.min, s.eng.max)
        && lo > hi
    {
        return ctx.err(format!("{f}.eng.min"), format!("{lo} must be ≤ max ({hi})"));
    }
    if let Some(p) = &s.eng.poll {
        if !groups.iter().any(|g| &g.name == p) {
            return ctx.err(
                format!("{f}.eng.poll"),
                format!("'{p}' is not a [[poll_group]] of this profile"),
            );
        }
        if !access.readable() {
            return ctx.err(format!("{f}.eng.poll"), "a polled signal must be readable");
        }
    }
    let signal = Signal {
        name: s.name.clone(),
        role,
        description: s.description.clone(),
        unverified: s.unverified,
        table,
        address: pdu as u16,
        ty,
        word_order,
        bits,
        scale,
        offset,
        unit: unit.clone(),
        access,
        min: s.eng.min.map(|v| v * unit.factor),
        max: s.eng.max.map(|v| v * unit.factor),
        poll: s.eng.poll.clone(),
        scale_exp_from: s.eng.scale_exp_from.clone(),
    };
    // The limits must be representable in the register type.
    for (name, v) in [("min", signal.min), ("max", signal.max)] {
        if let Some(v) = v
            && let Err(e) = signal.encode(v)
        {
            return ctx.err(format!("{f}.eng.{name}"), format!("cannot be encoded: {e}"));
        }
    }
    Ok(signal)
}

fn validate_step(ctx: &Ctx<'_>, f: &str, st: &RawStep, signals: &[Signal]) -> Result<Step, Error> {
    let kinds = [
        st.write.is_some(),
        st.expect.is_some(),
        st.wait_ms.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if kinds != 1 {
        return ctx.err(f, "each step needs exactly one of write, expect, wait_ms");
    }
    if let Some(w) = &st.wait_ms {
        if st.value.is_some() || st.mask.is_some() || st.timeout_ms.is_some() {
            return ctx.err(f, "a wait_ms step takes no value, mask or timeout_ms");
        }
        return Ok(Step::Wait(ms(ctx, &format!("{f}.wait_ms"), *w, true)?));
    }
    let name = st
        .write
        .as_ref()
        .or(st.expect.as_ref())
        .cloned()
        .unwrap_or_default();
    let Some(sig) = signals.iter().find(|s| s.name == name) else {
        return ctx.err(f, format!("'{name}' is not a signal of this profile"));
    };
    let Some(value) = st.value else {
        return ctx.err(format!("{f}.value"), "is required");
    };
    if st.write.is_some() {
        if !sig.access.writable() {
            return ctx.err(f, format!("signal '{name}' is not writable"));
        }
        if st.mask.is_some() || st.timeout_ms.is_some() {
            return ctx.err(f, "a write step takes no mask or timeout_ms");
        }
        let si = value * sig.unit.factor;
        let registers = sig
            .encode(si)
            .map_err(|e| Error::profile(ctx.file, format!("{f}.value"), e.to_string()))?;
        return Ok(Step::Write {
            signal: name,
            value: si,
            registers,
        });
    }
    if !sig.access.readable() || !sig.ty.is_integer() {
        return ctx.err(
            f,
            format!("signal '{name}' must be readable and of an integer type to be expected"),
        );
    }
    let mask = st.mask.unwrap_or(0xFFFF);
    if mask <= 0 || value < 0.0 || value.fract() != 0.0 || (value as i64) & !mask != 0 {
        return ctx.err(
            format!("{f}.value"),
            format!("{value} must be a non-negative integer within mask 0x{mask:X}"),
        );
    }
    let timeout = ms(
        ctx,
        &format!("{f}.timeout_ms"),
        st.timeout_ms.unwrap_or(500.0),
        false,
    )?;
    Ok(Step::Expect {
        signal: name,
        mask: mask as u64,
        value: value as u64,
        timeout,
    })
}

fn check_device_rules(ctx: &Ctx<'_>, p: &Profile) -> Result<(), Error> {
    match p.device.kind {
        DeviceKind::Drive => {
            let cmds = [
                Role::TorqueCommand,
                Role::VelocityCommand,
                Role::PositionCommand,
            ];
            if !cmds.iter().any(|r| p.role(*r).is_some()) {
                return ctx.err(
                    "signal",
                    "a drive needs a signal with role torque_command, velocity_command or position_command",
                );
            }
            for seq in ["enable", "disable"] {
                if p.sequence(seq).is_none() && p.role(Role::Enable).is_none() {
                    return ctx.err(
                        "sequence",
                        format!(
                            "a drive needs a '{seq}' sequence or a signal with role = \"enable\""
                        ),
                    );
                }
            }
            if p.role(Role::Status).is_some()
                && (p.status_pattern("enabled").is_none() || p.status_pattern("fault").is_none())
            {
                return ctx.err(
                    "status",
                    "a drive with a status signal needs [status] patterns 'enabled' and 'fault'",
                );
            }
        }
        DeviceKind::TorqueSensor => {
            if p.role(Role::MeasuredTorque).is_none() {
                return ctx.err(
                    "signal",
                    "a torque sensor needs a signal with role = \"measured_torque\"",
                );
            }
        }
    }
    Ok(())
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let bytes: Option<Vec<u8>> = text
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).ok())
        .collect();
    bytes.filter(|b| !b.is_empty())
}

fn check_vector(p: &Profile, i: usize, tv: &TestVector) -> Result<(), Error> {
    let f = format!("test_vector #{i} ('{}')", tv.signal);
    let err = |field: String, reason: String| Err(Error::profile(&p.file, field, reason));
    let Some(sig) = p.signal(&tv.signal) else {
        return err(f, "signal is not in this profile".into());
    };
    if tv.registers.is_none() && tv.frames.is_empty() {
        return err(f, "needs registers (+ value) or frames".into());
    }
    if tv.registers.is_some() != tv.value.is_some() {
        return err(f, "registers and value go together".into());
    }
    if let (Some(regs), Some(value)) = (&tv.registers, tv.value) {
        if regs.len() != usize::from(sig.registers()) {
            return err(
                format!("{f}.registers"),
                format!(
                    "{} registers given, signal '{}' ({}) has {}",
                    regs.len(),
                    sig.name,
                    sig.ty,
                    sig.registers()
                ),
            );
        }
        let raw = sig.decode_raw(regs)?;
        let declared = raw.as_f64() * sig.scale * 10f64.powi(-tv.decimals) + sig.offset;
        if (declared - value).abs() > tv.tolerance.max(1e-12 * value.abs()) {
            return err(
                format!("{f}.value"),
                format!(
                    "registers {regs:04X?} decode to {declared} {}, expected {value} (tolerance {})",
                    sig.unit.declared, tv.tolerance
                ),
            );
        }
        // Writable integer signals must also encode back to the same registers.
        if sig.access.writable() && sig.ty.is_integer() && sig.scale_exp_from.is_none() {
            let back = encode(
                sig.ty,
                sig.word_order,
                sig.bits,
                sig.si_to_raw(value * sig.unit.factor)
                    .unwrap_or(RawValue::Float(f64::NAN)),
            );
            if back.as_deref() != Some(regs.as_slice()) {
                return err(
                    format!("{f}.registers"),
                    format!("value {value} encodes to {back:04X?}, not {regs:04X?}"),
                );
            }
        }
    }
    for (k, frame) in tv.frames.iter().enumerate() {
        let ff = format!("{f}.frames[{k}]");
        if !crc_ok(frame) {
            let body = &frame[..frame.len().saturating_sub(2)];
            return err(
                ff,
                format!(
                    "CRC mismatch: the frame body's CRC is {:02X} {:02X}",
                    crc16(body).to_le_bytes()[0],
                    crc16(body).to_le_bytes()[1]
                ),
            );
        }
        let be = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);
        let fc = frame[1];
        let (addr, data): (Option<u16>, Vec<u16>) = match fc {
            0x03 | 0x04 if frame.len() == 8 => {
                if be(4) != sig.registers() {
                    return err(
                        ff,
                        format!(
                            "reads {} registers, the signal has {}",
                            be(4),
                            sig.registers()
                        ),
                    );
                }
                (Some(be(2)), Vec::new())
            }
            0x03 | 0x04 => {
                let n = usize::from(frame[2]);
                if frame.len() != 5 + n || n % 2 != 0 {
                    return err(
                        ff,
                        format!("byte count {n} does not match the frame length"),
                    );
                }
                (None, (0..n / 2).map(|w| be(3 + 2 * w)).collect())
            }
            0x06 if frame.len() == 8 => (Some(be(2)), vec![be(4)]),
            0x10 if frame.len() > 9 => {
                let n = usize::from(frame[6]);
                if frame.len() != 9 + n {
                    return err(
                        ff,
                        format!("byte count {n} does not match the frame length"),
                    );
                }
                (Some(be(2)), (0..n / 2).map(|w| be(7 + 2 * w)).collect())
            }
            _ => {
                return err(
                    ff,
                    format!(
                        "function 0x{fc:02X} frames of this length are not checked (use 03/04/06/10)"
                    ),
                );
            }
        };
        if let Some(a) = addr
            && a != sig.address
        {
            return err(
                ff,
                format!(
                    "addresses 0x{a:04X}, signal '{}' is at 0x{:04X}",
                    sig.name, sig.address
                ),
            );
        }
        if let Some(regs) = &tv.registers
            && !data.is_empty()
            && &data != regs
        {
            return err(
                ff,
                format!("carries registers {data:04X?}, the vector says {regs:04X?}"),
            );
        }
    }
    Ok(())
}

/// Loads every `*.toml` in `dir` (sorted by name).
pub fn load_dir(dir: impl AsRef<Path>) -> Result<Vec<Profile>, Error> {
    let dir = dir.as_ref();
    let rd = std::fs::read_dir(dir).map_err(|e| {
        Error::profile(
            dir.display().to_string(),
            "directory",
            format!("cannot read: {e}"),
        )
    })?;
    let mut paths: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for p in paths {
        let prof = Profile::load(&p)?;
        if !seen.insert(prof.device.name.clone()) {
            return Err(Error::profile(
                p.display().to_string(),
                "device.name",
                format!(
                    "'{}' is used by another profile in {}",
                    prof.device.name,
                    dir.display()
                ),
            ));
        }
        out.push(prof);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
