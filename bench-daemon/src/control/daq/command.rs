//! The loop's command through the DAQ's DAC (`[daq.drive_command]`): in the drive's analog
//! torque mode each tick's torque, in its analog velocity mode each tick's speed setpoint,
//! already within the bench's limits, becomes the DAC's voltage by the drive's analog scale,
//! `center_v + command / scale`, written in one Modbus request instead of the drive's Modbus
//! setpoint.

use super::DaqIo;
use protocols::{Error, Mode};

impl DaqIo {
    /// Whether the DAC carries the drive's command.
    pub fn commands_drive(&self) -> bool {
        self.outputs.is_some() && self.drive_scale.is_some()
    }

    /// The mode the DAC commands (`None` without a drive command): the drive's only one.
    pub fn analog_mode(&self) -> Option<Mode> {
        self.outputs?;
        self.drive_scale.map(|(m, _)| m)
    }

    /// The DAC's voltage of command `value` (N m or rad/s, by the analog mode) \[V\] (`None`
    /// without a drive command).
    pub fn volts_of(&self, value: f64) -> Option<f64> {
        let (_, per_v) = self.drive_scale?;
        Some(self.outputs?.safe_v + value / per_v)
    }

    /// Writes `value` to the DAC (one request, which also feeds the DAQ's watchdog). A
    /// voltage outside the DAC's range is refused before anything is sent, as a limit error.
    ///
    /// The write does not count as the outputs' read back: [`DaqIo::keep_alive`] still reads
    /// them every quarter of the watchdog's timeout, so an enable line the watchdog or a
    /// restart lowered is seen while the DAC is written every tick.
    pub async fn command(&mut self, value: f64) -> Result<(), Error> {
        let (Some(o), Some(volts)) = (self.outputs, self.volts_of(value)) else {
            return Err(Error::Protocol {
                context: "DAQ drive command".into(),
                reason: "no [daq.drive_command]".into(),
            });
        };
        self.client.write_dac(o.dac, volts).await
    }
}
