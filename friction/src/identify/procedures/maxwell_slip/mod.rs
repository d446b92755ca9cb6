//! GMS elements from presliding reversal curves (Al-Bender, Lampaert & Swevers 2005, the
//! Maxwell-slip structure and Masing's rule; docs/src/identification.md#maxwell_slip):
//! procedure `maxwell_slip`.
//!
//! Once every element slips (gross sliding), a reversal starts all elements from their limits
//! `-alpha_i s⁻` together, and each reloads linearly until it slips again at `+alpha_i s⁺`. The
//! force change after the reversal is therefore the piecewise-linear curve
//!
//! $$\Delta F(\Delta x) = \sum_i k_i \min(\Delta x, d_i),\qquad d_i = \alpha_i (s^+ + s^-)/k_i$$
//!
//! (Masing's rule: the virgin curve scaled by two), the same for both directions. Its initial
//! slope is the total stiffness `Σ k_i`, its plateau the swing `s⁺ + s⁻`. For breakpoints `d_j`
//! fixed on a geometric grid the curve is linear in the `k_j >= 0`, so the fit is a
//! non-negative least-squares problem (Lawson & Hanson) with no start values and one optimum;
//! the grid points that carry stiffness become the elements, with
//! `alpha_j = k_j d_j / Σ k d` (so `Σ alpha = 1`).
//!
//! The branches are cut at the reversals of the measured position (a hysteresis of three
//! encoder counts, the smallest position step in the data, unless `given.hysteresis` says
//! otherwise). A branch is used when the one before it reached gross sliding (its force
//! change levels off: it went on for at least twice the displacement at which it reached 95 %
//! of its largest change), so its start is a full reversal; its points up to three times that
//! displacement are fitted.
//!
//! **Quantisation.** The first elements of a stiff contact slip within a count or two of a
//! reversal, so a fit of the force against the counted position reads the slope averaged
//! over the first count (biased low). The fit therefore uses only the samples where the count
//! changes: there the shaft is on a count edge, whose distance from the branch's first edge
//! is a whole number `m` of counts. The reversal itself lies an unknown fraction `phi` of a
//! count before that first edge, and the force there is the extreme of the force around it
//! (the torque sensor resolves what the encoder does not): the points are
//! `(phi + m) count, F - F_rev`. With the `phi` of each branch fixed the curve is the NNLS
//! problem above (without offsets); each `phi` is found by a search over `[0, 1)` count,
//! branch by branch until none moves (the breakpoint grid starts at one count: a kink
//! within the first count would let any phase fit). Branches whose reversals fall at different fractions
//! of a count sample the first count at different points, which is what determines the
//! initial slope: with every reversal at one fraction, Σk within the first count is only
//! bounded below (the report says so). The standard error of `Σ k` is the larger of the
//! least-squares one and the jackknife over branches (each left out in turn).
//!
//! **The swing.** Masing's rule puts the plateau of a full reversal's curve at the swing
//! between the two sliding levels, `f_s⁺ + f_s⁻` at the ramps' slow speed. With that swing
//! from the static curve (`given.static_swing`, N m or N) the fit judges its own plateau: one
//! more than [`MAX_SWING_GAP`] away from it means the legs were not full reversals between
//! the sliding levels (stick-slip on a soft loop, legs too short), so `Σ k` and its standard
//! error do not describe the bench, and the verdict says the presliding stiffness is not
//! determined.
//!
//! The ramps do not determine the micro-damping `sigma1` of stuck elements: the report sets it
//! to 0 (the registry's default is sized for 1e5 N/m on 1 kg and would swamp another bench's
//! presliding); fit it afterwards by output error.
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[rad or m\], `friction` \[N m or N\]:
//! slow back-and-forth displacement ramps well into gross sliding (the `presliding` kind's
//! ramps), slow enough that inertia and the Stribeck effect are negligible (`s(v) ≈ f_s`), with
//! at least two reversals. The Stribeck curve and the attraction `c` come from other runs
//! (`static_curve` on a sweep); `bench fit --run` takes them from the bench's static fit.

use super::quality::scaled_condition;
use super::typed::{Positive, typed};
use super::{FitReport, Given, Part, Procedure, Reads, Table, need_rows, num};
use crate::identify::FitError;
use schemars::JsonSchema;
use serde::Deserialize;

/// What `maxwell_slip` takes in `given`.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaxwellSlipOptions {
    /// Reversal detection hysteresis (absent: three position counts)
    #[schemars(extend("x-unit" = "rad or m"))]
    pub hysteresis: Option<Positive>,
    /// Friction swing of a reversal that counts as saturated
    #[schemars(extend("x-unit" = "N or N m"))]
    pub static_swing: Option<Positive>,
}
use nalgebra::{DMatrix, DVector};
use serde_json::{Value, json};

mod count_changes;
mod nnls;
use count_changes::{
    Crossings, MIN_PHASE_SPREAD, crossings, jackknife, phase_spread, phases, solve,
};
use nnls::nnls;

/// `maxwell_slip`: the GMS elements.
pub const PROCEDURE: Procedure = Procedure {
    name: "maxwell_slip",
    models: &["gms"],
    columns: &["t", "x", "friction"],
    options: typed::<MaxwellSlipOptions>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["presliding"])),
    part: Some(Part {
        name: "ramp and reversals",
        roles: &["displacement_ramp", "reversals"],
    }),
    iterates: false,
    offset_refused: Some(
        "each reversal branch is fitted with its own force level, which absorbs any offset",
    ),
    fit,
};

/// Largest relative gap between the reversal curves' plateau and `given.static_swing` for
/// which the reversals count as full ones between the sliding levels.
pub const MAX_SWING_GAP: f64 = 0.15;

/// Candidate breakpoints on the geometric grid.
const GRID: usize = 24;

/// A monotonic stretch of motion between two reversals: sample indices `[start, end]`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Branch {
    start: usize,
    end: usize,
    direction: f64,
}

/// The smallest nonzero position step: the encoder count when the data are unfiltered.
fn position_step(x: &[f64]) -> Option<f64> {
    x.windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|d| *d > 0.0)
        .min_by(f64::total_cmp)
}

/// Cuts the motion at its reversals: a branch ends at its extreme once the position has come
/// back from it by more than `h`.
fn branches(x: &[f64], h: f64) -> Vec<Branch> {
    let mut out = Vec::new();
    let Some(&x0) = x.first() else {
        return out;
    };
    let Some(first) = x.iter().position(|xi| (xi - x0).abs() > h) else {
        return out;
    };
    let mut b = Branch {
        start: 0,
        end: 0,
        direction: (x[first] - x0).signum(),
    };
    for (k, xi) in x.iter().enumerate() {
        if (xi - x[b.end]) * b.direction > 0.0 {
            b.end = k;
        } else if (x[b.end] - xi) * b.direction > h {
            out.push(b);
            b = Branch {
                start: b.end,
                end: k,
                direction: -b.direction,
            };
        }
    }
    out.push(b);
    out
}

/// Displacement and force change along a branch, in its direction.
fn curve(b: &Branch, x: &[f64], f: &[f64]) -> Vec<(f64, f64)> {
    (b.start..=b.end)
        .map(|k| {
            (
                b.direction * (x[k] - x[b.start]),
                b.direction * (f[k] - f[b.start]),
            )
        })
        .collect()
}

/// The displacement at which a branch's force change first reaches 95 % of its largest, and
/// whether the branch went on for at least twice that (it reached gross sliding).
fn saturation(c: &[(f64, f64)]) -> (f64, bool) {
    let top = c.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let reach = c
        .iter()
        .find(|p| p.1 >= 0.95 * top)
        .map_or(f64::INFINITY, |p| p.0);
    let span = c.iter().map(|p| p.0).fold(0.0, f64::max);
    (reach, top > 0.0 && span >= 2.0 * reach)
}

/// The curve's NNLS problem for reversal phases `phi` (counts), on the branches `keep`:
/// design matrix, solution and residual sum of squares.
struct Solved {
    a: DMatrix<f64>,
    z: DVector<f64>,
    rss: f64,
}

/// The curve fitted on every sample of the used branches, each with its own force offset:
/// the first [`GRID`] columns of `a` are the breakpoints, the others the offsets.
fn with_offsets(curves: &[&[(f64, f64)]], grid: &[f64], range: f64) -> Solved {
    let points: Vec<(usize, f64, f64)> = curves
        .iter()
        .enumerate()
        .flat_map(|(b, c)| {
            c.iter()
                .filter(|p| p.0 >= 0.0 && p.0 <= range)
                .map(move |p| (b, p.0, p.1))
        })
        .collect();
    let cols = GRID + curves.len();
    let a = DMatrix::from_fn(points.len(), cols, |r, c| {
        let (b, dx, _) = points[r];
        match c.checked_sub(GRID) {
            None => dx.min(grid[c]),
            Some(o) => f64::from(u8::from(o == b)),
        }
    });
    let y = DVector::from_iterator(points.len(), points.iter().map(|p| p.2));
    let nonneg: Vec<bool> = (0..cols).map(|c| c < GRID).collect();
    let z = nnls(&a, &y, &nonneg);
    let rss = (&y - &a * &z).norm_squared();
    Solved { a, z, rss }
}

/// The smallest breakpoint carrying stiffness, in counts.
fn first_kink(s: &Solved, grid: &[f64], count: f64) -> f64 {
    let sum: f64 = s.z.rows(0, GRID).sum();
    (0..GRID)
        .find(|&j| s.z[j] > 1e-6 * sum)
        .map_or(f64::INFINITY, |j| grid[j] / count)
}

/// Branches the count-change fit uses at most (the phase search costs a solve per branch and
/// candidate; a dozen reversals at spread phases determine the first count).
const MAX_BRANCHES: usize = 12;

/// With the first kink of the all-samples fit at this many counts or more, the encoder
/// resolves the curve and that fit stands; below it the count-change fit is used.
const RESOLVED_COUNTS: f64 = 4.0;

/// The GMS elements `k`, `alpha` from the `t, x, friction` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts: MaxwellSlipOptions = PROCEDURE.options_of(given)?;
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let f = table.column("friction", PROCEDURE.name)?;
    need_rows(t.len(), 20, PROCEDURE.name)?;
    let count = position_step(x)
        .ok_or_else(|| FitError::Data("maxwell_slip: the position never changes".into()))?;
    let h = opts.hysteresis.map_or(3.0 * count, |h| h.0);
    let static_swing = opts.static_swing.map(|s| s.0);
    let all = branches(x, h);
    let curves: Vec<Vec<(f64, f64)>> = all.iter().map(|b| curve(b, x, f)).collect();
    let sat: Vec<(f64, bool)> = curves.iter().map(|c| saturation(c)).collect();
    let used: Vec<usize> = (1..all.len()).filter(|&i| sat[i - 1].1).collect();
    if used.is_empty() {
        return Err(FitError::Data(format!(
            "maxwell_slip: {} branches of motion, none after one that reached gross sliding (ramps past the breakaway displacement, with reversals, are needed)",
            all.len()
        )));
    }
    let reach = used
        .iter()
        .map(|&i| sat[i].0)
        .filter(|r| r.is_finite())
        .fold(0.0, f64::max);
    let reach = if reach > 0.0 { reach } else { 100.0 * count };
    let grid: Vec<f64> = (0..GRID)
        .map(|j| {
            let (lo, hi) = (count, 1.5 * reach);
            lo * (hi / lo).powf(j as f64 / (GRID - 1) as f64)
        })
        .collect();
    let used_curves: Vec<&[(f64, f64)]> = used.iter().map(|&i| curves[i].as_slice()).collect();
    need_rows(
        used_curves.iter().map(|c| c.len()).sum(),
        GRID + used.len() + 1,
        PROCEDURE.name,
    )?;
    let screen = with_offsets(&used_curves, &grid, 3.0 * reach);
    let kink = first_kink(&screen, &grid, count);
    let data: Vec<Crossings> = used
        .iter()
        .filter_map(|&i| crossings(&all[i], x, f, count, 3.0 * reach))
        .filter(|c| !c.m.is_empty())
        .take(MAX_BRANCHES)
        .collect();
    let keep: Vec<usize> = (0..data.len()).collect();
    let crossed: usize = data.iter().map(|c| c.m.len()).sum();
    let quantised = kink < RESOLVED_COUNTS && crossed > GRID;
    let (solved, points, phi, jk_se) = if quantised {
        let phi = phases(&data, vec![0.5; data.len()], &keep, &grid, count);
        let jk = jackknife(&data, &phi, &keep, &grid, count);
        (solve(&data, &phi, &keep, &grid, count), crossed, phi, jk)
    } else {
        let n = screen.a.nrows();
        (screen, n, Vec::new(), f64::NAN)
    };
    let Solved { a, z, rss } = solved;
    let sum_k: f64 = z.rows(0, GRID).sum();
    let elements: Vec<usize> = (0..GRID).filter(|&j| z[j] > 1e-6 * sum_k).collect();
    if elements.is_empty() {
        return Err(FitError::Data(
            "maxwell_slip: no stiffness found (the force does not rise after the reversals)".into(),
        ));
    }
    let swing: f64 = elements.iter().map(|&j| z[j] * grid[j]).sum();
    let k: Vec<f64> = elements.iter().map(|&j| z[j]).collect();
    let alpha: Vec<f64> = elements.iter().map(|&j| z[j] * grid[j] / swing).collect();

    // Standard errors from the least-squares problem on the columns that carry a value, and
    // for Σk the jackknife over branches when it is larger (it carries the phases' error).
    let active: Vec<usize> = elements.iter().copied().chain(GRID..a.ncols()).collect();
    let sub = a.select_columns(&active);
    let dof = (points - active.len()).max(1) as f64;
    let cov = (sub.transpose() * &sub)
        .try_inverse()
        .map(|m| m * (rss / dof));
    let (k_se, ls_se) = match &cov {
        Some(c) => {
            let ne = elements.len();
            let se: Vec<f64> = (0..ne).map(|i| c[(i, i)].max(0.0).sqrt()).collect();
            let sum = c.view((0, 0), (ne, ne)).sum().max(0.0).sqrt();
            (se, sum)
        }
        None => (vec![f64::NAN; elements.len()], f64::NAN),
    };
    let sum_se = if jk_se.is_finite() {
        ls_se.max(jk_se)
    } else {
        ls_se
    };
    let spread = if quantised { phase_spread(&phi) } else { 1.0 };

    let mut rep = FitReport::new(
        PROCEDURE.name,
        model,
        if quantised {
            "non-negative least squares (Lawson-Hanson) on a breakpoint grid at the count changes, reversal phases searched"
        } else {
            "non-negative least squares (Lawson-Hanson) on a breakpoint grid"
        },
        PROCEDURE.columns,
        points,
        given,
    );
    rep.params.insert("k".into(), json!(k));
    rep.params.insert("alpha".into(), json!(alpha));
    // The quasi-static ramps do not determine the micro-damping, and the registry's default
    // (sized for 1e5 N/m on 1 kg) would swamp a bench of another scale: none until a dynamic
    // fit (output_error with "fit": ["sigma1", "c"]) says otherwise.
    rep.params.insert("sigma1".into(), json!(0.0));
    rep.std_errors.insert(
        "k".into(),
        Value::Array(k_se.iter().map(|s| num(*s)).collect()),
    );
    rep.mse = Some(rss / points as f64);
    rep.condition = scaled_condition(&sub);
    let first = used.first().map_or(0, |&i| all[i].start);
    let last = used.last().map_or(0, |&i| all[i].end);
    rep.time_range(&t[first..=last]);
    rep.provenance.notes.push(format!(
        "{} of {} branches used (each after one that reached gross sliding), {points} points ({}); reversals cut at {h:.3e} (3 position steps of {count:.3e})",
        used.len(),
        all.len(),
        if quantised {
            format!("the count changes: the first kink of the all-samples fit, {kink:.1} counts, is under {RESOLVED_COUNTS}")
        } else {
            "every sample, a force offset per branch: the encoder resolves the first kink".into()
        }
    ));
    rep.provenance.notes.push(format!(
        "total stiffness {sum_k:.4} ± {sum_se:.2e}, swing s+ + s- = {swing:.4} (the plateau of the reversal curves), {} elements",
        k.len()
    ));
    if spread < MIN_PHASE_SPREAD {
        rep.provenance.notes.push(format!(
            "the reversals fall within {spread:.2} count of one another on the count grid: the stiffness within the first count after a reversal is not resolved (Σk may be low); reversals at spread fractions of a count resolve it"
        ));
    }
    let swing_note = static_swing.and_then(|s| swing_gap(swing, s));
    if let Some(note) = &swing_note {
        rep.provenance.notes.push(note.clone());
    }
    rep.details = json!({
        "sum_k": num(sum_k),
        "sum_k_std_error": num(sum_se),
        "sum_k_jackknife_std_error": num(jk_se),
        "swing": num(swing),
        "breakpoints": elements.iter().map(|&j| grid[j]).collect::<Vec<_>>(),
        "branches": all.len(),
        "branches_used": used.len(),
        "at_count_changes": quantised,
        "reversal_phases": phi,
        "phase_spread": spread,
        "hysteresis": h,
        "fit_range": 3.0 * reach,
        "static_swing": static_swing,
        "warnings": swing_note.into_iter().collect::<Vec<_>>(),
    });
    Ok(rep)
}

/// Why `Σ k` does not describe the bench when the plateau `swing` lies more than
/// [`MAX_SWING_GAP`] from the static curve's `expected` one; `None` when it does not.
fn swing_gap(swing: f64, expected: f64) -> Option<String> {
    let gap = swing / expected - 1.0;
    (gap.abs() > MAX_SWING_GAP).then(|| format!(
        "presliding stiffness not determined: the reversal curves level off at {swing:.3}, not at the static curve's swing fs+ + fs- = {expected:.3} ({:+.0} %, more than {:.0} % away), so the legs were not full reversals between the sliding levels (Masing's rule) and the sum of the element stiffnesses does not describe the bench",
        100.0 * gap,
        100.0 * MAX_SWING_GAP
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::procedures::quality::Status;
    use crate::registry;

    /// A slow triangle of displacement through the true GMS (velocity replay), sampled at
    /// 1 kHz with a 1e-5 rad encoder; the truth's swing fs+ + fs- is 1.5 + 1.35.
    fn triangle() -> Table {
        let truth = json!({
            "k": [500.0, 250.0, 150.0, 100.0], "alpha": [0.1, 0.2, 0.3, 0.4],
            "fc": 1.0, "fs": 1.5, "vs": 0.1, "delta": 2.0, "sigma1": 0.0, "sigma2": 0.0, "c": 50.0,
            "negative": {"fc": 0.9, "fs": 1.35, "c": 50.0}
        });
        let mut m = registry::entry("gms").unwrap().build(truth).unwrap();
        let (dt, rate, amp) = (1e-3, 0.005, 0.02);
        let (mut t, mut x, mut fr) = (Vec::new(), Vec::new(), Vec::new());
        let mut pos = 0.0_f64;
        for k in 0..((8.0 * amp / rate / dt) as usize) {
            let tk = k as f64 * dt;
            let phase = (tk * rate / amp) % 4.0;
            let v = if (1.0..3.0).contains(&phase) {
                -rate
            } else {
                rate
            };
            pos += v * dt;
            let q = (pos / 1e-5).round() * 1e-5;
            let input = crate::Input {
                t: tk,
                x: pos,
                v,
                u: 0.0,
                du_dt: 0.0,
            };
            let out = m.step(&input, dt);
            t.push(tk);
            x.push(q);
            fr.push(out);
        }
        Table::new(vec![
            ("t".into(), t),
            ("x".into(), x),
            ("friction".into(), fr),
        ])
        .unwrap()
    }

    /// The fit finds Σk and the swing of the truth.
    #[test]
    fn elements_of_a_known_gms_from_its_reversal_curves() {
        let table = triangle();
        let r = fit("gms", &table, &Given::new()).unwrap();
        let sum_k = r.details["sum_k"].as_f64().unwrap();
        let swing = r.details["swing"].as_f64().unwrap();
        assert!(
            (sum_k - 1000.0).abs() < 50.0,
            "sum_k {sum_k} {:?}",
            r.details
        );
        // s at 5 mrad/s is f_s to 0.25 %: the swing is 1.5 + 1.35.
        assert!((swing - 2.85).abs() < 0.03, "{r:#?}");
        let alpha: Vec<f64> = serde_json::from_value(r.params["alpha"].clone()).unwrap();
        assert!((alpha.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    /// With the static curve's swing given, the fit judges its plateau: the truth's swing
    /// leaves the verdict as it is, one the plateau falls 30 % short of turns it to a warning
    /// that the presliding stiffness is not determined.
    #[test]
    fn a_plateau_short_of_the_given_static_swing_leaves_the_stiffness_undetermined() {
        let table = triangle();
        let with = |swing: f64| {
            let given: Given = serde_json::from_value(json!({ "static_swing": swing })).unwrap();
            super::super::run("maxwell_slip", "gms", &table, &given).unwrap()
        };
        let full = with(2.85);
        assert_eq!(full.verdict.status, Status::Ok, "{:?}", full.verdict);
        assert_eq!(full.details["warnings"], json!([]));
        let short = with(2.85 / 0.7);
        assert_eq!(short.verdict.status, Status::Warning);
        let reason = &short.verdict.reasons[0];
        assert!(
            reason.starts_with("presliding stiffness not determined") && reason.contains("(-30 %"),
            "{reason}"
        );
        assert!(short.provenance.notes.contains(reason));
        assert_eq!(short.details["static_swing"], json!(2.85 / 0.7));
        let bad: Given = serde_json::from_value(json!({"static_swing": -1.0})).unwrap();
        let err = super::super::run("maxwell_slip", "gms", &table, &bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("given.static_swing"), "{err}");
    }
}
