//! `dwell_time`: breakaway after chosen rest times, for the rising static friction of Kato /
//! Armstrong (`F_s(t2)`, docs/src/models/rising_static.md).
//!
//! For every repeat, dwell time `t2` and direction `d`: a `slide` (velocity mode, `d v` for
//! `slide_s`) so every trial starts from sliding, a `dwell` at torque 0 for `t2` (the body
//! stops within milliseconds and rests), then a breakaway `ramp` (torque mode, `d m t`, until
//! motion or the cap) and a `rest`.
//!
//! Analysis: breakaway torque versus dwell time per direction (each trial, and pooled).
//!
//! Defaults: dwell times 0.1 to 10 s, slide 0.5 rad/s for 1 s, ramp 1 N m/s, 10 counts.

use super::torque_ramp::{check_ramp, ramp};
use super::{Breakaway, Directions, breakaway, rest, segment, sign_str, tag, torque_cap, within};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of `dwell_time`: slide, rest for a chosen dwell time, then ramp the torque until
/// breakaway → static friction versus dwell time (rising static friction).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Rest times before breakaway \[s\], at most 10000 of at most a day each; default
    /// [0.1, 0.3, 1, 3, 10].
    #[schemars(length(min = 1, max = caps::MAX_LIST), inner(range(max = caps::MAX_SEGMENT_S)))]
    pub dwell_times_s: Vec<f64>,
    /// Sliding velocity before each dwell \[rad/s\]; default 0.5.
    pub slide_velocity_rad_s: f64,
    /// Sliding time \[s\], at most a day; default 1.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub slide_s: f64,
    /// Breakaway ramp rate \[N m/s\]: the ramp to the torque cap lasts at least 5 control
    /// periods and at most a day; default 1.
    pub rate_nm_s: f64,
    /// Torque cap \[N m\]; default null = the bench's torque limit.
    pub max_torque_nm: Option<f64>,
    /// Directions; default both (alternating).
    pub directions: Directions,
    /// Repeats, at most 10000 (and the plan at most 1e6 segments and 7 days); default 1.
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub repeats: u32,
    /// Motion threshold \[encoder counts\], at most 1e6; default 10.
    #[schemars(range(min = 1, max = caps::MAX_MOTION_COUNTS))]
    pub motion_counts: u32,
    /// Longest rest after each breakaway \[s\], at most a day; default 0.5.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub rest_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            dwell_times_s: vec![0.1, 0.3, 1.0, 3.0, 10.0],
            slide_velocity_rad_s: 0.5,
            slide_s: 1.0,
            rate_nm_s: 1.0,
            max_torque_nm: None,
            directions: Directions::Both,
            repeats: 1,
            motion_counts: 10,
            rest_s: 0.5,
        }
    }
}

/// One trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DwellResult {
    /// Dwell time \[s\].
    pub dwell_s: f64,
    /// Direction, ±1.
    pub direction: i8,
    /// Repeat number.
    pub repeat: u32,
    /// The breakaway, or `null` if the cap was reached without motion.
    pub breakaway: Option<Breakaway>,
}

/// One pooled row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DwellRow {
    /// Dwell time \[s\].
    pub dwell_s: f64,
    /// Mean breakaway torque \[N m\], signed.
    pub breakaway_torque_nm: f64,
    /// Standard deviation \[N m\].
    pub std_torque_nm: f64,
    /// Trials that moved.
    pub n: usize,
}

/// Breakaway versus dwell time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "DwellResults")]
pub struct Output {
    /// Positive direction, by dwell time (dwells where no trial moved are left out).
    pub positive: Vec<DwellRow>,
    /// Negative direction, by dwell time.
    pub negative: Vec<DwellRow>,
    /// Every trial in run order.
    pub trials: Vec<DwellResult>,
}

impl Params {
    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        caps::count("params.repeats", self.repeats.into(), caps::MAX_REPEATS)?;
        caps::list("params.dwell_times_s", &self.dwell_times_s, caps::MAX_LIST)?;
        check::non_empty("params.dwell_times_s", &self.dwell_times_s)?;
        for (i, t) in self.dwell_times_s.iter().enumerate() {
            let f = format!("params.dwell_times_s[{i}]");
            check::positive(&f, *t)?;
            caps::seconds(&f, *t, caps::MAX_SEGMENT_S)?;
        }
        check::positive("params.slide_velocity_rad_s", self.slide_velocity_rad_s)?;
        within(
            "params.slide_velocity_rad_s",
            self.slide_velocity_rad_s,
            LimitKind::Velocity,
            limits.velocity_rad_s,
        )?;
        check::positive("params.slide_s", self.slide_s)?;
        caps::seconds("params.slide_s", self.slide_s, caps::MAX_SEGMENT_S)?;
        let travel = self.slide_velocity_rad_s * self.slide_s;
        if travel > limits.position_window_rad {
            return Err(Error::limit(
                "params.slide_s: travel slide_velocity_rad_s × slide_s",
                travel,
                LimitKind::Position,
                limits.position_window_rad,
            ));
        }
        check::positive("params.rate_nm_s", self.rate_nm_s)?;
        let cap = torque_cap("params.max_torque_nm", self.max_torque_nm, limits)?;
        check::at_least("params.repeats", self.repeats, 1)?;
        check::at_least("params.motion_counts", self.motion_counts, 1)?;
        caps::count(
            "params.motion_counts",
            self.motion_counts.into(),
            caps::MAX_MOTION_COUNTS,
        )?;
        check::positive("params.rest_s", self.rest_s)?;
        caps::seconds("params.rest_s", self.rest_s, caps::MAX_SEGMENT_S)?;
        let t_ramp = check_ramp("params.rate_nm_s", self.rate_nm_s, cap, limits)?;
        let dwells: f64 = self.dwell_times_s.iter().sum();
        let n = self.dwell_times_s.len() as f64;
        let one = Size::new(4.0 * n, n * (self.slide_s + t_ramp + self.rest_s) + dwells);
        Size::check_repeated(
            one.times(self.directions.signs().len() as f64),
            "params.dwell_times_s",
            format_args!("{} dwell times", self.dwell_times_s.len()),
            "params.repeats",
            self.repeats,
            limits,
        )?;
        let mut out = Vec::new();
        for r in 0..self.repeats {
            for t2 in &self.dwell_times_s {
                for &d in self.directions.signs() {
                    let v = f64::from(d) * self.slide_velocity_rad_s;
                    out.push(segment(
                        format!(
                            "slide {}{} rad/s #{r}",
                            sign_str(d),
                            self.slide_velocity_rad_s
                        ),
                        tag(Role::Slide, v, d, r),
                        DriveMode::Velocity,
                        Setpoint::constant(v),
                        vec![Stop::Duration { s: self.slide_s }],
                        self.slide_s,
                    ));
                    out.push(segment(
                        format!("dwell {t2} s {}#{r}", sign_str(d)),
                        tag(Role::Dwell, *t2, d, r),
                        DriveMode::Torque,
                        Setpoint::constant(0.0),
                        vec![Stop::Duration { s: *t2 }],
                        *t2,
                    ));
                    let mut ramp = ramp(
                        limits,
                        f64::from(d) * self.rate_nm_s,
                        cap,
                        self.motion_counts,
                        d,
                        r,
                    );
                    ramp.tag.value = *t2;
                    out.push(ramp);
                    out.push(rest(limits, self.rest_s, d, r));
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let trials: Vec<DwellResult> = crate::analysis::with_role(plan, &parts, Role::Ramp)
            .into_iter()
            .map(|(i, seg, xs)| DwellResult {
                dwell_s: seg.tag.value,
                direction: seg.tag.direction,
                repeat: seg.tag.repeat,
                breakaway: breakaway(seg, xs, super::next_first(&parts, i), &plan.limits),
            })
            .collect();
        let mut out = Output {
            trials,
            ..Output::default()
        };
        for &d in &[1i8, -1] {
            let mut dwells: Vec<f64> = out
                .trials
                .iter()
                .filter(|t| t.direction == d)
                .map(|t| t.dwell_s)
                .collect();
            dwells.sort_by(f64::total_cmp);
            dwells.dedup();
            for t2 in dwells {
                let (m, sd, n) = crate::analysis::mean_std(
                    out.trials
                        .iter()
                        .filter(|t| t.direction == d && t.dwell_s == t2)
                        .filter_map(|t| t.breakaway.map(|b| b.torque_nm)),
                );
                if n == 0 {
                    continue;
                }
                let row = DwellRow {
                    dwell_s: t2,
                    breakaway_torque_nm: m,
                    std_torque_nm: sd,
                    n,
                };
                if d > 0 {
                    out.positive.push(row)
                } else {
                    out.negative.push(row)
                }
            }
        }
        Ok(out)
    }
}
