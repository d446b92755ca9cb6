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
//! [[sequence]]                        # run once at connect; every write must be read
//! name = "connect"                    # back by a later expect of the same signal
//! steps = [ { write = "fault_action", value = 1 },
//!           { expect = "fault_action", mask = 0xFFFF, value = 1, timeout_ms = 100 } ]
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
mod validate;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;
use std::time::Duration;

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
    /// Maximum torque in every mode, N m (CiA 402 6072h); the daemon writes its torque limit
    /// here so the drive's own loops saturate inside it.
    MaxTorque,
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
    ("max_torque", Role::MaxTorque),
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
            Role::TorqueCommand | Role::TorqueFeedback | Role::MeasuredTorque | Role::MaxTorque => {
                Some("N m")
            }
            Role::WatchdogTimeout => Some("s"),
            _ => None,
        }
    }

    /// True for the roles a run relies on to move the bench or to stop it safely: commands,
    /// enable/mode/control, status and fault, watchdog and torque limit. A profile that maps
    /// one of these to an `unverified` signal needs the operator's explicit consent.
    pub fn is_command_or_safety(self) -> bool {
        matches!(
            self,
            Role::ControlWord
                | Role::Enable
                | Role::Mode
                | Role::Status
                | Role::FaultCode
                | Role::TorqueCommand
                | Role::VelocityCommand
                | Role::PositionCommand
                | Role::WatchdogTimeout
                | Role::MaxTorque
        )
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
                | Role::MaxTorque
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
        self.check_limits(si)?;
        let raw = (si / self.unit.factor - self.offset) / self.scale;
        if !self.ty.is_integer() {
            return Ok(RawValue::Float(raw));
        }
        let r = raw.round();
        // A watchdog of whole seconds asked for 0.2 s would round to 0, which means "off":
        // refuse rather than silently disable the drive's last line of defence.
        if self.role == Some(Role::WatchdogTimeout) && si != 0.0 && r == 0.0 {
            return Err(out(format!(
                "rounds to 0 (watchdog off) at a resolution of {} {}",
                self.scale * self.unit.factor,
                self.unit.si
            )));
        }
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

    /// Checks `si` against the signal's `min`/`max` (SI) and finiteness: the refusal is an
    /// [`Error::OutOfRange`] naming the signal and the bound ([`crate::ErrorKind::Limit`]).
    pub fn check_limits(&self, si: f64) -> Result<(), Error> {
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
        Ok(())
    }

    /// `si` clamped into the signal's `[min, max]` (SI), for callers that clamp rather than
    /// refuse; NaN stays NaN (and is refused by [`Signal::encode`]).
    pub fn clamp(&self, si: f64) -> f64 {
        let lo = self.min.unwrap_or(f64::NEG_INFINITY);
        let hi = self.max.unwrap_or(f64::INFINITY);
        if si.is_nan() { si } else { si.clamp(lo, hi) }
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

/// The name of the sequence a client runs once at connect ([`Profile::connect_sequence`]).
pub const CONNECT_SEQUENCE: &str = "connect";

/// A named multi-step procedure (`connect`, `enable`, `disable`, `fault_reset`,
/// `after_command`, `mode_torque`, ...).
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
        let raw: validate::RawProfile = toml::from_str(text).map_err(|e| {
            let field = match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}")
                }
                None => "toml".to_string(),
            };
            Error::profile(file, field, e.message().trim().to_string())
        })?;
        validate::validate(raw, file)
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

    /// The `connect` sequence, if any: settings written once when a client connects (watchdog
    /// fault treatment, "don't store in EEPROM", ...), each read back by a later `expect`
    /// step (checked at load). The client runs it before anything else.
    pub fn connect_sequence(&self) -> Option<&Sequence> {
        self.sequence(CONNECT_SEQUENCE)
    }

    /// The highest rate at which the device may be written (`timing.max_write_rate_hz`).
    pub fn max_write_rate_hz(&self) -> Option<f64> {
        self.timing.max_write_rate_hz
    }

    /// Refuses a plan that would write the device at `rate_hz` when the profile limits writes
    /// to less ([`Error::WriteRate`], an [`crate::ErrorKind::Limit`]). A plan check calls it
    /// with its command rate before anything moves.
    pub fn check_write_rate(&self, rate_hz: f64) -> Result<(), Error> {
        match self.timing.max_write_rate_hz {
            Some(max) if !(rate_hz.is_finite() && rate_hz <= max * (1.0 + 1e-9)) => {
                Err(Error::WriteRate {
                    profile: self.device.name.clone(),
                    rate_hz,
                    max_hz: max,
                })
            }
            _ => Ok(()),
        }
    }

    /// Signals marked `unverified` that a run relies on: those with a command or safety role
    /// ([`Role::is_command_or_safety`]) and those written by the `connect`, `enable`,
    /// `disable`, `fault_reset` or `mode_*` sequences or expected by them.
    pub fn unverified_critical_signals(&self) -> Vec<&Signal> {
        let in_critical_sequence = |name: &str| {
            self.sequences
                .iter()
                .filter(|q| {
                    [
                        CONNECT_SEQUENCE,
                        "enable",
                        "disable",
                        "fault_reset",
                        "after_command",
                    ]
                    .contains(&q.name.as_str())
                        || q.name.starts_with("mode_")
                })
                .flat_map(|q| q.steps.iter())
                .any(|st| match st {
                    Step::Write { signal, .. } | Step::Expect { signal, .. } => signal == name,
                    Step::Wait(_) => false,
                })
        };
        self.signals
            .iter()
            .filter(|s| {
                s.unverified
                    && (s.role.is_some_and(Role::is_command_or_safety)
                        || in_critical_sequence(&s.name))
            })
            .collect()
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
            validate::check_vector(self, i, tv)?;
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
