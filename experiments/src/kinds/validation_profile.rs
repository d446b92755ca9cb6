//! `validation_profile`: ramps, steps and holds of position (stick-slip and step responses,
//! Nouailletas §IV, Fig. 12), or any sampled profile in any drive mode; the run that models
//! are validated on.
//!
//! Each piece of `pieces` is one segment (position mode, positions relative to the run's
//! start); a `samples` profile replaces the pieces with one segment in its mode.
//!
//! Analysis: per segment, the tracking error (RMS, max, final), the overshoot past a step's
//! target, the number of stick↔slip transitions (|v| crossing a few counts per period) and the
//! mean and peak |measured torque|.
//!
//! Default pieces (after S2 Fig. 12): hold 0.5 s; ramp to 2 rad in 4 s; hold 1 s; steps of
//! −50 mrad and back (1 s each); ramp back to 0 in 10 s (slow: stick-slip); hold 1 s; steps to
//! −50 mrad and back to 0 (1 s each). The steps are small so that a position loop of the
//! simulated bench's gains (20 N m/rad) answers them without saturating a 2 N m limit.

use super::{segment, tag, within};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One piece of a position profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Piece {
    /// Hold the current target.
    Hold {
        /// Length \[s\], one control period to a day.
        #[schemars(range(max = caps::MAX_SEGMENT_S))]
        duration_s: f64,
    },
    /// Move linearly to `to_rad`.
    Ramp {
        /// Target \[rad\].
        to_rad: f64,
        /// Length \[s\], one control period to a day.
        #[schemars(range(max = caps::MAX_SEGMENT_S))]
        duration_s: f64,
    },
    /// Jump to `to_rad` and hold.
    Step {
        /// Target \[rad\].
        to_rad: f64,
        /// Length \[s\], one control period to a day.
        #[schemars(range(max = caps::MAX_SEGMENT_S))]
        duration_s: f64,
    },
}

/// A sampled profile in any mode (linear interpolation, held at the ends).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sampled {
    /// Drive mode (unit of `value`: N m, rad/s or rad).
    pub mode: DriveMode,
    /// Non-decreasing times \[s\], at most 100000 points within a day; equal times make a
    /// jump.
    #[schemars(length(min = 1, max = caps::MAX_SAMPLES), inner(range(max = caps::MAX_SEGMENT_S)))]
    pub t_s: Vec<f64>,
    /// Values, as many as `t_s`.
    #[schemars(length(min = 1, max = caps::MAX_SAMPLES))]
    pub value: Vec<f64>,
}

/// Parameters of `validation_profile`: ramps, steps and holds of position (stick-slip and step
/// responses, Nouailletas Fig. 12), or any sampled profile in any drive mode → the run models are
/// validated on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Position pieces, at most 10000; default after S2 Fig. 12.
    #[schemars(length(max = caps::MAX_LIST))]
    pub pieces: Vec<Piece>,
    /// A sampled profile replacing `pieces`; default null.
    pub samples: Option<Sampled>,
}

impl Default for Params {
    fn default() -> Params {
        use Piece::*;
        Params {
            pieces: vec![
                Hold { duration_s: 0.5 },
                Ramp {
                    to_rad: 2.0,
                    duration_s: 4.0,
                },
                Hold { duration_s: 1.0 },
                Step {
                    to_rad: 1.95,
                    duration_s: 1.0,
                },
                Step {
                    to_rad: 2.0,
                    duration_s: 1.0,
                },
                Ramp {
                    to_rad: 0.0,
                    duration_s: 10.0,
                },
                Hold { duration_s: 1.0 },
                Step {
                    to_rad: -0.05,
                    duration_s: 1.0,
                },
                Step {
                    to_rad: 0.0,
                    duration_s: 1.0,
                },
            ],
            samples: None,
        }
    }
}

/// Summary of one segment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PieceSummary {
    /// Segment label.
    pub label: String,
    /// Drive mode.
    pub mode: DriveMode,
    /// RMS tracking error (unit of the mode; torque segments: applied − setpoint).
    pub rms_error: f64,
    /// Largest |error|.
    pub max_error: f64,
    /// Error at the segment's end.
    pub final_error: f64,
    /// Overshoot past a step's target, in its direction (steps only).
    pub overshoot: Option<f64>,
    /// Stick↔slip transitions.
    pub stick_slip_transitions: usize,
    /// Mean |measured torque| \[N m\].
    pub mean_abs_torque_nm: f64,
    /// Peak |measured torque| \[N m\].
    pub peak_abs_torque_nm: f64,
    /// Samples.
    pub n: usize,
}

/// Validation-profile summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ValidationResults")]
pub struct Output {
    /// Per segment, in order.
    pub pieces: Vec<PieceSummary>,
    /// RMS tracking error over the whole run (null without samples).
    pub rms_error: Option<f64>,
}

fn check_mode_value(
    field: &str,
    mode: DriveMode,
    v: f64,
    limits: &BenchLimits,
) -> Result<(), Error> {
    match mode {
        DriveMode::Torque => within(field, v, LimitKind::Torque, limits.torque_nm),
        DriveMode::Velocity => within(field, v, LimitKind::Velocity, limits.velocity_rad_s),
        DriveMode::Position => within(field, v, LimitKind::Position, limits.position_window_rad),
    }
}

impl Params {
    /// The pieces' size, counted: each one control period to a day, and their sum.
    fn size(&self, limits: &BenchLimits) -> Result<(), Error> {
        caps::list("params.pieces", &self.pieces, caps::MAX_LIST)?;
        let mut total = 0.0;
        for (i, p) in self.pieces.iter().enumerate() {
            let (name, d) = match p {
                Piece::Hold { duration_s } => ("hold", *duration_s),
                Piece::Ramp { duration_s, .. } => ("ramp", *duration_s),
                Piece::Step { duration_s, .. } => ("step", *duration_s),
            };
            let f = format!("params.pieces[{i}].{name}.duration_s");
            check::positive(&f, d)?;
            caps::seconds(&f, d, caps::MAX_SEGMENT_S)?;
            caps::window(&f, d, limits)?;
            total += d;
        }
        Size::new(self.pieces.len() as f64, total).check(
            "params.pieces",
            format_args!("{} pieces", self.pieces.len()),
            limits,
        )
    }

    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        if let Some(s) = &self.samples {
            caps::list("params.samples.t_s", &s.t_s, caps::MAX_SAMPLES)?;
            caps::list("params.samples.value", &s.value, caps::MAX_SAMPLES)?;
            check::non_empty("params.samples.t_s", &s.t_s)?;
            if s.value.len() != s.t_s.len() {
                return Err(Error::invalid(
                    "params.samples.value",
                    format!("{} values", s.value.len()),
                    format!("must have as many entries as t_s ({})", s.t_s.len()),
                ));
            }
            for (i, (t, v)) in s.t_s.iter().zip(&s.value).enumerate() {
                let f = format!("params.samples.t_s[{i}]");
                check::non_negative(&f, *t)?;
                caps::seconds(&f, *t, caps::MAX_SEGMENT_S)?;
                if i > 0 && *t < s.t_s[i - 1] {
                    return Err(Error::invalid(
                        format!("params.samples.t_s[{i}]"),
                        t,
                        "must be >= the previous time",
                    ));
                }
                check_mode_value(&format!("params.samples.value[{i}]"), s.mode, *v, limits)?;
                if i > 0
                    && s.mode != DriveMode::Torque
                    && *t > s.t_s[i - 1]
                    && s.mode == DriveMode::Position
                {
                    let speed = (v - s.value[i - 1]).abs() / (t - s.t_s[i - 1]);
                    if speed > limits.velocity_rad_s {
                        return Err(Error::limit(
                            format!("params.samples.value[{i}]: speed from the previous point"),
                            speed,
                            LimitKind::Velocity,
                            limits.velocity_rad_s,
                        ));
                    }
                }
            }
            let dur = s.t_s.last().copied().unwrap_or(0.0).max(limits.period_s);
            return Ok(vec![segment(
                "sampled profile".into(),
                tag(Role::Profile, 0.0, 0, 0),
                s.mode,
                Setpoint::Samples {
                    t_s: s.t_s.clone(),
                    value: s.value.clone(),
                },
                vec![Stop::Duration { s: dur }],
                dur,
            )]);
        }
        check::non_empty("params.pieces", &self.pieces)?;
        self.size(limits)?;
        let mut out = Vec::new();
        let mut at = 0.0_f64;
        for (i, p) in self.pieces.iter().enumerate() {
            let f = format!("params.pieces[{i}]");
            let (label, sp, dur, value) = match p {
                Piece::Hold { duration_s } => {
                    check::positive(&format!("{f}.hold.duration_s"), *duration_s)?;
                    (
                        format!("hold {at} rad"),
                        Setpoint::constant(at),
                        *duration_s,
                        at,
                    )
                }
                Piece::Ramp { to_rad, duration_s } => {
                    check::positive(&format!("{f}.ramp.duration_s"), *duration_s)?;
                    check_mode_value(
                        &format!("{f}.ramp.to_rad"),
                        DriveMode::Position,
                        *to_rad,
                        limits,
                    )?;
                    let speed = (to_rad - at).abs() / duration_s;
                    if speed > limits.velocity_rad_s {
                        return Err(Error::limit(
                            format!("{f}.ramp: speed |to_rad - previous| / duration_s"),
                            speed,
                            LimitKind::Velocity,
                            limits.velocity_rad_s,
                        ));
                    }
                    let sp = Setpoint::Ramp {
                        start: at,
                        rate: (to_rad - at) / duration_s,
                    };
                    let l = format!("ramp {at} → {to_rad} rad");
                    at = *to_rad;
                    (l, sp, *duration_s, *to_rad)
                }
                Piece::Step { to_rad, duration_s } => {
                    check::positive(&format!("{f}.step.duration_s"), *duration_s)?;
                    check_mode_value(
                        &format!("{f}.step.to_rad"),
                        DriveMode::Position,
                        *to_rad,
                        limits,
                    )?;
                    let l = format!("step {at} → {to_rad} rad");
                    let from = at;
                    at = *to_rad;
                    (l, Setpoint::constant(*to_rad), *duration_s, *to_rad - from)
                }
            };
            out.push(segment(
                format!("{i}: {label}"),
                tag(
                    Role::Profile,
                    value,
                    if matches!(p, Piece::Step { .. }) {
                        1
                    } else {
                        0
                    },
                    i as u32,
                ),
                DriveMode::Position,
                sp,
                vec![Stop::Duration { s: dur }],
                dur,
            ));
        }
        Ok(out)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let slip_v = 3.0 * plan.limits.rad_per_count() / plan.limits.period_s;
        let mut out = Output::default();
        let (mut sse, mut n_all) = (0.0, 0usize);
        for (_, seg, xs) in crate::analysis::with_role(plan, &parts, Role::Profile) {
            let t0 = xs[0].t;
            let err: Vec<f64> = xs
                .iter()
                .map(|s| {
                    let r = seg.setpoint.value(s.t - t0);
                    let y = match seg.mode {
                        DriveMode::Position => s.x,
                        DriveMode::Velocity => s.v,
                        DriveMode::Torque => s.applied_torque(),
                    };
                    y - r
                })
                .collect();
            let ss: f64 = err.iter().map(|e| e * e).sum();
            sse += ss;
            n_all += err.len();
            let overshoot =
                (seg.tag.direction == 1 && seg.mode == DriveMode::Position && seg.tag.value != 0.0)
                    .then(|| {
                        let d = seg.tag.value.signum();
                        err.iter().map(|e| d * e).fold(0.0, f64::max)
                    });
            let mut transitions = 0;
            let mut slipping = xs[0].v.abs() > slip_v;
            for s in xs {
                let now = s.v.abs() > slip_v;
                if now != slipping {
                    transitions += 1;
                    slipping = now;
                }
            }
            let (mean_abs, _, _) =
                crate::analysis::mean_std(xs.iter().map(|s| s.measured_torque().abs()));
            out.pieces.push(PieceSummary {
                label: seg.label.clone(),
                mode: seg.mode,
                rms_error: (ss / err.len() as f64).sqrt(),
                max_error: err.iter().fold(0.0, |m, e| m.max(e.abs())),
                final_error: *err.last().unwrap_or(&0.0),
                overshoot,
                stick_slip_transitions: transitions,
                mean_abs_torque_nm: mean_abs,
                peak_abs_torque_nm: xs.iter().fold(0.0, |m, s| m.max(s.measured_torque().abs())),
                n: xs.len(),
            });
        }
        out.rms_error = (n_all > 0).then(|| (sse / n_all as f64).sqrt());
        Ok(out)
    }
}
