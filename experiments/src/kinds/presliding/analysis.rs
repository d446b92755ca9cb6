//! The presliding analysis: breakaway and initial stiffness per ramp, the reversal loops, the
//! sine's microdisplacement and the step's micro-motion.

use super::Params;
use crate::analysis::{Curve, fit_sine};
use crate::plan::Role;
use crate::{Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::f64::consts::{PI, TAU};

/// (a) One displacement ramp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "PreslidingRamp")]
pub struct RampResult {
    /// Direction, ±1.
    pub direction: i8,
    /// Peak measured torque in the ramp's direction \[N m\], signed (the breakaway torque).
    pub breakaway_torque_nm: f64,
    /// Displacement from the ramp's start at which the torque change first reached 99 % of
    /// its maximum \[rad\] (the breakaway displacement).
    pub breakaway_displacement_rad: f64,
    /// Initial presliding stiffness \[N m/rad\] of the ramp's first loading in its direction
    /// from a reversal or from rest: the slope of the torque over the displacement over the
    /// first 15 % of the torque swing to the peak, the same rule in both directions (null if
    /// the ramp has no such loading, e.g. it starts while the body already moves its way).
    pub initial_stiffness_nm_rad: Option<f64>,
    /// Displacement from the start \[rad\] (x) against measured torque \[N m\] (y).
    pub curve: Curve,
}

/// (b) The reversal loops.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReversalsResult {
    /// Displacement from the start \[rad\] (x) against measured torque \[N m\] (y).
    pub curve: Curve,
    /// (displacement, torque) at each reversal point.
    pub reversal_points: Curve,
}

/// (c) The sinusoidal-torque run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SineResult {
    /// Commanded amplitude `A` \[N m\].
    pub amplitude_nm: f64,
    /// Steady microdisplacement amplitude `theta0` \[rad\].
    pub theta0_rad: f64,
    /// `A / theta0` \[N m/rad\] (S4 eq. 25); null if no motion was seen.
    pub stiffness_nm_rad: Option<f64>,
    /// Mean drift of the position over the fitted cycles \[rad/s\].
    pub drift_rad_s: f64,
    /// Whether `theta0` spans at least 2 encoder counts (else the stiffness is unreliable).
    pub resolved: bool,
}

/// (d) The torque step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepResult {
    /// Step \[N m\].
    pub torque_nm: f64,
    /// Final displacement \[rad\].
    pub final_displacement_rad: f64,
    /// `torque / final displacement` \[N m/rad\].
    pub stiffness_nm_rad: Option<f64>,
    /// Overshoot as a fraction of the final displacement.
    pub overshoot: Option<f64>,
    /// Damping ratio from the overshoot (null without overshoot: at least critically damped).
    pub damping_ratio: Option<f64>,
    /// Natural frequency from the peak time \[rad/s\].
    pub natural_frequency_rad_s: Option<f64>,
    /// Inertia `k / w_n^2` \[kg m^2\].
    pub inertia_kg_m2: Option<f64>,
    /// `sigma1 + f_v = 2 zeta k / w_n` \[N m s/rad\].
    pub damping_nm_s_rad: Option<f64>,
}

/// Presliding results, per part run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "PreslidingResults")]
pub struct Output {
    /// (a) ramps.
    pub ramps: Vec<RampResult>,
    /// (a) Initial presliding stiffness of loading in the positive direction \[N m/rad\]: the
    /// mean over every reversal into positive motion (and start from rest) in the ramps (null
    /// if none).
    #[serde(default)]
    pub positive_stiffness_nm_rad: Option<f64>,
    /// (a) The same for loading in the negative direction \[N m/rad\].
    #[serde(default)]
    pub negative_stiffness_nm_rad: Option<f64>,
    /// (b) reversals.
    pub reversals: Option<ReversalsResult>,
    /// (c) sine.
    pub sine: Option<SineResult>,
    /// (d) step.
    pub step: Option<StepResult>,
}

impl Params {
    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let q = plan.limits.rad_per_count();
        let mut out = Output::default();
        let mut branches = Vec::new();
        for (_, seg, xs) in crate::analysis::with_role(plan, &parts, Role::DisplacementRamp) {
            let (r, b) = ramp_result(seg.tag.direction, xs, q);
            out.ramps.push(r);
            branches.extend(b);
        }
        let stiffness = |d: i8| {
            let (m, _, n) = crate::analysis::mean_std(
                branches
                    .iter()
                    .filter(|b| b.direction == d)
                    .map(|b| b.stiffness),
            );
            (n > 0).then_some(m)
        };
        out.positive_stiffness_nm_rad = stiffness(1);
        out.negative_stiffness_nm_rad = stiffness(-1);
        if let Some((_, seg, xs)) = crate::analysis::with_role(plan, &parts, Role::Reversals)
            .into_iter()
            .next()
        {
            let (x0, t0) = (xs[0].x, xs[0].t);
            let mut pts = Curve::default();
            if let Setpoint::Samples { t_s, .. } = &seg.setpoint {
                for tr in t_s.iter().skip(1) {
                    if let Some(s) = xs
                        .iter()
                        .min_by(|a, b| (a.t - t0 - tr).abs().total_cmp(&(b.t - t0 - tr).abs()))
                    {
                        pts.x.push(s.x - x0);
                        pts.y.push(s.measured_torque());
                    }
                }
            }
            out.reversals = Some(ReversalsResult {
                curve: Curve::from_samples(xs, 2000, |s| s.x - x0, Sample::measured_torque),
                reversal_points: pts,
            });
        }
        if let Some((_, seg, xs)) = crate::analysis::with_role(plan, &parts, Role::TorqueSine)
            .into_iter()
            .next()
            && let Setpoint::Sine {
                amplitude,
                omega_rad_s,
                ..
            } = seg.setpoint
        {
            let t0 = xs[0].t;
            let skip = xs
                .iter()
                .position(|s| s.t - t0 >= 2.0 * TAU / omega_rad_s)
                .unwrap_or(xs.len());
            let kept = &xs[skip..];
            let t: Vec<f64> = kept.iter().map(|s| s.t - t0).collect();
            let x: Vec<f64> = kept.iter().map(|s| s.x).collect();
            if let Some((theta0, _, drift)) = fit_sine(&t, &x, omega_rad_s) {
                out.sine = Some(SineResult {
                    amplitude_nm: amplitude,
                    theta0_rad: theta0,
                    stiffness_nm_rad: (theta0 > 0.0).then(|| amplitude / theta0),
                    drift_rad_s: drift,
                    resolved: theta0 >= 2.0 * q,
                });
            }
        }
        if let Some((_, seg, xs)) = crate::analysis::with_role(plan, &parts, Role::TorqueStep)
            .into_iter()
            .next()
        {
            out.step = Some(step_result(seg.tag.value, xs));
        }
        Ok(out)
    }
}

/// Fraction of a branch's torque swing (from its reversal point to its peak) over which the
/// initial presliding stiffness is fitted: the first element of a GMS/Maxwell-slip contact
/// breaks at `alpha_1 Σk / k_1` of the swing to saturation (20 % for the simulated bench), on a
/// virgin curve and after a reversal alike (Masing: the reversal branch is the virgin one
/// scaled by 2).
const STIFFNESS_SWING: f64 = 0.15;

/// Reversals are told from encoder quantisation by this many counts of travel back.
const REVERSAL_COUNTS: f64 = 3.0;

/// Fewest encoder counts a stiffness window must span to be used.
const STIFFNESS_MIN_COUNTS: f64 = 4.0;

/// The initial stiffness of one presliding branch.
#[derive(Clone, Copy, Debug)]
struct Branch {
    /// Direction of the motion after the reversal.
    direction: i8,
    /// Slope of the torque over the displacement \[N m/rad\].
    stiffness: f64,
}

fn ramp_result(d: i8, xs: &[Sample], q: f64) -> (RampResult, Vec<Branch>) {
    let s = f64::from(d);
    let (x0, f0) = (xs[0].x, xs[0].measured_torque());
    let df: Vec<f64> = xs.iter().map(|p| s * (p.measured_torque() - f0)).collect();
    let dx: Vec<f64> = xs.iter().map(|p| s * (p.x - x0)).collect();
    let peak_i = (0..xs.len())
        .max_by(|&a, &b| (s * xs[a].measured_torque()).total_cmp(&(s * xs[b].measured_torque())))
        .unwrap_or(0);
    let max_df = df.iter().copied().fold(0.0, f64::max);
    let brk = df.iter().position(|v| *v >= 0.99 * max_df).unwrap_or(0);
    let branches = branches(xs, q);
    let result = RampResult {
        direction: d,
        breakaway_torque_nm: xs[peak_i].measured_torque(),
        breakaway_displacement_rad: dx[brk],
        initial_stiffness_nm_rad: branches
            .iter()
            .find(|b| b.direction == d)
            .map(|b| b.stiffness),
        curve: Curve::from_samples(xs, 1000, |p| p.x - x0, Sample::measured_torque),
    };
    (result, branches)
}

/// The presliding branches of a record: every reversal of the motion (a point where the
/// position is furthest against the motion that follows, told from quantisation by
/// `REVERSAL_COUNTS` counts), and the start if the body leaves it, each with its initial
/// stiffness. The same rule serves both directions, so a ramp that starts while the body
/// still moves its way (after a stick-slip overshoot of the ramp before) is not read as a
/// loading from rest: a branch whose friction is already loaded past half its peak in its
/// direction is a continuation, not a reversal, and is skipped.
fn branches(xs: &[Sample], q: f64) -> Vec<Branch> {
    let hyst = REVERSAL_COUNTS * q;
    let mut turns: Vec<(usize, i8)> = Vec::new();
    let (mut dir, mut lo, mut hi) = (0i8, 0usize, 0usize);
    for (k, p) in xs.iter().enumerate() {
        if p.x < xs[lo].x {
            lo = k;
        }
        if p.x > xs[hi].x {
            hi = k;
        }
        if dir <= 0 && p.x - xs[lo].x >= hyst {
            turns.push((lo, 1));
            (dir, hi) = (1, k);
        } else if dir >= 0 && xs[hi].x - p.x >= hyst {
            turns.push((hi, -1));
            (dir, lo) = (-1, k);
        }
    }
    let mut out = Vec::new();
    for (j, &(r, d)) in turns.iter().enumerate() {
        let end = turns.get(j + 1).map_or(xs.len(), |t| t.0 + 1);
        if let Some(k) = initial_stiffness(f64::from(d), &xs[r..end], q) {
            out.push(Branch {
                direction: d,
                stiffness: k,
            });
        }
    }
    out
}

/// The initial slope of one branch in direction `s` starting at its reversal point
/// (`xs[0]`): the least-squares line of the position on the measured torque (the torque is
/// the precise variable, the position the quantised one) over the first `STIFFNESS_SWING` of
/// the torque swing to the branch's peak. Null for a continuation (see [`branches`]), or
/// when the window spans fewer than `STIFFNESS_MIN_COUNTS` counts.
fn initial_stiffness(s: f64, xs: &[Sample], q: f64) -> Option<f64> {
    let (xr, fr) = (xs.first()?.x, xs[0].measured_torque());
    let peak = xs
        .iter()
        .map(|p| s * p.measured_torque())
        .fold(f64::NEG_INFINITY, f64::max);
    if s * fr > 0.5 * peak {
        return None;
    }
    let swing = peak - s * fr;
    let pts: Vec<(f64, f64)> = xs
        .iter()
        .map(|p| (s * (p.measured_torque() - fr), s * (p.x - xr)))
        .take_while(|(f, _)| *f <= STIFFNESS_SWING * swing)
        .collect();
    let span = pts.iter().map(|p| p.1).fold(0.0, f64::max);
    if pts.len() < 5 || span < STIFFNESS_MIN_COUNTS * q {
        return None;
    }
    let n = pts.len() as f64;
    let (mf, mx) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), (f, x)| (a + f / n, b + x / n));
    let (sff, sfx) = pts.iter().fold((0.0, 0.0), |(a, b), (f, x)| {
        (a + (f - mf) * (f - mf), b + (f - mf) * (x - mx))
    });
    // Compliance dx/df, then its inverse.
    (sff > 0.0 && sfx > 0.0).then(|| sff / sfx)
}

fn step_result(torque: f64, xs: &[Sample]) -> StepResult {
    let x0 = xs[0].x;
    let t0 = xs[0].t;
    let tail = &xs[xs.len() * 4 / 5..];
    let (xf, _, _) = crate::analysis::mean_std(tail.iter().map(|s| s.x - x0));
    let s = xf.signum();
    let (peak_i, peak) = xs
        .iter()
        .enumerate()
        .map(|(i, p)| (i, s * (p.x - x0)))
        .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
    let mut r = StepResult {
        torque_nm: torque,
        final_displacement_rad: xf,
        stiffness_nm_rad: None,
        overshoot: None,
        damping_ratio: None,
        natural_frequency_rad_s: None,
        inertia_kg_m2: None,
        damping_nm_s_rad: None,
    };
    if !(xf.abs() > 0.0 && xf.is_finite()) {
        return r;
    }
    let k = torque / xf;
    r.stiffness_nm_rad = Some(k);
    let os = (peak - xf.abs()) / xf.abs();
    r.overshoot = Some(os.max(0.0));
    if os > 1e-3 {
        let l = os.ln();
        let zeta = -l / (PI * PI + l * l).sqrt();
        let tp = xs[peak_i].t - t0;
        if tp > 0.0 {
            let wn = PI / tp / (1.0 - zeta * zeta).sqrt();
            r.damping_ratio = Some(zeta);
            r.natural_frequency_rad_s = Some(wn);
            r.inertia_kg_m2 = Some(k / (wn * wn));
            r.damping_nm_s_rad = Some(2.0 * zeta * k / wn);
        }
    }
    r
}
