//! `[daq]`: a data-acquisition device (a LabJack T-series over Modbus TCP) read by its
//! hardware-timed stream, and which of its channels carry which of the bench's signals.
//!
//! The checks here need no profile (numbers finite and in their physical range); the checks
//! against the DAQ's profile (channel counts, ranges, the stream's sample-rate limit) are
//! [`DaqConfig::check_against`], run when the profile is loaded. Every message names the
//! field as it is written in bench.toml.

use protocols::DaqProfile;
use serde::{Deserialize, Serialize};

mod drive_command;
pub use drive_command::AnalogOutput;

/// `[daq]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaqConfig {
    /// DAQ profile file (relative to the config file), or `builtin:labjack-t7`.
    pub profile: String,
    /// Modbus TCP address `host:port` of the device (a T7: port 502).
    pub tcp: String,
    /// Where its stream packets come from, `host:port` (default: `tcp`'s host at the
    /// profile's stream port, 702 on a T7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_tcp: Option<String>,
    /// Scans per second of the hardware-timed stream \[Hz\] (1 to 10 000).
    pub scan_rate_hz: f64,
    /// Samples per stream packet (0: one scan per packet, the lowest latency).
    #[serde(default)]
    pub samples_per_packet: u16,
    /// Stream resolution index (0: the device's default).
    #[serde(default)]
    pub resolution_index: u32,
    /// Settling after the multiplexer switches channels \[µs\] (0: automatic).
    #[serde(default)]
    pub settling_us: f64,
    /// Device stream buffer \[bytes\] (0: the device's default).
    #[serde(default)]
    pub buffer_bytes: u32,
    /// Scans averaged for the torque zero before each run (drive disabled, shaft at rest);
    /// 0 switches the zero off.
    #[serde(default = "default_zero_scans")]
    pub zero_scans: u32,
    /// The torque amplifier's input.
    pub measured_torque: AnalogInput,
    /// Where the position comes from (default: the drive's feedback).
    #[serde(default)]
    pub position: PositionSource,
    /// The drive's analog command input on a DAC (default: the drive stays on Modbus).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_command: Option<AnalogOutput>,
}

fn default_zero_scans() -> u32 {
    200
}

/// `[daq.measured_torque]`: an analog input carrying a signal scaled linearly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalogInput {
    /// The input, `n` of AINn.
    pub ain: u16,
    /// The negative input for a differential reading (default: single-ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative_ain: Option<u16>,
    /// Bipolar input range \[V\], one of the profile's (a T7: 10, 1, 0.1, 0.01).
    pub range_v: f64,
    /// The amplifier's scale \[N m per V\] (from its calibration certificate).
    pub nm_per_v: f64,
    /// The amplifier's output at zero torque \[V\] (from its certificate; the zero measured
    /// before each run replaces it when `zero_scans` > 0).
    #[serde(default)]
    pub offset_v: f64,
}

/// `[daq.position]`: the drive's feedback, or the DAQ's quadrature counter.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case", deny_unknown_fields)]
pub enum PositionSource {
    /// The drive's position feedback over Modbus.
    #[default]
    Drive,
    /// The quadrature counter on the profile's phase A/B lines.
    Counter {
        /// Counts per revolution (4 per encoder line).
        counts_per_rev: u32,
    },
}

/// The stream's highest scan rate the daemon runs \[Hz\].
pub const MAX_SCAN_RATE_HZ: f64 = 10_000.0;

impl DaqConfig {
    /// The checks that need no profile; `Err` names the field.
    pub fn check(&self) -> Result<(), String> {
        let r = self.scan_rate_hz;
        if !(r.is_finite() && (1.0..=MAX_SCAN_RATE_HZ).contains(&r)) {
            return Err(format!(
                "[daq] scan_rate_hz = {r} must be within 1..={MAX_SCAN_RATE_HZ}"
            ));
        }
        if !(self.settling_us.is_finite() && self.settling_us >= 0.0) {
            return Err(format!(
                "[daq] settling_us = {} must be finite and >= 0",
                self.settling_us
            ));
        }
        let t = &self.measured_torque;
        if t.negative_ain == Some(t.ain) {
            return Err(format!(
                "[daq.measured_torque] negative_ain = {} is the input itself (ain = {})",
                t.ain, t.ain
            ));
        }
        for (field, v, positive) in [
            ("range_v", t.range_v, true),
            ("nm_per_v", t.nm_per_v, false),
            ("offset_v", t.offset_v, false),
        ] {
            let bad = !v.is_finite() || (positive && v <= 0.0) || (field == "nm_per_v" && v == 0.0);
            if bad {
                let rule = if field == "offset_v" {
                    "finite"
                } else if positive {
                    "finite and > 0"
                } else {
                    "finite and not 0"
                };
                return Err(format!(
                    "[daq.measured_torque] {field} = {v} must be {rule}"
                ));
            }
        }
        if let PositionSource::Counter { counts_per_rev: 0 } = self.position {
            return Err("[daq.position] counts_per_rev = 0 must be > 0".into());
        }
        if let Some(c) = &self.drive_command {
            c.scale()?;
        }
        Ok(())
    }

    /// The checks against the device's profile; `Err` names the field and the limit.
    pub fn check_against(&self, p: &DaqProfile) -> Result<(), String> {
        let t = &self.measured_torque;
        let n = p.ain.channels;
        for (field, ch) in [("ain", Some(t.ain)), ("negative_ain", t.negative_ain)] {
            if let Some(ch) = ch.filter(|c| *c >= n) {
                return Err(format!(
                    "[daq.measured_torque] {field} = {ch}: the {} has AIN0..AIN{}",
                    p.device.name,
                    n - 1
                ));
            }
        }
        if !p.ain.ranges_v.contains(&t.range_v) {
            return Err(format!(
                "[daq.measured_torque] range_v = {}: the {} has the ranges {:?} V",
                t.range_v, p.device.name, p.ain.ranges_v
            ));
        }
        // The stream's codes are converted with the device's ±10 V calibration set, the one
        // the client reads; the other gains' sets are not read yet.
        if t.range_v != p.ain.ranges_v[0] {
            return Err(format!(
                "[daq.measured_torque] range_v = {}: the stream is read on the ±{} V range only \
                 (for now)",
                t.range_v, p.ain.ranges_v[0]
            ));
        }
        let samples = self.scan_rate_hz * self.scan_list_len() as f64;
        if samples > p.stream.max_scan_rate_hz {
            return Err(format!(
                "[daq] scan_rate_hz = {}: {} addresses a scan make {samples} samples/s, over \
                 the {}'s {} samples/s",
                self.scan_rate_hz,
                self.scan_list_len(),
                p.device.name,
                p.stream.max_scan_rate_hz
            ));
        }
        if self.resolution_index > p.ain.stream_resolution_index_max {
            return Err(format!(
                "[daq] resolution_index = {} is over the stream's maximum {}",
                self.resolution_index, p.ain.stream_resolution_index_max
            ));
        }
        if self.settling_us > p.ain.stream_settling_us_max {
            return Err(format!(
                "[daq] settling_us = {} is over the maximum {} µs",
                self.settling_us, p.ain.stream_settling_us_max
            ));
        }
        if let Some(c) = &self.drive_command {
            if c.dac >= p.dac.channels {
                return Err(format!(
                    "[daq.drive_command] dac = {}: the {} has DAC0..DAC{}",
                    c.dac,
                    p.device.name,
                    p.dac.channels - 1
                ));
            }
            if !(p.dac.min_v..=p.dac.max_v).contains(&c.center_v) {
                return Err(format!(
                    "[daq.drive_command] center_v = {} is outside the DAC's {}..={} V",
                    c.center_v, p.dac.min_v, p.dac.max_v
                ));
            }
            c.check_outputs(p, &self.position)?;
        }
        Ok(())
    }

    /// With `[daq.drive_command]`, the DAC must reach every command the limits allow
    /// ([`AnalogOutput::check_reach`]).
    pub fn check_reach(
        &self,
        p: &DaqProfile,
        limits: &experiments::BenchLimits,
    ) -> Result<(), String> {
        match &self.drive_command {
            Some(c) => c.check_reach(p, limits),
            None => Ok(()),
        }
    }

    /// Addresses sampled each scan: the torque input, and the counter's low word and high
    /// word (`STREAM_DATA_CAPTURE_16`) when the position comes from the counter.
    pub fn scan_list_len(&self) -> usize {
        match self.position {
            PositionSource::Drive => 1,
            PositionSource::Counter { .. } => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> DaqConfig {
        toml::from_str(
            r#"
            profile = "builtin:labjack-t7"
            tcp = "127.0.0.1:502"
            scan_rate_hz = 1000
            [measured_torque]
            ain = 0
            range_v = 10
            nm_per_v = 0.5
            [position]
            source = "counter"
            counts_per_rev = 4000
            "#,
        )
        .unwrap()
    }

    /// A change to the valid section and the start of the message it must bring.
    type Case = (fn(&mut DaqConfig), &'static str);

    fn t7() -> DaqProfile {
        bench_sim::daq::shipped_t7().unwrap()
    }

    #[test]
    fn a_valid_section_passes_both_checks() {
        let c = base();
        assert_eq!(c.zero_scans, 200);
        assert_eq!(c.scan_list_len(), 3);
        c.check().unwrap();
        c.check_against(&t7()).unwrap();
    }

    #[test]
    fn each_rule_names_its_field_and_limit() {
        let cases: Vec<Case> = vec![
            (
                |c| c.scan_rate_hz = 20_000.0,
                "[daq] scan_rate_hz = 20000 must be within 1..=10000",
            ),
            (
                |c| c.scan_rate_hz = 0.5,
                "[daq] scan_rate_hz = 0.5 must be within",
            ),
            (
                |c| c.measured_torque.range_v = -1.0,
                "[daq.measured_torque] range_v = -1 must be finite and > 0",
            ),
            (
                |c| c.measured_torque.nm_per_v = 0.0,
                "[daq.measured_torque] nm_per_v = 0 must be finite and not 0",
            ),
            (
                |c| c.measured_torque.offset_v = f64::NAN,
                "[daq.measured_torque] offset_v = NaN must be finite",
            ),
            (
                |c| c.measured_torque.negative_ain = Some(0),
                "negative_ain = 0 is the input itself",
            ),
            (
                |c| c.position = PositionSource::Counter { counts_per_rev: 0 },
                "[daq.position] counts_per_rev = 0",
            ),
        ];
        for (change, says) in cases {
            let mut c = base();
            change(&mut c);
            let e = c.check().unwrap_err();
            assert!(e.starts_with(says) || e.contains(says), "{e} vs {says}");
        }
    }

    fn analog(dac: u16, enable_dio: Option<u16>) -> AnalogOutput {
        AnalogOutput {
            enable_dio,
            ..AnalogOutput::torque(dac, 2.5, 0.4)
        }
    }

    #[test]
    fn the_profile_bounds_channels_ranges_and_the_sample_rate() {
        let cases: Vec<Case> = vec![
            (
                |c| c.measured_torque.ain = 14,
                "[daq.measured_torque] ain = 14: the LabJack T7 has AIN0..AIN13",
            ),
            (
                |c| c.measured_torque.range_v = 5.0,
                "[daq.measured_torque] range_v = 5: the LabJack T7 has the ranges",
            ),
            (
                |c| c.resolution_index = 9,
                "[daq] resolution_index = 9 is over the stream's maximum 8",
            ),
            (
                |c| c.measured_torque.range_v = 1.0,
                "[daq.measured_torque] range_v = 1: the stream is read on the ±10 V range only",
            ),
            (
                |c| c.drive_command = Some(AnalogOutput::torque(0, 6.0, 1.0)),
                "[daq.drive_command] center_v = 6 is outside the DAC's 0..=5 V",
            ),
            (
                |c| c.drive_command = Some(analog(1, None)),
                "[daq.drive_command] dac = 1: only DAC0 has a watchdog default",
            ),
            (
                |c| {
                    c.position = PositionSource::Counter { counts_per_rev: 4 };
                    c.drive_command = Some(analog(0, Some(1)));
                },
                "[daq.drive_command] enable_dio = 1 is an encoder phase of the counter",
            ),
            (
                |c| {
                    let mut a = analog(0, Some(2));
                    a.watchdog_s = 0;
                    c.drive_command = Some(a);
                },
                "[daq.drive_command] watchdog_s = 0: at least 1",
            ),
        ];
        for (change, says) in cases {
            let mut c = base();
            change(&mut c);
            c.check().unwrap();
            let e = c.check_against(&t7()).unwrap_err();
            assert!(e.starts_with(says), "{e} vs {says}");
        }
        // 10 kHz × 3 addresses fits the T7's 100 000 samples/s; the rule is the profile's.
        let mut p = t7();
        p.stream.max_scan_rate_hz = 20_000.0;
        let mut c = base();
        c.scan_rate_hz = 10_000.0;
        let e = c.check_against(&p).unwrap_err();
        assert!(e.contains("3 addresses a scan make 30000 samples/s"), "{e}");
        c.position = PositionSource::Drive;
        c.check_against(&p).unwrap();
    }
}
