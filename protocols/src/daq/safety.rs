//! The DAQ's outputs that command a drive (a DAC on its analog torque input, a digital line on
//! its enable input) and how they are made safe: by the client at every stop, read back, and
//! by the device's own watchdog when the client is gone (LabJack's `WATCHDOG_*_DEFAULT`
//! registers: after `timeout` seconds without Modbus traffic the device sets DAC0 and the
//! chosen digital lines to their defaults).

use super::client::DaqClient;
use crate::error::Error;

/// The outputs wired to a drive, and their safe values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriveOutputs {
    /// The DAC on the drive's analog command input, `n` of DACn.
    pub dac: u16,
    /// Its voltage of zero torque \[V\].
    pub safe_v: f64,
    /// The digital line on the drive's enable input (high = enabled), `n` of DIOn; `None`:
    /// the drive's enable stays on Modbus.
    pub enable_dio: Option<u16>,
}

/// What the outputs read back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputsRead {
    /// The DAC \[V\].
    pub dac_v: f64,
    /// The enable line's state (`None`: no enable line).
    pub enable: Option<bool>,
}

/// A DAC read back within this of what was written is taken \[V\] (the register is a float32).
const DAC_TOLERANCE_V: f64 = 1e-4;

impl DaqClient {
    /// Sets digital line `line` as an output at `high`, each register read back.
    pub async fn set_dio(&mut self, line: u16, high: bool) -> Result<(), Error> {
        let bit = 1u32 << line;
        let dir = self.read_u32("DIO_DIRECTION", 0).await?;
        self.write_checked("DIO_DIRECTION", 0, dir | bit).await?;
        let state = self.read_u32("DIO_STATE", 0).await?;
        let state = if high { state | bit } else { state & !bit };
        self.write_checked("DIO_STATE", 0, state).await
    }

    /// Digital line `line`'s state.
    pub async fn read_dio(&mut self, line: u16) -> Result<bool, Error> {
        Ok(self.read_u32("DIO_STATE", 0).await? & (1 << line) != 0)
    }

    /// What `o`'s outputs read now.
    pub async fn read_outputs(&mut self, o: &DriveOutputs) -> Result<OutputsRead, Error> {
        let dac_v = self.read_dac(o.dac).await?;
        let enable = match o.enable_dio {
            Some(line) => Some(self.read_dio(line).await?),
            None => None,
        };
        Ok(OutputsRead { dac_v, enable })
    }

    /// The DAC to its zero-torque voltage and the enable line low, confirmed by reading both
    /// back; returns what was read.
    pub async fn make_outputs_safe(&mut self, o: &DriveOutputs) -> Result<OutputsRead, Error> {
        self.write_dac(o.dac, o.safe_v).await?;
        if let Some(line) = o.enable_dio {
            self.set_dio(line, false).await?;
        }
        let read = self.read_outputs(o).await?;
        if (read.dac_v - o.safe_v).abs() > DAC_TOLERANCE_V || read.enable == Some(true) {
            return Err(Error::Sequence {
                sequence: "DAQ safe outputs".into(),
                step: 0,
                reason: format!(
                    "DAC{} reads {} V (safe: {} V), enable line reads {:?}",
                    o.dac, read.dac_v, o.safe_v, read.enable
                ),
            });
        }
        Ok(read)
    }

    /// Arms the device's watchdog: after `timeout_s` seconds without Modbus traffic DAC0
    /// goes to `o.safe_v` and the enable line low. Read first, and when anything differs
    /// disabled, each register written and read back, enabled last.
    pub async fn arm_watchdog(&mut self, o: &DriveOutputs, timeout_s: u32) -> Result<(), Error> {
        if o.dac != 0 {
            return Err(Error::Unsupported {
                profile: self.profile().device.name.clone(),
                what: format!("a watchdog default for DAC{} (only DAC0 has one)", o.dac),
            });
        }
        if timeout_s == 0 {
            return Err(Error::OutOfRange {
                signal: "DAQ watchdog timeout_s".into(),
                value: 0.0,
                unit: "s".into(),
                limit: "at least 1 s (the device counts whole seconds)".into(),
            });
        }
        let mut want = vec![
            ("WATCHDOG_TIMEOUT_S_DEFAULT", timeout_s),
            ("WATCHDOG_DAC0_DEFAULT", (o.safe_v as f32).to_bits()),
            ("WATCHDOG_DAC0_ENABLE_DEFAULT", 1),
        ];
        if let Some(line) = o.enable_dio {
            want.extend([
                ("WATCHDOG_DIO_DIRECTION_DEFAULT", 1u32 << line),
                ("WATCHDOG_DIO_STATE_DEFAULT", 0),
                ("WATCHDOG_DIO_ENABLE_DEFAULT", 1),
            ]);
        }
        // A T7 keeps these in flash: rewritten only when they differ.
        let mut same = self.read_u32("WATCHDOG_ENABLE_DEFAULT", 0).await? == 1;
        for (name, v) in &want {
            same &= self.read_u32(name, 0).await? == *v;
        }
        if same {
            return Ok(());
        }
        self.write_checked("WATCHDOG_ENABLE_DEFAULT", 0, 0).await?;
        for (name, v) in want {
            self.write_checked(name, 0, v).await?;
        }
        self.write_checked("WATCHDOG_ENABLE_DEFAULT", 0, 1).await
    }
}
