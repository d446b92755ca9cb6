//! Nouailletas power-equation weighted RLS for `(J, f_v, f_c)` from position and torque only:
//! S2 §IV.A eqs. 5–10; docs/src/identification.md#power_rls.
//!
//! Regression (S2 eq. 5), Coulomb friction only:
//!
//! $$u_k = J a_k + f_v v_k + f_c \operatorname{sgn}(v_k),\qquad
//!   \theta = (J, f_v, f_c)^T,\ \varphi_k = (a_k, v_k, \operatorname{sgn} v_k)^T$$
//!
//! Only `x` is measured: `v` and `a` come from one critically damped second-order filter on `x`
//! (S2 eq. 6, `F_v = p/(p/p_n+1)^2`, `F_a = p^2/(p/p_n+1)^2`), and `u` passes through the same
//! filter (`F_u = 1/(p/p_n+1)^2`) so that every signal has the same phase. State form:
//! `xf'' = p_n^2 (x - xf) - 2 p_n xf'`, `v = xf'`, `a = xf''`. Discretised ZOH-exact (default) or
//! Tustin (`given.discretisation = "tustin"`), the same for all signals; `p_n` = 200 rad/s.
//!
//! Criterion (S2 eq. 7), solved by [`Rls`] with the variable forgetting factor
//! `lambda1(k) = lambda0 lambda1(k-1) + 1 - lambda0`, `lambda1(0) = 0.9`, `lambda0 = 0.99`:
//!
//! $$I = \sum_k \Big(\prod_{j<k}\lambda_1(k-j)\Big)\,\eta_k\,(u_k - \theta^T\varphi_k)^2$$
//!
//! with the three weightings of S2 Table II: `eta = 1`; the threshold `eta = 1{|v| >= v_min}`
//! (`v_min` in the data's units, m/s or rad/s; by default a fifth of the 99th percentile of the
//! filtered speed, S2's 20 rad/s being a fifth of its motor's speeds; a threshold that no sample
//! passes is refused); and `eta = v^2` (default), which is plain RLS on the power equation
//! `u v = J a v + f_v v^2 + f_c |v|` (S2 eqs. 8–10). All three are computed; `given.eta`
//! (`"one"`, `"threshold"`, `"v2"`) chooses the one reported under `params`, the others are in
//! `details`. `P_0 = alpha I` in scaled units (`alpha` = 1e3, recorded); the regressors are scaled
//! by `rms(u)/rms(phi_j)` so `J ~ 1e-5`, `f_v ~ 1e-4`, `f_c ~ 1e-2` are equally conditioned.
//! With `given.offset = true` the regression gains a constant term (the filter passes it
//! unchanged), reported as `offset`; a known offset is subtracted from `u`.
//!
//! **Per direction** (`given.asymmetric = true`): the regressors become
//! `(a, v⁺, [v > 0], v⁻, -[v < 0])` (`v⁺ = max(v, 0)`, `v⁻ = min(v, 0)` of the filtered
//! speed), the positive side's `fv`, `fc` are reported under `params` and the negative side's
//! under `params.negative`, and `directions` says whether they differ beyond their standard
//! errors. A fitted offset is refused with it (it trades off exactly with the two Coulomb
//! levels).
//!
//! **A known load** (`given.load`, [`crate::load`]): `u - L(x)` takes the place of `u`, as in
//! `idim_ls`.
//!
//! **Standard errors.** Once the forgetting factor has reached 1 the estimate is the weighted
//! least-squares one, so its standard errors are those of the weighted regression at the RLS
//! estimate ([`stats::least_squares`] on the rows `sqrt(eta) phi`, corrected for serially
//! correlated residuals).
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[rad or m\] and `u` [N m or N]; time stamps
//! that are not uniform are resampled on the median step unless a gap exceeds `max_gap_steps`
//! (default 10) steps. A closed-loop run excited by a PRBS on the position reference (S2 §IV.A), long enough for
//! the forgetting factor to reach 1 (several thousand samples; S2: T_e = 1 ms), with speeds
//! well above `v_min` for the threshold weighting. The model is the mode-1 equation, so the
//! estimate of `f_c` absorbs the Stribeck part; `eta = v^2` down-weights the low speeds where it
//! matters (S2 Table II).

use super::typed::{Positive, typed};
use super::{FitReport, Given, Offset, Procedure, Reads, Table, need_rows, num};
use crate::curve::sgn;
use crate::identify::FitError;
use schemars::JsonSchema;
use crate::identify::rls::Rls;
use crate::identify::signal::Grid;
use crate::identify::stats;
use nalgebra::{Matrix2, Vector2};

/// `power_rls`: models with a Coulomb level and a viscous coefficient (`hybrid` also gets `j`).
pub const PROCEDURE: Procedure = Procedure {
    name: "power_rls",
    models: &[
        "hybrid",
        "coulomb_viscous",
        "static_coulomb_viscous",
        "stribeck_exp",
        "stribeck_lorentz",
        "tustin",
        "static_armstrong",
        "karnopp",
        "lugre",
    ],
    columns: &["t", "x", "u"],
    options: typed::<PowerRlsOptions>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["prbs", "validation_profile", "imported"])),
    part: None,
    iterates: false,
    offset_refused: None,
    fit,
};

/// S2 eq. 6 filter bandwidth [rad/s].
pub const P_N: f64 = 200.0;
/// S2 eq. 7: initial forgetting factor.
pub const LAMBDA1_0: f64 = 0.9;
/// S2 eq. 7: forgetting-factor rate.
pub const LAMBDA0: f64 = 0.99;
/// Default threshold of the threshold weighting as a fraction of the 99th percentile of the
/// filtered speed (S2 Table II: 20 rad/s on its bench).
pub const V_MIN_FRACTION: f64 = 0.2;
/// Fewest weighted samples an estimate needs.
pub const MIN_WEIGHTED: usize = 20;
/// Our choice of `P_0 = alpha I` in scaled units (S2 does not give one).
pub const ALPHA: f64 = 1e3;

/// How the filter is discretised.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Discretisation {
    /// Zero-order hold, exact.
    #[default]
    Zoh,
    /// Bilinear (Tustin), with the input averaged over the step.
    Tustin,
}

/// The critically damped second-order filter of S2 eq. 6 in state form.
#[derive(Clone, Debug)]
pub struct Filter {
    pn: f64,
    ad: Matrix2<f64>,
    bd: Vector2<f64>,
    tustin: bool,
    s: Vector2<f64>,
    h: f64,
}

impl Filter {
    /// A filter of bandwidth `pn` \[rad/s\] at step `h` \[s\], started at rest on input `x0`.
    pub fn new(pn: f64, h: f64, how: Discretisation, x0: f64) -> Filter {
        let a = Matrix2::new(0.0, 1.0, -pn * pn, -2.0 * pn);
        let b = Vector2::new(0.0, pn * pn);
        let (ad, bd) = match how {
            Discretisation::Zoh => {
                let e = (-pn * h).exp();
                let ad = Matrix2::new(
                    e * (1.0 + pn * h),
                    e * h,
                    -e * pn * pn * h,
                    e * (1.0 - pn * h),
                );
                let bd = Vector2::new(1.0 - ad[(0, 0)], pn * pn * ad[(0, 1)]);
                (ad, bd)
            }
            Discretisation::Tustin => {
                let i = Matrix2::identity();
                let m = (i - a * (h / 2.0)).try_inverse().unwrap_or(i);
                (m * (i + a * (h / 2.0)), m * b * h)
            }
        };
        Filter {
            pn,
            ad,
            bd,
            tustin: how == Discretisation::Tustin,
            s: Vector2::new(x0, 0.0),
            h,
        }
    }

    /// Outputs for sample `k` with input `x`: `(xf, xf', xf'')`, then advances one step to the
    /// next input `x_next`.
    ///
    /// ZOH: the input is held over `[t_k, t_k+1)`, so the exact means of the continuous outputs
    /// over that interval are returned: `(xf_k + xf_k+1)/2` (trapezoid), `(xf_k+1 - xf_k)/h` and
    /// `(xf'_k+1 - xf'_k)/h`. (The value of `xf''` at the sample itself jumps by
    /// `p_n^2 (x_k - x_k-1)`, far more than the acceleration, and is no estimate of it.)
    /// Tustin: `x_k+1 = Ad x_k + Bd (x_k + x_k+1)/2`, outputs at the sample.
    pub fn step(&mut self, x: f64, x_next: f64) -> (f64, f64, f64) {
        let old = self.s;
        let w = if self.tustin { 0.5 * (x + x_next) } else { x };
        self.s = self.ad * old + self.bd * w;
        if self.tustin {
            let ddxf = self.pn * self.pn * (x - old[0]) - 2.0 * self.pn * old[1];
            (old[0], old[1], ddxf)
        } else {
            (
                0.5 * (old[0] + self.s[0]),
                (self.s[0] - old[0]) / self.h,
                (self.s[1] - old[1]) / self.h,
            )
        }
    }
}

/// The weighting `eta_k` of S2 eq. 7.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weighting {
    /// `eta = 1`.
    One,
    /// `eta = 1` if `|v| >= v_min`, else 0.
    Threshold(f64),
    /// `eta = v^2` (the power equation).
    V2,
}

impl Weighting {
    fn eta(self, v: f64) -> f64 {
        match self {
            Weighting::One => 1.0,
            Weighting::Threshold(vmin) => f64::from(u8::from(v.abs() >= vmin)),
            Weighting::V2 => v * v,
        }
    }
    fn key(self) -> &'static str {
        match self {
            Weighting::One => "one",
            Weighting::Threshold(_) => "threshold",
            Weighting::V2 => "v2",
        }
    }
}

/// Filtered regressors: rows `(a, v, sgn v)` and targets `u_f`.
pub fn regressors(
    t: &[f64],
    x: &[f64],
    u: &[f64],
    pn: f64,
    how: Discretisation,
) -> Result<(Vec<[f64; 3]>, Vec<f64>), FitError> {
    need_rows(t.len(), 10, "power_rls")?;
    let h = (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64;
    if h.is_nan() || h <= 0.0 {
        return Err(FitError::Data("power_rls: t must increase".into()));
    }
    let mut fx = Filter::new(pn, h, how, x[0]);
    let mut fu = Filter::new(pn, h, how, u[0]);
    let mut rows = Vec::with_capacity(t.len());
    let mut y = Vec::with_capacity(t.len());
    let n = x.len();
    for k in 0..n {
        let j = (k + 1).min(n - 1);
        let (_, v, a) = fx.step(x[k], x[j]);
        let (uf, _, _) = fu.step(u[k], u[j]);
        rows.push([a, v, sgn(v)]);
        y.push(uf);
    }
    Ok((rows, y))
}

/// Which regressors a row gives: `[a, v, sgn v]`, or per direction (`given.asymmetric`)
/// `[a, v⁺, [v > 0], v⁻, -[v < 0]]` (`v⁺ = max(v, 0)`, `v⁻ = min(v, 0)`), then 1 for a
/// fitted offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Design {
    /// Friction per direction.
    pub asymmetric: bool,
    /// A constant term.
    pub offset: bool,
}

impl Design {
    /// Number of regressors.
    pub fn count(self) -> usize {
        3 + 2 * usize::from(self.asymmetric) + usize::from(self.offset)
    }

    /// The regressor `j` of `row` (`[a, v, sgn v]`).
    pub fn phi(self, row: &[f64; 3], j: usize) -> f64 {
        let [a, v, s] = *row;
        if !self.asymmetric {
            return if j < 3 { row[j] } else { 1.0 };
        }
        let on = |positive: bool| s != 0.0 && (s > 0.0) == positive;
        match j {
            0 => a,
            1 if on(true) => v,
            2 if on(true) => 1.0,
            3 if on(false) => v,
            4 if on(false) => -1.0,
            5 => 1.0,
            _ => 0.0,
        }
    }
}

/// Runs the weighted RLS over the rows (with a constant column when `offset`); returns
/// `(J, fv, fc[, offset])`, or `None` when fewer than [`MIN_WEIGHTED`] samples carry weight.
pub fn estimate(
    rows: &[[f64; 3]],
    y: &[f64],
    w: Weighting,
    alpha: f64,
    design: Design,
) -> Option<Vec<f64>> {
    let n = design.count();
    if rows.iter().filter(|r| w.eta(r[1]) > 0.0).count() < MIN_WEIGHTED {
        return None;
    }
    let rms = |f: &dyn Fn(usize) -> f64| {
        (rows
            .iter()
            .enumerate()
            .map(|(i, _)| f(i).powi(2))
            .sum::<f64>()
            / rows.len() as f64)
            .sqrt()
    };
    let ry = rms(&|i| y[i]);
    let scale: Vec<f64> = (0..n)
        .map(|j| {
            let r = rms(&|i| design.phi(&rows[i], j));
            if r > 0.0 && ry > 0.0 { ry / r } else { 1.0 }
        })
        .collect();
    let mut rls = Rls::new(&scale, alpha, LAMBDA1_0, LAMBDA0);
    let mut p = vec![0.0; n];
    for (row, y) in rows.iter().zip(y) {
        for (j, pj) in p.iter_mut().enumerate() {
            *pj = design.phi(row, j);
        }
        rls.update(&p, *y, w.eta(row[1]));
    }
    Some(rls.theta())
}

/// Standard errors of the weighted regression at `theta` ([`stats::least_squares`] on the
/// weighted rows; zero-weight rows left out).
fn uncertainty(
    rows: &[[f64; 3]],
    y: &[f64],
    w: Weighting,
    design: Design,
    theta: &[f64],
) -> Option<(stats::Uncertainty, Option<super::sides::Directions>)> {
    let n = theta.len();
    let used: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .map(|(k, r)| (k, w.eta(r[1]).sqrt()))
        .filter(|(_, s)| *s > 0.0)
        .collect();
    let jac = nalgebra::DMatrix::from_fn(used.len(), n, |i, j| {
        let (k, s) = used[i];
        s * design.phi(&rows[k], j)
    });
    let resid: Vec<f64> = used
        .iter()
        .map(|&(k, s)| {
            let pred: f64 = (0..n).map(|j| theta[j] * design.phi(&rows[k], j)).sum();
            s * (y[k] - pred)
        })
        .collect();
    let unc = stats::least_squares(&jac, &resid, true)?;
    let directions = design.asymmetric.then(|| {
        let pairs = [("fv", (1, 3)), ("fc", (2, 4))].map(|(name, (p, q))| super::sides::Pair {
            name,
            columns: (p, q),
            values: (theta[p], theta[q]),
        });
        super::sides::compare(&jac, &resid, &pairs, unc.n_eff - n as f64)
    });
    Some((unc, directions.flatten()))
}

/// The weighted least-squares solution on the same rows (what the recursion tends to).
fn batch(rows: &[[f64; 3]], y: &[f64], w: Weighting, design: Design) -> Option<Vec<f64>> {
    let a: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| (0..design.count()).map(|j| design.phi(r, j)).collect())
        .collect();
    let weights: Vec<f64> = rows.iter().map(|r| w.eta(r[1])).collect();
    crate::identify::lsq::solve(&a, y, Some(&weights))
        .ok()
        .map(|s| s.theta)
}

/// Identifies `(J, fv, fc)` (and the offset) from the `t, x, u` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts: PowerRlsOptions = PROCEDURE.options_of(given)?;
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    // A known load takes its share of the force before the filter sees it (the filter is
    // linear, so this is the same as filtering it and subtracting).
    let u = &opts
        .terms
        .load()?
        .subtract(x, table.column("u", PROCEDURE.name)?);
    let (pn, alpha, offset) = (opts.p_n.0, opts.alpha.0, opts.terms.offset);
    let design = Design {
        asymmetric: opts.terms.asymmetric()?,
        offset: offset.fitted(),
    };
    let (how, eta) = (opts.discretisation, opts.eta);
    need_rows(t.len(), 10, "power_rls")?;
    let max_gap = opts.max_gap_steps.0;
    let grid = Grid::of(t, max_gap)?;
    let (tg, x, u) = (grid.times(), grid.sample(t, x), grid.sample(t, u));
    let u: Vec<f64> = u.iter().map(|u| u - offset.known()).collect();
    let (rows, y) = regressors(&tg, &x, &u, pn, how)?;
    let mut speeds: Vec<f64> = rows.iter().map(|r| r[1].abs()).collect();
    speeds.sort_by(f64::total_cmp);
    let v99 = speeds[((speeds.len() - 1) as f64 * 0.99) as usize];
    let (v_min, v_min_given) = match opts.v_min {
        Some(Positive(v)) => (v, true),
        None => (V_MIN_FRACTION * v99, false),
    };
    let passing = speeds.iter().filter(|v| **v >= v_min).count();
    if eta == Eta::Threshold && passing < MIN_WEIGHTED {
        return Err(FitError::Config {
            field: "given.v_min".into(),
            value: v_min,
            rule: format!(
                "leaves {passing} samples with |v| >= v_min (need {MIN_WEIGHTED}; the filtered speed's 99th percentile is {v99:e} in the data's units, m/s or rad/s)"
            ),
        });
    }
    let chosen = match eta {
        Eta::One => Weighting::One,
        Eta::Threshold => Weighting::Threshold(v_min),
        Eta::V2 => Weighting::V2,
    };
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "weighted_rls",
        PROCEDURE.columns,
        rows.len(),
        given,
    );
    report.time_range(t);
    if grid.resampled {
        report.provenance.notes.push(format!(
            "time stamps not uniform: resampled by linear interpolation on a grid of {:e} s (the median step); largest gap {:e} s ending at t = {} s",
            grid.step, grid.largest_gap.0, grid.largest_gap.1
        ));
    }
    let mut details = serde_json::Map::new();
    let mut theta = None;
    for w in [Weighting::One, Weighting::Threshold(v_min), Weighting::V2] {
        let th = estimate(&rows, &y, w, alpha, design);
        let entry = match &th {
            Some(th) => {
                let mut e =
                    serde_json::json!({"j": num(th[0]), "fv": num(th[1]), "fc": num(th[2])});
                if design.asymmetric {
                    e["negative"] = serde_json::json!({"fv": num(th[3]), "fc": num(th[4])});
                }
                if offset.fitted() {
                    e["offset"] = num(th[design.count() - 1]);
                }
                e
            }
            None => {
                serde_json::json!({"error": format!("fewer than {MIN_WEIGHTED} samples carry weight")})
            }
        };
        details.insert(w.key().into(), entry);
        if w == chosen {
            theta = th;
        }
    }
    let theta = theta
        .filter(|th| th.iter().all(|x| x.is_finite()))
        .ok_or_else(|| {
            FitError::Data("power_rls: the estimate is not finite (no excitation?)".into())
        })?;
    let (unc, directions) = uncertainty(&rows, &y, chosen, design, &theta).unzip();
    report.directions = directions.flatten();
    let mut warnings = Vec::new();
    if let (Some(u), Some(batch)) = (&unc, batch(&rows, &y, chosen, design)) {
        let far = (0..theta.len())
            .map(|j| (theta[j] - batch[j]).abs() / u.std_errors[j].max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max);
        details.insert(
            "weighted_least_squares".into(),
            serde_json::json!(batch.iter().map(|x| num(*x)).collect::<Vec<_>>()),
        );
        if far > 3.0 {
            warnings.push(format!(
                "the recursive estimate lies {far:.1} standard errors from the weighted least-squares solution on the same rows: the recursion has not converged (too few weighted samples, or the forgetting factor has not reached 1)"
            ));
        }
    }
    let se = |j: usize| unc.as_ref().map(|u| u.std_errors[j]);
    let fv_name = if model == "lugre" { "sigma2" } else { "fv" };
    if model == "hybrid" {
        report.set("j", theta[0], se(0));
    } else {
        report.set("j", theta[0], se(0));
        report.provenance.notes.push(format!(
            "j = {:e} is the inertia (not a parameter of '{model}')",
            theta[0]
        ));
    }
    report.set(fv_name, theta[1], se(1));
    report.set("fc", theta[2], se(2));
    if design.asymmetric {
        report.set_negative(fv_name, theta[3], se(3));
        report.set_negative("fc", theta[4], se(4));
    }
    let last = design.count() - 1;
    match offset {
        Offset::Fit => report.set("offset", theta[last], se(last)),
        Offset::Known(c) => report.set("offset", c, None),
        Offset::None => {}
    }
    report.n_eff = unc.as_ref().map(|u| u.n_eff);
    let resid: Vec<f64> = rows
        .iter()
        .zip(&y)
        .map(|(r, y)| {
            y - (0..theta.len())
                .map(|j| theta[j] * design.phi(r, j))
                .sum::<f64>()
        })
        .collect();
    report.mse = Some(resid.iter().map(|e| e * e).sum::<f64>() / rows.len() as f64);
    report.goodness(&y, &resid, theta.len());
    details.insert("inertia".into(), num(theta[0]));
    details.insert("weighting".into(), chosen.key().into());
    details.insert(
        "settings".into(),
        serde_json::json!({"p_n": pn, "v_min": v_min, "alpha": alpha, "lambda1_0": LAMBDA1_0, "lambda0": LAMBDA0,
            "discretisation": if how == Discretisation::Zoh { "zoh" } else { "tustin" }}),
    );
    details.insert("warnings".into(), serde_json::json!(warnings));
    report.details = serde_json::Value::Object(details);
    report
        .provenance
        .settings
        .insert("v_min".into(), num(v_min));
    report.provenance.notes.push(format!(
        "threshold weighting v_min = {v_min:e} in the data's units{} ({passing} samples at or above it)",
        if v_min_given { " (given)" } else { ", a fifth of the 99th percentile of the filtered speed" }
    ));
    report.provenance.notes.push(
        "standard errors: the weighted regression at the RLS estimate; mse is of the filtered torque, unweighted".into(),
    );
    Ok(report)
}

mod options;
mod predict;
pub use options::{Eta, PowerRlsOptions};
pub use predict::predict;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_differentiates_a_ramp_and_a_parabola() {
        for how in [Discretisation::Zoh, Discretisation::Tustin] {
            let h = 1e-3;
            let mut f = Filter::new(P_N, h, how, 0.0);
            let mut last = (0.0, 0.0, 0.0);
            let p = |k: usize| 0.5 * 3.0 * (k as f64 * h).powi(2);
            for k in 0..2000 {
                last = f.step(p(k), p(k + 1));
            }
            // After the transient, v lags 3t by the filter's delay 2/pn; a = 3.
            let t = 1999.0 * h;
            assert!((last.2 - 3.0).abs() < 0.02, "{how:?} a = {}", last.2);
            assert!(
                (last.1 - 3.0 * (t - 2.0 / P_N)).abs() < 0.02,
                "{how:?} v = {}",
                last.1
            );
        }
    }
}
