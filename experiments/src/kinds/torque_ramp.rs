//! `torque_ramp`: torque ramps `tau = m t` at a list of rates, both directions, motion detected
//! by encoder counts, back to rest between ramps → breakaway torque versus rate
//! (Sánchez-Mazuca §4.2, S4 eq. 14; docs/src/identification.md#phi_s step 2, docs/src/models/improved_static.md).
//!
//! For every repeat, rate `m` and direction `d`: a `ramp` segment (torque mode, `d m t`) that
//! ends on motion (`|x - x0| > motion_counts` counts), at the torque cap (`max_torque_nm`, or
//! the bench's torque limit) or at its timeout; then a `rest` (torque 0 until the velocity
//! settles, at most `rest_s`).
//!
//! Analysis: per ramp, the breakaway: the applied torque and the time when gross motion was
//! detected (the threshold crossed), or `null` if the ramp reached its cap without motion. The
//! first visible counts are presliding creep, reported apart (`creep_onset_torque_nm`), never
//! as the breakaway; so the threshold must lie beyond the bench's presliding displacement
//! (the shipped specs use 400 counts, 19 mrad, against the simulated bench's 6 mrad). The breakaway table per direction pools the repeats (mean, std). Its bounds
//! give S4's `f_s` (slow ramps) and `f_c` (fast ramps); the shape gives `t_s`, `delta_t`.
//!
//! Defaults: rates 0.05 (S4 Fig. 10) to 5 N m/s, 3 repeats, 10 counts, rest 1 s.

use super::{Breakaway, Directions, breakaway, motion, rest, segment, sign_str, tag, torque_cap};
use crate::caps::{self, Size};
use crate::error::check;
use crate::plan::{DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of `torque_ramp`: torque ramps tau = m t at a list of rates, both directions, motion
/// detected by encoder counts, rest between ramps → breakaway torque versus torque rate
/// (Sánchez-Mazuca §4.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Ramp rates `m` \[N m/s\], magnitudes, at most 10000; each ramp to the torque cap lasts
    /// at least 5 control periods and at most a day; default [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5].
    #[schemars(length(min = 1, max = caps::MAX_LIST))]
    pub rates_nm_s: Vec<f64>,
    /// Torque cap of every ramp \[N m\]; default null = the bench's torque limit.
    pub max_torque_nm: Option<f64>,
    /// Directions; default both (alternating).
    pub directions: Directions,
    /// Repeats of the whole set, at most 10000 (and the plan at most 1e6 segments and 7 days);
    /// default 3.
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub repeats: u32,
    /// Motion threshold \[encoder counts\], at most 1e6; default 10.
    #[schemars(range(min = 1, max = caps::MAX_MOTION_COUNTS))]
    pub motion_counts: u32,
    /// Longest rest between ramps \[s\], at most a day; default 1.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub rest_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            rates_nm_s: vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0],
            max_torque_nm: None,
            directions: Directions::Both,
            repeats: 3,
            motion_counts: 10,
            rest_s: 1.0,
        }
    }
}

/// One ramp's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RampResult {
    /// Ramp rate \[N m/s\], signed with the direction.
    pub rate_nm_s: f64,
    /// Repeat number.
    pub repeat: u32,
    /// The breakaway, or `null` if the ramp reached its cap without motion.
    pub breakaway: Option<Breakaway>,
}

/// One row of the breakaway table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BreakawayRow {
    /// Ramp rate \[N m/s\], signed.
    pub rate_nm_s: f64,
    /// Mean breakaway torque \[N m\], signed.
    pub breakaway_torque_nm: f64,
    /// Its standard deviation over the repeats \[N m\].
    pub std_torque_nm: f64,
    /// Mean time from ramp start to motion \[s\].
    pub motion_time_s: f64,
    /// Ramps with motion (the others reached the cap).
    pub n: usize,
}

/// Breakaway torque versus rate, per direction, and every ramp.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "TorqueRampResults")]
pub struct Output {
    /// Positive direction, by increasing rate (rates where no ramp moved are left out).
    pub positive: Vec<BreakawayRow>,
    /// Negative direction, by increasing |rate|.
    pub negative: Vec<BreakawayRow>,
    /// Every ramp in run order.
    pub ramps: Vec<RampResult>,
}

/// Checks a list of torque rates; `field` is e.g. `params.rates_nm_s`.
pub(crate) fn check_rates(field: &str, rates: &[f64]) -> Result<(), Error> {
    caps::list(field, rates, caps::MAX_LIST)?;
    check::non_empty(field, rates)?;
    for (i, r) in rates.iter().enumerate() {
        check::positive(&format!("{field}[{i}]"), *r)?;
    }
    Ok(())
}

/// A breakaway ramp at `rate` to `cap` lasts 5 control periods to a day; its timeout.
pub(crate) fn check_ramp(
    field: &str,
    rate: f64,
    cap: f64,
    limits: &BenchLimits,
) -> Result<f64, Error> {
    // A ramp must last at least a few periods to be a ramp.
    if cap / rate < 5.0 * limits.period_s {
        return Err(Error::invalid(
            field,
            rate,
            format!("reaches the cap ({cap} N m) in under 5 control periods"),
        ));
    }
    let t = ramp_timeout(limits, rate, cap);
    caps::segment_s(field, rate, "a ramp to the torque cap", t)?;
    Ok(t)
}

/// The timeout of a ramp: the time to the cap and two periods.
fn ramp_timeout(limits: &BenchLimits, rate: f64, cap: f64) -> f64 {
    cap / rate.abs() + 2.0 * limits.period_s
}

/// A breakaway ramp of `rate` (signed) up to `cap`.
pub(crate) fn ramp(
    limits: &BenchLimits,
    rate: f64,
    cap: f64,
    counts: u32,
    d: i8,
    r: u32,
) -> Segment {
    let t_cap = cap / rate.abs();
    segment(
        format!("ramp {}{} N m/s #{r}", sign_str(d), rate.abs()),
        tag(Role::Ramp, rate, d, r),
        DriveMode::Torque,
        Setpoint::Ramp { start: 0.0, rate },
        vec![
            motion(limits, counts),
            Stop::Limit { level: cap },
            Stop::Duration {
                s: ramp_timeout(limits, rate, cap),
            },
        ],
        // Breakaway is expected at three quarters of the cap (unknown before the run).
        0.75 * t_cap,
    )
}

/// Pools ramp results into table rows per direction.
pub(crate) fn table(ramps: &[(f64, Option<Breakaway>)]) -> (Vec<BreakawayRow>, Vec<BreakawayRow>) {
    let mut keys: Vec<f64> = Vec::new();
    for (k, _) in ramps {
        if !keys.contains(k) {
            keys.push(*k);
        }
    }
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for key in keys {
        let hits: Vec<&Breakaway> = ramps
            .iter()
            .filter(|(k, _)| *k == key)
            .filter_map(|(_, b)| b.as_ref())
            .collect();
        let (m, sd, n) = crate::analysis::mean_std(hits.iter().map(|b| b.torque_nm));
        if n == 0 {
            // No ramp at this rate moved before its cap: listed in `ramps` only.
            continue;
        }
        let (t, _, _) = crate::analysis::mean_std(hits.iter().map(|b| b.motion_time_s));
        let row = BreakawayRow {
            rate_nm_s: key,
            breakaway_torque_nm: m,
            std_torque_nm: sd,
            motion_time_s: t,
            n,
        };
        if key < 0.0 {
            neg.push(row);
        } else {
            pos.push(row);
        }
    }
    let by = |a: &BreakawayRow, b: &BreakawayRow| a.rate_nm_s.abs().total_cmp(&b.rate_nm_s.abs());
    pos.sort_by(by);
    neg.sort_by(by);
    (pos, neg)
}

impl Params {
    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        caps::count("params.repeats", self.repeats.into(), caps::MAX_REPEATS)?;
        check_rates("params.rates_nm_s", &self.rates_nm_s)?;
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
        let mut one = Size::default();
        for (i, r) in self.rates_nm_s.iter().enumerate() {
            let t = check_ramp(&format!("params.rates_nm_s[{i}]"), *r, cap, limits)?;
            one = one.plus(Size::new(2.0, t + self.rest_s));
        }
        Size::check_repeated(
            one.times(self.directions.signs().len() as f64),
            "params.rates_nm_s",
            format_args!("{} rates", self.rates_nm_s.len()),
            "params.repeats",
            self.repeats,
            limits,
        )?;
        let mut out = Vec::new();
        for r in 0..self.repeats {
            for m in &self.rates_nm_s {
                for &d in self.directions.signs() {
                    out.push(ramp(
                        limits,
                        f64::from(d) * m,
                        cap,
                        self.motion_counts,
                        d,
                        r,
                    ));
                    out.push(rest(limits, self.rest_s, d, r));
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let ramps: Vec<RampResult> = crate::analysis::with_role(plan, &parts, Role::Ramp)
            .into_iter()
            .map(|(i, seg, xs)| RampResult {
                rate_nm_s: seg.tag.value,
                repeat: seg.tag.repeat,
                breakaway: breakaway(seg, xs, super::next_first(&parts, i), &plan.limits),
            })
            .collect();
        let pairs: Vec<(f64, Option<Breakaway>)> =
            ramps.iter().map(|r| (r.rate_nm_s, r.breakaway)).collect();
        let (positive, negative) = table(&pairs);
        Ok(Output {
            positive,
            negative,
            ramps,
        })
    }
}
