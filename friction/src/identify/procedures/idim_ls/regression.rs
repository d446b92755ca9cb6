//! Conditioning a `t, x, u` record for IDIM-LS: resampling, the zero-phase position filter,
//! central differences and parallel decimation (the module doc of [`super`] gives the rules).

use super::super::num;
use super::super::typed::Positive;
use super::{BANDWIDTH_FRACTION, CUTOFF_PER_BANDWIDTH, Conditioning};
use crate::curve::sgn;
use crate::identify::FitError;
use crate::identify::signal::{
    Butterworth, Grid, central_difference, decimate, occupied_bandwidth,
};
use serde_json::{Value, json};

/// The velocity and sign columns of one direction's friction (or of both, pooled).
#[derive(Clone, Debug)]
pub struct Side {
    /// Decimated velocity of this side (`max(v, 0)`, `min(v, 0)`, or `v` pooled).
    pub v: Vec<f64>,
    /// Decimated sign of this side (`[v > 0]`, `-[v < 0]`, or `sgn v` pooled), low-passed
    /// with the others, so not exactly 0 or ±1.
    pub s: Vec<f64>,
}

/// The conditioned regression: decimated rows, target `u`, and how it was made.
#[derive(Clone, Debug)]
pub struct Regression {
    /// Decimated acceleration \[m/s² or rad/s²\].
    pub a: Vec<f64>,
    /// Decimated velocity (both directions).
    pub v: Vec<f64>,
    /// One side pooled, or the positive and the negative side.
    pub sides: Vec<Side>,
    /// Decimated force.
    pub u: Vec<f64>,
    /// Settings and figures for the provenance.
    pub settings: serde_json::Map<String, Value>,
    /// Remarks (resampling).
    pub notes: Vec<String>,
}

/// Filters, differentiates and decimates the `t, x, u` columns; `asymmetric` splits the
/// velocity and its sign by direction before the decimation (the filter is linear, so the
/// sides add up to the pooled columns).
pub fn regression(
    t: &[f64],
    x: &[f64],
    u: &[f64],
    conditioning: &Conditioning,
    asymmetric: bool,
) -> Result<Regression, FitError> {
    let (cols, settings, notes) = decimated_columns(t, x, u, conditioning, asymmetric, |f| {
        let mut c = vec![f.a.to_vec(), f.v.to_vec(), f.u.to_vec()];
        for (sv, ss) in f.sides {
            c.push(sv.clone());
            c.push(ss.clone());
        }
        c
    })?;
    let sides = cols.len().saturating_sub(3) / 2;
    let mut cols = cols.into_iter();
    let mut next = || {
        cols.next()
            .ok_or_else(|| FitError::Bug("decimation lost a column".into()))
    };
    let (a, v, u) = (next()?, next()?, next()?);
    let mut split = Vec::with_capacity(sides);
    for _ in 0..sides {
        split.push(Side {
            v: next()?,
            s: next()?,
        });
    }
    Ok(Regression {
        a,
        v,
        sides: split,
        u,
        settings,
        notes,
    })
}

/// The full-rate signals of a record, filtered and differentiated, before the decimation.
#[derive(Debug)]
pub struct FullRate<'a> {
    /// Acceleration.
    pub a: &'a [f64],
    /// Velocity.
    pub v: &'a [f64],
    /// Force (centred when held).
    pub u: &'a [f64],
    /// Per side (one pooled, or positive and negative): velocity and sign.
    pub sides: &'a [(Vec<f64>, Vec<f64>)],
}

/// The regression's columns, its settings and notes.
pub type Conditioned = (Vec<Vec<f64>>, serde_json::Map<String, Value>, Vec<String>);

/// Resampling, filtering and differentiation, then the columns `build` makes of the full-rate
/// signals, decimated and cut as the regression's are (the same borders and, per direction,
/// the same rows at rest left out): a linear combination of the regression's columns comes
/// out as that combination of its decimated columns, at the cost of one column.
pub fn decimated_columns(
    t: &[f64],
    x: &[f64],
    u: &[f64],
    conditioning: &Conditioning,
    asymmetric: bool,
    build: impl FnOnce(&FullRate<'_>) -> Vec<Vec<f64>>,
) -> Result<Conditioned, FitError> {
    let c = conditioning;
    let grid = Grid::of(t, c.max_gap_steps.0)?;
    let mut notes = Vec::new();
    if grid.resampled {
        notes.push(format!(
            "time stamps not uniform: resampled by linear interpolation on a grid of {:e} s (the median step), {} samples; largest gap {:e} s ending at t = {} s",
            grid.step, grid.len, grid.largest_gap.0, grid.largest_gap.1
        ));
    }
    let (x, mut u) = (grid.sample(t, x), grid.sample(t, u));
    let held = c.force_held;
    if held {
        centre_held(&mut u);
    }
    let fs = 1.0 / grid.step;
    // The bandwidth sets the defaults only: with both given (a held-out record conditioned as
    // its fit was) its two dozen trial filters are not run.
    let both_given = c.cutoff_hz.is_some() && c.decimation.is_some();
    let bandwidth = if both_given {
        None
    } else {
        Some(
            occupied_bandwidth(&u, fs, BANDWIDTH_FRACTION).ok_or_else(|| {
                FitError::Data("idim_ls: u is constant: the record does not excite the axis".into())
            })?,
        )
    };
    let cutoff = match (c.cutoff_hz, bandwidth) {
        (Some(c), _) => c.0,
        (None, Some(b)) => (CUTOFF_PER_BANDWIDTH * b).min(0.4 * fs),
        (None, None) => {
            return Err(FitError::Bug(
                "idim_ls: no bandwidth for the cut-off".into(),
            ));
        }
    };
    let decimation = match (c.decimation, bandwidth) {
        (Some(r), _) => r.0 as usize,
        (None, Some(b)) => ((0.8 * 0.5 * fs / (2.0 * b)).round() as usize).max(1),
        (None, None) => {
            return Err(FitError::Bug(
                "idim_ls: no bandwidth for the decimation".into(),
            ));
        }
    };
    let filter = Butterworth::lowpass(4, cutoff, fs).map_err(|e| match e {
        FitError::Config { value, rule, .. } => FitError::Config {
            field: "given.cutoff_hz".into(),
            value,
            rule,
        },
        e => e,
    })?;
    let q = filter.filtfilt(&x);
    let v = central_difference(&q, grid.step);
    let a = central_difference(&v, grid.step);
    let raw = raw_sides(&v, asymmetric);
    let built = build(&FullRate {
        a: &a,
        v: &v,
        u: &u,
        sides: &raw,
    });
    let columns: Vec<&[f64]> = built.iter().map(Vec::as_slice).collect();
    let mut cols = decimate(&columns, decimation, fs)?;
    let lowest = cutoff.min(0.8 * 0.5 * fs / decimation as f64);
    let border = ((3.0 * fs / lowest).ceil() as usize + 2).div_ceil(decimation);
    let m = cols[0].len();
    if m <= 2 * border + 8 {
        return Err(FitError::Data(format!(
            "idim_ls: {m} decimated samples, too few after leaving {border} out at each end"
        )));
    }
    for c in &mut cols {
        c.truncate(m - border);
        c.drain(..border);
    }
    let mut settings = serde_json::Map::new();
    if let Some(b) = bandwidth {
        settings.insert("bandwidth_hz".into(), num(b));
    }
    settings.insert("cutoff_hz".into(), num(cutoff));
    settings.insert("decimation".into(), json!(decimation));
    settings.insert(
        "filter".into(),
        json!("butterworth order 4, zero-phase (forward and backward)"),
    );
    settings.insert("border_samples".into(), json!(border * decimation));
    settings.insert("step_s".into(), num(grid.step));
    settings.insert("resampled".into(), json!(grid.resampled));
    if held {
        settings.insert("force_held".into(), json!(true));
        notes.push("u is a command held over the following step (given.force_held): averaged over consecutive samples, so that it is centred on the position's central differences".into());
    }
    notes.push(format!(
        "{}position filter cut-off {cutoff:.3} Hz{}; decimation {decimation}{}",
        bandwidth.map_or(String::new(), |b| format!(
            "bandwidth {b:.3} Hz (99 % of the energy of u); "
        )),
        if c.cutoff_hz.is_some() {
            " (given)"
        } else {
            " (5 x bandwidth)"
        },
        if c.decimation.is_some() {
            " (given)"
        } else {
            " (keeps 2 x bandwidth)"
        },
    ));
    if asymmetric {
        let margin = (REST_MARGIN_PERIODS * fs / lowest).ceil() as usize;
        let mask = moving(&v, c.v_min, margin);
        let at = (decimation, border);
        keep_moving(&mut cols, mask, at, c.v_min.is_some(), (&mut settings, &mut notes))?;
    }
    Ok((cols, settings, notes))
}

/// `u[k] <- (u[k-1] + u[k]) / 2`: a force held from sample `k-1` to `k` and from `k` to `k+1`
/// acts, on average, over the interval the central differences at `k` span.
fn centre_held(u: &mut [f64]) {
    for k in (1..u.len()).rev() {
        u[k] = 0.5 * (u[k - 1] + u[k]);
    }
}

/// The undecimated `(velocity, sign)` columns of each side.
fn raw_sides(v: &[f64], asymmetric: bool) -> Vec<(Vec<f64>, Vec<f64>)> {
    if !asymmetric {
        return vec![(v.to_vec(), v.iter().map(|v| sgn(*v)).collect())];
    }
    let pick = |keep: fn(f64) -> bool| -> (Vec<f64>, Vec<f64>) {
        v.iter()
            .map(|&v| if keep(v) { (v, sgn(v)) } else { (0.0, 0.0) })
            .unzip()
    };
    vec![pick(|v| v > 0.0), pick(|v| v < 0.0)]
}

/// Default speed below which a per-direction fit leaves a sample out, as a fraction of the
/// 99th percentile of the speed.
pub const V_MIN_FRACTION: f64 = 0.05;
/// Periods of the lowest cut-off left out on each side of a sample at rest.
pub const REST_MARGIN_PERIODS: f64 = 3.0;

/// Which samples a per-direction fit keeps: `|v| >= given.v_min` (default [`V_MIN_FRACTION`]
/// of the 99th percentile of the speed), and, around a rest, `margin` samples more on each
/// side. At rest the axis sticks and the filtered velocity's sign is that of the filter's
/// ringing, so those rows (and the rows the low-pass filters smear them into) would credit one
/// direction with the force of the other. A reversal that passes through zero without
/// sticking (slow speed for less than a filter period, `margin / REST_MARGIN_PERIODS`) rings
/// nothing: only its slow samples are left out, as the regressors of both sides are filtered
/// like the force. (A margin at every reversal left nothing of a smooth two-sine record whose
/// reversals come closer than three filter periods.) Returns the mask and `v_min`.
fn moving(v: &[f64], v_min: Option<Positive>, margin: usize) -> (Vec<bool>, f64) {
    // A given v_min (a held-out record conditioned as its fit) spares the percentile.
    let v_min = match v_min {
        Some(v_min) => v_min.0,
        None => {
            let mut speeds: Vec<f64> = v.iter().map(|v| v.abs()).collect();
            let at = ((speeds.len() - 1) as f64 * 0.99) as usize;
            V_MIN_FRACTION * *speeds.select_nth_unstable_by(at, f64::total_cmp).1
        }
    };
    let period = (margin as f64 / REST_MARGIN_PERIODS).ceil() as usize;
    let mut keep = vec![true; v.len()];
    let mut k = 0;
    while k < v.len() {
        if v[k].abs() >= v_min {
            k += 1;
            continue;
        }
        let end = (k..v.len())
            .find(|&j| v[j].abs() >= v_min)
            .unwrap_or(v.len());
        let pad = if end - k >= period { margin } else { 0 };
        keep[k.saturating_sub(pad)..(end + pad).min(v.len())].fill(false);
        k = end;
    }
    (keep, v_min)
}

/// Leaves out the decimated rows (every `r`-th sample, less `border` at each end) at rest by
/// `mask`, recording how many.
fn keep_moving(
    cols: &mut [Vec<f64>],
    (mask, v_min): (Vec<bool>, f64),
    (r, border): (usize, usize),
    v_min_given: bool,
    (settings, notes): (&mut serde_json::Map<String, Value>, &mut Vec<String>),
) -> Result<(), FitError> {
    let keep: Vec<bool> = (0..cols[0].len())
        .map(|i| mask.get((i + border) * r).copied().unwrap_or(false))
        .collect();
    let kept = keep.iter().filter(|k| **k).count();
    if kept < 16 {
        return Err(FitError::Config {
            field: "given.v_min".into(),
            value: v_min,
            rule: format!(
                "leaves {kept} decimated samples in motion (need 16): lower it, or record longer moves"
            ),
        });
    }
    for c in cols.iter_mut() {
        let mut k = keep.iter();
        c.retain(|_| *k.next().unwrap_or(&false));
    }
    settings.insert("v_min".into(), num(v_min));
    notes.push(format!(
        "per direction: {} of {} decimated samples at rest or within a filter period of rest (|v| < {v_min:e}{}) left out",
        keep.len() - kept,
        keep.len(),
        if v_min_given { ", given" } else { ", 5 % of the speed's 99th percentile" }
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sides_add_up_to_the_pooled_columns_after_decimation() {
        let v: Vec<f64> = (0..2000).map(|k| (k as f64 * 0.01).sin() + 0.1).collect();
        let pooled = raw_sides(&v, false);
        let split = raw_sides(&v, true);
        let cols = |s: &[(Vec<f64>, Vec<f64>)]| -> Vec<Vec<f64>> {
            let c: Vec<&[f64]> = s.iter().flat_map(|(a, b)| [&a[..], &b[..]]).collect();
            decimate(&c, 10, 1000.0).unwrap()
        };
        let (p, s) = (cols(&pooled), cols(&split));
        assert!(s[1].iter().any(|x| *x > 0.5) && s[3].iter().any(|x| *x < -0.5));
        for k in 0..p[0].len() {
            assert!((s[0][k] + s[2][k] - p[0][k]).abs() < 1e-9);
            assert!((s[1][k] + s[3][k] - p[1][k]).abs() < 1e-9);
        }
    }

    #[test]
    fn rest_and_its_margin_are_left_out() {
        let v = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let (keep, v_min) = moving(&v, None, 1);
        assert_eq!(v_min, 0.05);
        assert_eq!(keep, [true, true, false, false, false, true, true, true]);
    }

    /// A rest (slow for a filter period or longer) loses its margin; a reversal passing
    /// through zero loses only its slow samples.
    #[test]
    fn a_reversal_loses_its_slow_samples_and_a_rest_its_margin() {
        let mut v = vec![1.0; 40];
        v[5] = 0.0; // a reversal: slow for one sample
        v[20..24].fill(0.0); // a rest: slow for a filter period (margin 6 = 3 periods of 2)
        let (keep, _) = moving(&v, None, 6);
        let left_out: Vec<usize> = (0..v.len()).filter(|&k| !keep[k]).collect();
        let want: Vec<usize> = std::iter::once(5).chain(14..30).collect();
        assert_eq!(left_out, want);
    }

    /// A smooth two-sine record (reversals closer than three filter periods, the record that
    /// was left with 0 samples) keeps most of its samples.
    #[test]
    fn a_smooth_two_sine_record_keeps_most_samples() {
        let fs = 1000.0;
        let v: Vec<f64> = (0..20_000)
            .map(|k| {
                let t = k as f64 / fs;
                let w = 2.0 * std::f64::consts::PI;
                3.0 * (w * 0.9 * t).sin() + 2.5 * (w * 2.3 * t).sin()
            })
            .collect();
        let margin = (REST_MARGIN_PERIODS * fs / 11.5).ceil() as usize;
        let (keep, _) = moving(&v, None, margin);
        let kept = keep.iter().filter(|k| **k).count();
        assert!(kept > 18_000, "{kept} of 20000 kept");
    }
}
