//! A DAQ profile (`kind = "daq"`, e.g. `profiles/labjack-t7.toml`): the device's named registers
//! with a source each, its input ranges, resolution indices, stream limits, quadrature counter,
//! DACs and calibration block. Pure: TOML → validated [`DaqProfile`]; every rejection is an
//! [`Error::Profile`] naming the file, the entry and the rule.

use crate::error::Error;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A register's data type: 1 or 2 Modbus registers, big-endian (the T-series order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DaqType {
    /// Unsigned 16 bits.
    U16,
    /// Unsigned 32 bits, high word first.
    U32,
    /// IEEE float32, high word first.
    F32,
}

impl DaqType {
    /// Modbus registers per value.
    pub fn words(self) -> u16 {
        match self {
            DaqType::U16 => 1,
            DaqType::U32 | DaqType::F32 => 2,
        }
    }
}

/// One named register (or an indexed family `NAME#`: `count` consecutive values).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaqRegister {
    /// The vendor's name, `#` standing for the index of a family.
    pub name: String,
    /// Start address of index 0.
    pub address: u16,
    /// Data type.
    #[serde(rename = "type")]
    pub ty: DaqType,
    /// `r`, `w` or `rw`.
    pub access: String,
    /// Members of a family (1 for a single register).
    #[serde(default = "one")]
    pub count: u16,
    /// Where the address came from.
    pub source: String,
}

fn one() -> u16 {
    1
}

impl DaqRegister {
    /// The address of member `index`, or `None` past the family's end.
    pub fn at(&self, index: u16) -> Option<u16> {
        (index < self.count).then(|| self.address + index * self.ty.words())
    }

    /// One past the last register the family covers.
    fn end(&self) -> u32 {
        u32::from(self.address) + u32::from(self.count) * u32::from(self.ty.words())
    }
}

/// `[device]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaqDevice {
    /// Display name, unique among profiles.
    pub name: String,
    /// Always `daq`.
    pub kind: String,
    /// Maker.
    pub vendor: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// What `PRODUCT_ID` reads on this device.
    pub product_id: f32,
    /// Documents the profile rests on.
    pub source: Option<String>,
    /// Wire protocols (`modbus-tcp`).
    pub protocols: Vec<String>,
}

/// `[transport]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaqTransport {
    /// Modbus unit id.
    pub unit_id: u8,
    /// Modbus TCP port of a real device.
    pub modbus_port: u16,
    /// TCP port the device sends spontaneous stream packets from.
    pub stream_port: u16,
}

/// `[ain]`: the analog inputs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AinSpec {
    /// Inputs AIN0..AIN(channels-1).
    pub channels: u16,
    /// Bipolar ranges \[V\] a `_RANGE` register accepts.
    pub ranges_v: Vec<f64>,
    /// `_NEGATIVE_CH` value for single-ended.
    pub single_ended_negative_ch: u16,
    /// Highest command-response resolution index.
    pub resolution_index_max: u32,
    /// Highest stream resolution index.
    pub stream_resolution_index_max: u32,
    /// Highest stream settling time \[µs\].
    pub stream_settling_us_max: f64,
    /// Citation.
    pub source: String,
}

/// The stream packets' status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamStatusCodes {
    /// The device buffer overflowed; scans are being skipped.
    pub auto_recover_active: u16,
    /// Auto-recovery ended; the packet carries the skipped-scan count.
    pub auto_recover_end: u16,
    /// A scan started before the previous one ended.
    pub scan_overlap: u16,
    /// Auto-recovery itself overflowed.
    pub auto_recover_end_overflow: u16,
    /// A burst (`STREAM_NUM_SCANS`) completed.
    pub burst_complete: u16,
    /// The buffer filled with auto-recovery disabled; the stream stopped.
    pub buffer_full: u16,
}

/// `[stream]`: the hardware-timed stream's limits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// Highest sample rate (scan rate × addresses) \[Hz\].
    pub max_scan_rate_hz: f64,
    /// Longest scan list.
    pub max_addresses: u16,
    /// Largest `STREAM_SAMPLES_PER_PACKET`.
    pub max_samples_per_packet: u16,
    /// Buffer size when 0 is written \[bytes\].
    pub buffer_bytes_default: u32,
    /// Largest buffer \[bytes\].
    pub buffer_bytes_max: u32,
    /// `STREAM_AUTO_TARGET` for spontaneous packets over Ethernet.
    pub auto_target_spontaneous: u32,
    /// Citation.
    pub source: String,
    /// Packet status codes.
    pub status: StreamStatusCodes,
}

/// `[quadrature]`: the encoder counter (DIO extended feature).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuadratureSpec {
    /// `DIOn_EF_INDEX` of quadrature input.
    pub ef_index: u32,
    /// DIO of phase A (its `_EF_READ_A` holds the count).
    pub phase_a_dio: u16,
    /// DIO of phase B.
    pub phase_b_dio: u16,
    /// Citation.
    pub source: String,
}

/// `[dac]`: the analog outputs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DacSpec {
    /// DAC0..DAC(channels-1).
    pub channels: u16,
    /// Lowest output \[V\].
    pub min_v: f64,
    /// Highest output \[V\].
    pub max_v: f64,
    /// Citation.
    pub source: String,
}

/// `[calibration]`: where the factory constants sit in internal flash.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationSpec {
    /// Flash byte address of the block.
    pub flash_address: u32,
    /// float32 values in the block.
    pub floats: u16,
    /// Citation.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDaq {
    device: DaqDevice,
    transport: DaqTransport,
    ain: AinSpec,
    stream: StreamSpec,
    quadrature: QuadratureSpec,
    dac: DacSpec,
    calibration: CalibrationSpec,
    #[serde(rename = "register")]
    registers: Vec<DaqRegister>,
}

/// A validated DAQ profile.
#[derive(Debug, Clone, PartialEq)]
pub struct DaqProfile {
    /// The file it came from (labels errors).
    pub file: String,
    /// `[device]`.
    pub device: DaqDevice,
    /// `[transport]`.
    pub transport: DaqTransport,
    /// `[ain]`.
    pub ain: AinSpec,
    /// `[stream]`.
    pub stream: StreamSpec,
    /// `[quadrature]`.
    pub quadrature: QuadratureSpec,
    /// `[dac]`.
    pub dac: DacSpec,
    /// `[calibration]`.
    pub calibration: CalibrationSpec,
    registers: BTreeMap<String, DaqRegister>,
}

/// The registers every DAQ client and the emulation use: a profile must name each.
pub const REQUIRED: [&str; 27] = [
    "PRODUCT_ID",
    "AIN#",
    "AIN#_RANGE",
    "AIN#_NEGATIVE_CH",
    "AIN#_RESOLUTION_INDEX",
    "AIN#_SETTLING_US",
    "DAC#",
    "DIO_STATE",
    "DIO_DIRECTION",
    "DIO#_EF_ENABLE",
    "DIO#_EF_INDEX",
    "DIO#_EF_READ_A",
    "STREAM_SCANRATE_HZ",
    "STREAM_NUM_ADDRESSES",
    "STREAM_SAMPLES_PER_PACKET",
    "STREAM_SETTLING_US",
    "STREAM_RESOLUTION_INDEX",
    "STREAM_BUFFER_SIZE_BYTES",
    "STREAM_AUTO_TARGET",
    "STREAM_DATATYPE",
    "STREAM_NUM_SCANS",
    "STREAM_SCANLIST_ADDRESS#",
    "STREAM_ENABLE",
    "INTERNAL_FLASH_READ_POINTER",
    "INTERNAL_FLASH_READ",
    "WATCHDOG_ENABLE_DEFAULT",
    "WATCHDOG_DAC0_DEFAULT",
];

impl DaqProfile {
    /// Reads and validates a DAQ profile file.
    pub fn load(path: impl AsRef<Path>) -> Result<DaqProfile, Error> {
        let file = path.as_ref().display().to_string();
        let text = std::fs::read_to_string(path.as_ref())
            .map_err(|e| Error::profile(&file, "file", format!("cannot read: {e}")))?;
        DaqProfile::from_toml_str(&text, &file)
    }

    /// Parses and validates profile text; `file` labels errors.
    pub fn from_toml_str(text: &str, file: &str) -> Result<DaqProfile, Error> {
        let raw: RawDaq = toml::from_str(text).map_err(|e| {
            let field = e.span().map_or("toml".to_string(), |s| {
                format!(
                    "line {}",
                    text[..s.start.min(text.len())].matches('\n').count() + 1
                )
            });
            Error::profile(file, field, e.message().trim().to_string())
        })?;
        validate(raw, file)
    }

    /// The register (or family) named `name`.
    pub fn register(&self, name: &str) -> Result<&DaqRegister, Error> {
        self.registers.get(name).ok_or_else(|| Error::Unsupported {
            profile: self.device.name.clone(),
            what: format!("register {name}"),
        })
    }

    /// Every register, by name.
    pub fn registers(&self) -> impl Iterator<Item = &DaqRegister> {
        self.registers.values()
    }

    /// The address of member `index` of the family `name` (e.g. `AIN#`, 3 → AIN3's address).
    pub fn address(&self, name: &str, index: u16) -> Result<u16, Error> {
        let r = self.register(name)?;
        r.at(index).ok_or_else(|| Error::Unsupported {
            profile: self.device.name.clone(),
            what: format!(
                "{} (only {} of them)",
                name.replace('#', &index.to_string()),
                r.count
            ),
        })
    }

    /// The register at `address` (start of a value) and its index within its family.
    pub fn at_address(&self, address: u16) -> Option<(&DaqRegister, u16)> {
        self.registers.values().find_map(|r| {
            let off = address.checked_sub(r.address)?;
            let i = off / r.ty.words();
            (i < r.count && off % r.ty.words() == 0).then_some((r, i))
        })
    }
}

fn validate(raw: RawDaq, file: &str) -> Result<DaqProfile, Error> {
    let bad = |field: String, reason: String| Error::profile(file, field, reason);
    if raw.device.kind != "daq" {
        return Err(bad(
            "device.kind".into(),
            format!("'{}' is not daq", raw.device.kind),
        ));
    }
    let mut registers = BTreeMap::new();
    for (i, r) in raw.registers.iter().enumerate() {
        let at = format!("register '{}' (#{})", r.name, i + 1);
        if !matches!(r.access.as_str(), "r" | "w" | "rw") {
            return Err(bad(
                format!("{at}.access"),
                format!("'{}' is not r, w or rw", r.access),
            ));
        }
        if r.source.trim().is_empty() {
            return Err(bad(
                format!("{at}.source"),
                "every register cites its source".into(),
            ));
        }
        if r.count == 0 || r.name.contains('#') != (r.count > 1 || r.name.ends_with('#')) {
            return Err(bad(
                format!("{at}.count"),
                "a family NAME# has count ≥ 1, a single register none".into(),
            ));
        }
        if r.end() > 65536 {
            return Err(bad(
                format!("{at}.address"),
                format!("ends at {} past 65535", r.end() - 1),
            ));
        }
        if let Some(o) = raw.registers[..i].iter().find(|o| overlap(o, r)) {
            return Err(bad(
                format!("{at}.address"),
                format!("overlaps register '{}'", o.name),
            ));
        }
        if registers.insert(r.name.clone(), r.clone()).is_some() {
            return Err(bad(format!("{at}.name"), "named twice".into()));
        }
    }
    if let Some(missing) = REQUIRED.iter().find(|n| !registers.contains_key(**n)) {
        return Err(bad(
            "register".into(),
            format!("'{missing}' is missing (the client needs it)"),
        ));
    }
    check_specs(&raw, &registers).map_err(|(f, r)| bad(f, r))?;
    Ok(DaqProfile {
        file: file.to_string(),
        device: raw.device,
        transport: raw.transport,
        ain: raw.ain,
        stream: raw.stream,
        quadrature: raw.quadrature,
        dac: raw.dac,
        calibration: raw.calibration,
        registers,
    })
}

fn overlap(a: &DaqRegister, b: &DaqRegister) -> bool {
    u32::from(a.address) < b.end() && u32::from(b.address) < a.end()
}

fn check_specs(raw: &RawDaq, regs: &BTreeMap<String, DaqRegister>) -> Result<(), (String, String)> {
    let fam = |n: &str| regs[n].count;
    let rule = |ok: bool, field: &str, reason: String| {
        if ok {
            Ok(())
        } else {
            Err((field.to_string(), reason))
        }
    };
    rule(
        raw.ain.channels >= 1 && raw.ain.channels <= fam("AIN#"),
        "ain.channels",
        format!(
            "{} must be 1..={} (register AIN#.count)",
            raw.ain.channels,
            fam("AIN#")
        ),
    )?;
    rule(
        !raw.ain.ranges_v.is_empty() && raw.ain.ranges_v.iter().all(|r| *r > 0.0 && r.is_finite()),
        "ain.ranges_v",
        "ranges are positive volts, at least one".into(),
    )?;
    rule(
        raw.stream.max_addresses <= fam("STREAM_SCANLIST_ADDRESS#"),
        "stream.max_addresses",
        format!(
            "{} exceeds register STREAM_SCANLIST_ADDRESS#.count",
            raw.stream.max_addresses
        ),
    )?;
    rule(
        raw.stream.max_scan_rate_hz > 0.0,
        "stream.max_scan_rate_hz",
        "must be > 0".into(),
    )?;
    rule(
        raw.stream.buffer_bytes_max.is_power_of_two(),
        "stream.buffer_bytes_max",
        "must be a power of 2".into(),
    )?;
    let dio = fam("DIO#_EF_READ_A");
    rule(
        raw.quadrature.phase_a_dio < dio && raw.quadrature.phase_b_dio < dio,
        "quadrature.phase_a_dio",
        format!("phase DIOs must be below {dio} (register DIO#_EF_READ_A.count)"),
    )?;
    rule(
        raw.dac.channels >= 1 && raw.dac.channels <= fam("DAC#") && raw.dac.min_v < raw.dac.max_v,
        "dac",
        format!("channels 1..={} and min_v < max_v", fam("DAC#")),
    )?;
    rule(
        raw.calibration.floats >= 16,
        "calibration.floats",
        "the block holds at least the 4 HS sets of 4 floats".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const T7: &str = include_str!("../../../profiles/labjack-t7.toml");

    fn load(text: &str) -> Result<DaqProfile, Error> {
        DaqProfile::from_toml_str(text, "t7.toml")
    }

    #[test]
    fn the_shipped_t7_profile_validates_with_ljm_addresses() {
        let p = load(T7).unwrap();
        assert_eq!(p.device.product_id, 7.0);
        assert_eq!(p.address("PRODUCT_ID", 0).unwrap(), 60000);
        assert_eq!(p.address("AIN#", 3).unwrap(), 6);
        assert_eq!(p.address("AIN#_NEGATIVE_CH", 3).unwrap(), 41003);
        assert_eq!(p.address("DAC#", 1).unwrap(), 1002);
        assert_eq!(p.address("DIO#_EF_READ_A", 0).unwrap(), 3000);
        assert_eq!(p.address("STREAM_SCANLIST_ADDRESS#", 127).unwrap(), 4354);
        assert_eq!(p.address("STREAM_ENABLE", 0).unwrap(), 4990);
        assert!(p.address("AIN#", 14).is_err());
        let (r, i) = p.at_address(41002).unwrap();
        assert_eq!((r.name.as_str(), i), ("AIN#_NEGATIVE_CH", 2));
        assert!(crate::profile::load::is_daq_text(T7));
    }

    #[test]
    fn a_missing_register_is_named() {
        let text = T7.replace("name = \"STREAM_ENABLE\"", "name = \"STREAM_ENABLED\"");
        let e = load(&text).unwrap_err().to_string();
        assert!(e.contains("'STREAM_ENABLE' is missing"), "{e}");
    }

    #[test]
    fn overlapping_registers_are_refused_naming_both() {
        let text = T7.replace("address = 4990", "address = 4020");
        let e = load(&text).unwrap_err().to_string();
        assert!(
            e.contains("register 'STREAM_ENABLE'")
                && e.contains("overlaps register 'STREAM_NUM_SCANS'"),
            "{e}"
        );
    }

    #[test]
    fn a_register_without_a_source_and_an_unknown_key_are_refused() {
        let text = T7.replacen(
            "source = \"[LJM] PRODUCT_ID 60000 FLOAT32 R: 7 for a T7 / T7-Pro\"",
            "source = \" \"",
            1,
        );
        let e = load(&text).unwrap_err().to_string();
        assert!(e.contains("register 'PRODUCT_ID' (#1).source"), "{e}");
        let e = load(&T7.replace("[quadrature]\n", "[quadrature]\nspeed = 1\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line ") && e.contains("speed"), "{e}");
    }
}
