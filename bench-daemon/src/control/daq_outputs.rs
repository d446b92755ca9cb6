//! The DAQ outputs that command a drive (`[daq.drive_command]`: a DAC on its analog input, a
//! digital line on its enable), prepared at connect: made safe and read back, then the
//! device's own watchdog armed and read back, as the drive's is, so that a daemon that dies
//! leaves the DAC at zero command and the enable line low.

use protocols::daq::{DaqClient, DriveOutputs};
use protocols::{Error, Mode};

/// Makes `o` safe and arms the watchdog (`timeout_s`); the run log's line. `mode` is what
/// the DAC commands.
pub async fn prepare(
    c: &mut DaqClient,
    o: &DriveOutputs,
    mode: Mode,
    timeout_s: u32,
) -> Result<String, Error> {
    let read = c.make_outputs_safe(o).await?;
    c.arm_watchdog(o, timeout_s).await?;
    Ok(format!(
        "DAQ outputs to the drive: DAC{} {} V (zero {}){}, read back; the DAQ's watchdog \
         armed and read back: {timeout_s} s without the daemon sets them so by itself",
        o.dac,
        read.dac_v,
        zero_of(mode),
        match o.enable_dio {
            Some(l) => format!(", enable line DIO{l} low"),
            None => String::new(),
        }
    ))
}

/// What the DAC's safe voltage commands.
fn zero_of(mode: Mode) -> &'static str {
    match mode {
        Mode::Velocity => "speed",
        _ => "torque",
    }
}

/// The run log's line on the command through DAC `dac` (`scale`: the mode and its units per
/// volt).
pub fn command_note(dac: u16, center_v: f64, (mode, per_v): (Mode, f64)) -> String {
    match mode {
        Mode::Velocity => format!(
            "the loop's velocity command through DAC{dac} ({center_v} V at zero speed, \
             {per_v} rad/s per V), not the drive's Modbus setpoint; the drive closes its speed \
             loop, velocity segments only"
        ),
        _ => format!(
            "the loop's torque command through DAC{dac} ({center_v} V at zero torque, {per_v} \
             N m/V), not the drive's Modbus setpoint; velocity and position loops closed by the \
             daemon"
        ),
    }
}
