//! `[daq.drive_command]`: a DAC wired to the drive's analog command input, torque or speed.
//!
//! In torque mode the daemon closes the velocity and position loops itself and writes the
//! torque; in velocity mode the drive closes its own speed loop on the voltage and the daemon
//! writes the speed setpoint. Either way the voltage of zero command is `center_v`, the DAC's
//! safe value, and the DAC must reach every command the bench's limits allow.

use super::PositionSource;
use experiments::BenchLimits;
use protocols::{DaqProfile, Mode};
use serde::{Deserialize, Serialize};

/// `[daq.drive_command]`: a DAC wired to the drive's analog torque or speed input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalogOutput {
    /// The DAC, `n` of DACn.
    pub dac: u16,
    /// What the drive's analog input commands: `torque` (default) or `velocity`.
    #[serde(default = "torque", skip_serializing_if = "is_torque")]
    pub mode: Mode,
    /// DAC voltage of zero torque or zero speed \[V\] (a unipolar DAC commands both signs
    /// around it).
    pub center_v: f64,
    /// The drive's analog torque scale \[N m per V\] (`mode = "torque"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nm_per_v: Option<f64>,
    /// The drive's analog speed scale \[rad/s per V\] (`mode = "velocity"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rad_s_per_v: Option<f64>,
    /// The digital line on the drive's enable input, `n` of DIOn (high = enabled); without
    /// it the drive's enable stays on its Modbus control word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_dio: Option<u16>,
    /// The DAQ's watchdog \[whole s\]: this long without a request from the daemon, the
    /// device sets the DAC to `center_v` and the enable line low by itself.
    #[serde(default = "default_daq_watchdog_s")]
    pub watchdog_s: u32,
}

fn torque() -> Mode {
    Mode::Torque
}

fn is_torque(m: &Mode) -> bool {
    *m == Mode::Torque
}

fn default_daq_watchdog_s() -> u32 {
    1
}

impl AnalogOutput {
    /// DACn on the drive's analog torque input, `nm_per_v` around `center_v`.
    pub fn torque(dac: u16, center_v: f64, nm_per_v: f64) -> AnalogOutput {
        AnalogOutput {
            dac,
            mode: Mode::Torque,
            center_v,
            nm_per_v: Some(nm_per_v),
            rad_s_per_v: None,
            enable_dio: None,
            watchdog_s: default_daq_watchdog_s(),
        }
    }

    /// DACn on the drive's analog speed input, `rad_s_per_v` around `center_v`.
    pub fn velocity(dac: u16, center_v: f64, rad_s_per_v: f64) -> AnalogOutput {
        AnalogOutput {
            mode: Mode::Velocity,
            nm_per_v: None,
            rad_s_per_v: Some(rad_s_per_v),
            ..AnalogOutput::torque(dac, center_v, 1.0)
        }
    }

    /// The mode the DAC commands and its scale (command units per volt); `Err` names the
    /// field: the scale of the mode required, finite and not 0, the other mode's absent.
    pub fn scale(&self) -> Result<(Mode, f64), String> {
        let (scale, other, (want, not)) = match self.mode {
            Mode::Torque => (self.nm_per_v, self.rad_s_per_v, ("nm_per_v", "rad_s_per_v")),
            Mode::Velocity => (self.rad_s_per_v, self.nm_per_v, ("rad_s_per_v", "nm_per_v")),
            Mode::Position => {
                return Err(
                    "[daq.drive_command] mode = \"position\": an analog input commands \
                     \"torque\" or \"velocity\""
                        .into(),
                );
            }
        };
        let mode = self.mode.name();
        match (scale, other) {
            (_, Some(_)) => Err(format!(
                "[daq.drive_command] {not}: not with mode = \"{mode}\" (its scale is {want})"
            )),
            (None, None) => Err(format!(
                "[daq.drive_command] {want}: required with mode = \"{mode}\""
            )),
            (Some(k), None) if k.is_finite() && k != 0.0 && self.center_v.is_finite() => {
                Ok((self.mode, k))
            }
            (Some(k), None) => Err(format!(
                "[daq.drive_command] center_v = {} and {want} = {k} must be finite, {want} not 0",
                self.center_v
            )),
        }
    }

    /// The outputs and their safe values, as the DAQ client takes them.
    pub fn outputs(&self) -> protocols::daq::DriveOutputs {
        protocols::daq::DriveOutputs {
            dac: self.dac,
            safe_v: self.center_v,
            enable_dio: self.enable_dio,
        }
    }

    /// The DAC must reach every command the limits allow: `center_v ± [limits] torque_nm /
    /// nm_per_v` (torque) or `± velocity_rad_s / rad_s_per_v` (velocity) inside the DAC's
    /// range, else a command inside the limits would be refused mid-run.
    pub fn check_reach(&self, p: &DaqProfile, limits: &BenchLimits) -> Result<(), String> {
        let (mode, k) = self.scale()?;
        let (field, limit, scale) = match mode {
            Mode::Velocity => ("velocity_rad_s", limits.velocity_rad_s, "rad_s_per_v"),
            _ => ("torque_nm", limits.torque_nm, "nm_per_v"),
        };
        let swing = limit / k.abs();
        let (lo, hi) = (self.center_v - swing, self.center_v + swing);
        if lo < p.dac.min_v || hi > p.dac.max_v {
            return Err(format!(
                "[daq.drive_command] {scale} = {k}: [limits] {field} = {limit} needs \
                 {lo}..={hi} V, beyond the DAC's {}..={} V",
                p.dac.min_v, p.dac.max_v
            ));
        }
        Ok(())
    }

    /// The outputs a watchdog can make safe: DAC0 (the only DAC with a watchdog default), a
    /// watchdog of at least a second (the device counts whole seconds), an enable line that
    /// is not an encoder phase.
    pub(super) fn check_outputs(&self, p: &DaqProfile, pos: &PositionSource) -> Result<(), String> {
        if self.dac != 0 {
            return Err(format!(
                "[daq.drive_command] dac = {}: only DAC0 has a watchdog default to make it safe \
                 when the daemon is gone",
                self.dac
            ));
        }
        if self.watchdog_s == 0 {
            return Err("[daq.drive_command] watchdog_s = 0: at least 1 (whole seconds)".into());
        }
        let q = &p.quadrature;
        match self.enable_dio {
            Some(l) if l >= 32 => Err(format!(
                "[daq.drive_command] enable_dio = {l}: DIO lines are 0..=31"
            )),
            Some(l)
                if matches!(pos, PositionSource::Counter { .. })
                    && (l == q.phase_a_dio || l == q.phase_b_dio) =>
            {
                Err(format!(
                    "[daq.drive_command] enable_dio = {l} is an encoder phase of the counter"
                ))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t7() -> DaqProfile {
        bench_sim::daq::shipped_t7().unwrap()
    }

    fn limits(torque_nm: f64, velocity_rad_s: f64) -> BenchLimits {
        BenchLimits {
            torque_nm,
            velocity_rad_s,
            ..crate::config::BenchConfig::sim().limits
        }
    }

    #[test]
    fn the_dac_must_reach_the_torque_limit() {
        let c = AnalogOutput::torque(0, 2.5, 0.4);
        // 2.5 V ± 1 N m / 0.4 N m/V = 0..=5 V: just inside.
        c.check_reach(&t7(), &limits(1.0, 1e6)).unwrap();
        let e = c.check_reach(&t7(), &limits(2.0, 1.0)).unwrap_err();
        assert_eq!(
            e,
            "[daq.drive_command] nm_per_v = 0.4: [limits] torque_nm = 2 needs -2.5..=7.5 V, \
             beyond the DAC's 0..=5 V"
        );
    }

    #[test]
    fn the_dac_must_reach_the_velocity_limit_in_velocity_mode() {
        let c = AnalogOutput::velocity(0, 2.5, 8.0);
        // 2.5 V ± 20 rad/s / 8 rad/s per V = 0..=5 V; the torque limit does not matter.
        c.check_reach(&t7(), &limits(1e6, 20.0)).unwrap();
        let e = c.check_reach(&t7(), &limits(1.0, 40.0)).unwrap_err();
        assert_eq!(
            e,
            "[daq.drive_command] rad_s_per_v = 8: [limits] velocity_rad_s = 40 needs \
             -2.5..=7.5 V, beyond the DAC's 0..=5 V"
        );
    }

    #[test]
    fn each_mode_needs_its_own_scale() {
        let parse = |extra: &str| -> AnalogOutput {
            toml::from_str(&format!("dac = 0\ncenter_v = 2.5\n{extra}")).unwrap()
        };
        let v = parse("mode = \"velocity\"\nrad_s_per_v = 10.0");
        assert_eq!(v.scale(), Ok((Mode::Velocity, 10.0)));
        assert_eq!(parse("nm_per_v = 0.5").scale(), Ok((Mode::Torque, 0.5)));
        for (extra, says) in [
            (
                "mode = \"velocity\"\nnm_per_v = 1.0",
                "[daq.drive_command] nm_per_v: not with mode = \"velocity\" (its scale is rad_s_per_v)",
            ),
            (
                "mode = \"velocity\"",
                "[daq.drive_command] rad_s_per_v: required with mode = \"velocity\"",
            ),
            (
                "",
                "[daq.drive_command] nm_per_v: required with mode = \"torque\"",
            ),
            (
                "mode = \"position\"\nnm_per_v = 1.0",
                "[daq.drive_command] mode = \"position\"",
            ),
            (
                "mode = \"velocity\"\nrad_s_per_v = 0.0",
                "[daq.drive_command] center_v = 2.5 and rad_s_per_v = 0 must be finite",
            ),
        ] {
            let e = parse(extra).scale().unwrap_err();
            assert!(e.starts_with(says), "{e} vs {says}");
        }
        // The torque form serializes as before (no `mode` key).
        let text = toml::to_string(&AnalogOutput::torque(0, 2.5, 1.0)).unwrap();
        assert!(!text.contains("mode"), "{text}");
    }
}
