//! One signal of the register map and its register ↔ SI conversions; status patterns.

use super::{Access, BitRange, DataType, RawValue, Role, Table, Unit, WordOrder, decode, encode};
use crate::error::Error;

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
