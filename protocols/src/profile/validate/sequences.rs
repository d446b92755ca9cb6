//! `[modes]`, `[status]` and `[[sequence]]`: what the drive is told and what it answers, each
//! checked against the signals they write or read.

use super::raw::{RawPattern, RawSequence, RawStep};
use super::{Ctx, ms};
use crate::error::Error;
use crate::profile::{CONNECT_SEQUENCE, Mode, Role, Sequence, Signal, StatusPattern, Step};
use std::collections::BTreeMap;

/// `[modes]`: each operating mode's value, written to the `mode` signal (so it must encode
/// there), each value used once.
pub(super) fn modes(
    ctx: &Ctx<'_>,
    raw: &BTreeMap<String, i64>,
    signals: &[Signal],
) -> Result<BTreeMap<Mode, i64>, Error> {
    let mut modes = BTreeMap::new();
    for (k, v) in raw {
        let f = format!("modes.{k}");
        let Some(m) = Mode::ALL.into_iter().find(|m| m.name() == k) else {
            return ctx.err(f, "is not one of \"torque\", \"velocity\", \"position\"");
        };
        let Some(sig) = signals.iter().find(|s| s.role == Some(Role::Mode)) else {
            return ctx.err(
                f,
                "needs a signal with role = \"mode\" to write the value to",
            );
        };
        if let Err(e) = sig
            .si_to_raw(*v as f64 * sig.unit.factor)
            .and_then(|r| sig.encode_raw(r))
        {
            return ctx.err(f, format!("{v} cannot be written: {e}"));
        }
        if let Some((other, _)) = modes.iter().find(|(_, ov)| *ov == v) {
            return ctx.err(f, format!("value {v} is also used by mode '{other}'"));
        }
        modes.insert(m, *v);
    }
    Ok(modes)
}

/// `[status]`: named patterns (mask, value) of the integer `status` signal.
pub(super) fn status(
    ctx: &Ctx<'_>,
    raw: &BTreeMap<String, RawPattern>,
    signals: &[Signal],
) -> Result<Vec<StatusPattern>, Error> {
    let mut status = Vec::new();
    for (k, p) in raw {
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
    Ok(status)
}

/// `[[sequence]]`: unique names, at least one step each; the connect sequence reads back every
/// setting it writes.
pub(super) fn sequences(
    ctx: &Ctx<'_>,
    raw: &[RawSequence],
    signals: &[Signal],
) -> Result<Vec<Sequence>, Error> {
    let mut sequences: Vec<Sequence> = Vec::new();
    for (i, sq) in raw.iter().enumerate() {
        let f = format!("sequence '{}' (#{i})", sq.name);
        if sq.name.is_empty() || sequences.iter().any(|o| o.name == sq.name) {
            return ctx.err(f, "name must be non-empty and unique");
        }
        if sq.steps.is_empty() {
            return ctx.err(format!("{f}.steps"), "must have at least one step");
        }
        let mut steps = Vec::new();
        for (j, st) in sq.steps.iter().enumerate() {
            steps.push(step(ctx, &format!("{f}.steps[{j}]"), st, signals)?);
        }
        if sq.name == CONNECT_SEQUENCE {
            check_read_back(ctx, &f, &steps, signals)?;
        }
        sequences.push(Sequence {
            name: sq.name.clone(),
            steps,
        });
    }
    Ok(sequences)
}

/// One step: exactly one of `write` (a writable signal and its value, encoded now), `expect`
/// (an integer signal's value under a mask, within `timeout_ms`, 500 ms unless given) or
/// `wait_ms`.
fn step(ctx: &Ctx<'_>, f: &str, st: &RawStep, signals: &[Signal]) -> Result<Step, Error> {
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
            .expect("step() checked the name");
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

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, drive_signals, field_of, list, table};
    use super::*;
    use std::time::Duration;

    #[test]
    fn modes_are_written_to_the_mode_signal_each_value_once() {
        let m = modes(&ctx(), &table("torque = 4\nvelocity = 3"), &drive_signals()).unwrap();
        assert_eq!((m[&Mode::Torque], m[&Mode::Velocity]), (4, 3));
        let mode = drive_signals()
            .into_iter()
            .find(|s| s.role == Some(Role::Mode))
            .unwrap();
        // The i16 mode object: 4 is one register 0x0004, -3 the word 0xFFFD.
        assert_eq!(mode.encode(4.0).unwrap(), [0x0004]);
        assert_eq!(mode.encode(-3.0).unwrap(), [0xFFFD]);
        for (text, field) in [
            ("spin = 1", "modes.spin"),
            ("torque = 40000", "modes.torque"),
            ("torque = 4\nvelocity = 4", "modes.velocity"),
        ] {
            let got = modes(&ctx(), &table(text), &drive_signals());
            assert_eq!(field_of(got), field, "{text}");
        }
        let no_mode_signal: Vec<Signal> = drive_signals()
            .into_iter()
            .filter(|s| s.role != Some(Role::Mode))
            .collect();
        assert_eq!(
            field_of(modes(&ctx(), &table("torque = 4"), &no_mode_signal)),
            "modes.torque"
        );
    }

    #[test]
    fn status_patterns_lie_within_their_masks() {
        let text = "enabled = { mask = 0x006F, value = 0x0027 }\nfault = { mask = 0x0008, value = 0x0008 }";
        let s = status(&ctx(), &table(text), &drive_signals()).unwrap();
        assert_eq!(
            (s[0].name.as_str(), s[0].mask, s[0].value),
            ("enabled", 0x6F, 0x27)
        );
        // The CiA 402 status word 0x0637 (operation enabled) matches 'enabled', not 'fault'.
        assert_eq!((0x0637 & s[0].mask, 0x0637 & s[1].mask), (s[0].value, 0));
        for text in [
            "bad = { mask = 0x0F, value = 0x10 }",
            "bad = { mask = 0, value = 0 }",
        ] {
            assert_eq!(
                field_of(status(&ctx(), &table(text), &drive_signals())),
                "status.bad"
            );
        }
    }

    #[test]
    fn sequence_steps_encode_their_writes_and_bound_their_waits() {
        let text = "name = \"enable\"\nsteps = [\n\
            { write = \"controlword\", value = 6 },\n\
            { expect = \"statusword\", mask = 0x6F, value = 0x21, timeout_ms = 200 },\n\
            { wait_ms = 5 },\n\
            { write = \"torque_cmd\", value = -250 },\n]";
        let seq = &sequences(&ctx(), &list("sequence", text), &drive_signals()).unwrap()[0];
        assert_eq!(
            seq.steps,
            [
                Step::Write {
                    signal: "controlword".into(),
                    value: 6.0,
                    registers: vec![0x0006]
                },
                Step::Expect {
                    signal: "statusword".into(),
                    mask: 0x6F,
                    value: 0x21,
                    timeout: Duration::from_millis(200),
                },
                Step::Wait(Duration::from_millis(5)),
                // -250 mN m in SI, the i16 word 0xFF06.
                Step::Write {
                    signal: "torque_cmd".into(),
                    value: -0.25,
                    registers: vec![0xFF06]
                },
            ]
        );
        let entry = "sequence 'enable' (#0)";
        for (step, field) in [
            ("{ write = \"nope\", value = 1 }", "steps[0]"),
            ("{ write = \"statusword\", value = 1 }", "steps[0]"),
            ("{ write = \"controlword\" }", "steps[0].value"),
            (
                "{ write = \"controlword\", value = 70000 }",
                "steps[0].value",
            ),
            (
                "{ expect = \"statusword\", mask = 0x0F, value = 0x10 }",
                "steps[0].value",
            ),
            ("{ wait_ms = 5, value = 1 }", "steps[0]"),
            ("{ wait_ms = -1 }", "steps[0].wait_ms"),
            (
                "{ write = \"controlword\", value = 6, wait_ms = 1 }",
                "steps[0]",
            ),
        ] {
            let text = format!("name = \"enable\"\nsteps = [{step}]");
            let got = sequences(&ctx(), &list("sequence", &text), &drive_signals());
            assert_eq!(field_of(got), format!("{entry}.{field}"), "{step}");
        }
        let empty = sequences(
            &ctx(),
            &list("sequence", "name = \"x\"\nsteps = []"),
            &drive_signals(),
        );
        assert_eq!(field_of(empty), "sequence 'x' (#0).steps");
    }

    #[test]
    fn the_connect_sequence_reads_back_what_it_writes() {
        let connect = |steps: &str| {
            let text = format!("name = \"connect\"\nsteps = [{steps}]");
            sequences(&ctx(), &list("sequence", &text), &drive_signals())
        };
        let write = "{ write = \"controlword\", value = 0x80 }";
        assert!(
            connect(&format!(
                "{write}, {{ expect = \"controlword\", mask = 0xFFFF, value = 0x80 }}"
            ))
            .is_ok()
        );
        let unconfirmed = connect(&format!(
            "{write}, {{ expect = \"controlword\", mask = 0xFF, value = 0x00 }}"
        ));
        assert_eq!(field_of(unconfirmed), "sequence 'connect' (#0).steps[0]");
        assert_eq!(field_of(connect(write)), "sequence 'connect' (#0).steps[0]");
    }
}
