//! The Modbus torque sensor's zero before each run, with the drive disabled and the shaft at
//! rest: the mean of [`ZERO_READS`] readings is the zero the run records (the sensor's own
//! offset, what its `tare` takes out), then the profile's `tare` sequence is written, if it has
//! one, and the sensor is read again to show what is left. A profile without `tare` is only
//! read: its zero is recorded, nothing is written and the readings stay as the sensor gives
//! them (a sensor that zeroes itself at power-up, say).

use super::stop::StopReason;
use protocols::{Error, TorqueSensor};

/// Readings averaged for the zero, and again after the tare.
pub const ZERO_READS: u32 = 10;

/// Zeroes `sensor` (see the module doc); `unit` is the bench's force unit for the log line.
/// Returns the zero \[N m or N\] and the run log's line. The caller checked the drive is
/// disabled and the shaft at rest.
pub async fn zero_sensor(
    sensor: &mut TorqueSensor,
    unit: &str,
) -> Result<(f64, String), StopReason> {
    let (zero, sd) = mean_reading(sensor)
        .await
        .map_err(step("reading the zero"))?;
    let said = format!(
        "torque sensor zero {zero:.6} {unit} (mean of {ZERO_READS} readings, standard deviation \
         {sd:.6} {unit}; drive disabled, at rest)"
    );
    if sensor.profile().sequence("tare").is_none() {
        return Ok((
            zero,
            format!("{said}; its profile has no tare sequence: nothing written"),
        ));
    }
    sensor.tare().await.map_err(step("taring"))?;
    let (after, _) = mean_reading(sensor)
        .await
        .map_err(step("reading after the tare"))?;
    Ok((
        zero,
        format!("{said}; tare written, then it reads {after:.6} {unit}"),
    ))
}

/// The mean and standard deviation of [`ZERO_READS`] readings.
async fn mean_reading(sensor: &mut TorqueSensor) -> Result<(f64, f64), Error> {
    let mut readings = Vec::with_capacity(ZERO_READS as usize);
    for _ in 0..ZERO_READS {
        readings.push(sensor.read_torque().await?);
    }
    let n = readings.len() as f64;
    let mean = readings.iter().sum::<f64>() / n;
    let var = readings.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
    Ok((mean, var.sqrt()))
}

/// A sensor transaction of the zero that failed: `torque sensor: <what>: <error>`.
fn step(what: &'static str) -> impl FnOnce(Error) -> StopReason {
    move |e| StopReason::Setup {
        link: e.is_link_error(),
        text: format!("torque sensor: {what}: {e}"),
    }
}
