//! The presliding plan: the parts' checks against the caps and the bench's limits, and their
//! segments.

use super::{Params, Part};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::kinds::{rest, segment, sign_str, tag, within};
use crate::plan::{Anchor, DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Setpoint};
use std::f64::consts::TAU;

impl Params {
    fn reversal_profile(&self) -> (Vec<f64>, Vec<f64>) {
        let (mut t, mut x) = (vec![0.0], vec![0.0]);
        for p in &self.reversals_rad {
            let last = *x.last().unwrap_or(&0.0);
            t.push(t.last().unwrap_or(&0.0) + (p - last).abs() / self.reversals_rate_rad_s);
            x.push(*p);
        }
        (t, x)
    }

    /// The plan's size, counted part by part with the caps of each part's fields checked;
    /// the sum over the caps names the field of the largest share.
    fn size(&self, limits: &BenchLimits) -> Result<(), Error> {
        caps::list("params.parts", &self.parts, caps::MAX_PARTS)?;
        caps::count(
            "params.ramp_repeats",
            self.ramp_repeats.into(),
            caps::MAX_REPEATS,
        )?;
        caps::list("params.reversals_rad", &self.reversals_rad, caps::MAX_LIST)?;
        caps::count(
            "params.sine_cycles",
            self.sine_cycles.into(),
            caps::MAX_CYCLES,
        )?;
        caps::seconds("params.step_hold_s", self.step_hold_s, caps::MAX_SEGMENT_S)?;
        caps::seconds("params.rest_s", self.rest_s, caps::MAX_SEGMENT_S)?;
        let mut parts: Vec<(&str, Size)> = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            parts.push(match part {
                Part::Ramp => {
                    let f = "params.ramp_rate_rad_s";
                    check::positive(f, self.ramp_rate_rad_s)?;
                    check::positive("params.ramp_distance_rad", self.ramp_distance_rad)?;
                    check::at_least("params.ramp_repeats", self.ramp_repeats, 1)?;
                    let dur = self.ramp_distance_rad / self.ramp_rate_rad_s;
                    caps::segment_s(f, self.ramp_rate_rad_s, "a displacement ramp", dur)?;
                    caps::window_of(f, self.ramp_rate_rad_s, "a displacement ramp", dur, limits)?;
                    let one = Size::new(1.0, dur);
                    Size::check_repeated(
                        one,
                        f,
                        self.ramp_rate_rad_s,
                        "params.ramp_repeats",
                        self.ramp_repeats,
                        limits,
                    )?;
                    (
                        "params.ramp_repeats",
                        one.times(f64::from(self.ramp_repeats)),
                    )
                }
                Part::Reversals => {
                    let f = "params.reversals_rate_rad_s";
                    check::positive(f, self.reversals_rate_rad_s)?;
                    let dur = self.reversal_path_rad() / self.reversals_rate_rad_s;
                    caps::segment_s(f, self.reversals_rate_rad_s, "a reversal path", dur)?;
                    caps::window_of(f, self.reversals_rate_rad_s, "a reversal path", dur, limits)?;
                    ("params.reversals_rad", Size::new(1.0, dur))
                }
                Part::Sine => {
                    let f = "params.sine_frequency_hz";
                    check::positive(f, self.sine_frequency_hz)?;
                    check::at_least("params.sine_cycles", self.sine_cycles, 3)?;
                    check::positive("params.rest_s", self.rest_s)?;
                    let dur = f64::from(self.sine_cycles) / self.sine_frequency_hz;
                    caps::segment_s(f, self.sine_frequency_hz, "a sine", dur)?;
                    ("params.sine_cycles", Size::new(2.0, self.rest_s + dur))
                }
                Part::Step => {
                    check::positive("params.step_hold_s", self.step_hold_s)?;
                    check::positive("params.rest_s", self.rest_s)?;
                    (
                        "params.step_hold_s",
                        Size::new(3.0, self.rest_s + 2.0 * self.step_hold_s),
                    )
                }
            });
        }
        let total = parts.iter().fold(Size::default(), |a, (_, s)| a.plus(*s));
        let worst = |key: fn(&Size) -> f64| {
            parts
                .iter()
                .max_by(|a, b| key(&a.1).total_cmp(&key(&b.1)))
                .map_or("params.parts", |p| p.0)
        };
        let field = if total.segments > f64::from(limits.max_plan_segments) {
            worst(|s| s.segments)
        } else {
            worst(|s| s.duration_s)
        };
        total.check(field, self.value_of(field), limits)
    }

    /// The value of a count field named in a size error.
    fn value_of(&self, field: &str) -> String {
        match field {
            "params.ramp_repeats" => self.ramp_repeats.to_string(),
            "params.sine_cycles" => self.sine_cycles.to_string(),
            "params.step_hold_s" => self.step_hold_s.to_string(),
            "params.reversals_rad" => format!("{} points", self.reversals_rad.len()),
            _ => format!("{} parts", self.parts.len()),
        }
    }

    /// Length of the reversal path \[rad\], from the start through every point.
    fn reversal_path_rad(&self) -> f64 {
        let mut at = 0.0;
        let mut path = 0.0;
        for p in &self.reversals_rad {
            path += (p - at).abs();
            at = *p;
        }
        path
    }

    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        check::non_empty("params.parts", &self.parts)?;
        self.size(limits)?;
        let mut out = Vec::new();
        for part in &self.parts {
            match part {
                Part::Ramp => {
                    check::positive("params.ramp_rate_rad_s", self.ramp_rate_rad_s)?;
                    within(
                        "params.ramp_rate_rad_s",
                        self.ramp_rate_rad_s,
                        LimitKind::Velocity,
                        limits.velocity_rad_s,
                    )?;
                    check::positive("params.ramp_distance_rad", self.ramp_distance_rad)?;
                    within(
                        "params.ramp_distance_rad",
                        self.ramp_distance_rad,
                        LimitKind::Position,
                        limits.position_window_rad,
                    )?;
                    check::at_least("params.ramp_repeats", self.ramp_repeats, 1)?;
                    let dur = self.ramp_distance_rad / self.ramp_rate_rad_s;
                    for r in 0..self.ramp_repeats {
                        let d: i8 = if r % 2 == 0 { 1 } else { -1 };
                        let mut s = segment(
                            format!(
                                "displacement ramp {}{} rad/s #{r}",
                                sign_str(d),
                                self.ramp_rate_rad_s
                            ),
                            tag(
                                Role::DisplacementRamp,
                                f64::from(d) * self.ramp_rate_rad_s,
                                d,
                                r,
                            ),
                            DriveMode::Position,
                            Setpoint::Ramp {
                                start: 0.0,
                                rate: f64::from(d) * self.ramp_rate_rad_s,
                            },
                            vec![Stop::Duration { s: dur }],
                            dur,
                        );
                        s.anchor = Anchor::SegmentStart;
                        out.push(s);
                    }
                }
                Part::Reversals => {
                    check::non_empty("params.reversals_rad", &self.reversals_rad)?;
                    for (i, p) in self.reversals_rad.iter().enumerate() {
                        within(
                            &format!("params.reversals_rad[{i}]"),
                            *p,
                            LimitKind::Position,
                            limits.position_window_rad,
                        )?;
                    }
                    check::positive("params.reversals_rate_rad_s", self.reversals_rate_rad_s)?;
                    within(
                        "params.reversals_rate_rad_s",
                        self.reversals_rate_rad_s,
                        LimitKind::Velocity,
                        limits.velocity_rad_s,
                    )?;
                    let (t, x) = self.reversal_profile();
                    let dur = *t.last().unwrap_or(&0.0);
                    let mut s = segment(
                        "nested reversals".into(),
                        tag(Role::Reversals, 0.0, 0, 0),
                        DriveMode::Position,
                        Setpoint::Samples { t_s: t, value: x },
                        vec![Stop::Duration {
                            s: dur.max(limits.period_s),
                        }],
                        dur,
                    );
                    s.anchor = Anchor::SegmentStart;
                    out.push(s);
                }
                Part::Sine => {
                    check::positive("params.sine_amplitude_nm", self.sine_amplitude_nm)?;
                    within(
                        "params.sine_amplitude_nm",
                        self.sine_amplitude_nm,
                        LimitKind::Torque,
                        limits.torque_nm,
                    )?;
                    check::positive("params.sine_frequency_hz", self.sine_frequency_hz)?;
                    if self.sine_frequency_hz * limits.period_s > 0.05 {
                        return Err(Error::invalid(
                            "params.sine_frequency_hz",
                            self.sine_frequency_hz,
                            format!(
                                "must be <= {} Hz (20 samples per cycle)",
                                0.05 / limits.period_s
                            ),
                        ));
                    }
                    check::at_least("params.sine_cycles", self.sine_cycles, 3)?;
                    check::positive("params.rest_s", self.rest_s)?;
                    out.push(rest(limits, self.rest_s, 0, 0));
                    let dur = f64::from(self.sine_cycles) / self.sine_frequency_hz;
                    out.push(segment(
                        format!(
                            "torque sine {} N m {} Hz",
                            self.sine_amplitude_nm, self.sine_frequency_hz
                        ),
                        tag(Role::TorqueSine, self.sine_frequency_hz, 0, 0),
                        DriveMode::Torque,
                        Setpoint::Sine {
                            offset: 0.0,
                            amplitude: self.sine_amplitude_nm,
                            omega_rad_s: TAU * self.sine_frequency_hz,
                            phase_rad: 0.0,
                        },
                        vec![Stop::Duration { s: dur }],
                        dur,
                    ));
                }
                Part::Step => {
                    check::positive("params.step_torque_nm", self.step_torque_nm)?;
                    within(
                        "params.step_torque_nm",
                        self.step_torque_nm,
                        LimitKind::Torque,
                        limits.torque_nm,
                    )?;
                    check::positive("params.step_hold_s", self.step_hold_s)?;
                    caps::window("params.step_hold_s", self.step_hold_s, limits)?;
                    check::positive("params.rest_s", self.rest_s)?;
                    out.push(rest(limits, self.rest_s, 0, 0));
                    out.push(segment(
                        format!("torque step {} N m", self.step_torque_nm),
                        tag(Role::TorqueStep, self.step_torque_nm, 1, 0),
                        DriveMode::Torque,
                        Setpoint::constant(self.step_torque_nm),
                        vec![Stop::Duration {
                            s: self.step_hold_s,
                        }],
                        self.step_hold_s,
                    ));
                    out.push(segment(
                        "release step".into(),
                        tag(Role::Rest, 0.0, 0, 0),
                        DriveMode::Torque,
                        Setpoint::constant(0.0),
                        vec![Stop::Duration {
                            s: self.step_hold_s,
                        }],
                        self.step_hold_s,
                    ));
                }
            }
        }
        Ok(out)
    }
}
