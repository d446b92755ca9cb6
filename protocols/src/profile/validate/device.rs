//! `[device]`, `[transport]`, `[timing]` and `[encoding]`: the tables that stand alone.

use super::raw::{RawDevice, RawEncoding, RawSerial, RawTiming, RawTransport};
use super::{Ctx, ms};
use crate::error::Error;
use crate::profile::{
    Device, DeviceKind, Parity, Protocol, SerialSettings, Timing, TransportSettings, WordOrder,
};

/// `[device]`: a name, a kind, and the protocols (both Modbus variants unless listed).
pub(super) fn device(ctx: &Ctx<'_>, d: &RawDevice) -> Result<Device, Error> {
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
    Ok(Device {
        name: d.name.clone(),
        kind,
        vendor: d.vendor.clone(),
        model: d.model.clone(),
        source: d.source.clone(),
        notes: d.notes.clone(),
        protocols,
    })
}

/// `[transport]`: the unit id, the register counts one request may carry and the serial line.
pub(super) fn transport(ctx: &Ctx<'_>, t: &RawTransport) -> Result<TransportSettings, Error> {
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
        Some(s) => Some(serial(ctx, s)?),
    };
    Ok(TransportSettings {
        unit_id: t.unit_id as u8,
        serial,
        fc23: t.fc23,
        max_read_registers: t.max_read_registers as u16,
        max_write_registers: t.max_write_registers as u16,
    })
}

/// `[transport.serial]`: baud rate, parity and character format.
fn serial(ctx: &Ctx<'_>, s: &RawSerial) -> Result<SerialSettings, Error> {
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
    Ok(SerialSettings {
        baud: s.baud as u32,
        parity,
        data_bits: s.data_bits as u8,
        stop_bits: s.stop_bits as u8,
    })
}

/// `[timing]`: the reply timeout (100 ms unless given), the longest reply, the gaps and the
/// retries; the turnaround must leave room within the timeout.
pub(super) fn timing(ctx: &Ctx<'_>, tm: &RawTiming) -> Result<Timing, Error> {
    let timeout = ms(
        ctx,
        "timing.timeout_ms",
        tm.timeout_ms.unwrap_or(100.0),
        false,
    )?;
    let max_response = match tm.max_response_ms {
        Some(v) => ms(ctx, "timing.max_response_ms", v, false)?,
        None => timeout,
    };
    let inter_frame_gap = match tm.inter_frame_gap_ms {
        Some(v) => Some(ms(ctx, "timing.inter_frame_gap_ms", v, true)?),
        None => None,
    };
    let turnaround = ms(
        ctx,
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
    Ok(Timing {
        timeout,
        max_response,
        inter_frame_gap,
        turnaround,
        retries: retries as u32,
        max_write_rate_hz: tm.max_write_rate_hz,
    })
}

/// What `[encoding]` sets for every signal: the default word order and whether addresses are
/// written from 0 (PDU) or from 1 (the manuals' numbering).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Encoding {
    /// Word order of multi-register values unless a signal says otherwise.
    pub(super) word_order: WordOrder,
    /// 0 or 1, subtracted from every written address.
    pub(super) address_base: i64,
}

/// `[encoding]`.
pub(super) fn encoding(ctx: &Ctx<'_>, e: &RawEncoding) -> Result<Encoding, Error> {
    let word_order = match &e.word_order {
        None => WordOrder::Abcd,
        Some(s) => WordOrder::parse(s).ok_or_else(|| {
            Error::profile(
                ctx.file,
                "encoding.word_order",
                format!("'{s}' is not one of \"ABCD\", \"CDAB\", \"BADC\", \"DCBA\""),
            )
        })?,
    };
    let address_base = e.address_base;
    if address_base != 0 && address_base != 1 {
        return ctx.err(
            "encoding.address_base",
            format!("{address_base} must be 0 or 1"),
        );
    }
    Ok(Encoding {
        word_order,
        address_base,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, field_of, table};
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_device_is_named_and_speaks_both_modbus_variants_unless_told() {
        let d = device(&ctx(), &table("name = \"AC drive\"\nkind = \"drive\"")).unwrap();
        assert_eq!((d.name.as_str(), d.kind), ("AC drive", DeviceKind::Drive));
        assert_eq!(d.protocols, [Protocol::ModbusRtu, Protocol::ModbusTcp]);
        let d = device(
            &ctx(),
            &table("name = \"s\"\nkind = \"torque_sensor\"\nprotocols = [\"modbus-tcp\"]"),
        )
        .unwrap();
        assert_eq!(
            (d.kind, d.protocols),
            (DeviceKind::TorqueSensor, vec![Protocol::ModbusTcp])
        );
        for (text, field) in [
            ("name = \" \"\nkind = \"drive\"", "device.name"),
            ("name = \"d\"\nkind = \"motor\"", "device.kind"),
            (
                "name = \"d\"\nkind = \"drive\"\nprotocols = [\"modbus-tcp\", \"can\"]",
                "device.protocols[1]",
            ),
        ] {
            assert_eq!(field_of(device(&ctx(), &table(text))), field, "{text}");
        }
    }

    #[test]
    fn a_transport_holds_the_unit_the_request_sizes_and_the_serial_line() {
        let t = transport(
            &ctx(),
            &table("unit_id = 247\nfc23 = true\nmax_read_registers = 60\nserial = { baud = 19200, parity = \"none\", stop_bits = 2 }"),
        )
        .unwrap();
        assert_eq!(
            (
                t.unit_id,
                t.fc23,
                t.max_read_registers,
                t.max_write_registers
            ),
            (247, true, 60, 123)
        );
        let s = t.serial.unwrap();
        assert_eq!(
            (s.baud, s.parity, s.data_bits, s.stop_bits),
            (19200, Parity::None, 8, 2)
        );
        let t = transport(&ctx(), &table("")).unwrap();
        assert_eq!((t.unit_id, t.serial, t.max_read_registers), (1, None, 125));
        for (text, field) in [
            ("unit_id = 248", "transport.unit_id"),
            ("max_read_registers = 126", "transport.max_read_registers"),
            ("max_write_registers = 0", "transport.max_write_registers"),
            ("serial = { baud = 299 }", "transport.serial.baud"),
            (
                "serial = { baud = 9600, parity = \"mark\" }",
                "transport.serial.parity",
            ),
            (
                "serial = { baud = 9600, data_bits = 9 }",
                "transport.serial.data_bits",
            ),
            (
                "serial = { baud = 9600, stop_bits = 3 }",
                "transport.serial.stop_bits",
            ),
        ] {
            assert_eq!(field_of(transport(&ctx(), &table(text))), field, "{text}");
        }
    }

    #[test]
    fn timing_defaults_to_a_100_ms_timeout_and_keeps_the_turnaround_within_it() {
        let t = timing(&ctx(), &table("")).unwrap();
        assert_eq!(
            (t.timeout, t.max_response, t.turnaround),
            (
                Duration::from_millis(100),
                Duration::from_millis(100),
                Duration::ZERO
            )
        );
        assert_eq!(
            (t.inter_frame_gap, t.retries, t.max_write_rate_hz),
            (None, 0, None)
        );
        let t = timing(
            &ctx(),
            &table("timeout_ms = 50\nmax_response_ms = 20\ninter_frame_gap_ms = 0\nturnaround_ms = 2.5\nretries = 3\nmax_write_rate_hz = 200"),
        )
        .unwrap();
        assert_eq!(t.max_response, Duration::from_millis(20));
        assert_eq!(
            (t.inter_frame_gap, t.turnaround),
            (Some(Duration::ZERO), Duration::from_micros(2500))
        );
        assert_eq!((t.retries, t.max_write_rate_hz), (3, Some(200.0)));
        for (text, field) in [
            ("timeout_ms = 0", "timing.timeout_ms"),
            ("timeout_ms = 3600001", "timing.timeout_ms"),
            ("max_response_ms = -1", "timing.max_response_ms"),
            ("inter_frame_gap_ms = nan", "timing.inter_frame_gap_ms"),
            (
                "timeout_ms = 10\nturnaround_ms = 10",
                "timing.turnaround_ms",
            ),
            ("retries = 11", "timing.retries"),
            ("max_write_rate_hz = 0", "timing.max_write_rate_hz"),
        ] {
            assert_eq!(field_of(timing(&ctx(), &table(text))), field, "{text}");
        }
    }

    #[test]
    fn encoding_sets_the_word_order_and_address_base() {
        let e = encoding(&ctx(), &table("word_order = \"CDAB\"\naddress_base = 1")).unwrap();
        assert_eq!(
            e,
            Encoding {
                word_order: WordOrder::Cdab,
                address_base: 1
            }
        );
        let e = encoding(&ctx(), &table("")).unwrap();
        assert_eq!(
            e,
            Encoding {
                word_order: WordOrder::Abcd,
                address_base: 0
            }
        );
        assert_eq!(
            field_of(encoding(&ctx(), &table("word_order = \"ACBD\""))),
            "encoding.word_order"
        );
        assert_eq!(
            field_of(encoding(&ctx(), &table("address_base = 40001"))),
            "encoding.address_base"
        );
    }
}
