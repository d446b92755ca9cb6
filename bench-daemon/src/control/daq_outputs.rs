//! The DAQ outputs that command a drive (`[daq.drive_command]`: a DAC on its analog input, a
//! digital line on its enable), prepared at connect: made safe and read back, then the
//! device's own watchdog armed and read back, as the drive's is, so that a daemon that dies
//! leaves the DAC at zero torque and the enable line low.

use protocols::Error;
use protocols::daq::{DaqClient, DriveOutputs};

/// Makes `o` safe and arms the watchdog (`timeout_s`); the run log's line.
pub async fn prepare(c: &mut DaqClient, o: &DriveOutputs, timeout_s: u32) -> Result<String, Error> {
    let read = c.make_outputs_safe(o).await?;
    c.arm_watchdog(o, timeout_s).await?;
    Ok(format!(
        "DAQ outputs to the drive: DAC{} {} V (zero torque){}, read back; the DAQ's watchdog \
         armed and read back: {timeout_s} s without the daemon sets them so by itself",
        o.dac,
        read.dac_v,
        match o.enable_dio {
            Some(l) => format!(", enable line DIO{l} low"),
            None => String::new(),
        }
    ))
}
