//! `[[poll_group]]` and `[[signal]]`: the register map. A signal's entry is read in three
//! parts — where it lives (`reg`), how its raw value becomes a physical one (`eng` scale,
//! offset, unit) and who may read or write it (`eng` access, limits, poll) — then the signals
//! are checked against each other (names, roles, overlaps, `scale_exp_from`).

use super::Ctx;
use super::device::Encoding;
use super::raw::{RawEng, RawPollGroup, RawReg, RawSignal};
use crate::error::Error;
use crate::profile::{
    Access, BitRange, DataType, PollGroup, ROLES, Role, Signal, Table, Unit, WordOrder,
};

/// `[[poll_group]]`: unique names, rates in (0, 10 kHz], merge gaps of at most 125 registers.
pub(super) fn poll_groups(ctx: &Ctx<'_>, raw: &[RawPollGroup]) -> Result<Vec<PollGroup>, Error> {
    let mut groups: Vec<PollGroup> = Vec::new();
    for (i, g) in raw.iter().enumerate() {
        let f = format!("poll_group '{}' (#{i})", g.name);
        if g.name.is_empty() || groups.iter().any(|p| p.name == g.name) {
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
        groups.push(PollGroup {
            name: g.name.clone(),
            rate_hz: g.rate_hz,
            merge_gap: g.merge_gap as u16,
        });
    }
    Ok(groups)
}

/// `[[signal]]`: each signal on its own, then unique names and roles, no overlapping writable
/// registers, and `scale_exp_from` naming a readable integer signal.
pub(super) fn signals(
    ctx: &Ctx<'_>,
    raw: &[RawSignal],
    enc: Encoding,
    groups: &[PollGroup],
) -> Result<Vec<Signal>, Error> {
    let mut signals: Vec<Signal> = Vec::new();
    for (i, s) in raw.iter().enumerate() {
        let f = format!("signal '{}' (#{i})", s.name);
        let signal = signal(ctx, &f, s, enc, groups)?;
        let lower = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
        if s.name.is_empty() || !s.name.chars().all(lower) {
            return ctx.err(
                format!("{f}.name"),
                "must be non-empty lower-case ascii letters, digits and '_'",
            );
        }
        if signals.iter().any(|o| o.name == s.name) {
            return ctx.err(format!("{f}.name"), "is used by an earlier signal");
        }
        if let Some(role) = signal.role
            && let Some(o) = signals.iter().find(|o| o.role == Some(role))
        {
            return ctx.err(
                format!("{f}.role"),
                format!("role '{role}' is already taken by signal '{}'", o.name),
            );
        }
        signals.push(signal);
    }
    no_overlaps(ctx, &signals)?;
    scale_sources(ctx, &signals)?;
    Ok(signals)
}

/// Overlapping registers are allowed only when one side is a bit field or both are read-only.
fn no_overlaps(ctx: &Ctx<'_>, signals: &[Signal]) -> Result<(), Error> {
    let span = |s: &Signal| (s.address as u32, s.address as u32 + s.registers() as u32);
    let fieldish = |s: &Signal| matches!(s.ty, DataType::Bool | DataType::Bits);
    for (i, a) in signals.iter().enumerate() {
        for b in &signals[..i] {
            let ((a0, a1), (b0, b1)) = (span(a), span(b));
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
    Ok(())
}

/// Each `scale_exp_from` names a readable integer signal that is not scaled that way itself.
fn scale_sources(ctx: &Ctx<'_>, signals: &[Signal]) -> Result<(), Error> {
    for (i, s) in signals.iter().enumerate() {
        let Some(src) = &s.scale_exp_from else {
            continue;
        };
        match signals.iter().find(|o| &o.name == src) {
            Some(o) if o.ty.is_integer() && o.access.readable() && o.scale_exp_from.is_none() => {}
            _ => {
                return ctx.err(
                    format!("signal '{}' (#{i}).eng.scale_exp_from", s.name),
                    format!("'{src}' must name a readable integer signal"),
                );
            }
        }
    }
    Ok(())
}

/// One `[[signal]]` entry, `f` naming it in errors.
fn signal(
    ctx: &Ctx<'_>,
    f: &str,
    s: &RawSignal,
    enc: Encoding,
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
    let reg = register(ctx, f, &s.reg, enc)?;
    let (scale, offset, unit) = conversion(ctx, f, &s.eng, role)?;
    let access = access(ctx, f, &s.eng, role, &reg)?;
    limits_and_poll(ctx, f, &s.eng, access, groups)?;
    let signal = Signal {
        name: s.name.clone(),
        role,
        description: s.description.clone(),
        unverified: s.unverified,
        table: reg.table,
        address: reg.address,
        ty: reg.ty,
        word_order: reg.word_order,
        bits: reg.bits,
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

/// Where a signal lives: its `reg` table.
#[derive(Debug, PartialEq)]
struct Register {
    table: Table,
    /// PDU (0-based) address.
    address: u16,
    ty: DataType,
    word_order: WordOrder,
    bits: Option<BitRange>,
}

/// `reg`: the table, the address (within 0..=65535 after the address base, its registers too),
/// the type (`bool` in coil and discrete tables) and the word order and bit range.
fn register(ctx: &Ctx<'_>, f: &str, r: &RawReg, enc: Encoding) -> Result<Register, Error> {
    let table = Table::parse(&r.table).ok_or_else(|| {
        Error::profile(
            ctx.file,
            format!("{f}.reg.table"),
            format!(
                "'{}' is not one of \"holding\", \"input\", \"coil\", \"discrete\"",
                r.table
            ),
        )
    })?;
    let ty = DataType::parse(&r.ty).ok_or_else(|| {
        let known: Vec<&str> = DataType::ALL.iter().map(|t| t.name()).collect();
        Error::profile(
            ctx.file,
            format!("{f}.reg.type"),
            format!("'{}' is not one of {}", r.ty, known.join(", ")),
        )
    })?;
    let word_order = match &r.word_order {
        None => enc.word_order,
        Some(w) => WordOrder::parse(w).ok_or_else(|| {
            Error::profile(
                ctx.file,
                format!("{f}.reg.word_order"),
                format!("'{w}' is not one of \"ABCD\", \"CDAB\", \"BADC\", \"DCBA\""),
            )
        })?,
    };
    let base = enc.address_base;
    let pdu = r.address - base;
    if !(0..=0xFFFF).contains(&pdu) {
        return ctx.err(
            format!("{f}.reg.address"),
            format!("{} (address_base {base}) is outside 0..=65535", r.address),
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
            format!("a {table} holds one bit: the type must be \"bool\", not \"{ty}\""),
        );
    }
    Ok(Register {
        table,
        address: pdu as u16,
        ty,
        word_order,
        bits: bit_range(ctx, f, r.bits.as_deref(), table, ty)?,
    })
}

/// `reg.bits = [lo, hi]`: required of `bits`, one bit for a `bool`, only in a register table.
fn bit_range(
    ctx: &Ctx<'_>,
    f: &str,
    bits: Option<&[i64]>,
    table: Table,
    ty: DataType,
) -> Result<Option<BitRange>, Error> {
    let Some(b) = bits else {
        if ty == DataType::Bits {
            return ctx.err(
                format!("{f}.reg.bits"),
                "type \"bits\" needs bits = [lo, hi]",
            );
        }
        return Ok(None);
    };
    if !matches!(ty, DataType::Bool | DataType::Bits) || table.is_bits() {
        return ctx.err(
            format!("{f}.reg.bits"),
            "bits = [lo, hi] applies only to bool/bits types in holding or input registers",
        );
    }
    if b.len() != 2 || !(0..=15).contains(&b[0]) || !(0..=15).contains(&b[1]) || b[0] > b[1] {
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
    Ok(Some((b[0] as u8, b[1] as u8)))
}

/// `eng.scale`, `eng.offset` and `eng.unit`: finite, a non-zero scale, a known unit that
/// converts to what the role needs.
fn conversion(
    ctx: &Ctx<'_>,
    f: &str,
    eng: &RawEng,
    role: Option<Role>,
) -> Result<(f64, f64, Unit), Error> {
    let scale = eng.scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale != 0.0) {
        return ctx.err(
            format!("{f}.eng.scale"),
            format!("{scale} must be finite and non-zero"),
        );
    }
    let offset = eng.offset.unwrap_or(0.0);
    if !offset.is_finite() {
        return ctx.err(
            format!("{f}.eng.offset"),
            format!("{offset} must be finite"),
        );
    }
    let declared = eng.unit.clone().unwrap_or_default();
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
    Ok((scale, offset, unit))
}

/// `eng.access`: `r` unless given; never writable in an input table or as a bit field; what the
/// role needs (written commands, read feedback).
fn access(
    ctx: &Ctx<'_>,
    f: &str,
    eng: &RawEng,
    role: Option<Role>,
    reg: &Register,
) -> Result<Access, Error> {
    let field = format!("{f}.eng.access");
    let access = match eng.access.as_deref().unwrap_or("r") {
        "r" => Access::Read,
        "w" => Access::Write,
        "rw" => Access::ReadWrite,
        other => {
            return ctx.err(
                field,
                format!("'{other}' is not one of \"r\", \"w\", \"rw\""),
            );
        }
    };
    let table = reg.table;
    if access.writable() && matches!(table, Table::Input | Table::DiscreteInput) {
        return ctx.err(
            field,
            format!("a {table} is read-only: access must be \"r\""),
        );
    }
    if access.writable() && (reg.ty == DataType::Bits || reg.bits.is_some()) {
        return ctx.err(
            field,
            "bit fields of a register are read-only (writing one would clobber its neighbours)",
        );
    }
    if let Some(r) = role {
        if r.must_write() && !access.writable() {
            return ctx.err(
                field,
                format!("role '{r}' is written: access must be \"w\" or \"rw\""),
            );
        }
        if r.must_read() && !access.readable() {
            return ctx.err(
                field,
                format!("role '{r}' is read: access must be \"r\" or \"rw\""),
            );
        }
    }
    Ok(access)
}

/// `eng.min` ≤ `eng.max`, both finite; `eng.poll` names a poll group of a readable signal.
fn limits_and_poll(
    ctx: &Ctx<'_>,
    f: &str,
    eng: &RawEng,
    access: Access,
    groups: &[PollGroup],
) -> Result<(), Error> {
    for (name, v) in [("min", eng.min), ("max", eng.max)] {
        if let Some(v) = v
            && !v.is_finite()
        {
            return ctx.err(format!("{f}.eng.{name}"), format!("{v} must be finite"));
        }
    }
    if let (Some(lo), Some(hi)) = (eng.min, eng.max)
        && lo > hi
    {
        return ctx.err(format!("{f}.eng.min"), format!("{lo} must be ≤ max ({hi})"));
    }
    if let Some(p) = &eng.poll {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, field_of, list};
    use super::*;

    const ABCD: Encoding = Encoding {
        word_order: WordOrder::Abcd,
        address_base: 0,
    };

    fn groups() -> Vec<PollGroup> {
        poll_groups(
            &ctx(),
            &list("poll_group", "name = \"fast\"\nrate_hz = 100"),
        )
        .unwrap()
    }

    fn signals_of(text: &str) -> Result<Vec<Signal>, Error> {
        signals(&ctx(), &list("signal", text), ABCD, &groups())
    }

    #[test]
    fn poll_groups_have_unique_names_and_sane_rates() {
        let g = poll_groups(
            &ctx(),
            &list(
                "poll_group",
                "name = \"fast\"\nrate_hz = 1000\nmerge_gap = 4",
            ),
        )
        .unwrap();
        assert_eq!(
            (g[0].name.as_str(), g[0].rate_hz, g[0].merge_gap),
            ("fast", 1000.0, 4)
        );
        let twice = "name = \"a\"\nrate_hz = 1\n[[poll_group]]\nname = \"a\"\nrate_hz = 2";
        for (text, field) in [
            (twice, "poll_group 'a' (#1)"),
            (
                "name = \"a\"\nrate_hz = 10001",
                "poll_group 'a' (#0).rate_hz",
            ),
            (
                "name = \"a\"\nrate_hz = 1\nmerge_gap = 126",
                "poll_group 'a' (#0).merge_gap",
            ),
        ] {
            assert_eq!(
                field_of(poll_groups(&ctx(), &list("poll_group", text))),
                field,
                "{text}"
            );
        }
    }

    #[test]
    fn a_signal_maps_its_registers_to_si_words_and_back() {
        // 32-bit position in 0.1 mrad, low word first, written from address 40 101 (base 1).
        let text = "name = \"pos\"\nrole = \"position_feedback\"\n\
                    reg = { table = \"input\", address = 40101, type = \"i32\", word_order = \"CDAB\" }\n\
                    eng = { scale = 0.1, unit = \"mrad\" }";
        let base1 = Encoding {
            address_base: 1,
            ..ABCD
        };
        let s = &signals(&ctx(), &list("signal", text), base1, &[]).unwrap()[0];
        assert_eq!(
            (s.table, s.address, s.ty, s.access),
            (Table::Input, 40100, DataType::I32, Access::Read)
        );
        // -100 000 raw = 0xFFFE7960: low word 0x7960 first.
        let si = s.decode(&[0x7960, 0xFFFE]).unwrap();
        assert!((si - -10.0).abs() < 1e-12, "{si}");
        // A status bit field: bits 3..=5 of a holding register, read-only.
        let text = "name = \"st\"\nreg = { address = 7, type = \"bits\", bits = [3, 5] }";
        let s = &signals_of(text).unwrap()[0];
        assert_eq!((s.bits, s.registers()), (Some((3, 5)), 1));
        assert_eq!(s.decode(&[0b0010_1000]).unwrap(), 5.0);
    }

    #[test]
    fn a_command_signal_is_writable_in_its_roles_unit_and_limits() {
        let text = "name = \"torque_cmd\"\nrole = \"torque_command\"\n\
                    reg = { address = 0x10, type = \"i16\" }\n\
                    eng = { unit = \"mN m\", access = \"rw\", min = -2000, max = 2000, poll = \"fast\" }";
        let s = &signals_of(text).unwrap()[0];
        assert_eq!((s.min, s.max), (Some(-2.0), Some(2.0)));
        assert_eq!(s.encode(-1.5).unwrap(), [0xFA24]);
        assert!(s.encode(2.5).is_err(), "beyond max");
        let entry = "signal 'torque_cmd' (#0)";
        for (from, to, field) in [
            ("\"rw\"", "\"r\"", "eng.access"),
            ("\"mN m\"", "\"rpm\"", "eng.unit"),
            ("min = -2000", "min = 3000", "eng.min"),
            ("max = 2000", "max = 40000", "eng.max"),
            ("\"fast\"", "\"slow\"", "eng.poll"),
            ("\"torque_command\"", "\"torque\"", "role"),
            ("type = \"i16\"", "type = \"i24\"", "reg.type"),
            (
                "address = 0x10,",
                "table = \"coil\", address = 0x10,",
                "reg.type",
            ),
            ("address = 0x10,", "address = 0x10000,", "reg.address"),
            (
                "address = 0x10,",
                "address = 0x10, word_order = \"ABDC\",",
                "reg.word_order",
            ),
        ] {
            let bad = text.replace(from, to);
            assert_eq!(
                field_of(signals_of(&bad)),
                format!("{entry}.{field}"),
                "{to}"
            );
        }
    }

    #[test]
    fn bit_fields_are_read_only_and_in_range() {
        let entry = "signal 'b' (#0)";
        for (reg, eng, field) in [
            ("type = \"bits\"", "", "reg.bits"),
            ("type = \"bits\", bits = [5, 3]", "", "reg.bits"),
            ("type = \"bits\", bits = [0, 16]", "", "reg.bits"),
            ("type = \"bool\", bits = [1, 2]", "", "reg.bits"),
            ("type = \"u16\", bits = [1, 1]", "", "reg.bits"),
            (
                "table = \"coil\", type = \"bool\", bits = [1, 1]",
                "",
                "reg.bits",
            ),
            (
                "type = \"bool\", bits = [1, 1]",
                "access = \"rw\"",
                "eng.access",
            ),
            (
                "table = \"input\", type = \"u16\"",
                "access = \"w\"",
                "eng.access",
            ),
        ] {
            let text = format!("name = \"b\"\nreg = {{ address = 1, {reg} }}\neng = {{ {eng} }}");
            assert_eq!(
                field_of(signals_of(&text)),
                format!("{entry}.{field}"),
                "{reg} {eng}"
            );
        }
    }

    #[test]
    fn signals_have_unique_names_and_roles_and_overlap_only_when_safe() {
        let two = |a: &str, b: &str| format!("{a}\n[[signal]]\n{b}");
        let w = |name: &str, addr: u16| {
            format!(
                "name = \"{name}\"\nreg = {{ address = {addr}, type = \"u32\" }}\neng = {{ access = \"rw\" }}"
            )
        };
        let r = |name: &str, addr: u16| {
            format!("name = \"{name}\"\nreg = {{ address = {addr}, type = \"u32\" }}")
        };
        assert_eq!(
            signals_of(&two(&r("a", 0), &r("b", 1))).unwrap().len(),
            2,
            "read-only overlap"
        );
        assert_eq!(
            signals_of(&two(&w("a", 0), &w("b", 2))).unwrap().len(),
            2,
            "adjacent"
        );
        let fault = |addr: u16| {
            format!(
                "name = \"f{addr}\"\nrole = \"fault_code\"\nreg = {{ address = {addr}, type = \"u16\" }}"
            )
        };
        for (text, field) in [
            (two(&w("a", 0), &w("b", 1)), "signal 'b' (#1).reg.address"),
            (two(&r("a", 0), &r("a", 4)), "signal 'a' (#1).name"),
            (r("Torque", 0), "signal 'Torque' (#0).name"),
            (two(&fault(0), &fault(4)), "signal 'f4' (#1).role"),
        ] {
            assert_eq!(field_of(signals_of(&text)), field, "{text}");
        }
    }

    #[test]
    fn scale_exponents_come_from_a_readable_integer_signal() {
        let dp = "name = \"dp\"\nreg = { address = 0, type = \"u16\" }";
        let load = |src: &str| {
            format!(
                "{dp}\n[[signal]]\nname = \"load\"\nreg = {{ address = 1, type = \"i16\" }}\neng = {{ scale_exp_from = \"{src}\" }}"
            )
        };
        let s = signals_of(&load("dp")).unwrap();
        assert_eq!(s[1].scale_exp_from.as_deref(), Some("dp"));
        assert_eq!(
            field_of(signals_of(&load("nope"))),
            "signal 'load' (#1).eng.scale_exp_from"
        );
    }
}
