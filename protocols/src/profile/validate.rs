//! The TOML schema as written, and its validation into a [`Profile`]. Strings (types, roles,
//! units, ...) are parsed here rather than by serde so that every rejection names the file, the
//! entry and the rule.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::*;

// ---------------------------------------------------------------------------------------------
// The TOML schema as written (strings parsed during validation, for precise errors).

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
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

pub(super) fn validate(raw: RawProfile, file: &str) -> Result<Profile, Error> {
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
        if sq.name == CONNECT_SEQUENCE {
            check_read_back(&ctx, &f, &steps, &signals)?;
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

/// Settings written at connect must be confirmed: each write is followed by an `expect` of the
/// same signal whose mask and value match what was written, so a drive that silently ignored
/// the setting (wrong address, parameter locked, power-cycle needed) fails the connect.
fn check_read_back(
    ctx: &Ctx<'_>,
    f: &str,
    steps: &[Step],
    signals: &[Signal],
) -> Result<(), Error> {
    for (j, st) in steps.iter().enumerate() {
        let Step::Write {
            signal, registers, ..
        } = st
        else {
            continue;
        };
        let sig = signals
            .iter()
            .find(|s| &s.name == signal)
            .expect("validate_step checked the name");
        let field = format!("{f}.steps[{j}]");
        if !sig.access.readable() {
            return ctx.err(
                field,
                format!(
                    "signal '{signal}' is write-only: a connect setting must be readable to be read back"
                ),
            );
        }
        let written = sig
            .decode_raw(registers)
            .ok()
            .and_then(|r| r.as_bits())
            .unwrap_or(0);
        let confirmed = steps[j + 1..].iter().any(|later| match later {
            Step::Expect {
                signal: e,
                mask,
                value,
                ..
            } => e == signal && written & mask == *value && written & !mask == 0,
            _ => false,
        });
        if !confirmed {
            return ctx.err(
                field,
                format!(
                    "the connect setting '{signal}' = 0x{written:X} is never read back: add a later \
                     {{ expect = \"{signal}\", mask = 0x{:X}, value = 0x{written:X} }}",
                    mask_of(sig)
                ),
            );
        }
    }
    Ok(())
}

/// The mask covering every bit a signal's raw value can have (for the hint above).
fn mask_of(sig: &Signal) -> u64 {
    match sig.ty.registers() {
        1 => 0xFFFF,
        2 => 0xFFFF_FFFF,
        _ => u64::MAX,
    }
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

pub(super) fn check_vector(p: &Profile, i: usize, tv: &TestVector) -> Result<(), Error> {
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
