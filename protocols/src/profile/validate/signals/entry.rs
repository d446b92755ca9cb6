//! One `[[signal]]` entry on its own: where it lives (`reg`), how its raw value becomes a
//! physical one (`eng` scale, offset, unit) and who may read or write it (`eng` access,
//! limits, poll).

use super::super::Ctx;
use super::super::device::Encoding;
use super::super::raw::{RawEng, RawReg, RawSignal};
use crate::error::Error;
use crate::profile::{
    Access, BitRange, DataType, PollGroup, ROLES, Role, Signal, Table, Unit, WordOrder,
};

/// One `[[signal]]` entry, `f` naming it in errors.
pub(super) fn signal(
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
