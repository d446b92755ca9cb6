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
//! (`v_min` = 20 rad/s); and `eta = v^2` (default), which is plain RLS on the power equation
//! `u v = J a v + f_v v^2 + f_c |v|` (S2 eqs. 8–10). All three are computed; `given.eta`
//! (`"one"`, `"threshold"`, `"v2"`) chooses the one reported under `params`, the others are in
//! `details`. `P_0 = alpha I` in scaled units (`alpha` = 1e3, recorded); the regressors are scaled
//! by `rms(u)/rms(phi_j)` so `J ~ 1e-5`, `f_v ~ 1e-4`, `f_c ~ 1e-2` are equally conditioned.
//!
//! **Requirements on the data.** Columns `t` \[s\] (uniform step), `x` \[rad or m\] and `u` [N m or
//! N]: a closed-loop run excited by a PRBS on the position reference (S2 §IV.A), long enough for
//! the forgetting factor to reach 1 (several thousand samples; S2: T_e = 1 ms), with speeds
//! well above `v_min` for the threshold weighting. The model is the mode-1 equation, so the
//! estimate of `f_c` absorbs the Stribeck part; `eta = v^2` down-weights the low speeds where it
//! matters (S2 Table II).

use super::{FitReport, Given, Procedure, Table, given_positive, given_str, need_rows, num};
use crate::curve::sgn;
use crate::identify::FitError;
use crate::identify::rls::Rls;
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
};

/// S2 eq. 6 filter bandwidth [rad/s].
pub const P_N: f64 = 200.0;
/// S2 eq. 7: initial forgetting factor.
pub const LAMBDA1_0: f64 = 0.9;
/// S2 eq. 7: forgetting-factor rate.
pub const LAMBDA0: f64 = 0.99;
/// S2 Table II threshold weighting [rad/s].
pub const V_MIN: f64 = 20.0;
/// Our choice of `P_0 = alpha I` in scaled units (S2 does not give one).
pub const ALPHA: f64 = 1e3;

/// How the filter is discretised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discretisation {
    /// Zero-order hold, exact.
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

/// Runs the weighted RLS over the rows; returns `(J, fv, fc)`.
pub fn estimate(rows: &[[f64; 3]], y: &[f64], w: Weighting, alpha: f64) -> [f64; 3] {
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
    let scale: Vec<f64> = (0..3)
        .map(|j| {
            let r = rms(&|i| rows[i][j]);
            if r > 0.0 && ry > 0.0 { ry / r } else { 1.0 }
        })
        .collect();
    let mut rls = Rls::new(&scale, alpha, LAMBDA1_0, LAMBDA0);
    for (phi, y) in rows.iter().zip(y) {
        rls.update(phi, *y, w.eta(phi[1]));
    }
    let th = rls.theta();
    [th[0], th[1], th[2]]
}

/// Identifies `(J, fv, fc)` from the `t, x, u` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let u = table.column("u", PROCEDURE.name)?;
    let pn = given_positive(given, "p_n")?.unwrap_or(P_N);
    let v_min = given_positive(given, "v_min")?.unwrap_or(V_MIN);
    let alpha = given_positive(given, "alpha")?.unwrap_or(ALPHA);
    let how = match given_str(given, "discretisation") {
        None | Some("zoh") => Discretisation::Zoh,
        Some("tustin") => Discretisation::Tustin,
        Some(o) => {
            return Err(FitError::Config {
                field: format!("given.discretisation ({o})"),
                value: f64::NAN,
                rule: "must be \"zoh\" or \"tustin\"".into(),
            });
        }
    };
    let chosen = match given_str(given, "eta") {
        None | Some("v2") => Weighting::V2,
        Some("one") => Weighting::One,
        Some("threshold") => Weighting::Threshold(v_min),
        Some(o) => {
            return Err(FitError::Config {
                field: format!("given.eta ({o})"),
                value: f64::NAN,
                rule: "must be \"one\", \"threshold\" or \"v2\"".into(),
            });
        }
    };
    let (rows, y) = regressors(t, x, u, pn, how)?;
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "weighted_rls",
        PROCEDURE.columns,
        rows.len(),
        given,
    );
    report.time_range(t);
    let mut details = serde_json::Map::new();
    let mut theta = [f64::NAN; 3];
    for w in [Weighting::One, Weighting::Threshold(v_min), Weighting::V2] {
        let th = estimate(&rows, &y, w, alpha);
        details.insert(
            w.key().into(),
            serde_json::json!({"j": num(th[0]), "fv": num(th[1]), "fc": num(th[2])}),
        );
        if w == chosen {
            theta = th;
        }
    }
    if theta.iter().any(|x| !x.is_finite()) {
        return Err(FitError::Data(
            "power_rls: the estimate is not finite (no excitation?)".into(),
        ));
    }
    let fv_name = if model == "lugre" { "sigma2" } else { "fv" };
    if model == "hybrid" {
        report.set("j", theta[0], None);
    } else {
        report.provenance.notes.push(format!(
            "inertia J = {:e} (not a parameter of '{model}')",
            theta[0]
        ));
    }
    report.set(fv_name, theta[1], None);
    report.set("fc", theta[2], None);
    let sse: f64 = rows
        .iter()
        .zip(&y)
        .map(|(p, y)| (y - p[0] * theta[0] - p[1] * theta[1] - p[2] * theta[2]).powi(2))
        .sum();
    report.mse = Some(sse / rows.len() as f64);
    details.insert("inertia".into(), num(theta[0]));
    details.insert("weighting".into(), chosen.key().into());
    details.insert(
        "settings".into(),
        serde_json::json!({"p_n": pn, "v_min": v_min, "alpha": alpha, "lambda1_0": LAMBDA1_0, "lambda0": LAMBDA0,
            "discretisation": if how == Discretisation::Zoh { "zoh" } else { "tustin" }}),
    );
    report.details = serde_json::Value::Object(details);
    report
        .provenance
        .notes
        .push("RLS gives no standard errors; mse is of the filtered torque, unweighted".into());
    Ok(report)
}

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
