//! `[[poll_group]]` and `[[signal]]`: the register map. A signal's entry is read in three
//! parts — where it lives (`reg`), how its raw value becomes a physical one (`eng` scale,
//! offset, unit) and who may read or write it (`eng` access, limits, poll) — then the signals
//! are checked against each other (names, roles, overlaps, `scale_exp_from`).
//!
//! Here: the tables as lists and the checks across signals; one entry's parts are read in
//! `entry`.

use super::Ctx;
use super::device::Encoding;
use super::raw::{RawPollGroup, RawSignal};
use crate::error::Error;
use crate::profile::{Access, DataType, PollGroup, Signal};

mod entry;

use entry::signal;

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

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, field_of, list};
    use super::*;
    use crate::profile::{Table, WordOrder};

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
