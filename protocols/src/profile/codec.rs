//! Register encoding: data types, word orders, raw values, and the Modbus RTU CRC.
//!
//! A multi-register value is first written as its big-endian bytes `A B C D [E F G H]` (A most
//! significant). The word order then says how those bytes sit in the registers, with the
//! libmodbus names: `ABCD` high word first (Oriental AZ, the weighing transmitter), `CDAB` low
//! word first (Delta ASDA), `BADC` high word first with the bytes of each word swapped, `DCBA`
//! fully little-endian. For 64-bit types the same rule applies to four words. 16-bit types are
//! one register and ignore the word order.

use std::fmt;

/// The type of the value held in one or more registers (or one coil).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// Unsigned 16-bit, one register.
    U16,
    /// Signed 16-bit (two's complement), one register.
    I16,
    /// Unsigned 32-bit, two registers.
    U32,
    /// Signed 32-bit, two registers.
    I32,
    /// Unsigned 64-bit, four registers.
    U64,
    /// Signed 64-bit, four registers.
    I64,
    /// IEEE 754 single, two registers.
    F32,
    /// IEEE 754 double, four registers.
    F64,
    /// A coil or discrete input, or one bit of a register (`bits = [n, n]`), or a register that
    /// is true when non-zero.
    Bool,
    /// An unsigned bit field `bits = [lo, hi]` (inclusive) of one register.
    Bits,
}

impl DataType {
    /// Every type, for exhaustive tests.
    pub const ALL: [DataType; 10] = [
        DataType::U16,
        DataType::I16,
        DataType::U32,
        DataType::I32,
        DataType::U64,
        DataType::I64,
        DataType::F32,
        DataType::F64,
        DataType::Bool,
        DataType::Bits,
    ];

    /// The profile spelling.
    pub fn name(self) -> &'static str {
        match self {
            DataType::U16 => "u16",
            DataType::I16 => "i16",
            DataType::U32 => "u32",
            DataType::I32 => "i32",
            DataType::U64 => "u64",
            DataType::I64 => "i64",
            DataType::F32 => "f32",
            DataType::F64 => "f64",
            DataType::Bool => "bool",
            DataType::Bits => "bits",
        }
    }

    /// Parses the profile spelling.
    pub fn parse(s: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Number of 16-bit registers the type occupies.
    pub fn registers(self) -> u16 {
        match self {
            DataType::U16 | DataType::I16 | DataType::Bool | DataType::Bits => 1,
            DataType::U32 | DataType::I32 | DataType::F32 => 2,
            DataType::U64 | DataType::I64 | DataType::F64 => 4,
        }
    }

    /// True for the integer types (including bool and bits).
    pub fn is_integer(self) -> bool {
        !matches!(self, DataType::F32 | DataType::F64)
    }

    /// The range of raw values the type holds, as f64 (bits fields are limited further by their
    /// width).
    pub fn raw_range(self) -> (f64, f64) {
        match self {
            DataType::U16 => (0.0, f64::from(u16::MAX)),
            DataType::I16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
            DataType::U32 => (0.0, f64::from(u32::MAX)),
            DataType::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
            DataType::U64 => (0.0, u64::MAX as f64),
            DataType::I64 => (i64::MIN as f64, i64::MAX as f64),
            DataType::F32 => (f64::from(f32::MIN), f64::from(f32::MAX)),
            DataType::F64 => (f64::MIN, f64::MAX),
            DataType::Bool => (0.0, 1.0),
            DataType::Bits => (0.0, f64::from(u16::MAX)),
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the bytes of a multi-register value are laid out over its registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WordOrder {
    /// High word first, bytes in order (big-endian).
    #[default]
    Abcd,
    /// Low word first, bytes within a word in order.
    Cdab,
    /// High word first, bytes within each word swapped.
    Badc,
    /// Low word first, bytes swapped (little-endian).
    Dcba,
}

impl WordOrder {
    /// Every word order, for exhaustive tests.
    pub const ALL: [WordOrder; 4] = [
        WordOrder::Abcd,
        WordOrder::Cdab,
        WordOrder::Badc,
        WordOrder::Dcba,
    ];

    /// The profile spelling.
    pub fn name(self) -> &'static str {
        match self {
            WordOrder::Abcd => "ABCD",
            WordOrder::Cdab => "CDAB",
            WordOrder::Badc => "BADC",
            WordOrder::Dcba => "DCBA",
        }
    }

    /// Parses the profile spelling (upper case).
    pub fn parse(s: &str) -> Option<WordOrder> {
        WordOrder::ALL.into_iter().find(|o| o.name() == s)
    }

    fn words_reversed(self) -> bool {
        matches!(self, WordOrder::Cdab | WordOrder::Dcba)
    }

    fn bytes_swapped(self) -> bool {
        matches!(self, WordOrder::Badc | WordOrder::Dcba)
    }

    /// Lays big-endian bytes (even length) out as registers.
    pub fn bytes_to_registers(self, be_bytes: &[u8]) -> Vec<u16> {
        let mut words: Vec<u16> = be_bytes
            .chunks_exact(2)
            .map(|c| {
                let w = u16::from_be_bytes([c[0], c[1]]);
                if self.bytes_swapped() {
                    w.swap_bytes()
                } else {
                    w
                }
            })
            .collect();
        if self.words_reversed() {
            words.reverse();
        }
        words
    }

    /// Gathers registers back into big-endian bytes.
    pub fn registers_to_bytes(self, regs: &[u16]) -> Vec<u8> {
        let mut words: Vec<u16> = regs.to_vec();
        if self.words_reversed() {
            words.reverse();
        }
        words
            .into_iter()
            .flat_map(|w| {
                let w = if self.bytes_swapped() {
                    w.swap_bytes()
                } else {
                    w
                };
                w.to_be_bytes()
            })
            .collect()
    }
}

impl fmt::Display for WordOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A value as it sits in the registers, before scale and offset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawValue {
    /// u16, u32, u64, bits.
    Unsigned(u64),
    /// i16, i32, i64.
    Signed(i64),
    /// f32 (widened), f64.
    Float(f64),
    /// bool.
    Bool(bool),
}

impl RawValue {
    /// The value as f64 (u64/i64 beyond 2^53 lose precision).
    pub fn as_f64(self) -> f64 {
        match self {
            RawValue::Unsigned(u) => u as f64,
            RawValue::Signed(i) => i as f64,
            RawValue::Float(x) => x,
            RawValue::Bool(b) => f64::from(u8::from(b)),
        }
    }

    /// The value as an integer bit pattern for masks (floats: `None`).
    pub fn as_bits(self) -> Option<u64> {
        match self {
            RawValue::Unsigned(u) => Some(u),
            RawValue::Signed(i) => Some(i as u64),
            RawValue::Float(_) => None,
            RawValue::Bool(b) => Some(u64::from(b)),
        }
    }
}

/// Where a bool or bits value sits inside its register (inclusive bit range).
pub type BitRange = (u8, u8);

fn field_mask(bits: BitRange) -> u16 {
    let width = u32::from(bits.1 - bits.0) + 1;
    let m = if width >= 16 {
        u16::MAX
    } else {
        (1u16 << width) - 1
    };
    m << bits.0
}

/// Decodes `regs` (exactly `ty.registers()` long) into a raw value.
///
/// Returns `None` when the slice length is wrong.
pub fn decode(
    ty: DataType,
    order: WordOrder,
    bits: Option<BitRange>,
    regs: &[u16],
) -> Option<RawValue> {
    if regs.len() != usize::from(ty.registers()) {
        return None;
    }
    let bytes = order.registers_to_bytes(regs);
    Some(match ty {
        DataType::U16 => RawValue::Unsigned(u64::from(regs[0])),
        DataType::I16 => RawValue::Signed(i64::from(regs[0] as i16)),
        DataType::U32 => {
            RawValue::Unsigned(u64::from(u32::from_be_bytes(bytes[..4].try_into().ok()?)))
        }
        DataType::I32 => {
            RawValue::Signed(i64::from(i32::from_be_bytes(bytes[..4].try_into().ok()?)))
        }
        DataType::U64 => RawValue::Unsigned(u64::from_be_bytes(bytes[..8].try_into().ok()?)),
        DataType::I64 => RawValue::Signed(i64::from_be_bytes(bytes[..8].try_into().ok()?)),
        DataType::F32 => {
            RawValue::Float(f64::from(f32::from_be_bytes(bytes[..4].try_into().ok()?)))
        }
        DataType::F64 => RawValue::Float(f64::from_be_bytes(bytes[..8].try_into().ok()?)),
        DataType::Bool => match bits {
            Some(b) => RawValue::Bool(regs[0] & field_mask(b) != 0),
            None => RawValue::Bool(regs[0] != 0),
        },
        DataType::Bits => {
            let b = bits.unwrap_or((0, 15));
            RawValue::Unsigned(u64::from((regs[0] & field_mask(b)) >> b.0))
        }
    })
}

/// Encodes a raw value into registers. Integers are range-checked against the type (returns
/// `None` when out of range or of the wrong kind); floats are converted (f32 rounds).
///
/// Bool and bits values are placed at their bit position with the other bits zero; writing a
/// field into a shared register needs a read-modify-write, which profiles do not allow.
pub fn encode(
    ty: DataType,
    order: WordOrder,
    bits: Option<BitRange>,
    raw: RawValue,
) -> Option<Vec<u16>> {
    let int = |r: RawValue| -> Option<i128> {
        match r {
            RawValue::Unsigned(u) => Some(i128::from(u)),
            RawValue::Signed(i) => Some(i128::from(i)),
            RawValue::Bool(b) => Some(i128::from(u8::from(b))),
            RawValue::Float(_) => None,
        }
    };
    let be: Vec<u8> = match ty {
        DataType::U16 => return Some(vec![u16::try_from(int(raw)?).ok()?]),
        DataType::I16 => return Some(vec![i16::try_from(int(raw)?).ok()? as u16]),
        DataType::U32 => u32::try_from(int(raw)?).ok()?.to_be_bytes().to_vec(),
        DataType::I32 => i32::try_from(int(raw)?).ok()?.to_be_bytes().to_vec(),
        DataType::U64 => u64::try_from(int(raw)?).ok()?.to_be_bytes().to_vec(),
        DataType::I64 => i64::try_from(int(raw)?).ok()?.to_be_bytes().to_vec(),
        DataType::F32 => (raw.as_f64() as f32).to_be_bytes().to_vec(),
        DataType::F64 => raw.as_f64().to_be_bytes().to_vec(),
        DataType::Bool => {
            let on = int(raw)? != 0;
            let word = match bits {
                Some(b) => {
                    if on {
                        1u16 << b.0
                    } else {
                        0
                    }
                }
                None => u16::from(on),
            };
            return Some(vec![word]);
        }
        DataType::Bits => {
            let b = bits.unwrap_or((0, 15));
            let v = u16::try_from(int(raw)?).ok()?;
            let shifted = u32::from(v) << b.0;
            if shifted & !u32::from(field_mask(b)) != 0 {
                return None;
            }
            return Some(vec![shifted as u16]);
        }
    };
    Some(order.bytes_to_registers(&be))
}

/// The Modbus RTU CRC-16 (polynomial 0xA001 reflected, initial 0xFFFF). On the wire it is sent
/// low byte first.
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &b in bytes {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xA001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// True when the last two bytes of `frame` are the CRC of the rest (low byte first).
pub fn crc_ok(frame: &[u8]) -> bool {
    if frame.len() < 4 {
        return false;
    }
    let (body, tail) = frame.split_at(frame.len() - 2);
    crc16(body).to_le_bytes() == [tail[0], tail[1]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_orders_of_a_known_float() {
        // 123.456f32 = 0x42F6E979: A=42 B=F6 C=E9 D=79 (libmodbus man pages' naming).
        let be = 123.456f32.to_be_bytes();
        assert_eq!(be, [0x42, 0xF6, 0xE9, 0x79]);
        assert_eq!(WordOrder::Abcd.bytes_to_registers(&be), [0x42F6, 0xE979]);
        assert_eq!(WordOrder::Cdab.bytes_to_registers(&be), [0xE979, 0x42F6]);
        assert_eq!(WordOrder::Badc.bytes_to_registers(&be), [0xF642, 0x79E9]);
        assert_eq!(WordOrder::Dcba.bytes_to_registers(&be), [0x79E9, 0xF642]);
    }

    #[test]
    fn delta_low_word_first_and_az_high_word_first() {
        // Delta ASDA: P1-09 = 3000 written as [0x0BB8, 0x0000] (CDAB).
        let r = decode(DataType::I32, WordOrder::Cdab, None, &[0x0BB8, 0x0000]).unwrap();
        assert_eq!(r, RawValue::Signed(3000));
        // Oriental AZ: -1000 = FFFF FC18h, upper word first (ABCD).
        let regs = encode(
            DataType::I32,
            WordOrder::Abcd,
            None,
            RawValue::Signed(-1000),
        )
        .unwrap();
        assert_eq!(regs, [0xFFFF, 0xFC18]);
    }

    #[test]
    fn every_type_and_word_order_round_trips() {
        let ints: [i128; 7] = [0, 1, -1, 1000, -1000, 0x1234_5678, -0x1234_5678];
        for ty in DataType::ALL {
            for order in WordOrder::ALL {
                let bits = match ty {
                    DataType::Bits => Some((4, 11)),
                    DataType::Bool => Some((7, 7)),
                    _ => None,
                };
                let samples: Vec<RawValue> = match ty {
                    DataType::F32 => [0.0, 1.5, -2.25e-3, 3.4e38, f64::from(f32::MIN_POSITIVE)]
                        .map(RawValue::Float)
                        .to_vec(),
                    DataType::F64 => [0.0, 1.5, -2.25e-3, 1e300, std::f64::consts::PI]
                        .map(RawValue::Float)
                        .to_vec(),
                    DataType::Bool => vec![RawValue::Bool(false), RawValue::Bool(true)],
                    DataType::Bits => vec![RawValue::Unsigned(0), RawValue::Unsigned(0xA5)],
                    DataType::U16 | DataType::U32 | DataType::U64 => ints
                        .iter()
                        .filter(|&&i| i >= 0)
                        .map(|&i| RawValue::Unsigned(i as u64))
                        .chain([RawValue::Unsigned(match ty {
                            DataType::U16 => 0xFFFF,
                            DataType::U32 => 0xFFFF_FFFF,
                            _ => u64::MAX,
                        })])
                        .filter(|r| encode(ty, order, bits, *r).is_some())
                        .collect(),
                    _ => ints
                        .iter()
                        .map(|&i| RawValue::Signed(i as i64))
                        .chain([RawValue::Signed(match ty {
                            DataType::I16 => i64::from(i16::MIN),
                            DataType::I32 => i64::from(i32::MIN),
                            _ => i64::MIN,
                        })])
                        .filter(|r| encode(ty, order, bits, *r).is_some())
                        .collect(),
                };
                assert!(samples.len() >= 2, "{ty} {order}: too few samples");
                for raw in samples {
                    let regs = encode(ty, order, bits, raw)
                        .unwrap_or_else(|| panic!("{ty} {order}: encode {raw:?}"));
                    assert_eq!(regs.len(), usize::from(ty.registers()), "{ty} {order}");
                    let back = decode(ty, order, bits, &regs).unwrap();
                    let expect = match (ty, raw) {
                        (DataType::F32, RawValue::Float(x)) => RawValue::Float(f64::from(x as f32)),
                        _ => raw,
                    };
                    assert_eq!(back, expect, "{ty} {order}: {raw:?} -> {regs:04X?}");
                }
            }
        }
    }

    #[test]
    fn out_of_range_integers_are_refused() {
        assert!(encode(DataType::U16, WordOrder::Abcd, None, RawValue::Signed(-1)).is_none());
        assert!(
            encode(
                DataType::I16,
                WordOrder::Abcd,
                None,
                RawValue::Signed(40_000)
            )
            .is_none()
        );
        assert!(encode(DataType::I32, WordOrder::Abcd, None, RawValue::Float(1.0)).is_none());
        assert!(
            encode(
                DataType::Bits,
                WordOrder::Abcd,
                Some((0, 2)),
                RawValue::Unsigned(8)
            )
            .is_none()
        );
    }

    #[test]
    fn crc_of_manual_frames() {
        // Oriental AZ FAQ 0331: write -1000 to 0x1802.
        assert!(crc_ok(&[
            0x01, 0x10, 0x18, 0x02, 0x00, 0x02, 0x04, 0xFF, 0xFF, 0xFC, 0x18, 0x99, 0x58
        ]));
        // Weighing transmitter request and reply.
        assert!(crc_ok(&[0x01, 0x03, 0x00, 0x50, 0x00, 0x02, 0xC4, 0x1A]));
        assert!(crc_ok(&[
            0x01, 0x03, 0x04, 0xFF, 0xFF, 0xC1, 0xEF, 0xEA, 0x0B
        ]));
        assert!(!crc_ok(&[
            0x01, 0x03, 0x04, 0xFF, 0xFF, 0xC1, 0xEF, 0xEA, 0x0C
        ]));
    }
}
