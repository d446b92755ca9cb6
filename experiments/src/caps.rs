//! Upper limits of every count, list and duration a spec may ask for, so that a plan's size is
//! known, and refused when too large, before anything is allocated.
//!
//! Two kinds of cap:
//! - Per field, static (these constants): they appear as `maximum` / `maxItems` in each kind's
//!   JSON Schema and are checked first, in O(1).
//! - Per plan, counted arithmetically from the parameters (overflow-safe in `f64`): the number
//!   of segments and the longest run time (every segment to its timeout), against
//!   [`BenchLimits::max_plan_segments`] and [`BenchLimits::max_plan_duration_s`]
//!   (defaults [`MAX_PLAN_SEGMENTS`], [`MAX_PLAN_DURATION_S`]).
//!
//! Refusals are [`Error::Invalid`] naming the field, its value and the cap.

use crate::{BenchLimits, Error};

/// Default cap on a plan's longest run time \[s\]: 7 days.
pub const MAX_PLAN_DURATION_S: f64 = 7.0 * DAY_S;
/// Default (and largest configurable) cap on a plan's number of segments.
pub const MAX_PLAN_SEGMENTS: u32 = 1_000_000;
/// Largest `repeats` (and `ramp_repeats`, `periods`) of any kind.
pub const MAX_REPEATS: u32 = 10_000;
/// Largest length of a list parameter (velocities, rates, dwell times, frequencies, reversal
/// points, pieces), and of a velocity range's expansion.
pub const MAX_LIST: u32 = 10_000;
/// Largest number of points of a sampled profile (`validation_profile.samples`).
pub const MAX_SAMPLES: u32 = 100_000;
/// Largest number of setpoint levels of one segment (a PRBS: `periods × (2^register_bits − 1)`).
pub const MAX_LEVELS: u32 = 1_000_000;
/// Largest number of cycles of a sine (`sine_cycles`, `cycles`).
pub const MAX_CYCLES: u32 = 10_000;
/// Largest number of presliding parts.
pub const MAX_PARTS: u32 = 16;
/// Largest motion threshold \[encoder counts\].
pub const MAX_MOTION_COUNTS: u32 = 1_000_000;
/// Longest single segment, and every duration parameter \[s\]: one day.
pub const MAX_SEGMENT_S: f64 = DAY_S;

const DAY_S: f64 = 86_400.0;

/// `n` must be at most `max`: "params.repeats (4000000000) exceeds the cap of 10000".
pub(crate) fn count(field: &str, n: u64, max: u32) -> Result<(), Error> {
    if n <= u64::from(max) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            n,
            format!("exceeds the cap of {max}"),
        ))
    }
}

/// A list parameter of `len` entries must have at most `max`.
pub(crate) fn list<T>(field: &str, v: &[T], max: u32) -> Result<(), Error> {
    if v.len() as u64 <= u64::from(max) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!("{} entries", v.len()),
            format!("exceeds the cap of {max} entries"),
        ))
    }
}

/// A duration parameter \[s\] must be finite and at most `max` (NaN is refused too).
pub(crate) fn seconds(field: &str, s: f64, max: f64) -> Result<(), Error> {
    if s <= max {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            short(s),
            format!("exceeds the cap of {max} s{}", in_days(max)),
        ))
    }
}

/// A segment of `s` seconds that `field` (with `value`) gives must last at most
/// [`MAX_SEGMENT_S`]; `what` names the segment ("a ramp to the cap").
pub(crate) fn segment_s(field: &str, value: f64, what: &str, s: f64) -> Result<(), Error> {
    if s <= MAX_SEGMENT_S {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            short(value),
            format!(
                "gives {what} of {} s, over the cap of {MAX_SEGMENT_S} s{} per segment",
                short(s),
                in_days(MAX_SEGMENT_S)
            ),
        ))
    }
}

/// A window whose samples are analysed must last at least one control period, or it ends
/// before its first sample.
pub(crate) fn window(field: &str, s: f64, limits: &BenchLimits) -> Result<(), Error> {
    if s >= limits.period_s {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            s,
            format!(
                "must be >= one control period ({} s): a shorter window records no sample",
                limits.period_s
            ),
        ))
    }
}

/// Like [`window`], for a window of `s` seconds that `field` (with `value`) gives; `what`
/// names it ("a reversal path").
pub(crate) fn window_of(
    field: &str,
    value: f64,
    what: &str,
    s: f64,
    limits: &BenchLimits,
) -> Result<(), Error> {
    if s >= limits.period_s {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            short(value),
            format!(
                "gives {what} of {} s, under one control period ({} s): it would record no \
                 sample",
                short(s),
                limits.period_s
            ),
        ))
    }
}

/// The size of (a part of) a plan, counted from the parameters without building it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Size {
    /// Number of segments.
    pub segments: f64,
    /// Longest run time, every segment to its timeout \[s\].
    pub duration_s: f64,
}

impl Size {
    pub(crate) fn new(segments: f64, duration_s: f64) -> Size {
        Size {
            segments,
            duration_s,
        }
    }

    /// `n` copies.
    pub(crate) fn times(self, n: f64) -> Size {
        Size::new(self.segments * n, self.duration_s * n)
    }

    /// This and `other` in sequence.
    pub(crate) fn plus(self, other: Size) -> Size {
        Size::new(
            self.segments + other.segments,
            self.duration_s + other.duration_s,
        )
    }

    /// Checks this size against the plan caps, naming `field` (with `value`) as its cause.
    pub(crate) fn check(
        self,
        field: &str,
        value: impl std::fmt::Display,
        limits: &BenchLimits,
    ) -> Result<(), Error> {
        let max_n = f64::from(limits.max_plan_segments);
        let max_s = limits.max_plan_duration_s;
        // NaN is over too.
        if self.segments.is_nan() || self.segments > max_n {
            return Err(Error::invalid(
                field,
                value,
                format!(
                    "gives {} plan segments, over the cap of {max_n}",
                    short(self.segments)
                ),
            ));
        }
        if self.duration_s.is_nan() || self.duration_s > max_s {
            return Err(Error::invalid(
                field,
                value,
                format!(
                    "makes the plan last up to {} s, over the cap of {max_s} s{}",
                    short(self.duration_s),
                    in_days(max_s)
                ),
            ));
        }
        Ok(())
    }

    /// Checks `repeats` copies of `one` (itself within the caps, or refused naming
    /// `inner_field`): over the caps, names `field` and says how many repeats would fit.
    pub(crate) fn check_repeated(
        one: Size,
        inner_field: &str,
        inner_value: impl std::fmt::Display,
        field: &str,
        repeats: u32,
        limits: &BenchLimits,
    ) -> Result<(), Error> {
        one.check(inner_field, inner_value, limits)?;
        let all = one.times(f64::from(repeats));
        if all.check(field, repeats, limits).is_ok() {
            return Ok(());
        }
        let fit = (f64::from(limits.max_plan_segments) / one.segments)
            .min(limits.max_plan_duration_s / one.duration_s)
            .floor();
        all.check(field, repeats, limits).map_err(|e| match e {
            Error::Invalid { field, value, rule } => Error::Invalid {
                field,
                value,
                rule: format!("{rule}: at most {fit} repeats fit"),
            },
            e => e,
        })
    }
}

/// A number for a message: 6 significant digits, very large and very small ones with an
/// exponent (`1e-300`, not 300 zeros).
pub(crate) fn short(x: f64) -> String {
    let r: f64 = format!("{x:.5e}").parse().unwrap_or(x);
    if r != 0.0 && (r.abs() >= 1e15 || r.abs() < 1e-6) {
        format!("{r:e}")
    } else {
        format!("{r}")
    }
}

/// " (N days)" for a whole number of days, else "".
fn in_days(s: f64) -> String {
    let d = s / DAY_S;
    match d {
        1.0 => " (1 day)".into(),
        d if d.fract() == 0.0 && d > 1.0 => format!(" ({d} days)"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_over_the_segment_cap_say_how_many_fit() {
        let lim = BenchLimits::sim_default();
        let e = Size::check_repeated(
            Size::new(400.0, 10.0),
            "params.velocities",
            "100 entries",
            "params.repeats",
            5000,
            &lim,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "params.repeats (5000) gives 2000000 plan segments, over the cap of 1000000: \
             at most 2500 repeats fit"
        );
        let e = Size::new(1.0, f64::NAN).check("x", 1, &lim).unwrap_err();
        assert!(
            e.to_string().contains("over the cap of 604800 s (7 days)"),
            "{e}"
        );
        assert_eq!(
            seconds("params.rest_s", 1e9, MAX_SEGMENT_S)
                .unwrap_err()
                .to_string(),
            "params.rest_s (1000000000) exceeds the cap of 86400 s (1 day)"
        );
    }
}
