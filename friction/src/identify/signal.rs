//! Signal conditioning for inverse-model regressions: a uniform time grid, zero-phase
//! Butterworth low-pass filtering, central differences, parallel decimation and the occupied
//! bandwidth of a signal (docs/src/identification.md#idim_ls).
//!
//! The filter is the digital Butterworth low-pass of order `n` made by the bilinear transform
//! with a pre-warped cut-off, as second-order sections (numerically sound down to cut-offs of a
//! thousandth of the sampling rate, where the direct form of order 4 is not). Zero phase comes
//! from running it forward and backward (`filtfilt`), which squares the magnitude response:
//! the pair has the gain `1/2` (-6 dB) at the cut-off and order `2n`. The ends are extended by
//! an odd reflection and each section starts in its steady state, so a signal that starts away
//! from zero does not ring.

use super::FitError;
use std::f64::consts::PI;

/// One second-order section `(b0 + b1 z⁻¹ + b2 z⁻²) / (1 + a1 z⁻¹ + a2 z⁻²)`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Section {
    b: [f64; 3],
    a: [f64; 2],
}

impl Section {
    /// Runs the section over `x` in place (transposed direct form II), from the steady state of
    /// a constant input `x[0]` (the low-pass gain at 0 Hz is 1, so the output starts there).
    fn run(&self, x: &mut [f64]) {
        let Some(&x0) = x.first() else { return };
        let [b0, b1, b2] = self.b;
        let [a1, a2] = self.a;
        let mut z2 = (b2 - a2) * x0;
        let mut z1 = (b1 - a1) * x0 + z2;
        for v in x.iter_mut() {
            let u = *v;
            let y = b0 * u + z1;
            z1 = b1 * u - a1 * y + z2;
            z2 = b2 * u - a2 * y;
            *v = y;
        }
    }
}

/// A digital Butterworth low-pass filter.
#[derive(Clone, Debug, PartialEq)]
pub struct Butterworth {
    sections: Vec<Section>,
    order: usize,
    cutoff_hz: f64,
    fs_hz: f64,
}

impl Butterworth {
    /// A low-pass of `order` (1..=12) with cut-off `cutoff_hz` (-3 dB, one pass) at sampling
    /// rate `fs_hz`; the cut-off must lie below the Nyquist frequency `fs_hz/2`.
    pub fn lowpass(order: usize, cutoff_hz: f64, fs_hz: f64) -> Result<Butterworth, FitError> {
        if !(1..=12).contains(&order) {
            return Err(FitError::Config {
                field: "filter order".into(),
                value: order as f64,
                rule: "must be in 1..=12".into(),
            });
        }
        if !(fs_hz.is_finite() && fs_hz > 0.0) {
            return Err(FitError::Config {
                field: "sampling rate [Hz]".into(),
                value: fs_hz,
                rule: "must be > 0".into(),
            });
        }
        if !(cutoff_hz > 0.0 && cutoff_hz < 0.5 * fs_hz) {
            return Err(FitError::Config {
                field: "cut-off [Hz]".into(),
                value: cutoff_hz,
                rule: format!(
                    "must lie between 0 and the Nyquist frequency ({} Hz)",
                    0.5 * fs_hz
                ),
            });
        }
        // Pre-warped analog cut-off, in the bilinear transform's normalised form.
        let k = (PI * cutoff_hz / fs_hz).tan();
        let k2 = k * k;
        let mut sections = Vec::with_capacity(order.div_ceil(2));
        for i in 0..order / 2 {
            // Pole pair at angle theta from the negative real axis: s^2 + 2 sin(phi) s + 1.
            let damping = 2.0 * (PI * (2 * i + 1) as f64 / (2 * order) as f64).sin();
            let norm = 1.0 + damping * k + k2;
            sections.push(Section {
                b: [k2 / norm, 2.0 * k2 / norm, k2 / norm],
                a: [2.0 * (k2 - 1.0) / norm, (1.0 - damping * k + k2) / norm],
            });
        }
        if order % 2 == 1 {
            let norm = 1.0 + k;
            sections.push(Section {
                b: [k / norm, k / norm, 0.0],
                a: [(k - 1.0) / norm, 0.0],
            });
        }
        Ok(Butterworth {
            sections,
            order,
            cutoff_hz,
            fs_hz,
        })
    }

    /// The cut-off \[Hz\].
    pub fn cutoff_hz(&self) -> f64 {
        self.cutoff_hz
    }

    /// Causal filtering of `x` (one pass, phase lag).
    pub fn filter(&self, x: &[f64]) -> Vec<f64> {
        let mut y = x.to_vec();
        for s in &self.sections {
            s.run(&mut y);
        }
        y
    }

    /// Zero-phase filtering of `x`: forward, then backward, over an odd reflection of the ends.
    pub fn filtfilt(&self, x: &[f64]) -> Vec<f64> {
        let n = x.len();
        if n < 2 {
            return x.to_vec();
        }
        let pad = (3 * (self.order + 1))
            .max((2.0 * self.fs_hz / self.cutoff_hz).ceil() as usize)
            .min(n - 1);
        let mut y = Vec::with_capacity(n + 2 * pad);
        y.extend((1..=pad).rev().map(|i| 2.0 * x[0] - x[i]));
        y.extend_from_slice(x);
        y.extend((1..=pad).map(|i| 2.0 * x[n - 1] - x[n - 1 - i]));
        for s in &self.sections {
            s.run(&mut y);
        }
        y.reverse();
        for s in &self.sections {
            s.run(&mut y);
        }
        y.reverse();
        y.drain(..pad);
        y.truncate(n);
        y
    }
}

/// Central differences of `x` at step `h`: `(x[k+1] - x[k-1]) / 2h`, one-sided at the ends.
pub fn central_difference(x: &[f64], h: f64) -> Vec<f64> {
    let n = x.len();
    (0..n)
        .map(|k| match (k, n) {
            (_, 0 | 1) => 0.0,
            (0, _) => (x[1] - x[0]) / h,
            (k, n) if k == n - 1 => (x[k] - x[k - 1]) / h,
            (k, _) => (x[k + 1] - x[k - 1]) / (2.0 * h),
        })
        .collect()
}

/// Parallel decimation by `factor` (Gautier 1997): every column is low-passed by the same
/// zero-phase Butterworth (order 4, cut-off `0.8 fs / (2 factor)`) and then every `factor`-th
/// sample is kept, so that the regressors and the measured force keep one phase and no
/// frequency folds into the band that is kept.
pub fn decimate(columns: &[&[f64]], factor: usize, fs_hz: f64) -> Result<Vec<Vec<f64>>, FitError> {
    if factor <= 1 {
        return Ok(columns.iter().map(|c| c.to_vec()).collect());
    }
    let lp = Butterworth::lowpass(4, 0.8 * fs_hz / (2.0 * factor as f64), fs_hz)?;
    Ok(columns
        .iter()
        .map(|c| lp.filtfilt(c).into_iter().step_by(factor).collect())
        .collect())
}

/// The occupied bandwidth of `x` sampled at `fs_hz` \[Hz\]: the lowest cut-off whose zero-phase
/// low-pass (order 4) keeps all but `fraction` of the energy of `x` about its mean (0.01: the
/// 99 % bandwidth). Found by bisection on a log scale between `fs/len` and `0.45 fs`; `None`
/// when `x` is constant.
pub fn occupied_bandwidth(x: &[f64], fs_hz: f64, fraction: f64) -> Option<f64> {
    let n = x.len();
    if n < 8 {
        return None;
    }
    let m = x.iter().sum::<f64>() / n as f64;
    let d: Vec<f64> = x.iter().map(|v| v - m).collect();
    let energy: f64 = d.iter().map(|v| v * v).sum();
    if !(energy > 0.0 && energy.is_finite()) {
        return None;
    }
    let lost = |f: f64| -> f64 {
        let Ok(lp) = Butterworth::lowpass(4, f, fs_hz) else {
            return 1.0;
        };
        let y = lp.filtfilt(&d);
        d.iter().zip(&y).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / energy
    };
    let (mut lo, mut hi) = ((fs_hz / n as f64).ln(), (0.45 * fs_hz).ln());
    if lost(hi.exp()) > fraction {
        return Some(hi.exp());
    }
    for _ in 0..24 {
        let mid = 0.5 * (lo + hi);
        if lost(mid.exp()) > fraction {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi.exp())
}

/// How the samples of a time column lie: on a uniform grid (within 1 % of the step) or not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// First time \[s\].
    pub t0: f64,
    /// The step \[s\]: the mean step of a uniform column, else the median step.
    pub step: f64,
    /// Number of samples on the grid.
    pub len: usize,
    /// True when the column was not uniform and the data must be resampled.
    pub resampled: bool,
    /// The largest step of the column \[s\] and the time it ends at.
    pub largest_gap: (f64, f64),
}

impl Grid {
    /// The grid of time column `t` (strictly increasing, at least 3 samples). A column whose
    /// steps stay within 1 % of its median step is uniform; otherwise it is resampled on the
    /// median step, refused when a gap exceeds `max_gap_steps` of it (naming the gap).
    pub fn of(t: &[f64], max_gap_steps: f64) -> Result<Grid, FitError> {
        let n = t.len();
        if n < 3 {
            return Err(FitError::Data(format!(
                "{n} samples: a time series needs at least 3"
            )));
        }
        let mut steps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        if let Some(k) = steps.iter().position(|d| !(*d > 0.0 && d.is_finite())) {
            return Err(FitError::Data(format!(
                "t must be strictly increasing (row {})",
                k + 2
            )));
        }
        let (gk, gap) = steps
            .iter()
            .enumerate()
            .fold((0, 0.0f64), |b, (k, d)| if *d > b.1 { (k, *d) } else { b });
        steps.sort_by(f64::total_cmp);
        let median = steps[steps.len() / 2];
        let uniform = steps[0] >= 0.99 * median && gap <= 1.01 * median;
        if !uniform && gap > max_gap_steps * median {
            return Err(FitError::Data(format!(
                "the time stamps are not uniform and the largest gap, {gap:e} s ending at t = {} s, is {:.1} steps of {median:e} s (limit {max_gap_steps}): nothing is resampled across it; cut the data there or raise given.max_gap_steps",
                t[gk + 1],
                gap / median
            )));
        }
        let span = t[n - 1] - t[0];
        Ok(if uniform {
            Grid {
                t0: t[0],
                step: span / (n - 1) as f64,
                len: n,
                resampled: false,
                largest_gap: (gap, t[gk + 1]),
            }
        } else {
            Grid {
                t0: t[0],
                step: median,
                len: (span / median).floor() as usize + 1,
                resampled: true,
                largest_gap: (gap, t[gk + 1]),
            }
        })
    }

    /// `x` (sampled at `t`) on the grid: as is when uniform, else linearly interpolated.
    pub fn sample(&self, t: &[f64], x: &[f64]) -> Vec<f64> {
        if !self.resampled {
            return x.to_vec();
        }
        let mut j = 0;
        (0..self.len)
            .map(|k| {
                let tk = self.t0 + k as f64 * self.step;
                while j + 2 < t.len() && t[j + 1] < tk {
                    j += 1;
                }
                let w = ((tk - t[j]) / (t[j + 1] - t[j])).clamp(0.0, 1.0);
                x[j] + w * (x[j + 1] - x[j])
            })
            .collect()
    }

    /// The grid's time stamps.
    pub fn times(&self) -> Vec<f64> {
        (0..self.len)
            .map(|k| self.t0 + k as f64 * self.step)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(f: f64, fs: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|k| (2.0 * PI * f * k as f64 / fs).sin())
            .collect()
    }

    fn rms(x: &[f64]) -> f64 {
        (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64).sqrt()
    }

    #[test]
    fn butterworth_gain_at_dc_cutoff_and_stopband() {
        let fs = 1000.0;
        for order in [1, 2, 3, 4, 5] {
            let lp = Butterworth::lowpass(order, 100.0, fs).unwrap();
            // DC passes unchanged (steady-state start: no transient either).
            let y = lp.filter(&[3.0; 50]);
            assert!(y.iter().all(|v| (v - 3.0).abs() < 1e-12), "{order}");
            // One pass: -3 dB at the cut-off, far below it past twice the cut-off.
            let x = sine(100.0, fs, 4000);
            let g = rms(&lp.filter(&x)[2000..]) / rms(&x[2000..]);
            assert!((g - 0.5f64.sqrt()).abs() < 0.01, "order {order}: {g}");
            let x = sine(400.0, fs, 4000);
            let g = rms(&lp.filter(&x)[2000..]) / rms(&x[2000..]);
            let analog = 1.0 / (1.0 + 4f64.powi(2 * order as i32)).sqrt();
            assert!(g < analog, "order {order}: {g} vs {analog}");
        }
        assert!(Butterworth::lowpass(4, 500.0, 1000.0).is_err());
        assert!(Butterworth::lowpass(0, 100.0, 1000.0).is_err());
    }

    #[test]
    fn filtfilt_has_zero_phase_and_squares_the_gain() {
        let fs = 1000.0;
        let lp = Butterworth::lowpass(4, 50.0, fs).unwrap();
        let x: Vec<f64> = sine(5.0, fs, 3000).iter().map(|v| v + 2.0).collect();
        let y = lp.filtfilt(&x);
        // In band: unchanged, no lag, no ringing at the ends.
        let err = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 2e-3, "{err}");
        let x = sine(50.0, fs, 3000);
        let g = rms(&lp.filtfilt(&x)[500..2500]) / rms(&x[500..2500]);
        assert!((g - 0.5).abs() < 0.01, "{g}");
    }

    #[test]
    fn central_differences_are_exact_on_a_parabola() {
        let h = 1e-3;
        let x: Vec<f64> = (0..100).map(|k| 1.5 * (k as f64 * h).powi(2)).collect();
        let v = central_difference(&x, h);
        for (k, v) in v.iter().enumerate().take(99).skip(1) {
            assert!((v - 3.0 * k as f64 * h).abs() < 1e-9);
        }
        let a = central_difference(&v, h);
        assert!(a[2..97].iter().all(|a| (a - 3.0).abs() < 1e-6));
    }

    #[test]
    fn decimation_keeps_the_band_and_drops_aliases() {
        let fs = 1000.0;
        let slow = sine(3.0, fs, 5000);
        let fast = sine(180.0, fs, 5000);
        let mixed: Vec<f64> = slow.iter().zip(&fast).map(|(a, b)| a + b).collect();
        let d = decimate(&[&mixed, &slow], 10, fs).unwrap();
        assert_eq!(d[0].len(), 500);
        // The 180 Hz component (which would fold to 20 Hz at 100 Hz) is gone.
        let err = d[0][20..480]
            .iter()
            .zip(&d[1][20..480])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-3, "{err}");
        assert!(
            d[1][20..480]
                .iter()
                .zip(slow.iter().step_by(10).skip(20))
                .all(|(a, b)| (a - b).abs() < 1e-3)
        );
    }

    #[test]
    fn occupied_bandwidth_finds_the_band_of_a_signal() {
        let fs = 1000.0;
        let x: Vec<f64> = (0..20_000)
            .map(|k| {
                let t = k as f64 / fs;
                (2.0 * PI * 2.0 * t).sin() + 0.3 * (2.0 * PI * 17.0 * t).sin()
            })
            .collect();
        let b = occupied_bandwidth(&x, fs, 0.01).unwrap();
        // All the energy lies at 2 and 17 Hz: 99 % needs the 17 Hz line (8 % of the energy)
        // passed at about -0.2 dB by the order-8 zero-phase pair.
        assert!(b > 17.0 && b < 40.0, "{b}");
        assert!(occupied_bandwidth(&[1.0; 100], fs, 0.01).is_none());
    }

    #[test]
    fn grids_uniform_jittered_gappy() {
        let t: Vec<f64> = (0..100)
            .map(|k| k as f64 * 1e-3 + if k % 2 == 0 { 2e-8 } else { 0.0 })
            .collect();
        let g = Grid::of(&t, 10.0).unwrap();
        assert!(!g.resampled && g.len == 100 && (g.step - 1e-3).abs() < 1e-9);
        // Dropped samples: resampled on the median step, values interpolated.
        let t: Vec<f64> = (0..100)
            .filter(|k| k % 7 != 3)
            .map(|k| k as f64 * 1e-3)
            .collect();
        let x: Vec<f64> = t.iter().map(|t| 2.0 * t + 1.0).collect();
        let g = Grid::of(&t, 10.0).unwrap();
        assert!(g.resampled && (g.step - 1e-3).abs() < 1e-12);
        let y = g.sample(&t, &x);
        for (tk, yk) in g.times().iter().zip(&y) {
            assert!((yk - (2.0 * tk + 1.0)).abs() < 1e-12);
        }
        // A long gap is refused, naming it.
        let mut t: Vec<f64> = (0..50).map(|k| k as f64 * 1e-3).collect();
        t.extend((80..100).map(|k| k as f64 * 1e-3));
        let e = Grid::of(&t, 10.0).unwrap_err().to_string();
        assert!(e.contains("largest gap") && e.contains("t = 0.08"), "{e}");
    }
}
