//! `breakaway_staircase`: the torque rises in increments `xi`, each held `dwell_s`, until
//! motion; then torque 0 (reset) and again, both directions, repeated (Nouailletas §IV.B,
//! Fig. 7; docs/src/identification.md#staircase).
//!
//! Analysis: the level applied when gross motion is detected (the motion threshold crossed,
//! not the first counts of presliding creep) in each staircase is one `f_s` sample;
//! `f_s` per direction is their mean (with std and count), and `fs_nm` the mean of the two
//! directions' magnitudes, as S2 does ((0.0777 + 0.0853)/2 = 0.0815 N m).
//!
//! Defaults: `xi` = 0.005 N m (S2), dwell 0.2 s, 5 go-and-returns, 10 counts, reset 0.5 s.

use super::{Breakaway, Directions, breakaway, motion, rest, segment, sign_str, tag, torque_cap};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of `breakaway_staircase`: the torque rises in increments xi, each held for a dwell,
/// until motion; then a reset, both directions, repeated → static friction f_s per direction
/// (Nouailletas §IV.B).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Torque increment `xi` \[N m\]; default 0.005 (S2).
    pub step_nm: f64,
    /// Hold time of each level \[s\], one control period to a day (and a whole staircase to
    /// the cap at most a day); default 0.2.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub dwell_s: f64,
    /// Torque cap \[N m\]; default null = the bench's torque limit.
    pub max_torque_nm: Option<f64>,
    /// Directions; default both (alternating).
    pub directions: Directions,
    /// Go-and-returns, at most 10000 (and the plan at most 1e6 segments and 7 days); default 5.
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub repeats: u32,
    /// Motion threshold \[encoder counts\], at most 1e6; default 10.
    #[schemars(range(min = 1, max = caps::MAX_MOTION_COUNTS))]
    pub motion_counts: u32,
    /// Longest reset (torque 0) after motion \[s\], at most a day; default 0.5.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub reset_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            step_nm: 0.005,
            dwell_s: 0.2,
            max_torque_nm: None,
            directions: Directions::Both,
            repeats: 5,
            motion_counts: 10,
            reset_s: 0.5,
        }
    }
}

/// One staircase's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StairResult {
    /// Direction, ±1.
    pub direction: i8,
    /// Repeat number.
    pub repeat: u32,
    /// The breakaway, or `null` if the cap was reached without motion.
    pub breakaway: Option<Breakaway>,
}

/// Static friction per direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FsEstimate {
    /// Mean breakaway level \[N m\], signed.
    pub fs_nm: f64,
    /// Standard deviation \[N m\].
    pub std_nm: f64,
    /// Staircases that moved.
    pub n: usize,
}

/// Staircase results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "StaircaseResults")]
pub struct Output {
    /// Positive direction (null if no staircase moved).
    pub positive: Option<FsEstimate>,
    /// Negative direction.
    pub negative: Option<FsEstimate>,
    /// Mean of the directions' magnitudes \[N m\] (S2), or the one direction measured.
    pub fs_nm: Option<f64>,
    /// Every staircase in run order.
    pub stairs: Vec<StairResult>,
}

impl Params {
    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        check::positive("params.step_nm", self.step_nm)?;
        if self.step_nm > limits.torque_nm {
            return Err(Error::limit(
                "params.step_nm",
                self.step_nm,
                LimitKind::Torque,
                limits.torque_nm,
            ));
        }
        caps::count("params.repeats", self.repeats.into(), caps::MAX_REPEATS)?;
        check::positive("params.dwell_s", self.dwell_s)?;
        caps::seconds("params.dwell_s", self.dwell_s, caps::MAX_SEGMENT_S)?;
        caps::window("params.dwell_s", self.dwell_s, limits)?;
        let cap = torque_cap("params.max_torque_nm", self.max_torque_nm, limits)?;
        check::at_least("params.repeats", self.repeats, 1)?;
        check::at_least("params.motion_counts", self.motion_counts, 1)?;
        caps::count(
            "params.motion_counts",
            self.motion_counts.into(),
            caps::MAX_MOTION_COUNTS,
        )?;
        check::positive("params.reset_s", self.reset_s)?;
        caps::seconds("params.reset_s", self.reset_s, caps::MAX_SEGMENT_S)?;
        let levels = (cap / self.step_nm + 1e-9).floor();
        if levels > 1e6 {
            return Err(Error::invalid(
                "params.step_nm",
                self.step_nm,
                "gives more than 1e6 levels below the cap",
            ));
        }
        let t_cap = levels * self.dwell_s;
        caps::segment_s(
            "params.dwell_s",
            self.dwell_s,
            format!("a staircase of {levels} levels").as_str(),
            t_cap,
        )?;
        let dirs = self.directions.signs().len() as f64;
        Size::check_repeated(
            Size::new(2.0, t_cap + self.reset_s).times(dirs),
            "params.dwell_s",
            self.dwell_s,
            "params.repeats",
            self.repeats,
            limits,
        )?;
        let mut out = Vec::new();
        for r in 0..self.repeats {
            for &d in self.directions.signs() {
                let step = f64::from(d) * self.step_nm;
                out.push(segment(
                    format!("staircase {}{} N m #{r}", sign_str(d), self.step_nm),
                    tag(Role::Staircase, step, d, r),
                    DriveMode::Torque,
                    Setpoint::Staircase {
                        step,
                        dwell_s: self.dwell_s,
                    },
                    vec![
                        motion(limits, self.motion_counts),
                        Stop::Limit { level: cap },
                        Stop::Duration { s: t_cap },
                    ],
                    0.75 * t_cap,
                ));
                out.push(rest(limits, self.reset_s, d, r));
            }
        }
        Ok(out)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let stairs: Vec<StairResult> = crate::analysis::with_role(plan, &parts, Role::Staircase)
            .into_iter()
            .map(|(i, seg, xs)| StairResult {
                direction: seg.tag.direction,
                repeat: seg.tag.repeat,
                breakaway: breakaway(seg, xs, super::next_first(&parts, i), &plan.limits),
            })
            .collect();
        let est = |d: i8| {
            let (m, sd, n) = crate::analysis::mean_std(
                stairs
                    .iter()
                    .filter(|s| s.direction == d)
                    .filter_map(|s| s.breakaway.map(|b| b.torque_nm)),
            );
            (n > 0).then_some(FsEstimate {
                fs_nm: m,
                std_nm: sd,
                n,
            })
        };
        let (positive, negative) = (est(1), est(-1));
        let fs_nm = match (&positive, &negative) {
            (Some(p), Some(n)) => Some(0.5 * (p.fs_nm.abs() + n.fs_nm.abs())),
            (Some(e), None) | (None, Some(e)) => Some(e.fs_nm.abs()),
            (None, None) => None,
        };
        Ok(Output {
            positive,
            negative,
            fs_nm,
            stairs,
        })
    }
}
