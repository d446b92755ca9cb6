//! The T7's register state and what each register reads: stored configuration, the torque
//! amplifier's voltage on the torque input, the encoder on the quadrature counter, the
//! calibration block in flash. Every address comes from the DAQ profile.

use super::DaqSimOptions;
use crate::bench::Bench;
use protocols::daq::{AinCalibration, DaqProfile, DaqRegister, DaqType};
use std::collections::HashMap;
use tokio_modbus::ExceptionCode;

/// The emulation's factory calibration: the T7's nominal ±10 V set (datasheet 20.0.1) for all
/// four gains, DACs 1:1. A real device's constants differ slightly; clients read them.
pub(crate) const CAL: AinCalibration = AinCalibration {
    positive_slope: 0.000315805780,
    negative_slope: -0.000315805800,
    center: 33523.0,
    offset: -10.586956522,
};

/// Register state of one emulated DAQ.
#[derive(Debug)]
pub(crate) struct DaqImage {
    /// Written values by address (start of each value), raw.
    stored: HashMap<u16, u32>,
    /// Counter value at the last `_AND_RESET` read.
    counter_zero: i64,
    /// Upper 16 bits of the last 32-bit value streamed.
    pub(crate) capture_16: u16,
    /// Noise generator state (xorshift).
    rng: u64,
    /// `LAST_ERR_DETAIL`: the LabJack error code of the last refused request (0 where the
    /// emulation has no specific code).
    pub(crate) last_error: u16,
}

/// LabJack error codes (ljm_constants.json "errors") the emulation reports.
pub(crate) const AIN_RANGE_INVALID: u16 = 2370;
/// The stream's configuration cannot run.
pub(crate) const STREAM_CONFIG_INVALID: u16 = 2606;

impl DaqImage {
    pub(crate) fn new(p: &DaqProfile, seed: u64) -> DaqImage {
        let mut stored = HashMap::new();
        for ch in 0..p.ain.channels {
            if let (Ok(r), Ok(n)) = (
                p.address("AIN#_RANGE", ch),
                p.address("AIN#_NEGATIVE_CH", ch),
            ) {
                stored.insert(r, (p.ain.ranges_v[0] as f32).to_bits());
                stored.insert(n, u32::from(p.ain.single_ended_negative_ch));
            }
        }
        DaqImage {
            stored,
            counter_zero: 0,
            capture_16: 0,
            rng: seed | 1,
            last_error: 0,
        }
    }

    pub(crate) fn stored(&self, p: &DaqProfile, name: &str, index: u16) -> u32 {
        p.address(name, index)
            .ok()
            .and_then(|a| self.stored.get(&a).copied())
            .unwrap_or(0)
    }

    fn noise(&mut self) -> f64 {
        // xorshift64*, two uniforms → one Gaussian (Box–Muller).
        let mut u = || {
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            ((self.rng.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (a, b) = (u(), u());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }

    /// AIN `ch` in volts now: the torque amplifier on the torque channel, 0 V elsewhere, plus
    /// the amplifier's noise, clipped to ±10 V.
    pub(crate) fn ain_volts(&mut self, ch: u16, bench: &Bench, o: &DaqSimOptions) -> f64 {
        let v = if ch == o.torque_ain {
            bench.feedback().sensor_torque_nm / o.nm_per_v + o.offset_v
        } else {
            0.0
        };
        (v + o.noise_v * self.noise()).clamp(-10.0, 10.0)
    }

    fn quadrature_on(&self, p: &DaqProfile) -> bool {
        let q = &p.quadrature;
        [q.phase_a_dio, q.phase_b_dio].iter().all(|d| {
            self.stored(p, "DIO#_EF_ENABLE", *d) == 1
                && self.stored(p, "DIO#_EF_INDEX", *d) == q.ef_index
        })
    }

    /// The quadrature count (0 until the counter is configured).
    pub(crate) fn counter(&self, p: &DaqProfile, bench: &Bench) -> i64 {
        if !self.quadrature_on(p) {
            return 0;
        }
        bench.feedback().position_counts - self.counter_zero
    }

    /// The raw value a read of `reg`[`i`] returns.
    pub(crate) fn read(
        &mut self,
        p: &DaqProfile,
        reg: &DaqRegister,
        i: u16,
        bench: &Bench,
        o: &DaqSimOptions,
    ) -> Result<u32, ExceptionCode> {
        if reg.access == "w" {
            return Err(ExceptionCode::IllegalDataAddress);
        }
        let f = |v: f64| (v as f32).to_bits();
        Ok(match reg.name.as_str() {
            "PRODUCT_ID" => p.device.product_id.to_bits(),
            "SERIAL_NUMBER" => 47_000_001,
            "AIN#" => f(CAL.volts(CAL.code(self.ain_volts(i, bench, o)))),
            "DIO#_EF_READ_A" if i == p.quadrature.phase_a_dio => {
                self.counter(p, bench) as i32 as u32
            }
            "DIO#_EF_READ_A_AND_RESET" if i == p.quadrature.phase_a_dio => {
                let c = self.counter(p, bench);
                self.counter_zero += c;
                c as i32 as u32
            }
            "STREAM_DATA_CAPTURE_16" => u32::from(self.capture_16),
            "LAST_ERR_DETAIL" => u32::from(self.last_error),
            "CORE_TIMER" => (bench.feedback().t_s * 40e6) as u64 as u32,
            "INTERNAL_FLASH_READ" => self.flash_word(p, i),
            _ => self.stored(p, &reg.name, i),
        })
    }

    /// Calibration block as flash words: index `i` of a read that started at the pointer.
    fn flash_word(&self, p: &DaqProfile, i: u16) -> u32 {
        let ptr = self.stored(p, "INTERNAL_FLASH_READ_POINTER", 0);
        let k = ptr.wrapping_sub(p.calibration.flash_address) / 4 + u32::from(i);
        let set = [
            CAL.positive_slope,
            CAL.negative_slope,
            CAL.center,
            CAL.offset,
        ];
        let v = match k {
            0..=31 => set[(k % 4) as usize],
            32 | 34 => 1.0,
            _ => 0.0,
        };
        (v as f32).to_bits()
    }

    /// Stores a write, refusing read-only registers, DAC voltages outside the DAC's range and
    /// AIN ranges the device does not have.
    pub(crate) fn write(
        &mut self,
        p: &DaqProfile,
        address: u16,
        raw: u32,
    ) -> Result<(), ExceptionCode> {
        let (reg, _) = p
            .at_address(address)
            .ok_or(ExceptionCode::IllegalDataAddress)?;
        let v = f64::from(f32::from_bits(raw));
        let refused = match reg.name.as_str() {
            _ if reg.access == "r" => Some((0, ExceptionCode::IllegalDataAddress)),
            "DAC#" if !(p.dac.min_v..=p.dac.max_v).contains(&v) => {
                Some((0, ExceptionCode::IllegalDataValue))
            }
            "AIN#_RANGE" if !p.ain.ranges_v.contains(&v) => {
                Some((AIN_RANGE_INVALID, ExceptionCode::IllegalDataValue))
            }
            _ => None,
        };
        if let Some((code, e)) = refused {
            self.last_error = code;
            return Err(e);
        }
        self.stored.insert(address, raw);
        Ok(())
    }
}

/// Words of a raw value of type `ty`, high word first.
pub(crate) fn words(ty: DaqType, raw: u32) -> Vec<u16> {
    match ty {
        DaqType::U16 => vec![raw as u16],
        DaqType::U32 | DaqType::F32 => vec![(raw >> 16) as u16, raw as u16],
    }
}
