//! The Modbus torque sensor's zero before each run, with the drive disabled and the shaft at
//! rest: the mean of `[sensor] zero_reads` readings (default [`ZERO_READS`]), one per sample
//! period of the sensor ([`sample_period`]), is the zero the run records (the sensor's own
//! offset, what its `tare` takes out), then the profile's `tare` sequence is written, if it has
//! one, and the sensor is read again to show what is left. A profile without `tare` is only
//! read: its zero is recorded, nothing is written and the readings stay as the sensor gives
//! them (a sensor that zeroes itself at power-up, say).

use super::stop::StopReason;
use protocols::{Error, Profile, TorqueSensor};
use std::time::Duration;

/// Readings averaged for the zero, and again after the tare, unless `[sensor] zero_reads`
/// says otherwise.
pub const ZERO_READS: u32 = 10;

/// The time between two of the sensor's own samples: its profile's fastest `[[poll_group]]`,
/// else the control period `control_period_s` (a bench runs a slow sensor's loop at its
/// sample period: a 0.1 s sensor at `period_s = 0.1`). Readings closer than this would read
/// one sample several times and average nothing.
pub fn sample_period(profile: &Profile, control_period_s: f64) -> Duration {
    let fastest = profile
        .poll_groups
        .iter()
        .map(|g| g.rate_hz)
        .filter(|r| r.is_finite() && *r > 0.0)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    Duration::from_secs_f64(fastest.map_or(control_period_s, |r| 1.0 / r))
}

/// Zeroes `sensor` (see the module doc); `unit` is the bench's force unit for the log line.
/// Returns the zero \[N m or N\] and the run log's line. The caller checked the drive is
/// disabled and the shaft at rest.
pub async fn zero_sensor(
    sensor: &mut TorqueSensor,
    unit: &str,
    reads: u32,
    period: Duration,
) -> Result<(f64, String), StopReason> {
    let (zero, sd) = mean_reading(sensor, reads, period)
        .await
        .map_err(step("reading the zero"))?;
    let said = format!(
        "torque sensor zero {zero:.6} {unit} (mean of {reads} readings {} ms apart, standard \
         deviation {sd:.6} {unit}; drive disabled, at rest)",
        period.as_secs_f64() * 1e3
    );
    if sensor.profile().sequence("tare").is_none() {
        return Ok((
            zero,
            format!("{said}; its profile has no tare sequence: nothing written"),
        ));
    }
    sensor.tare().await.map_err(step("taring"))?;
    let (after, _) = mean_reading(sensor, reads, period)
        .await
        .map_err(step("reading after the tare"))?;
    Ok((
        zero,
        format!("{said}; tare written, then it reads {after:.6} {unit}"),
    ))
}

/// The mean and standard deviation of `n` readings, the k-th `k × period` after the first.
async fn mean_reading(
    sensor: &mut TorqueSensor,
    n: u32,
    period: Duration,
) -> Result<(f64, f64), Error> {
    let mut readings = Vec::with_capacity(n as usize);
    let start = tokio::time::Instant::now();
    for k in 0..n {
        tokio::time::sleep_until(start + period * k).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str) -> Profile {
        let path = format!("{}/../profiles/{name}", env!("CARGO_MANIFEST_DIR"));
        Profile::load(&path).unwrap()
    }

    #[test]
    fn readings_are_spaced_by_the_sensors_own_sample_period() {
        // The simulated sensor polls at 1 kHz: a reading every millisecond.
        let sim = profile("sim-torque-sensor.toml");
        assert_eq!(sample_period(&sim, 0.1), Duration::from_millis(1));
        // The ATO gives no rate of its own: the control period it runs at, 0.1 s.
        let ato = profile("ato-rotary-torque-sensor.toml");
        assert_eq!(sample_period(&ato, 0.1), Duration::from_millis(100));
    }
}
