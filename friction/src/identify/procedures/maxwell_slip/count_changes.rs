//! The fit at the encoder's count changes (see the parent's "Quantisation"): the branches
//! sampled where the count changes, the NNLS problem for given reversal phases, the search
//! for those phases, and the jackknife over branches.

use super::nnls::nnls_normal;
use super::{Branch, Solved};
use nalgebra::{DMatrix, DVector};

/// A used branch sampled at its count changes: whole counts `m` from its first edge and the
/// force change `y` from the reversal, both in the branch's direction.
#[derive(Clone, Debug, Default)]
pub(super) struct Crossings {
    pub(super) m: Vec<f64>,
    pub(super) y: Vec<f64>,
}

/// Moving mean over this many samples for the force at a reversal (its extreme).
pub(super) const REVERSAL_MEAN: usize = 5;

/// The samples of branch `b` where the count changes by one, up to `range` from its first
/// edge, with the force change from the reversal's force (the extreme of the moving mean
/// between the branch's start and its first count change). `None` without a count change.
pub(super) fn crossings(
    b: &Branch,
    x: &[f64],
    f: &[f64],
    count: f64,
    range: f64,
) -> Option<Crossings> {
    let ks: Vec<usize> = (b.start + 1..=b.end)
        .filter(|&k| x[k] != x[k - 1] && (x[k] - x[k - 1]).abs() < 1.5 * count)
        .collect();
    let first = *ks.first()?;
    let d = b.direction;
    let window = &f[b.start..=first];
    let n = REVERSAL_MEAN.min(window.len());
    let f_rev = -d
        * window
            .windows(n)
            .map(|w| -d * w.iter().sum::<f64>() / n as f64)
            .fold(f64::NEG_INFINITY, f64::max);
    let edge = |k: usize| x[k].max(x[k - 1]);
    let e0 = edge(first);
    let mut c = Crossings::default();
    for k in ks {
        let m = (d * (edge(k) - e0) / count).round();
        if m >= 0.0 && m * count <= range && thinned(m) {
            c.m.push(m);
            // The edge was crossed at some time between the two samples: their mean force.
            c.y.push(d * (0.5 * (f[k] + f[k - 1]) - f_rev));
        }
    }
    Some(c)
}

/// Every count edge up to the 16th after the first, then about 8 per doubling of the distance
/// (the curve's detail is near the reversal; this keeps the problem small on a fine encoder).
pub(super) fn thinned(m: f64) -> bool {
    let m = m as u64;
    m < 16 || m.is_multiple_of(m / 8)
}

/// The design matrix and force changes of the branches `keep` at phases `phi`.
fn design(
    data: &[Crossings],
    phi: &[f64],
    keep: &[usize],
    grid: &[f64],
    count: f64,
) -> (DMatrix<f64>, DVector<f64>) {
    let rows: Vec<(f64, f64)> = keep
        .iter()
        .flat_map(|&b| {
            let c = &data[b];
            c.m.iter()
                .zip(&c.y)
                .map(move |(m, y)| ((phi[b] + m) * count, *y))
        })
        .collect();
    let a = DMatrix::from_fn(rows.len(), grid.len(), |r, j| rows[r].0.min(grid[j]));
    let y = DVector::from_iterator(rows.len(), rows.iter().map(|r| r.1));
    (a, y)
}

/// The NNLS problem of the branches `keep` at phases `phi`, solved with its active set from
/// the normal equations (the phase search solves it some hundreds of times).
pub(super) fn solve(
    data: &[Crossings],
    phi: &[f64],
    keep: &[usize],
    grid: &[f64],
    count: f64,
) -> Solved {
    let (a, y) = design(data, phi, keep, grid, count);
    let z = nnls_normal(&a, &y);
    let rss = (&y - &a * &z).norm_squared();
    Solved { a, z, rss }
}

/// The reversal phase of each branch of `keep`, by coordinate search (each branch's phase
/// over a tenth-of-a-count grid, then in eightieths around the best, with the others fixed,
/// until none moves), from `phi`.
pub(super) fn phases(
    data: &[Crossings],
    phi: Vec<f64>,
    keep: &[usize],
    grid: &[f64],
    count: f64,
) -> Vec<f64> {
    search(phi, keep, |p| solve(data, p, keep, grid, count).rss)
}

/// The coordinate search of [`phases`] on the residual sum of squares `rss(phi)`.
fn search(mut phi: Vec<f64>, keep: &[usize], rss: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let best = |phi: &[f64], b: usize, cands: &mut dyn Iterator<Item = f64>| {
        let mut p = phi.to_vec();
        cands
            .map(|c| {
                p[b] = c;
                (rss(&p), c)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(phi[b], |m| m.1)
    };
    for _ in 0..8 {
        let mut moved = false;
        for &b in keep {
            let coarse = best(&phi, b, &mut (0..10).map(|i| (f64::from(i) + 0.5) / 10.0));
            let fine = best(
                &phi,
                b,
                &mut (-4..=4).map(|i| (coarse + f64::from(i) / 80.0).clamp(0.0, 0.999)),
            );
            moved |= (fine - phi[b]).abs() > 1e-9;
            phi[b] = fine;
        }
        if !moved {
            break;
        }
    }
    phi
}

/// Jackknife standard error of `Σ k` over the branches (phases held).
pub(super) fn jackknife(
    data: &[Crossings],
    phi: &[f64],
    keep: &[usize],
    grid: &[f64],
    count: f64,
) -> f64 {
    let n = keep.len();
    if n < 3 {
        return f64::NAN;
    }
    let sums: Vec<f64> = keep
        .iter()
        .map(|&out| {
            let rest: Vec<usize> = keep.iter().copied().filter(|&b| b != out).collect();
            solve(data, phi, &rest, grid, count).z.sum()
        })
        .collect();
    let mean = sums.iter().sum::<f64>() / n as f64;
    let ss: f64 = sums.iter().map(|s| (s - mean).powi(2)).sum();
    ((n - 1) as f64 / n as f64 * ss).sqrt()
}

/// Below this spread of the reversal phases (in counts) the first count is sampled at one
/// point only.
pub(super) const MIN_PHASE_SPREAD: f64 = 0.3;

/// The largest gap-free arc of the phases on the unit circle, complemented: how much of a
/// count the reversals cover.
pub(super) fn phase_spread(phi: &[f64]) -> f64 {
    let mut p = phi.to_vec();
    p.sort_by(f64::total_cmp);
    let Some((&lo, &hi)) = p.first().zip(p.last()) else {
        return 0.0;
    };
    let widest = p
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(1.0 - hi + lo, f64::max);
    1.0 - widest
}

#[cfg(test)]
mod tests {
    use super::super::nnls::nnls;
    use super::*;

    /// Reversal curves of four elements, the stiffest slipping within the first count, sampled
    /// at the count changes of five branches whose reversals fall at spread fractions of a count,
    /// with a deterministic ripple as noise.
    fn stiff_branches(count: f64) -> (Vec<Crossings>, Vec<f64>) {
        let (k, d) = ([30_000.0, 8_000.0, 3_000.0, 1_000.0], [1.0, 2.5, 7.0, 20.0]);
        let curve = |dx: f64| -> f64 { k.iter().zip(d).map(|(k, d)| k * dx.min(d * count)).sum() };
        let data = [0.07, 0.29, 0.46, 0.68, 0.88]
            .iter()
            .enumerate()
            .map(|(b, phi)| {
                let m: Vec<f64> = (0..60).map(f64::from).filter(|m| thinned(*m)).collect();
                let y = m
                    .iter()
                    .map(|m| curve((phi + m) * count) + 2e-3 * (1.7 * m + b as f64).sin())
                    .collect();
                Crossings { m, y }
            })
            .collect();
        let grid = (0..24)
            .map(|j| count * 30.0_f64.powf(f64::from(j) / 23.0))
            .collect();
        (data, grid)
    }

    /// The phase search on the normal equations' active set finds the phases, `Σ k` and
    /// residuals the plain Lawson-Hanson solve on the design matrix finds, to the last bit.
    #[test]
    fn the_fast_phase_search_gives_the_plain_ones_answer() {
        let count = 1e-5;
        let (data, grid) = stiff_branches(count);
        let keep: Vec<usize> = (0..data.len()).collect();
        let plain = |phi: &[f64], keep: &[usize]| {
            let (a, y) = design(&data, phi, keep, &grid, count);
            let z = nnls(&a, &y, &vec![true; grid.len()]);
            let rss = (&y - &a * &z).norm_squared();
            (z, rss)
        };
        let start = vec![0.5; data.len()];
        let fast = phases(&data, start.clone(), &keep, &grid, count);
        let slow = search(start, &keep, |p| plain(p, &keep).1);
        assert_eq!(fast, slow);
        let (z, rss) = plain(&slow, &keep);
        let s = solve(&data, &fast, &keep, &grid, count);
        assert_eq!((s.z.as_slice(), s.rss), (z.as_slice(), rss));
        // The search recovers the reversals' fractions of a count (within its eightieths).
        for (got, want) in fast.iter().zip([0.07, 0.29, 0.46, 0.68, 0.88]) {
            assert!((got - want).abs() <= 0.02, "{fast:?}");
        }
        let sum_k: f64 = s.z.sum();
        assert!((sum_k - 42_000.0).abs() < 0.02 * 42_000.0, "{sum_k}");
    }
}
