//! `constant_velocity_sweep`: constant velocity references in both directions, each held to
//! steady state and then measured → Stribeck points (Nnaji §4.2 / S3 §5.1.1, Sánchez-Mazuca
//! §4.1 / S4 eq. 22; docs/src/identification.md#static_curve).
//!
//! For every repeat and every velocity magnitude `v` (in the order given), and every direction
//! `d`: a `settle` segment (velocity mode, `d v`, `settle_s`) then a `measure` segment (same
//! reference, `measure_s`). Directions alternate so the bench returns near its start.
//!
//! Analysis: per direction and velocity, the mean measured velocity and the mean, standard
//! deviation and count of the measured torque over all `measure` samples of every repeat. At
//! steady state the torque equals the friction: the points lie on `F_ss(v)`. A point where the
//! velocity loop did not hold the set point (the encoder's speed over windows of 20 counts, at least 10 ms and two samples,
//! misses it by more than 5 % on average or spreads over 10 % of it, or the mean measured
//! velocity misses it by more than 5 %: stick-slip on the falling
//! part of the Stribeck curve) is flagged `stick_slip` and left out of fits.
//!
//! Defaults: Nnaji's identification set, 0.003 to 1 rad/s in steps of 0.003 rad/s, 10 runs per
//! velocity; settle 1 s and measure 2 s (not given by the papers).

use super::{Directions, segment, sign_str, tag};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Flags, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The velocity magnitudes \[rad/s\]: a list, a linear range or a logarithmic range.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Velocities {
    /// Explicit magnitudes, e.g. `[0.01, 0.1, 1]` (at most 10000).
    List(#[schemars(length(min = 1, max = caps::MAX_LIST))] Vec<f64>),
    /// `from`, `from + step`, … up to `to` (inclusive within 1e-9 of a step), at most 10000
    /// magnitudes.
    Range {
        /// First magnitude \[rad/s\].
        from: f64,
        /// Last magnitude \[rad/s\].
        to: f64,
        /// Increment \[rad/s\].
        step: f64,
    },
    /// `count` magnitudes spaced logarithmically from `from` to `to`.
    LogRange {
        /// First magnitude \[rad/s\].
        from: f64,
        /// Last magnitude \[rad/s\].
        to: f64,
        /// Number of magnitudes (2..=10000).
        #[schemars(range(min = 2, max = caps::MAX_LIST))]
        count: u32,
    },
}

impl<'de> Deserialize<'de> for Velocities {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Velocities, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Range {
            from: f64,
            to: f64,
            step: f64,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct LogRange {
            from: f64,
            to: f64,
            count: u32,
        }
        use serde::de::Error as _;
        let v = serde_json::Value::deserialize(d)?;
        let bad = |e: serde_json::Error| D::Error::custom(format!("velocities: {e}"));
        if v.is_array() {
            return serde_json::from_value(v).map(Velocities::List).map_err(bad);
        }
        match v.as_object() {
            Some(o) if o.contains_key("step") => serde_json::from_value::<Range>(v)
                .map(|r| Velocities::Range {
                    from: r.from,
                    to: r.to,
                    step: r.step,
                })
                .map_err(bad),
            Some(o) if o.contains_key("count") => serde_json::from_value::<LogRange>(v)
                .map(|r| Velocities::LogRange {
                    from: r.from,
                    to: r.to,
                    count: r.count,
                })
                .map_err(bad),
            _ => Err(D::Error::custom(
                "velocities must be a list of magnitudes [rad/s], {from, to, step} or {from, to, count}",
            )),
        }
    }
}

impl Velocities {
    /// How many magnitudes there are, counted without expanding, within [`caps::MAX_LIST`];
    /// errors name `params.velocities…`.
    pub fn count(&self) -> Result<u32, Error> {
        let f = "params.velocities";
        match self {
            Velocities::List(v) => {
                caps::list(f, v, caps::MAX_LIST)?;
                Ok(v.len() as u32)
            }
            Velocities::Range { from, to, step } => {
                check::positive(&format!("{f}.from"), *from)?;
                check::positive(&format!("{f}.step"), *step)?;
                if !(to.is_finite() && to >= from) {
                    return Err(Error::invalid(
                        format!("{f}.to"),
                        to,
                        format!("must be >= from ({from})"),
                    ));
                }
                // In f64: a tiny step gives a huge (not wrapped) count.
                let n = ((to - from) / step + 1e-9).floor() + 1.0;
                if n.is_nan() || n > f64::from(caps::MAX_LIST) {
                    return Err(Error::invalid(
                        format!("{f}.step"),
                        step,
                        format!("gives {n:e} velocities, over the cap of {}", caps::MAX_LIST),
                    ));
                }
                Ok(n as u32)
            }
            Velocities::LogRange { from, to, count } => {
                check::positive(&format!("{f}.from"), *from)?;
                check::positive(&format!("{f}.to"), *to)?;
                check::at_least(&format!("{f}.count"), *count, 2)?;
                caps::count(&format!("{f}.count"), u64::from(*count), caps::MAX_LIST)?;
                Ok(*count)
            }
        }
    }

    /// The magnitudes, validated (finite, > 0, at most [`caps::MAX_LIST`]); errors name
    /// `params.velocities…`.
    pub fn expand(&self) -> Result<Vec<f64>, Error> {
        let f = "params.velocities";
        let n = self.count()?;
        let v = match self {
            Velocities::List(v) => v.clone(),
            Velocities::Range { from, step, .. } => {
                (0..n).map(|i| from + step * f64::from(i)).collect()
            }
            Velocities::LogRange { from, to, count } => {
                let r = (to / from).ln();
                (0..*count)
                    .map(|i| from * (r * f64::from(i) / f64::from(count - 1)).exp())
                    .collect()
            }
        };
        check::non_empty(f, &v)?;
        for (i, x) in v.iter().enumerate() {
            check::positive(&format!("{f}[{i}]"), *x)?;
        }
        Ok(v)
    }
}

/// Parameters of `constant_velocity_sweep`: constant velocity references in both directions, each
/// held to steady state and then measured → Stribeck points per direction (Nnaji §4.2,
/// Sánchez-Mazuca §4.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Velocity magnitudes \[rad/s\], at most 10000; default 0.003..=1 step 0.003 (Nnaji).
    pub velocities: Velocities,
    /// Directions; default both (alternating).
    pub directions: Directions,
    /// Time to reach steady state at each velocity \[s\], at most a day; default 1.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub settle_s: f64,
    /// Measurement time at each velocity \[s\], one control period to a day; default 2.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub measure_s: f64,
    /// Repeats of the whole sweep, at most 10000 (and the plan at most 1e6 segments and
    /// 7 days); default 10 (Nnaji: 10 runs per velocity).
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub repeats: u32,
    /// Speeds below this \[rad/s\] are held by the position loop on a reference ramped at
    /// the speed from the position at the segment's start (its stiffness and integral action
    /// hold speeds where a velocity loop falls into stick-slip); the others by the velocity
    /// loop. Default 0: every speed by the velocity loop (left out of the stored spec, so a
    /// spec written before it reads back as written).
    #[serde(skip_serializing_if = "is_zero")]
    pub position_below_rad_s: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Default for Params {
    fn default() -> Params {
        Params {
            velocities: Velocities::Range {
                from: 0.003,
                to: 1.0,
                step: 0.003,
            },
            directions: Directions::Both,
            settle_s: 1.0,
            measure_s: 2.0,
            repeats: 10,
            position_below_rad_s: 0.0,
        }
    }
}

/// One Stribeck point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StribeckPoint {
    /// Velocity reference \[rad/s\], signed.
    pub setpoint_rad_s: f64,
    /// Mean measured velocity \[rad/s\], signed.
    pub velocity_rad_s: f64,
    /// Mean measured torque \[N m\], signed (the friction at steady state).
    pub mean_torque_nm: f64,
    /// Standard deviation of the measured torque \[N m\].
    pub std_torque_nm: f64,
    /// Number of samples averaged.
    pub n: usize,
    /// Standard deviation of the velocity over windows of at least 20 encoder counts of
    /// travel \[rad/s\] (the encoder's own speed, free of the count quantisation of a
    /// per-tick estimate).
    #[serde(default)]
    pub velocity_std_rad_s: f64,
    /// The velocity loop did not hold the set point: the windowed velocity's mean misses it by
    /// more than 5 % or its spread exceeds 10 % of it (friction-induced stick-slip below the
    /// Stribeck velocity). The torque is then an average over stick and slip, not a point of
    /// the steady-state curve: fits leave such points out.
    #[serde(default)]
    pub stick_slip: bool,
}

/// Shortest window of the encoder speed \[s\].
const WINDOW_MIN_S: f64 = 0.01;

/// Largest relative miss of the windowed mean velocity before a point is flagged.
const MEAN_MISS: f64 = 0.05;
/// Largest relative spread (std) of the windowed velocity before a point is flagged.
const SPREAD_MISS: f64 = 0.1;

/// Stribeck points per direction, sorted by increasing `|velocity|`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "SweepResults")]
pub struct Output {
    /// Positive direction.
    pub positive: Vec<StribeckPoint>,
    /// Negative direction.
    pub negative: Vec<StribeckPoint>,
}

impl Params {
    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        caps::count("params.repeats", self.repeats.into(), caps::MAX_REPEATS)?;
        let n = self.velocities.count()?;
        check::positive("params.settle_s", self.settle_s)?;
        caps::seconds("params.settle_s", self.settle_s, caps::MAX_SEGMENT_S)?;
        check::positive("params.measure_s", self.measure_s)?;
        caps::seconds("params.measure_s", self.measure_s, caps::MAX_SEGMENT_S)?;
        caps::window("params.measure_s", self.measure_s, limits)?;
        check::at_least("params.repeats", self.repeats, 1)?;
        if !(self.position_below_rad_s.is_finite() && self.position_below_rad_s >= 0.0) {
            return Err(Error::invalid(
                "params.position_below_rad_s",
                self.position_below_rad_s,
                "must be a finite speed >= 0",
            ));
        }
        let per_velocity = Size::new(2.0, self.settle_s + self.measure_s);
        Size::check_repeated(
            per_velocity.times(f64::from(n) * self.directions.signs().len() as f64),
            "params.velocities",
            format_args!("{n} velocities"),
            "params.repeats",
            self.repeats,
            limits,
        )?;
        let v = self.velocities.expand()?;
        for (i, x) in v.iter().enumerate() {
            if *x > limits.velocity_rad_s {
                return Err(Error::limit(
                    format!("params.velocities[{i}]"),
                    *x,
                    LimitKind::Velocity,
                    limits.velocity_rad_s,
                ));
            }
            let travel = x * (self.settle_s + self.measure_s);
            if travel > limits.position_window_rad {
                return Err(Error::limit(
                    format!("params.velocities[{i}]: travel over settle_s + measure_s"),
                    travel,
                    LimitKind::Position,
                    limits.position_window_rad,
                ));
            }
        }
        let mut out = Vec::new();
        for r in 0..self.repeats {
            for x in &v {
                for &d in self.directions.signs() {
                    let vr = f64::from(d) * x;
                    let (mode, sp) = if *x < self.position_below_rad_s {
                        let ramp = Setpoint::Ramp {
                            start: 0.0,
                            rate: vr,
                        };
                        (DriveMode::Position, ramp)
                    } else {
                        (DriveMode::Velocity, Setpoint::constant(vr))
                    };
                    let anchored = |mut s: Segment| {
                        if mode == DriveMode::Position {
                            s.anchor = crate::plan::Anchor::SegmentStart;
                        }
                        s
                    };
                    out.push(anchored(segment(
                        format!("settle {}{x} rad/s #{r}", sign_str(d)),
                        tag(Role::Settle, vr, d, r),
                        mode,
                        sp.clone(),
                        vec![Stop::Duration { s: self.settle_s }],
                        self.settle_s,
                    )));
                    out.push(anchored(segment(
                        format!("measure {}{x} rad/s #{r}", sign_str(d)),
                        tag(Role::Measure, vr, d, r),
                        mode,
                        sp,
                        vec![Stop::Duration { s: self.measure_s }],
                        self.measure_s,
                    )));
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let measures = crate::analysis::with_role(plan, &parts, Role::Measure);
        // Group by signed setpoint, keeping first-seen order.
        let mut keys: Vec<f64> = Vec::new();
        for (_, seg, _) in &measures {
            if !keys.contains(&seg.tag.value) {
                keys.push(seg.tag.value);
            }
        }
        let mut out = Output::default();
        for key in keys {
            let pooled = || {
                measures
                    .iter()
                    .filter(move |(_, s, _)| s.tag.value == key)
                    .flat_map(|(_, _, xs)| xs.iter())
            };
            let (v, _, _) = crate::analysis::mean_std(pooled().map(|s| s.v));
            let (m, sd, n) = crate::analysis::mean_std(pooled().map(Sample::measured_torque));
            let windows: Vec<f64> = measures
                .iter()
                .filter(|(_, s, _)| s.tag.value == key)
                .flat_map(|(_, _, xs)| window_velocities(xs, key, plan.limits.rad_per_count()))
                .collect();
            let (wv, wsd, wn) = crate::analysis::mean_std(windows.into_iter());
            let p = StribeckPoint {
                setpoint_rad_s: key,
                velocity_rad_s: v,
                mean_torque_nm: m,
                std_torque_nm: sd,
                n,
                velocity_std_rad_s: wsd,
                // The sampled mean catches what the windows cannot: on a slow link (10 Hz)
                // the samples alias a fast stick-slip, and the drive's own speed reading
                // averages it (measured: -0.052 rad/s at a -0.1 rad/s set point).
                stick_slip: wn == 0
                    || (v - key).abs() > MEAN_MISS * key.abs()
                    || (wv - key).abs() > MEAN_MISS * key.abs()
                    || wsd > SPREAD_MISS * key.abs(),
            };
            if key < 0.0 {
                out.negative.push(p);
            } else {
                out.positive.push(p);
            }
        }
        let by_speed = |a: &StribeckPoint, b: &StribeckPoint| {
            a.setpoint_rad_s.abs().total_cmp(&b.setpoint_rad_s.abs())
        };
        out.positive.sort_by(by_speed);
        out.negative.sort_by(by_speed);
        Ok(out)
    }
}

/// Mean velocities of consecutive windows of `xs`, each long enough for 20 encoder counts of
/// travel at `setpoint` (and at least 10 samples), from the encoder position: a window's
/// quantisation error is then at most 5 % of the set point, while stick-slip (periods of tens
/// of milliseconds) still shows as spread. Windows that start or end on a late read
/// ([`Flags::LATE_READ`]: its time stamp is uncertain) are left out. Empty if the segment is
/// shorter than two windows.
fn window_velocities(xs: &[Sample], setpoint: f64, rad_per_count: f64) -> Vec<f64> {
    let (Some(first), Some(last)) = (xs.first(), xs.last()) else {
        return Vec::new();
    };
    let dt = (last.t - first.t) / (xs.len().max(2) - 1) as f64;
    if !(dt > 0.0 && setpoint != 0.0) {
        return Vec::new();
    }
    // 20 encoder counts, at least 10 ms (timing jitter) and two samples (a slow link).
    let counts = (20.0 * rad_per_count / (setpoint.abs() * dt)).ceil() as usize;
    let w = counts.max((WINDOW_MIN_S / dt).ceil() as usize).max(2);
    if xs.len() < 2 * w + 1 {
        return Vec::new();
    }
    let timed = |s: &Sample| !s.flags.contains(Flags::LATE_READ);
    (0..(xs.len() - 1) / w)
        .map(|i| (&xs[i * w], &xs[(i + 1) * w]))
        .filter(|(a, b)| timed(a) && timed(b))
        .map(|(a, b)| (b.x - a.x) / (b.t - a.t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 rad/s held on a 10 Hz link, 20 samples; the drive latched sample 10 at 45 ms from
    /// its time stamp (a 90 ms round trip).
    fn held_with_a_late_read(flag: bool) -> Vec<Sample> {
        let mut xs: Vec<Sample> = (0..20)
            .map(|k| Sample {
                t: 0.1 * k as f64,
                x: 0.1 * k as f64,
                ..Sample::default()
            })
            .collect();
        xs[10].x += 0.045;
        if flag {
            xs[10].flags = Flags::LATE_READ;
        }
        xs
    }

    #[test]
    fn a_late_read_never_bounds_a_speed_window() {
        let spread = |xs: &[Sample]| {
            let w = window_velocities(xs, 1.0, 1e-5);
            crate::analysis::mean_std(w.into_iter())
        };
        let (_, sd, n) = spread(&held_with_a_late_read(false));
        assert!(sd > SPREAD_MISS, "unflagged: spread {sd} over {n} windows");
        let (v, sd, n) = spread(&held_with_a_late_read(true));
        assert!(
            sd < 1e-9 && (v - 1.0).abs() < 1e-9 && n == 7,
            "{v} {sd} {n}"
        );
    }

    #[test]
    fn velocities_expand_lists_and_ranges() {
        let v: Velocities =
            serde_json::from_str(r#"{"from": 0.003, "to": 1.0, "step": 0.003}"#).unwrap();
        let e = v.expand().unwrap();
        assert_eq!(e.len(), 333);
        assert!((e[332] - 0.999).abs() < 1e-12);
        let v: Velocities =
            serde_json::from_str(r#"{"from": 0.01, "to": 10, "count": 4}"#).unwrap();
        let e = v.expand().unwrap();
        assert_eq!(e.len(), 4);
        assert!((e[1] - 0.1).abs() < 1e-12 && (e[3] - 10.0).abs() < 1e-9);
        let v: Velocities = serde_json::from_str("[0.1, 0]").unwrap();
        assert_eq!(
            v.expand().unwrap_err().to_string(),
            "params.velocities[1] (0) must be > 0"
        );
        assert!(serde_json::from_str::<Velocities>(r#"{"from": 1}"#).is_err());
    }
}
