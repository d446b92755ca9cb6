//! `frictional_lag`: unidirectional sinusoidal velocity `v = A + B sin(w t)` for a list of
//! `w`, and a chirp whose frequency rises linearly (Nnaji eqs. 12–13, S3 §5.1.2;
//! docs/src/identification.md#nnaji) → friction-versus-velocity lag loops.
//!
//! Each run (velocity mode) is preceded by a `settle` at `A` for `settle_s`; with `mirror` the
//! same run follows in the negative direction (`-A - B sin`), which also brings the bench back.
//!
//! Analysis: per run, the loop (velocity, measured torque) over the whole cycles after the
//! first (decimated), and the mean torque difference between the decelerating and the
//! accelerating branch at equal velocity, the branch told by the body's own acceleration (the
//! encoder's second difference), samples at rest left out (`hysteresis_nm`; > 0 when the
//! friction lags behind a curve that rises with velocity, < 0 behind a falling one). Fitting `tau` is `bench fit --procedure nnaji`.
//!
//! Defaults (S3): A = 1 rad/s, B = 0.95 rad/s, w = 2, 5, 10 rad/s, 5 cycles each; chirp from
//! 0.5 to 10 rad/s over 20 s.

use super::{segment, sign_str, tag};
use crate::analysis::{Curve, mean_std};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;

/// The chirp run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chirp {
    /// Start angular frequency \[rad/s\].
    pub omega0_rad_s: f64,
    /// End angular frequency \[rad/s\].
    pub omega1_rad_s: f64,
    /// Sweep duration \[s\], one control period to a day.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub duration_s: f64,
}

/// Parameters of `frictional_lag`: sinusoidal velocity v = A + B sin(w t) for a list of w, and a
/// chirp → friction-versus-velocity lag loops (Nnaji eqs. 12–13).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Mean velocity `A` \[rad/s\]; default 1 (S3).
    pub mean_rad_s: f64,
    /// Velocity amplitude `B` \[rad/s\], `<= A`; default 0.95 (S3).
    pub amplitude_rad_s: f64,
    /// Angular frequencies `w` \[rad/s\], at most 10000, each run (`cycles` of it) one control
    /// period to a day; default [2, 5, 10] (S3).
    #[schemars(length(max = caps::MAX_LIST))]
    pub omegas_rad_s: Vec<f64>,
    /// Cycles per frequency, at most 10000; default 5.
    #[schemars(range(min = 1, max = caps::MAX_CYCLES))]
    pub cycles: u32,
    /// Constant `A` before each run \[s\], at most a day; default 1.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub settle_s: f64,
    /// The chirp run, or null; default 0.5 → 10 rad/s over 20 s.
    pub chirp: Option<Chirp>,
    /// Repeat every run in the negative direction; default true.
    pub mirror: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            mean_rad_s: 1.0,
            amplitude_rad_s: 0.95,
            omegas_rad_s: vec![2.0, 5.0, 10.0],
            cycles: 5,
            settle_s: 1.0,
            chirp: Some(Chirp {
                omega0_rad_s: 0.5,
                omega1_rad_s: 10.0,
                duration_s: 20.0,
            }),
            mirror: true,
        }
    }
}

/// One lag run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LagLoop {
    /// Angular frequency \[rad/s\] (the chirp's end frequency for the chirp).
    pub omega_rad_s: f64,
    /// Whether this is the chirp.
    pub chirp: bool,
    /// Direction, ±1.
    pub direction: i8,
    /// Velocity \[rad/s\] (central difference of the encoder position, x) against measured
    /// torque \[N m\] (y), at most 2000 points.
    pub loop_v_torque: Curve,
    /// Mean torque on decelerating minus accelerating branches at equal velocity \[N m\],
    /// with the direction of motion removed: > 0 when the friction lags behind a curve that
    /// rises with speed (viscous region), < 0 behind a falling one (Stribeck region); null
    /// when no velocity bin has both branches.
    pub hysteresis_nm: Option<f64>,
    /// Samples used.
    pub n: usize,
}

/// Lag loops.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "LagResults")]
pub struct Output {
    /// Every run in order.
    pub loops: Vec<LagLoop>,
}

impl Params {
    /// The plan's size, counted: every run's duration within its caps, and the sum.
    fn size(&self, limits: &BenchLimits) -> Result<(), Error> {
        caps::count("params.cycles", self.cycles.into(), caps::MAX_CYCLES)?;
        caps::list("params.omegas_rad_s", &self.omegas_rad_s, caps::MAX_LIST)?;
        caps::seconds("params.settle_s", self.settle_s, caps::MAX_SEGMENT_S)?;
        let settle = if self.settle_s > 0.0 { 1.0 } else { 0.0 };
        let run = |dur: f64| Size::new(1.0 + settle, dur + self.settle_s);
        let mut total = Size::default();
        for (i, w) in self.omegas_rad_s.iter().enumerate() {
            let f = format!("params.omegas_rad_s[{i}]");
            check::positive(&f, *w)?;
            let dur = TAU * f64::from(self.cycles) / w;
            let what = format!("{} cycles", self.cycles);
            caps::segment_s(&f, *w, &what, dur)?;
            caps::window_of(&f, *w, &what, dur, limits)?;
            total = total.plus(run(dur));
        }
        let mut field = "params.omegas_rad_s";
        let mut value = format!("{} frequencies", self.omegas_rad_s.len());
        if let Some(c) = &self.chirp {
            let f = "params.chirp.duration_s";
            check::positive(f, c.duration_s)?;
            caps::seconds(f, c.duration_s, caps::MAX_SEGMENT_S)?;
            caps::window(f, c.duration_s, limits)?;
            // The chirp's share decides which field the total names.
            if c.duration_s > total.duration_s {
                field = f;
                value = c.duration_s.to_string();
            }
            total = total.plus(run(c.duration_s));
        }
        let dirs = if self.mirror { 2.0 } else { 1.0 };
        total.times(dirs).check(field, value, limits)
    }

    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        check::positive("params.mean_rad_s", self.mean_rad_s)?;
        check::non_negative("params.amplitude_rad_s", self.amplitude_rad_s)?;
        if self.amplitude_rad_s > self.mean_rad_s {
            return Err(Error::invalid(
                "params.amplitude_rad_s",
                self.amplitude_rad_s,
                format!(
                    "must be <= mean_rad_s ({}) so the motion stays unidirectional",
                    self.mean_rad_s
                ),
            ));
        }
        let peak = self.mean_rad_s + self.amplitude_rad_s;
        if peak > limits.velocity_rad_s {
            return Err(Error::limit(
                "params.amplitude_rad_s: peak velocity mean_rad_s + amplitude_rad_s",
                peak,
                LimitKind::Velocity,
                limits.velocity_rad_s,
            ));
        }
        check::at_least("params.cycles", self.cycles, 1)?;
        check::non_negative("params.settle_s", self.settle_s)?;
        self.size(limits)?;
        let mut runs: Vec<(Role, f64, Setpoint, f64, String)> = Vec::new();
        for (i, w) in self.omegas_rad_s.iter().enumerate() {
            check::positive(&format!("params.omegas_rad_s[{i}]"), *w)?;
            let dur = TAU * f64::from(self.cycles) / w;
            let travel = self.mean_rad_s * (dur + self.settle_s);
            if travel > limits.position_window_rad {
                return Err(Error::limit(
                    format!(
                        "params.omegas_rad_s[{i}]: travel over {} cycles",
                        self.cycles
                    ),
                    travel,
                    LimitKind::Position,
                    limits.position_window_rad,
                ));
            }
            runs.push((
                Role::Lag,
                *w,
                Setpoint::Sine {
                    offset: self.mean_rad_s,
                    amplitude: self.amplitude_rad_s,
                    omega_rad_s: *w,
                    phase_rad: 0.0,
                },
                dur,
                format!("lag w={w} rad/s"),
            ));
        }
        if let Some(c) = &self.chirp {
            check::non_negative("params.chirp.omega0_rad_s", c.omega0_rad_s)?;
            check::positive("params.chirp.omega1_rad_s", c.omega1_rad_s)?;
            check::positive("params.chirp.duration_s", c.duration_s)?;
            let travel = self.mean_rad_s * (c.duration_s + self.settle_s);
            if travel > limits.position_window_rad {
                return Err(Error::limit(
                    "params.chirp.duration_s: travel",
                    travel,
                    LimitKind::Position,
                    limits.position_window_rad,
                ));
            }
            runs.push((
                Role::Chirp,
                c.omega1_rad_s,
                Setpoint::Chirp {
                    offset: self.mean_rad_s,
                    amplitude: self.amplitude_rad_s,
                    omega0_rad_s: c.omega0_rad_s,
                    omega1_rad_s: c.omega1_rad_s,
                    duration_s: c.duration_s,
                },
                c.duration_s,
                format!("chirp {}..{} rad/s", c.omega0_rad_s, c.omega1_rad_s),
            ));
        }
        if runs.is_empty() {
            return Err(Error::invalid(
                "params.omegas_rad_s",
                "[]",
                "must not be empty without a chirp",
            ));
        }
        let dirs: &[i8] = if self.mirror { &[1, -1] } else { &[1] };
        let mut out = Vec::new();
        for (role, w, sp, dur, label) in runs {
            for &d in dirs {
                let s = f64::from(d);
                if self.settle_s > 0.0 {
                    out.push(segment(
                        format!("settle {}{} rad/s", sign_str(d), self.mean_rad_s),
                        tag(Role::Settle, s * self.mean_rad_s, d, 0),
                        DriveMode::Velocity,
                        Setpoint::constant(s * self.mean_rad_s),
                        vec![Stop::Duration { s: self.settle_s }],
                        self.settle_s,
                    ));
                }
                let sp = scale(&sp, s);
                out.push(segment(
                    format!("{label} {}", sign_str(d)),
                    tag(role, w, d, 0),
                    DriveMode::Velocity,
                    sp,
                    vec![Stop::Duration { s: dur }],
                    dur,
                ));
            }
        }
        Ok(out)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let mut out = Output::default();
        // Samples slower than 3 counts per period are at rest (stick, not lag).
        let rest_v = 3.0 * plan.limits.rad_per_count() / plan.period_s();
        for role in [Role::Lag, Role::Chirp] {
            for (_, seg, xs) in crate::analysis::with_role(plan, &parts, role) {
                // Drop the first cycle (transient); the chirp is kept whole.
                let skip = if role == Role::Lag {
                    let period = TAU / seg.tag.value;
                    xs.iter()
                        .position(|s| s.t - xs[0].t >= period)
                        .unwrap_or(xs.len())
                } else {
                    0
                };
                let xs = &xs[skip..];
                let d = f64::from(seg.tag.direction);
                out.loops.push(LagLoop {
                    omega_rad_s: seg.tag.value,
                    chirp: role == Role::Chirp,
                    direction: seg.tag.direction,
                    loop_v_torque: {
                        let mut c = Curve::from_samples(xs, 2000, |s| s.v, Sample::measured_torque);
                        let every = xs.len().div_ceil(2000).max(1);
                        c.x = (0..xs.len())
                            .step_by(every)
                            .map(|k| central_v(xs, k))
                            .collect();
                        c
                    },
                    hysteresis_nm: hysteresis(
                        xs,
                        accel_window(seg.tag.value, plan.period_s()),
                        rest_v,
                    )
                    .map(|h| d * h),
                    n: xs.len(),
                });
            }
        }
        Ok(out)
    }
}

fn scale(sp: &Setpoint, s: f64) -> Setpoint {
    match sp.clone() {
        Setpoint::Sine {
            offset,
            amplitude,
            omega_rad_s,
            phase_rad,
        } => Setpoint::Sine {
            offset: s * offset,
            amplitude: s * amplitude,
            omega_rad_s,
            phase_rad,
        },
        Setpoint::Chirp {
            offset,
            amplitude,
            omega0_rad_s,
            omega1_rad_s,
            duration_s,
        } => Setpoint::Chirp {
            offset: s * offset,
            amplitude: s * amplitude,
            omega0_rad_s,
            omega1_rad_s,
            duration_s,
        },
        other => other,
    }
}

/// Half-width \[samples\] of the second difference that tells accelerating from
/// decelerating samples: a fortieth of the shortest period (`omega_max`, the sinusoid's or the
/// chirp's end frequency), 2 to 20 samples, so the quantised position gives a clean sign.
fn accel_window(omega_max: f64, dt: f64) -> usize {
    ((TAU / omega_max / 40.0 / dt).round() as usize).clamp(2, 20)
}

/// Mean over 20 velocity bins of (torque while decelerating − torque while accelerating);
/// samples slower than `rest_v` are left out. The branch is the body's own: the sign of the
/// speed times the acceleration, from the encoder's second difference over `w` samples each
/// side. (The setpoint's phase would misfile the samples near the turning points, where the
/// velocity loop lags behind its reference, and those sit in the steep Stribeck region.)
fn hysteresis(xs: &[Sample], w: usize, rest_v: f64) -> Option<f64> {
    if xs.len() <= 2 * w {
        return None;
    }
    let accel = |k: usize| xs[k + w].x - 2.0 * xs[k].x + xs[k - w].x;
    let moving = |k: &usize| central_v(xs, *k).abs() > rest_v;
    let inner = || (w..xs.len() - w).filter(moving);
    let (lo, hi) = inner()
        .map(|k| central_v(xs, k))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    const BINS: usize = 20;
    let mut acc = [[0.0f64; 2]; BINS];
    let mut cnt = [[0usize; 2]; BINS];
    for k in inner() {
        let (v, a) = (central_v(xs, k), accel(k));
        if a == 0.0 {
            continue;
        }
        let b = (((v - lo) / (hi - lo)) * BINS as f64)
            .floor()
            .clamp(0.0, (BINS - 1) as f64) as usize;
        // |v| grows when v and dv/dt have the same sign.
        let j = usize::from(v * a < 0.0);
        acc[b][j] += xs[k].measured_torque();
        cnt[b][j] += 1;
    }
    let (m, _, n) = mean_std(
        (0..BINS)
            .filter(|&b| cnt[b][0] > 0 && cnt[b][1] > 0)
            .map(|b| acc[b][1] / cnt[b][1] as f64 - acc[b][0] / cnt[b][0] as f64),
    );
    (n > 0).then_some(m)
}

/// Velocity at sample `k` by the central difference of the encoder position: no lag, unlike
/// a drive's filtered estimate (whose lag would show as a spurious loop); the drive's `v` at
/// the ends.
fn central_v(xs: &[Sample], k: usize) -> f64 {
    if k == 0 || k + 1 >= xs.len() || xs[k + 1].t <= xs[k - 1].t {
        return xs[k].v;
    }
    (xs[k + 1].x - xs[k - 1].x) / (xs[k + 1].t - xs[k - 1].t)
}
