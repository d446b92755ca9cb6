//! Control limits of one series from its baseline points (pure): mean ± 3σ of the baseline
//! (Shewhart's individuals chart, σ the sample standard deviation), or mean ± a relative band.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Fewest baseline points for 3σ limits (σ needs two).
const MIN_SIGMA_POINTS: usize = 2;

/// How limits are drawn around the baseline mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum Band {
    /// Mean ± 3 sample standard deviations of the baseline.
    Sigma3,
    /// Mean ± `fraction` × |mean| (0.05 = ± 5 %).
    Relative {
        /// The band's half-width as a fraction of |mean|.
        fraction: f64,
    },
}

/// The limits of one series, or why there are none.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Limits {
    /// How they were drawn.
    #[serde(flatten)]
    pub band: Band,
    /// Baseline points used.
    pub baseline_points: usize,
    /// The baseline's first and last point time (RFC 3339 UTC).
    pub baseline_from: Option<String>,
    /// See `baseline_from`.
    pub baseline_to: Option<String>,
    /// Baseline mean.
    pub mean: Option<f64>,
    /// Baseline sample standard deviation (null below two points).
    pub std: Option<f64>,
    /// Lower limit (null when the baseline cannot give one).
    pub lower: Option<f64>,
    /// Upper limit.
    pub upper: Option<f64>,
    /// Why there are no limits, or how rough they are.
    pub note: Option<String>,
}

impl Limits {
    /// The limits `band` draws around `values` (the baseline, in time order) taken between
    /// `from` and `to`.
    pub fn of(band: Band, values: &[f64], from: Option<&str>, to: Option<&str>) -> Limits {
        let n = values.len();
        let mean = (n > 0).then(|| values.iter().sum::<f64>() / n as f64);
        let std = mean.filter(|_| n >= MIN_SIGMA_POINTS).map(|m| {
            let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        let half = match band {
            Band::Sigma3 => std.map(|s| 3.0 * s),
            Band::Relative { fraction } => mean.map(|m| fraction * m.abs()),
        };
        let note = match (band, n) {
            (_, 0) => Some("no baseline points: no limits".to_string()),
            (Band::Sigma3, n) if n < MIN_SIGMA_POINTS => Some(format!(
                "the baseline has {n} point: 3σ limits need at least {MIN_SIGMA_POINTS}"
            )),
            (Band::Sigma3, n) if n < 10 => Some(format!(
                "σ from {n} baseline points is rough (its own relative error is about {:.0} %)",
                100.0 / (2.0 * (n as f64 - 1.0)).sqrt()
            )),
            _ => None,
        };
        Limits {
            band,
            baseline_points: n,
            baseline_from: from.map(str::to_string),
            baseline_to: to.map(str::to_string),
            mean,
            std,
            lower: mean.zip(half).map(|(m, h)| m - h),
            upper: mean.zip(half).map(|(m, h)| m + h),
            note,
        }
    }

    /// Whether `value` lies outside the limits (None without limits).
    pub fn outside(&self, value: f64) -> Option<bool> {
        let (lo, hi) = (self.lower?, self.upper?);
        Some(value < lo || value > hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_sigma_limits_of_the_baseline_flag_what_lies_beyond() {
        // mean 2, sample std 1 (values 1, 2, 3).
        let l = Limits::of(Band::Sigma3, &[1.0, 2.0, 3.0], Some("a"), Some("b"));
        assert_eq!(
            (l.mean, l.std, l.lower, l.upper),
            (Some(2.0), Some(1.0), Some(-1.0), Some(5.0))
        );
        assert_eq!(
            (l.outside(5.0), l.outside(5.01), l.outside(-1.01)),
            (Some(false), Some(true), Some(true))
        );
        assert!(l.note.unwrap().contains("rough"));
    }

    #[test]
    fn a_relative_band_around_the_mean_and_no_limits_without_enough_points() {
        let l = Limits::of(Band::Relative { fraction: 0.05 }, &[-2.0], None, None);
        assert_eq!((l.lower, l.upper), (Some(-2.1), Some(-1.9)));
        let l = Limits::of(Band::Sigma3, &[2.0], None, None);
        assert_eq!((l.lower, l.outside(100.0)), (None, None));
        assert_eq!(
            l.note.as_deref(),
            Some("the baseline has 1 point: 3σ limits need at least 2")
        );
        assert_eq!(Limits::of(Band::Sigma3, &[], None, None).mean, None);
    }
}
