//! Helpers shared by the kinds' analyses: slicing samples by segment, statistics, breakaway
//! detection, a sinusoid fit, decimated loops and the S2 eq. 6 filters.

use crate::plan::{Plan, Role};
use crate::{Error, Sample};
use serde::{Deserialize, Serialize};

/// The samples of each plan segment (empty where a segment recorded none). Samples must be
/// in time order; a sample whose segment index is beyond the plan is an error.
pub(crate) fn by_segment<'a>(
    plan: &Plan,
    samples: &'a [Sample],
) -> Result<Vec<&'a [Sample]>, Error> {
    let n = plan.segments.len();
    let mut out: Vec<&[Sample]> = vec![&[]; n];
    let mut i = 0;
    while i < samples.len() {
        let seg = samples[i].segment as usize;
        if seg >= n {
            return Err(Error::Analysis(format!(
                "sample {i} names segment {seg}, but the plan has {n}"
            )));
        }
        let j = i + samples[i..].partition_point(|s| s.segment as usize == seg);
        if !out[seg].is_empty() {
            return Err(Error::Analysis(format!(
                "segment {seg} appears twice in the samples (are they in time order?)"
            )));
        }
        out[seg] = &samples[i..j];
        i = j;
    }
    Ok(out)
}

/// The segments with role `role` and their samples, in plan order, skipping empty ones.
pub(crate) fn with_role<'a>(
    plan: &'a Plan,
    parts: &[&'a [Sample]],
    role: Role,
) -> Vec<(usize, &'a crate::Segment, &'a [Sample])> {
    plan.segments
        .iter()
        .enumerate()
        .filter(|(i, s)| s.tag.role == role && !parts[*i].is_empty())
        .map(|(i, s)| (i, s, parts[i]))
        .collect()
}

/// Mean, sample standard deviation and count of the finite values.
pub(crate) fn mean_std(values: impl Iterator<Item = f64>) -> (f64, f64, usize) {
    let (mut n, mut mean, mut m2) = (0usize, 0.0, 0.0);
    for x in values.filter(|x| x.is_finite()) {
        n += 1;
        let d = x - mean;
        mean += d / n as f64;
        m2 += d * (x - mean);
    }
    let std = if n > 1 {
        (m2 / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    (if n > 0 { mean } else { f64::NAN }, std, n)
}

/// Motion onset in one segment: `(first visible, detected)` sample indices, where "visible" is
/// the first sample that moved at least two encoder counts from the segment's first position
/// and "detected" the first that moved more than `threshold_rad`. Two counts, not one: a
/// single count can flip on sub-count presliding when the rest position sits near a count edge
/// (the quantisation phase is arbitrary), while two counts mean at least one count of travel.
pub(crate) fn motion_onset(
    seg: &[Sample],
    rad_per_count: f64,
    threshold_rad: f64,
) -> Option<(usize, usize)> {
    let x0 = seg.first()?.x;
    let detected = seg.iter().position(|s| (s.x - x0).abs() > threshold_rad)?;
    let visible = seg[..=detected]
        .iter()
        .position(|s| (s.x - x0).abs() >= 1.5 * rad_per_count)
        .unwrap_or(detected);
    Some((visible, detected))
}

/// Least-squares fit `y ≈ a sin(w t) + b cos(w t) + c + d t`; returns (amplitude, offset, slope).
pub(crate) fn fit_sine(t: &[f64], y: &[f64], omega: f64) -> Option<(f64, f64, f64)> {
    if t.len() < 8 {
        return None;
    }
    let t0 = t[0];
    let rows: Vec<Vec<f64>> = t
        .iter()
        .map(|&ti| {
            let s = ti - t0;
            vec![(omega * ti).sin(), (omega * ti).cos(), 1.0, s]
        })
        .collect();
    let sol = friction::identify::lsq::solve(&rows, y, None).ok()?;
    let th = sol.theta;
    Some((th[0].hypot(th[1]), th[2], th[3]))
}

/// A loop or curve as two columns, decimated to at most `max_points` points.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "XY")]
pub struct Curve {
    /// Abscissa (unit given by the field that holds the curve).
    pub x: Vec<f64>,
    /// Ordinate.
    pub y: Vec<f64>,
}

impl Curve {
    pub(crate) fn from_samples(
        seg: &[Sample],
        max_points: usize,
        fx: impl Fn(&Sample) -> f64,
        fy: impl Fn(&Sample) -> f64,
    ) -> Curve {
        let every = seg.len().div_ceil(max_points.max(1)).max(1);
        let mut c = Curve::default();
        for s in seg.iter().step_by(every) {
            c.x.push(fx(s));
            c.y.push(fy(s));
        }
        c
    }
}

/// The critically damped second-order filter of S2 eq. 6, `1/(p/p_n + 1)^2`, discretised
/// exactly for a zero-order-hold input (docs/src/identification.md#power_rls). Returns, per input sample, the
/// filtered value and its first and second derivatives at the middle of the sample's hold
/// interval (the same half-sample shift for every signal filtered this way).
pub(crate) fn filter2(u: &[f64], dt: f64, pn: f64) -> Vec<[f64; 3]> {
    // State (y, y'); y'' = pn^2 (u - y) - 2 pn y'. Exact transition of the critically damped
    // pair: e^{A h} = e^{-pn h} [[1 + pn h, h], [-pn^2 h, 1 - pn h]]; the ZOH input enters
    // through the equilibrium (u, 0).
    let e = (-pn * dt).exp();
    let phi = [
        [e * (1.0 + pn * dt), e * dt],
        [-e * pn * pn * dt, e * (1.0 - pn * dt)],
    ];
    let mut y = [u.first().copied().unwrap_or(0.0), 0.0];
    let mut out = Vec::with_capacity(u.len());
    for &uk in u {
        // Advance over the hold interval of `uk`; report the interval's midpoint: mean value
        // and velocity, and the mean acceleration (exact change of the velocity over the
        // interval). The instantaneous `pn^2 (u - y) - 2 pn y'` would carry the staircase
        // of the held input (pn^2 times a step's change).
        let d = [y[0] - uk, y[1]];
        let next = [
            uk + phi[0][0] * d[0] + phi[0][1] * d[1],
            phi[1][0] * d[0] + phi[1][1] * d[1],
        ];
        out.push([
            0.5 * (y[0] + next[0]),
            0.5 * (y[1] + next[1]),
            (next[1] - y[1]) / dt,
        ]);
        y = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_recovers_derivatives_of_a_slow_signal() {
        // x = sin(2 t): after the transient the filter's v and a match the true derivatives
        // up to its phase lag (2/pn at low frequency, plus half a sample for the hold).
        let dt = 1e-3;
        let x: Vec<f64> = (0..5000).map(|k| (2.0 * k as f64 * dt).sin()).collect();
        let f = filter2(&x, dt, 200.0);
        let k = 4000;
        let t = k as f64 * dt - 2.0 / 200.0;
        assert!((f[k][0] - (2.0 * t).sin()).abs() < 1e-3);
        assert!((f[k][1] - 2.0 * (2.0 * t).cos()).abs() < 2e-3, "{:?}", f[k]);
        assert!(
            (f[k][2] + 4.0 * (2.0 * t).sin()).abs() < 2e-2,
            "{:?} {}",
            f[k],
            -4.0 * (2.0 * t).sin()
        );
    }

    #[test]
    fn sine_fit_recovers_amplitude() {
        let t: Vec<f64> = (0..2000).map(|k| k as f64 * 1e-3).collect();
        let y: Vec<f64> = t
            .iter()
            .map(|t| 0.3 + 2e-3 * (6.0 * t + 0.4).sin() + 1e-4 * t)
            .collect();
        let (a, c, d) = fit_sine(&t, &y, 6.0).unwrap();
        assert!((a - 2e-3).abs() < 1e-9 && (c - 0.3).abs() < 1e-6 && (d - 1e-4).abs() < 1e-6);
    }
}
