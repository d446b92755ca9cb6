//! `[[test_vector]]`: worked examples a profile carries — registers and the value they decode
//! to, and RTU frames with their CRC — each checked against the signal it names, at load and on
//! request ([`crate::profile::Profile::check_test_vectors`]).

use super::Ctx;
use super::raw::RawTestVector;
use crate::error::Error;
use crate::profile::{Profile, RawValue, Signal, TestVector, crc_ok, crc16, encode};

/// `[[test_vector]]`: each vector parsed (16-bit registers, hex frames, a tolerance ≥ 0) and
/// checked against `profile`.
pub(super) fn test_vectors(
    ctx: &Ctx<'_>,
    raw: &[RawTestVector],
    profile: &Profile,
) -> Result<Vec<TestVector>, Error> {
    let mut out = Vec::new();
    for (i, tv) in raw.iter().enumerate() {
        let vector = test_vector(ctx, i, tv)?;
        check_vector(profile, i, &vector)?;
        out.push(vector);
    }
    Ok(out)
}

/// One vector as written, parsed.
fn test_vector(ctx: &Ctx<'_>, i: usize, tv: &RawTestVector) -> Result<TestVector, Error> {
    let f = format!("test_vector #{i} ('{}')", tv.signal);
    let registers = match &tv.registers {
        None => None,
        Some(r) => {
            let mut out = Vec::new();
            for (k, v) in r.iter().enumerate() {
                out.push(u16::try_from(*v).map_err(|_| {
                    Error::profile(
                        ctx.file,
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
                ctx.file,
                format!("{f}.frames[{k}]"),
                "must be hex bytes separated by spaces, e.g. \"01 03 00 50 00 02 C4 1A\"",
            )
        })?);
    }
    let tolerance = tv.tolerance.unwrap_or(1e-9);
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return ctx.err(format!("{f}.tolerance"), format!("{tolerance} must be ≥ 0"));
    }
    Ok(TestVector {
        signal: tv.signal.clone(),
        registers,
        value: tv.value,
        decimals: tv.decimals.clamp(-18, 18) as i32,
        tolerance,
        frames,
        note: tv.note.clone(),
    })
}

fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let bytes: Option<Vec<u8>> = text
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).ok())
        .collect();
    bytes.filter(|b| !b.is_empty())
}

/// Checks one vector against its signal: the registers decode to the value (and a writable
/// integer signal encodes the value back to them); each frame's CRC, address, length and
/// registers match.
pub(in crate::profile) fn check_vector(
    p: &Profile,
    i: usize,
    tv: &TestVector,
) -> Result<(), Error> {
    let f = format!("test_vector #{i} ('{}')", tv.signal);
    let err = |field: String, reason: &str| Err(Error::profile(&p.file, field, reason));
    let Some(sig) = p.signal(&tv.signal) else {
        return err(f, "signal is not in this profile");
    };
    if tv.registers.is_none() && tv.frames.is_empty() {
        return err(f, "needs registers (+ value) or frames");
    }
    if tv.registers.is_some() != tv.value.is_some() {
        return err(f, "registers and value go together");
    }
    if let (Some(regs), Some(value)) = (&tv.registers, tv.value) {
        check_registers(sig, tv, regs, value)
            .map_err(|(field, reason)| Error::profile(&p.file, format!("{f}.{field}"), reason))?;
    }
    for (k, frame) in tv.frames.iter().enumerate() {
        check_frame(sig, frame, tv.registers.as_deref())
            .map_err(|reason| Error::profile(&p.file, format!("{f}.frames[{k}]"), reason))?;
    }
    Ok(())
}

/// The registers decode to `value` within the tolerance; a writable integer signal encodes
/// `value` back to the same registers. Errors: the vector's key and the reason.
fn check_registers(
    sig: &Signal,
    tv: &TestVector,
    regs: &[u16],
    value: f64,
) -> Result<(), (&'static str, String)> {
    if regs.len() != usize::from(sig.registers()) {
        return Err((
            "registers",
            format!(
                "{} registers given, signal '{}' ({}) has {}",
                regs.len(),
                sig.name,
                sig.ty,
                sig.registers()
            ),
        ));
    }
    let raw = sig
        .decode_raw(regs)
        .map_err(|e| ("registers", e.to_string()))?;
    let declared = raw.as_f64() * sig.scale * 10f64.powi(-tv.decimals) + sig.offset;
    if (declared - value).abs() > tv.tolerance.max(1e-12 * value.abs()) {
        return Err((
            "value",
            format!(
                "registers {regs:04X?} decode to {declared} {}, expected {value} (tolerance {})",
                sig.unit.declared, tv.tolerance
            ),
        ));
    }
    if sig.access.writable() && sig.ty.is_integer() && sig.scale_exp_from.is_none() {
        let raw = sig
            .si_to_raw(value * sig.unit.factor)
            .unwrap_or(RawValue::Float(f64::NAN));
        let back = encode(sig.ty, sig.word_order, sig.bits, raw);
        if back.as_deref() != Some(regs) {
            return Err((
                "registers",
                format!("value {value} encodes to {back:04X?}, not {regs:04X?}"),
            ));
        }
    }
    Ok(())
}

/// One RTU frame: its CRC, then by function code (03/04 request or reply, 06, 10) its register
/// count, address and the registers it carries against the signal and the vector's registers.
fn check_frame(sig: &Signal, frame: &[u8], regs: Option<&[u16]>) -> Result<(), String> {
    if !crc_ok(frame) {
        let body = &frame[..frame.len().saturating_sub(2)];
        let [lo, hi] = crc16(body).to_le_bytes();
        return Err(format!(
            "CRC mismatch: the frame body's CRC is {lo:02X} {hi:02X}"
        ));
    }
    let be = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);
    let words = |from: usize, n: usize| (0..n / 2).map(|w| be(from + 2 * w)).collect();
    let fc = frame[1];
    let (addr, data): (Option<u16>, Vec<u16>) = match fc {
        0x03 | 0x04 if frame.len() == 8 => {
            if be(4) != sig.registers() {
                return Err(format!(
                    "reads {} registers, the signal has {}",
                    be(4),
                    sig.registers()
                ));
            }
            (Some(be(2)), Vec::new())
        }
        0x03 | 0x04 => {
            let n = usize::from(frame[2]);
            if frame.len() != 5 + n || n % 2 != 0 {
                return Err(format!("byte count {n} does not match the frame length"));
            }
            (None, words(3, n))
        }
        0x06 if frame.len() == 8 => (Some(be(2)), vec![be(4)]),
        0x10 if frame.len() > 9 => {
            let n = usize::from(frame[6]);
            if frame.len() != 9 + n {
                return Err(format!("byte count {n} does not match the frame length"));
            }
            (Some(be(2)), words(7, n))
        }
        _ => {
            return Err(format!(
                "function 0x{fc:02X} frames of this length are not checked (use 03/04/06/10)"
            ));
        }
    };
    if let Some(a) = addr
        && a != sig.address
    {
        return Err(format!(
            "addresses 0x{a:04X}, signal '{}' is at 0x{:04X}",
            sig.name, sig.address
        ));
    }
    if let Some(regs) = regs
        && !data.is_empty()
        && data != regs
    {
        return Err(format!(
            "carries registers {data:04X?}, the vector says {regs:04X?}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, field_of, list};
    use super::*;

    /// A profile of one writable i32 torque command (mN m, low word first) at 0x0010.
    fn profile() -> Profile {
        let text = "[device]\nname = \"t\"\nkind = \"torque_sensor\"\n\
            [[signal]]\nname = \"torque\"\nrole = \"measured_torque\"\n\
            reg = { address = 0x10, type = \"i32\", word_order = \"CDAB\" }\n\
            eng = { unit = \"mN m\", access = \"rw\" }";
        Profile::from_toml_str(text, "t.toml").unwrap()
    }

    fn vectors(text: &str) -> Result<Vec<TestVector>, Error> {
        test_vectors(&ctx(), &list("test_vector", text), &profile())
    }

    #[test]
    fn registers_decode_to_the_value_and_encode_back() {
        // -1000 mN m = 0xFFFFFC18, low word first.
        let v =
            vectors("signal = \"torque\"\nregisters = [0xFC18, 0xFFFF]\nvalue = -1000").unwrap();
        assert_eq!(
            (v[0].registers.as_deref(), v[0].value),
            (Some(&[0xFC18, 0xFFFF][..]), Some(-1000.0))
        );
        let entry = "test_vector #0 ('torque')";
        for (text, field) in [
            ("registers = [0xFC18, 0xFFFF]\nvalue = -999", "value"),
            ("registers = [0xFC18]\nvalue = -1000", "registers"),
            ("registers = [0xFC18, 65536]\nvalue = -1000", "registers[1]"),
            ("registers = [0xFC18, 0xFFFF]", ""),
            ("value = 1", ""),
            (
                "registers = [0xFC18, 0xFFFF]\nvalue = -1000\ntolerance = -1",
                "tolerance",
            ),
        ] {
            let want = if field.is_empty() {
                entry.to_string()
            } else {
                format!("{entry}.{field}")
            };
            assert_eq!(
                field_of(vectors(&format!("signal = \"torque\"\n{text}"))),
                want,
                "{text}"
            );
        }
        assert_eq!(
            field_of(vectors("signal = \"nope\"\nvalue = 1")),
            "test_vector #0 ('nope')"
        );
    }

    #[test]
    fn frames_carry_the_signals_address_count_and_registers_under_a_good_crc() {
        // Read 2 registers at 0x0010 from unit 1; the reply; the write of -1000 mN m.
        let good = [
            "01 03 00 10 00 02 C5 CE",
            "01 03 04 FC 18 FF FF 4B D4",
            "01 10 00 10 00 02 04 FC 18 FF FF 43 44",
        ];
        let frames = good.map(|f| format!("\"{f}\"")).join(", ");
        let text = format!(
            "signal = \"torque\"\nregisters = [0xFC18, 0xFFFF]\nvalue = -1000\nframes = [{frames}]"
        );
        let v = vectors(&text).unwrap();
        assert_eq!(
            v[0].frames[0],
            [0x01, 0x03, 0x00, 0x10, 0x00, 0x02, 0xC5, 0xCE]
        );
        let entry = "test_vector #0 ('torque').frames[0]";
        for frame in [
            "01 03 00 10 00 02 C5 CF", // CRC
            "01 03 00 10 00 01 85 CF", // one register of two
            "01 03 00 11 00 02 94 0E", // another address
            "01 06 00 10 FC 18 C9 05", // a one-register write of a two-register signal's word
            "01 03 02 FC 18 F9 4E",    // a reply of other registers
            "01 03 0x 10 00 02 C5 CE", // not hex
        ] {
            let text = format!(
                "signal = \"torque\"\nregisters = [0xFC18, 0xFFFF]\nvalue = -1000\nframes = [\"{frame}\"]"
            );
            assert_eq!(field_of(vectors(&text)), entry, "{frame}");
        }
    }
}
