//! The loop's torque command through the DAQ's DAC (`[daq.drive_command]`, the drive in its
//! analog torque mode): each tick's torque, already within the bench's limits, becomes the
//! DAC's voltage by the drive's analog scale, `center_v + torque / nm_per_v`, written in one
//! Modbus request, instead of the drive's Modbus setpoint.

use super::DaqIo;
use protocols::Error;

impl DaqIo {
    /// Whether the DAC carries the drive's torque command.
    pub fn commands_drive(&self) -> bool {
        self.outputs.is_some() && self.drive_nm_per_v.is_some()
    }

    /// The DAC's voltage of torque `nm` \[V\] (`None` without a drive command).
    pub fn volts_of(&self, nm: f64) -> Option<f64> {
        Some(self.outputs?.safe_v + nm / self.drive_nm_per_v?)
    }

    /// Writes torque `nm` to the DAC (one request, which also feeds the DAQ's watchdog). A
    /// voltage outside the DAC's range is refused before anything is sent, as a limit error.
    ///
    /// The write does not count as the outputs' read back: [`DaqIo::keep_alive`] still reads
    /// them every quarter of the watchdog's timeout, so an enable line the watchdog or a
    /// restart lowered is seen while the DAC is written every tick.
    pub async fn command_torque(&mut self, nm: f64) -> Result<(), Error> {
        let (Some(o), Some(volts)) = (self.outputs, self.volts_of(nm)) else {
            return Err(Error::Protocol {
                context: "DAQ drive command".into(),
                reason: "no [daq.drive_command]".into(),
            });
        };
        self.client.write_dac(o.dac, volts).await
    }
}
