//! `presliding`: the four presliding experiments of Nnaji §4.2 (S3 §5.1.2) and
//! Sánchez-Mazuca §4.5 (S4 eqs. 23–25); docs/src/identification.md#nnaji, docs/src/identification.md#presliding_sine, docs/src/identification.md#step_damping.
//!
//! - (a) `ramp`: a slow displacement ramp (position mode) through gross sliding, repeated with
//!   alternating direction → breakaway displacement and torque per ramp, the torque-versus-
//!   displacement curve for the `Z_b` fit, and the initial presliding stiffness per direction
//!   of loading: one rule for both, the slope from every reversal of the motion (or start from
//!   rest) over the first 15 % of the torque swing.
//! - (b) `reversals`: a position signal through nested reversal points kept below stiction →
//!   hysteresis loops with their reversal points.
//! - (c) `sine`: a sinusoidal torque `A sin(2 pi f t)` with `A` below `f_c/2` → the steady
//!   microdisplacement amplitude `theta0` and the stiffness `sigma0 = A/theta0` (S4 eq. 25),
//!   `theta0` from a least-squares sinusoid fit over the cycles after the second.
//! - (d) `step`: a small torque step → the micro-motion's final displacement, overshoot, damping
//!   ratio and natural frequency, hence stiffness, inertia `J = k/w_n^2` and damping
//!   `sigma1 + f_v = 2 zeta k / w_n` (S4 §4.5).
//!
//! Position parts are relative to the position where their segment starts. Torque parts are
//! preceded by a rest at torque 0.
//!
//! Defaults: 10 ramps at 2 mrad/s over 30 mrad (S3: 10 repetitions; its `Z_b` is 6 mrad);
//! reversals at 1 mrad/s through 4, −4, 2, −1, 2, −4, 4 mrad; sine 0.3 N m at 1 Hz for 10
//! cycles; step 0.2 N m held 0.5 s.

use super::{rest, segment, sign_str, tag, within};
use crate::analysis::{Curve, fit_sine};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{Anchor, DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::f64::consts::{PI, TAU};

/// The parts of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// (a) displacement ramps into gross sliding.
    Ramp,
    /// (b) nested reversals below stiction.
    Reversals,
    /// (c) sinusoidal torque below the Coulomb level.
    Sine,
    /// (d) small torque step.
    Step,
}

/// Parameters of `presliding`: four presliding experiments, (a) slow displacement ramps
/// through gross sliding, (b) nested reversals below stiction, (c) a sinusoidal torque below
/// f_c/2, (d) a small torque step → breakaway displacement, hysteresis loops, stiffness sigma0
/// and micro-motion damping (Nnaji §4.2, Sánchez-Mazuca §4.5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Parts to run, in this order, at most 16; default all four.
    #[schemars(length(min = 1, max = caps::MAX_PARTS))]
    pub parts: Vec<Part>,
    /// (a) ramp speed \[rad/s\]: a ramp lasts one control period to a day; default 0.002.
    pub ramp_rate_rad_s: f64,
    /// (a) ramp length \[rad\]; default 0.03.
    pub ramp_distance_rad: f64,
    /// (a) number of ramps (alternating direction), at most 10000; default 10 (S3).
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub ramp_repeats: u32,
    /// (b) reversal points relative to the start \[rad\], at most 10000; default [0.004, -0.004,
    /// 0.002, -0.001, 0.002, -0.004, 0.004].
    #[schemars(length(min = 1, max = caps::MAX_LIST))]
    pub reversals_rad: Vec<f64>,
    /// (b) speed between reversal points \[rad/s\]: the path lasts one control period to a
    /// day; default 0.001.
    pub reversals_rate_rad_s: f64,
    /// (c) torque amplitude `A` \[N m\], below `f_c/2`; default 0.3.
    pub sine_amplitude_nm: f64,
    /// (c) frequency \[Hz\], well below `sqrt(sigma0/J)/(2 pi)`; default 1.
    pub sine_frequency_hz: f64,
    /// (c) cycles, 3 to 10000 (and the sine at most a day); default 10.
    #[schemars(range(min = 3, max = caps::MAX_CYCLES))]
    pub sine_cycles: u32,
    /// (d) torque step \[N m\], below `f_c`; default 0.2.
    pub step_torque_nm: f64,
    /// (d) hold time of the step, and of the release \[s\], one control period to a day;
    /// default 0.5.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub step_hold_s: f64,
    /// Rest at torque 0 before each torque part \[s\], at most a day; default 0.5.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub rest_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            parts: vec![Part::Ramp, Part::Reversals, Part::Sine, Part::Step],
            ramp_rate_rad_s: 0.002,
            ramp_distance_rad: 0.03,
            ramp_repeats: 10,
            reversals_rad: vec![0.004, -0.004, 0.002, -0.001, 0.002, -0.004, 0.004],
            reversals_rate_rad_s: 0.001,
            sine_amplitude_nm: 0.3,
            sine_frequency_hz: 1.0,
            sine_cycles: 10,
            step_torque_nm: 0.2,
            step_hold_s: 0.5,
            rest_s: 0.5,
        }
    }
}

/// (a) One displacement ramp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReversalsResult {
    /// Displacement from the start \[rad\] (x) against measured torque \[N m\] (y).
    pub curve: Curve,
    /// (displacement, torque) at each reversal point.
    pub reversal_points: Curve,
}

/// (c) The sinusoidal-torque run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
