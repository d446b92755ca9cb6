//! A validated experiment: ordered segments, each a drive mode, a setpoint generator, stop
//! conditions and a label, with units resolved and the bench limits checked.

use crate::error::LimitKind;
use crate::{BenchLimits, Error, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the drive is told to follow during a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriveMode {
    /// The setpoint is a torque \[N m\], applied as is.
    Torque,
    /// The setpoint is a velocity \[rad/s\] (drive velocity mode, or the daemon's PI).
    Velocity,
    /// The setpoint is a position \[rad\] (drive position mode, or the daemon's PID).
    Position,
}

/// Where a position setpoint is measured from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Anchor {
    /// From the run's start position (the origin of `Sample::x`).
    #[default]
    Run,
    /// From the position measured when the segment starts (for small presliding motions).
    SegmentStart,
}

/// When a segment ends. A segment ends at the first tick where any of its stops holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Stop {
    /// The segment has lasted `s` seconds. Every segment has one (a timeout at least).
    Duration {
        /// Length \[s\].
        s: f64,
    },
    /// Motion detected by the encoder: `|x - x0| > counts` counts, `x0` the position at the
    /// segment's start (`threshold_rad` = counts × rad per count, resolved at validation).
    Motion {
        /// Threshold in encoder counts.
        counts: u32,
        /// The same threshold in radians.
        threshold_rad: f64,
    },
    /// The velocity has stayed within `tolerance_rad_s` of its target (the setpoint in velocity
    /// mode, 0 otherwise) for `hold_s`.
    Settled {
        /// Tolerance \[rad/s\].
        tolerance_rad_s: f64,
        /// Time it must hold \[s\].
        hold_s: f64,
    },
    /// The setpoint's magnitude would exceed `level` (a torque ramp at its cap without
    /// motion); a value beyond `level` is never commanded.
    Limit {
        /// Level in the unit of the drive mode.
        level: f64,
    },
    /// The position tracking error `|x - x_ref|` exceeds `bound_rad` (a compensator that
    /// destabilises the loop; position segments only).
    TrackingError {
        /// Bound \[rad\].
        bound_rad: f64,
    },
}

/// Which stop ended a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// [`Stop::Duration`].
    Duration,
    /// [`Stop::Motion`].
    Motion,
    /// [`Stop::Settled`].
    Settled,
    /// [`Stop::Limit`].
    Limit,
    /// [`Stop::TrackingError`].
    TrackingError,
}

/// What a segment is for; the kind's analysis selects segments by role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Getting to a steady state; not analysed.
    Settle,
    /// A steady measurement (sweep points).
    Measure,
    /// Back to rest (torque 0) between trials.
    Rest,
    /// A torque ramp to breakaway.
    Ramp,
    /// A torque staircase to breakaway.
    Staircase,
    /// Rest of a chosen length before a breakaway ramp.
    Dwell,
    /// Sliding that precedes a dwell.
    Slide,
    /// Presliding (a): a slow displacement ramp into gross sliding.
    DisplacementRamp,
    /// Presliding (b): nested reversals below stiction.
    Reversals,
    /// Presliding (c): a sinusoidal torque below the Coulomb level.
    TorqueSine,
    /// Presliding (d): a small torque step.
    TorqueStep,
    /// Frictional lag: `v = A + B sin(w t)`.
    Lag,
    /// Frictional lag: the chirp.
    Chirp,
    /// PRBS excitation.
    Excite,
    /// One piece of a validation profile.
    Profile,
    /// Tracking a reference with a friction compensator (compensation trial).
    Track,
}

/// What identifies a segment inside its experiment.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tag {
    /// The segment's role.
    pub role: Role,
    /// The experiment variable of this segment (velocity, torque rate, step, omega, dwell, …,
    /// in the kind's unit), signed where the kind has directions.
    pub value: f64,
    /// Direction of motion: +1, -1, or 0 when not directional.
    pub direction: i8,
    /// Repeat number, from 0.
    pub repeat: u32,
}

/// One segment of a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Human-readable label, e.g. `measure +0.5 rad/s #2`.
    pub label: String,
    /// What it is for.
    pub tag: Tag,
    /// Drive mode.
    pub mode: DriveMode,
    /// The setpoint as a function of segment time.
    pub setpoint: Setpoint,
    /// Origin of position setpoints.
    pub anchor: Anchor,
    /// Stop conditions (any one ends the segment); always includes a [`Stop::Duration`].
    pub stops: Vec<Stop>,
    /// Expected length \[s\] (ETA); at most the `Duration` stop.
    pub expected_s: f64,
    /// The friction compensator the daemon's position loop adds (an index into the kind's
    /// compensators; compensation trials only). Such a segment always runs in torque mode
    /// under the daemon's own position PID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensator: Option<usize>,
}

impl Segment {
    /// The timeout of the segment (its `Duration` stop).
    pub fn max_s(&self) -> f64 {
        self.stops
            .iter()
            .filter_map(|s| match s {
                Stop::Duration { s } => Some(*s),
                _ => None,
            })
            .fold(f64::INFINITY, f64::min)
    }
}

/// A validated experiment, ready for the control loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The experiment kind.
    pub kind: String,
    /// The spec's name.
    pub name: String,
    /// The limits the plan was validated against.
    pub limits: BenchLimits,
    /// The segments, in order.
    pub segments: Vec<Segment>,
}

impl Plan {
    /// Control period \[s\].
    pub fn period_s(&self) -> f64 {
        self.limits.period_s
    }

    /// Expected run time \[s\]: the sum of the segments' expected lengths.
    pub fn estimate_duration(&self) -> f64 {
        self.segments.iter().map(|s| s.expected_s).sum()
    }

    /// The first segment of the trial segment `s` belongs to: the consecutive segments before
    /// it with the same experiment value, direction and repeat (a `settle` before its
    /// `measure`) condition it, so a continuation that measures `s` again runs them again.
    pub fn trial_start(&self, s: usize) -> usize {
        let same = |a: &Tag, b: &Tag| {
            a.value == b.value && a.direction == b.direction && a.repeat == b.repeat
        };
        let mut i = s.min(self.segments.len().saturating_sub(1));
        while i > 0 && same(&self.segments[i - 1].tag, &self.segments[s].tag) {
            i -= 1;
        }
        i
    }

    /// Longest possible run time \[s\]: every segment to its timeout.
    pub fn max_duration(&self) -> f64 {
        self.segments.iter().map(Segment::max_s).sum()
    }

    /// Checks every segment's setpoints against the limits, following the nominal position
    /// (velocity segments integrated over their expected length; torque segments assumed not
    /// to travel). A guard behind the kinds' own checks, which name spec fields; this one names
    /// the segment.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let lim = &self.limits;
        // The kinds count their size before building; this guards the count.
        crate::caps::Size::new(self.segments.len() as f64, self.max_duration()).check(
            "plan",
            format_args!("{} segments", self.segments.len()),
            lim,
        )?;
        let mut x = 0.0_f64;
        for seg in &self.segments {
            if !seg.stops.iter().any(|s| matches!(s, Stop::Duration { .. })) {
                return Err(Error::invalid(
                    format!("segment '{}'", seg.label),
                    "no duration",
                    "BUG: every segment needs a duration stop",
                ));
            }
            // The setpoint is never issued past a Limit stop's level.
            let cap = seg
                .stops
                .iter()
                .filter_map(|s| match s {
                    Stop::Limit { level } => Some(*level),
                    _ => None,
                })
                .fold(f64::INFINITY, f64::min);
            let t_end = seg.max_s();
            let peak = seg.setpoint.max_abs(t_end).min(cap);
            let field = || format!("segment '{}'", seg.label);
            let over = |limit: f64| peak > limit * (1.0 + 1e-9);
            match seg.mode {
                DriveMode::Torque => {
                    if over(lim.torque_nm) {
                        return Err(Error::limit(
                            field(),
                            peak,
                            LimitKind::Torque,
                            lim.torque_nm,
                        ));
                    }
                }
                DriveMode::Velocity => {
                    if over(lim.velocity_rad_s) {
                        return Err(Error::limit(
                            field(),
                            peak,
                            LimitKind::Velocity,
                            lim.velocity_rad_s,
                        ));
                    }
                    // Nominal travel: integrate the setpoint over the expected length.
                    let far;
                    (x, far) = travel(&seg.setpoint, x, seg.expected_s, lim.period_s);
                    if far > lim.position_window_rad * (1.0 + 1e-9) {
                        return Err(Error::limit(
                            field(),
                            far,
                            LimitKind::Position,
                            lim.position_window_rad,
                        ));
                    }
                }
                DriveMode::Position => {
                    let base = match seg.anchor {
                        Anchor::Run => 0.0,
                        Anchor::SegmentStart => x,
                    };
                    let far = base.abs() + peak;
                    if far > lim.position_window_rad * (1.0 + 1e-9) {
                        return Err(Error::limit(
                            field(),
                            far,
                            LimitKind::Position,
                            lim.position_window_rad,
                        ));
                    }
                    x = base + seg.setpoint.value(seg.expected_s);
                }
            }
        }
        Ok(())
    }
}

/// Position after following velocity setpoint `sp` from `x` for `t` seconds, and the farthest
/// `|x|` on the way. Exact for constants and for unidirectional sines (monotone travel), so a
/// plan of many such segments checks in O(segments); others are integrated numerically at the
/// control period, in at most 200 000 steps.
fn travel(sp: &Setpoint, x: f64, t: f64, period_s: f64) -> (f64, f64) {
    match *sp {
        Setpoint::Constant { value } => {
            let end = x + value * t;
            (end, x.abs().max(end.abs()))
        }
        Setpoint::Sine {
            offset,
            amplitude,
            omega_rad_s: w,
            phase_rad: ph,
        } if w != 0.0 && offset.abs() >= amplitude.abs() => {
            let end = x + offset * t - amplitude / w * ((w * t + ph).cos() - ph.cos());
            (end, x.abs().max(end.abs()))
        }
        _ => {
            let n = ((t / period_s).ceil() as usize).clamp(1, 200_000);
            let h = t / n as f64;
            let (mut x, mut far) = (x, x.abs());
            for i in 0..n {
                x += h * sp.value((i as f64 + 0.5) * h);
                far = far.max(x.abs());
            }
            (x, far)
        }
    }
}
