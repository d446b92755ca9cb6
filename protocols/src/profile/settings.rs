//! The `[device]`, `[transport]` and `[timing]` tables: identity, serial line and timing.

use std::time::Duration;

use super::{DeviceKind, Protocol};

/// `[device]`: what the profile describes.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Human name.
    pub name: String,
    /// Drive or torque sensor.
    pub kind: DeviceKind,
    /// Manufacturer, if any.
    pub vendor: Option<String>,
    /// Model designation, if any.
    pub model: Option<String>,
    /// Where the register map comes from (manual, page).
    pub source: Option<String>,
    /// Free notes.
    pub notes: Option<String>,
    /// Protocols the device speaks.
    pub protocols: Vec<Protocol>,
}

/// Serial parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parity {
    /// No parity bit.
    None,
    /// Even parity.
    Even,
    /// Odd parity.
    Odd,
}

/// Serial line settings (RTU).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SerialSettings {
    /// Baud rate.
    pub baud: u32,
    /// Parity.
    pub parity: Parity,
    /// Data bits (7 or 8).
    pub data_bits: u8,
    /// Stop bits (1 or 2).
    pub stop_bits: u8,
}

impl SerialSettings {
    /// 115200 baud, 8E1.
    pub fn default_rtu() -> SerialSettings {
        SerialSettings {
            baud: 115_200,
            parity: Parity::Even,
            data_bits: 8,
            stop_bits: 1,
        }
    }

    /// Bits per character on the wire (start + data + parity + stop).
    pub fn bits_per_char(&self) -> u32 {
        1 + u32::from(self.data_bits)
            + u32::from(self.parity != Parity::None)
            + u32::from(self.stop_bits)
    }

    /// Duration of one character at `baud`.
    pub fn char_time(&self) -> Duration {
        Duration::from_secs_f64(f64::from(self.bits_per_char()) / f64::from(self.baud))
    }

    /// The Modbus serial-line t3.5 silence: 3.5 characters up to 19200 baud, 1.75 ms above.
    pub fn t35(&self) -> Duration {
        if self.baud > 19_200 {
            Duration::from_micros(1750)
        } else {
            self.char_time().mul_f64(3.5)
        }
    }
}

/// `[transport]`: unit id and capabilities.
#[derive(Debug, Clone, PartialEq)]
pub struct TransportSettings {
    /// Modbus unit (slave) id.
    pub unit_id: u8,
    /// Default serial settings for RTU.
    pub serial: Option<SerialSettings>,
    /// FC23 (read/write multiple registers) is supported.
    pub fc23: bool,
    /// Most registers one read may cover (≤ 125).
    pub max_read_registers: u16,
    /// Most registers one write may cover (≤ 123).
    pub max_write_registers: u16,
}

/// `[timing]`: per-device timing.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Timeout of one request.
    pub timeout: Duration,
    /// Longest the device may take to answer; waited out when resynchronising.
    pub max_response: Duration,
    /// Silence between frames; `None` = the serial t3.5.
    pub inter_frame_gap: Option<Duration>,
    /// Device turnaround (reply delay) the simulator emulates and budgets assume.
    pub turnaround: Duration,
    /// Retries the control loop may spend per cycle (this crate never retries).
    pub retries: u32,
    /// Highest rate at which commands should be written (EEPROM-backed parameters), if limited.
    pub max_write_rate_hz: Option<f64>,
}

impl Timing {
    /// The silence to keep between frames on a serial line with `serial` settings.
    pub fn gap(&self, serial: Option<&SerialSettings>) -> Duration {
        self.inter_frame_gap.unwrap_or_else(|| {
            serial
                .copied()
                .unwrap_or_else(SerialSettings::default_rtu)
                .t35()
        })
    }
}
