//! The Stribeck fall read from the sliding phases of stick-slip. Where no loop of the bench
//! holds a speed below `vs` (the falling curve is steeper than any damping the loop can apply),
//! the low-speed check and the sweep stick-slip there; but in each slip the speed sweeps from
//! rest through the Stribeck region and the torque sensor measures the friction itself. Samples
//! binned by the encoder's centred speed (no filter lag) give points of the steady-state curve
//! wherever friction is a function of speed during sliding (a static curve, or a dynamic model
//! whose internal state follows the speed faster than the slip changes it). Fitted with the
//! breakaway `fs` per direction held and the held sweep points for the fast part, they place
//! `vs` and the shape `delta`; a curve they do not determine (frictional lag in the slips,
//! too few bins) is reported as such and the campaign keeps its estimate.

use experiments::Sample;
use friction::curve::phi_exp;
use friction::identify::lsq;

/// A bin of sliding samples of one direction: mean speed and friction magnitudes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    /// Mean centred speed magnitude \[rad/s\].
    pub v: f64,
    /// Mean friction magnitude \[N m\].
    pub f: f64,
    /// Standard error of the mean friction \[N m\].
    pub se: f64,
    /// Positive direction.
    pub positive: bool,
}

/// Half-width of the centred speed difference \[s\] (3 ticks at 1 kHz).
const HALF_WINDOW_S: f64 = 3e-3;
/// Samples this soon after a segment starts are left out (mode switch, re-anchored reference).
const SKIP_S: f64 = 0.1;
/// Log-spaced speed bins per direction.
const BINS: usize = 24;
/// Fewest samples of a bin.
const MIN_PER_BIN: usize = 10;

/// Bins of the sliding samples of `samples` (one run) with centred speed between two encoder
/// counts per window and `v_top`, per direction; torque and speed of the same sign only
/// (sliding against friction, not a deceleration through zero).
pub fn bins(samples: &[Sample], rad_per_count: f64, v_top: f64) -> Vec<Bin> {
    let Some(dt) = median_step(samples) else {
        return Vec::new();
    };
    let k = ((HALF_WINDOW_S / dt).round() as usize).max(1);
    let v_lo = 2.0 * rad_per_count / (2.0 * k as f64 * dt);
    if v_top.is_nan() || v_top <= v_lo || samples.len() <= 2 * k {
        return Vec::new();
    }
    let mut seg_start = samples[0].t;
    let mut starts = Vec::with_capacity(samples.len());
    for (i, s) in samples.iter().enumerate() {
        if i == 0 || s.segment != samples[i - 1].segment {
            seg_start = s.t;
        }
        starts.push(seg_start);
    }
    let mut pts: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
    for i in k..samples.len() - k {
        let (a, b, s) = (&samples[i - k], &samples[i + k], &samples[i]);
        if a.segment != s.segment || b.segment != s.segment || s.t - starts[i] < SKIP_S {
            continue;
        }
        let v = (b.x - a.x) / (b.t - a.t);
        let f = s.measured_torque();
        if !(v.is_finite() && f.is_finite()) || v * f <= 0.0 || v.abs() < v_lo {
            continue;
        }
        if v.abs() < v_top {
            pts[usize::from(v < 0.0)].push((v.abs(), f.abs()));
        }
    }
    let edge = |j: usize| v_lo * (v_top / v_lo).powf(j as f64 / BINS as f64);
    let mut out = Vec::new();
    for (d, p) in pts.iter().enumerate() {
        for j in 0..BINS {
            let (lo, hi) = (edge(j), edge(j + 1));
            let inside: Vec<_> = p.iter().filter(|(v, _)| *v >= lo && *v < hi).collect();
            if inside.len() < MIN_PER_BIN {
                continue;
            }
            let n = inside.len() as f64;
            let v = inside.iter().map(|x| x.0).sum::<f64>() / n;
            let f = inside.iter().map(|x| x.1).sum::<f64>() / n;
            let var = inside.iter().map(|x| (x.1 - f).powi(2)).sum::<f64>() / (n - 1.0);
            out.push(Bin {
                v,
                f,
                se: (var / n).sqrt(),
                positive: d == 0,
            });
        }
    }
    out
}

fn median_step(samples: &[Sample]) -> Option<f64> {
    let mut d: Vec<f64> = samples
        .windows(2)
        .map(|w| w[1].t - w[0].t)
        .filter(|d| *d > 0.0)
        .collect();
    if d.is_empty() {
        return None;
    }
    d.sort_by(f64::total_cmp);
    Some(d[d.len() / 2])
}

/// The Stribeck velocity and shape the sliding bins (and held points) place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fall {
    /// Stribeck velocity \[rad/s\].
    pub vs: f64,
    /// Its standard error (half the profile interval where the weighted residual rises by
    /// one reduced chi-square) \[rad/s\].
    pub vs_se: f64,
    /// Shape exponent.
    pub delta: f64,
    /// Bins and points fitted.
    pub n: usize,
    /// Reduced chi-square of the fit (1: the bins follow one curve to within their errors).
    pub chi2: f64,
}

/// Shapes tried.
const DELTAS: [f64; 11] = [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0];
/// Stribeck velocities tried per decade.
const PER_DECADE: f64 = 200.0;

/// Fits `|F| = fc_d (1 - e) + fs_d e + fv v`, `e = exp(-(v/vs)^delta)`, to `bins` (weighted by
/// their standard errors, at least `floor_nm`) with `fs` per direction held (`fs_pos`,
/// `fs_neg`) and `fc` per direction and `fv` by least squares at each `(vs, delta)` of a grid
/// from `v_lo` to `v_hi`. `None` when the best `vs` lies on the grid's edge or the bins are too
/// few to tell it.
pub fn fit(bins: &[Bin], fs: (f64, f64), floor_nm: f64, (v_lo, v_hi): (f64, f64)) -> Option<Fall> {
    let p = 5;
    if bins.len() < p + 3 || v_lo.is_nan() || v_hi.is_nan() || v_lo <= 0.0 || v_hi <= v_lo {
        return None;
    }
    let n_vs = ((v_hi / v_lo).log10() * PER_DECADE).ceil() as usize + 1;
    let grid: Vec<f64> = (0..n_vs)
        .map(|i| v_lo * (v_hi / v_lo).powf(i as f64 / (n_vs - 1) as f64))
        .collect();
    let mut best: Option<(f64, usize, f64)> = None;
    let mut profile = vec![f64::INFINITY; n_vs];
    for &delta in &DELTAS {
        for (i, &vs) in grid.iter().enumerate() {
            let sse = weighted_sse(bins, fs, floor_nm, vs, delta);
            profile[i] = profile[i].min(sse);
            if best.is_none_or(|b| sse < b.0) {
                best = Some((sse, i, delta));
            }
        }
    }
    let (sse, i, delta) = best?;
    if i == 0 || i == n_vs - 1 || !sse.is_finite() {
        return None;
    }
    let dof = (bins.len() - p) as f64;
    let chi2 = sse / dof;
    let limit = sse * (1.0 + 1.0 / dof);
    let lo = (0..i).rev().find(|&j| profile[j] > limit)?;
    let hi = (i + 1..n_vs).find(|&j| profile[j] > limit)?;
    Some(Fall {
        vs: grid[i],
        vs_se: 0.5 * (grid[hi] - grid[lo]),
        delta,
        n: bins.len(),
        chi2,
    })
}

/// Weighted residual sum of squares at `(vs, delta)` with `fc` per direction and `fv` at their
/// weighted least-squares values; a direction without bins has no `fc` column.
fn weighted_sse(bins: &[Bin], fs: (f64, f64), floor_nm: f64, vs: f64, delta: f64) -> f64 {
    let present = [true, false].map(|d| bins.iter().any(|b| b.positive == d));
    let mut rows = Vec::with_capacity(bins.len());
    let mut targets = Vec::with_capacity(bins.len());
    let mut weights = Vec::with_capacity(bins.len());
    for b in bins {
        let e = phi_exp(b.v, vs, delta);
        let fs_d = if b.positive { fs.0 } else { fs.1 };
        let mut row: Vec<f64> = [true, false]
            .iter()
            .zip(present)
            .filter(|(_, here)| *here)
            .map(|(d, _)| if b.positive == *d { 1.0 - e } else { 0.0 })
            .collect();
        row.push(b.v);
        rows.push(row);
        targets.push(b.f - fs_d * e);
        weights.push(1.0 / b.se.max(floor_nm).powi(2));
    }
    lsq::solve(&rows, &targets, Some(&weights)).map_or(f64::INFINITY, |s| s.rss)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(v: f64, vs: f64, delta: f64) -> f64 {
        0.5 + 0.3 * (-(v / vs).powf(delta)).exp() + 0.4 * v
    }

    #[test]
    fn bins_of_a_known_curve_give_back_its_stribeck_velocity_and_shape() {
        let mut bins = Vec::new();
        for i in 0..30 {
            let v = 0.005 * 1.15f64.powi(i);
            for positive in [true, false] {
                bins.push(Bin {
                    v,
                    f: curve(v, 0.2, 1.0) + if i % 2 == 0 { 1e-3 } else { -1e-3 },
                    se: 1e-3,
                    positive,
                });
            }
        }
        let fall = fit(&bins, (0.8, 0.8), 1e-3, (0.002, 5.0)).unwrap();
        // Within two standard errors of the truth, the error under a tenth of it.
        assert!((fall.vs - 0.2).abs() <= 2.0 * fall.vs_se, "{fall:?}");
        assert!(fall.vs_se > 0.0 && fall.vs_se < 0.02, "{fall:?}");
        assert_eq!(fall.delta, 1.0);
    }

    #[test]
    fn a_stribeck_velocity_on_the_grids_edge_is_not_determined() {
        let bins: Vec<Bin> = (0..12)
            .map(|i| Bin {
                v: 0.01 * (i + 1) as f64,
                f: 0.5 + 0.4 * 0.01 * (i + 1) as f64,
                se: 1e-3,
                positive: true,
            })
            .collect();
        assert_eq!(fit(&bins, (0.8, 0.8), 1e-3, (0.05, 5.0)), None);
    }

    #[test]
    fn sliding_samples_are_binned_by_their_centred_speed() {
        let rpc = 1e-5;
        let samples: Vec<Sample> = (0..2000)
            .map(|i| {
                let t = i as f64 * 1e-3;
                Sample {
                    t,
                    x: 0.05 * t,
                    v: 0.0,
                    u_cmd: 0.0,
                    torque_motor: f64::NAN,
                    torque_sensor: 0.7,
                    segment: 0,
                    flags: experiments::Flags::default(),
                }
            })
            .collect();
        let b = bins(&samples, rpc, 1.0);
        assert_eq!(b.len(), 1, "{b:?}");
        assert!((b[0].v - 0.05).abs() < 1e-9 && (b[0].f - 0.7).abs() < 1e-12);
        assert!(b[0].positive);
    }
}
