//! `idim_ls`: the inverse dynamic identification model by least squares (Gautier & Khalil's
//! IDIM-LS; Gautier 1997; the method of the EMPS benchmark, Janot, Gautier & Brunot 2019);
//! docs/src/identification.md#idim_ls.
//!
//! The measured force of a one-axis drive is linear in the dynamic parameters:
//!
//! $$u = J\,\ddot q + f_v\,\dot q + f_c\,\operatorname{sgn}(\dot q) + \text{offset}$$
//!
//! Only the position `q` and the force `u` are recorded. `q` is low-passed by a zero-phase
//! Butterworth filter (order 4, forward and backward), `q̇` and `q̈` are central differences of
//! the filtered position, the observation matrix `W = [q̈, q̇, sgn q̇, 1]` and `u` are decimated
//! together (parallel decimation: the same zero-phase low-pass on every column, then every
//! `r`-th row), and `W θ = u` is solved by ordinary least squares. The standard errors are those
//! of [`stats::least_squares`] (the residual variance,
//! corrected for serial correlation), with the relative standard errors.
//!
//! **Defaults from the data.** The bandwidth `f_b` of the record is the 99 % occupied bandwidth
//! of `u` ([`occupied_bandwidth`]); the position filter's cut-off is `5 f_b` (at most 0.4 of the
//! sampling rate) and the decimation `r = round(0.8 f_nyq / (2 f_b))` (the decimation filter
//! passes `2 f_b`), as in the EMPS scripts (`f_b` = 20 Hz there: 100 Hz, 10). `cutoff_hz` and
//! `decimation` override them; both, with `f_b`, are recorded in the provenance. Samples within
//! three periods of the lower cut-off of either end are left out (filter transients).
//!
//! **Second stage** (models with a Stribeck curve, `stribeck_exp`): `f_c sgn q̇` is replaced by
//! `sgn(q̇) [f_c + (f_s - f_c) exp(-|q̇/v_s|^δ)]` (δ from `given.delta` or the model's default)
//! and the same decimated rows are fitted by Levenberg–Marquardt, started from the first
//! stage's optimum (`f_s = f_c`, which is that optimum exactly) and from a grid of `v_s` over the
//! speeds of the record; the best is kept, so it is never worse than the first stage.
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[m or rad\], `u` [N or N m] of a
//! closed-loop run rich in velocity and acceleration (both directions), sampled well above the
//! axis's bandwidth. Time stamps need not be uniform: a record whose steps differ by more than
//! 1 % is resampled on its median step (noted), unless a gap exceeds `max_gap_steps` (default
//! 10) steps, which is refused naming it. Known values (`j`, `fv`, `fc`) are held fixed.

use super::quality::scaled_condition;
use super::{
    FitReport, Given, Offset, Procedure, Table, given_bootstrap, given_f64, given_offset,
    given_positive, num,
};
use crate::curve::{phi_exp, sgn};
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::signal::{
    Butterworth, Grid, central_difference, decimate, occupied_bandwidth,
};
use crate::identify::stats::{self, Uncertainty};
use crate::identify::{Bounds, FitError, Residuals, Runner};
use nalgebra::DMatrix;
use serde_json::{Value, json};

/// `idim_ls`: Coulomb + viscous, and the Stribeck curve in a second stage.
pub const PROCEDURE: Procedure = Procedure {
    name: "idim_ls",
    models: &["coulomb_viscous", "stribeck_exp"],
    columns: &["t", "x", "u"],
    options: &[
        "offset",
        "j",
        "cutoff_hz",
        "decimation",
        "max_gap_steps",
        "bootstrap",
        "seed",
    ],
    known_params: true,
};

/// Fraction of the energy of `u` outside the bandwidth.
pub const BANDWIDTH_FRACTION: f64 = 0.01;
/// Position filter cut-off in bandwidths.
pub const CUTOFF_PER_BANDWIDTH: f64 = 5.0;
/// Default largest gap, in steps, that is resampled across.
pub const MAX_GAP_STEPS: f64 = 10.0;

/// The conditioned regression: decimated rows `[a, v, sgn v]`, target `u`, and how it was made.
#[derive(Clone, Debug)]
pub struct Regression {
    /// Decimated acceleration \[m/s² or rad/s²\].
    pub a: Vec<f64>,
    /// Decimated velocity.
    pub v: Vec<f64>,
    /// Decimated `sgn(v)` (low-passed with the others, so not exactly ±1).
    pub s: Vec<f64>,
    /// Decimated force.
    pub u: Vec<f64>,
    /// Settings and figures for the provenance.
    pub settings: serde_json::Map<String, Value>,
    /// Remarks (resampling).
    pub notes: Vec<String>,
}

/// Filters, differentiates and decimates the `t, x, u` columns.
pub fn regression(t: &[f64], x: &[f64], u: &[f64], given: &Given) -> Result<Regression, FitError> {
    let max_gap = given_positive(given, "max_gap_steps")?.unwrap_or(MAX_GAP_STEPS);
    let grid = Grid::of(t, max_gap)?;
    let mut notes = Vec::new();
    if grid.resampled {
        notes.push(format!(
            "time stamps not uniform: resampled by linear interpolation on a grid of {:e} s (the median step), {} samples; largest gap {:e} s ending at t = {} s",
            grid.step, grid.len, grid.largest_gap.0, grid.largest_gap.1
        ));
    }
    let (x, u) = (grid.sample(t, x), grid.sample(t, u));
    let fs = 1.0 / grid.step;
    let bandwidth = occupied_bandwidth(&u, fs, BANDWIDTH_FRACTION).ok_or_else(|| {
        FitError::Data("idim_ls: u is constant: the record does not excite the axis".into())
    })?;
    let cutoff = match given_positive(given, "cutoff_hz")? {
        Some(c) => c,
        None => (CUTOFF_PER_BANDWIDTH * bandwidth).min(0.4 * fs),
    };
    let decimation = match given_f64(given, "decimation")? {
        Some(r) if r.fract() != 0.0 || r < 1.0 => {
            return Err(FitError::Config {
                field: "given.decimation".into(),
                value: r,
                rule: "must be a whole number >= 1".into(),
            });
        }
        Some(r) => r as usize,
        None => ((0.8 * 0.5 * fs / (2.0 * bandwidth)).round() as usize).max(1),
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
    let s: Vec<f64> = v.iter().map(|v| sgn(*v)).collect();
    let mut cols = decimate(&[&a, &v, &s, &u], decimation, fs)?;
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
    settings.insert("bandwidth_hz".into(), num(bandwidth));
    settings.insert("cutoff_hz".into(), num(cutoff));
    settings.insert("decimation".into(), json!(decimation));
    settings.insert(
        "filter".into(),
        json!("butterworth order 4, zero-phase (forward and backward)"),
    );
    settings.insert("border_samples".into(), json!(border * decimation));
    settings.insert("step_s".into(), num(grid.step));
    settings.insert("resampled".into(), json!(grid.resampled));
    notes.push(format!(
        "bandwidth {bandwidth:.3} Hz (99 % of the energy of u); position filter cut-off {cutoff:.3} Hz{}; decimation {decimation}{}",
        if given.contains_key("cutoff_hz") { " (given)" } else { " (5 x bandwidth)" },
        if given.contains_key("decimation") { " (given)" } else { " (keeps 2 x bandwidth)" },
    ));
    let [a, v, s, u]: [Vec<f64>; 4] = cols
        .try_into()
        .map_err(|_| FitError::Bug("decimation lost a column".into()))?;
    Ok(Regression {
        a,
        v,
        s,
        u,
        settings,
        notes,
    })
}

/// Parameter order of the full problem.
const NAMES: [&str; 6] = ["j", "fv", "fc", "offset", "fs", "vs"];
const J: usize = 0;
const FV: usize = 1;
const FC: usize = 2;
const OFF: usize = 3;
const FS: usize = 4;
const VS: usize = 5;

/// The regression as a least-squares problem over the free parameters `free` (indices into
/// [`NAMES`]), the others held at `full`.
struct Problem<'a> {
    r: &'a Regression,
    u: &'a [f64],
    full: [f64; 6],
    free: Vec<usize>,
    stribeck: bool,
    delta: f64,
}

impl Problem<'_> {
    fn expand(&self, p: &[f64]) -> [f64; 6] {
        let mut f = self.full;
        for (i, x) in self.free.iter().zip(p) {
            f[*i] = *x;
        }
        f
    }

    /// `d u / d theta_i` at row `k`.
    fn column(&self, q: &[f64; 6], i: usize, k: usize) -> f64 {
        let r = self.r;
        let phi = if self.stribeck {
            phi_exp(r.v[k].abs(), q[VS], self.delta)
        } else {
            0.0
        };
        match i {
            J => r.a[k],
            FV => r.v[k],
            FC => r.s[k] * (1.0 - phi),
            OFF => 1.0,
            FS => r.s[k] * phi,
            _ => {
                let x = r.v[k].abs() / q[VS];
                let rd = if x > 0.0 { x.powf(self.delta) } else { 0.0 };
                r.s[k] * (q[FS] - q[FC]) * phi * rd * self.delta / q[VS]
            }
        }
    }

    fn model(&self, q: &[f64; 6], k: usize) -> f64 {
        let r = self.r;
        let phi = if self.stribeck {
            phi_exp(r.v[k].abs(), q[VS], self.delta)
        } else {
            0.0
        };
        q[J] * r.a[k] + q[FV] * r.v[k] + r.s[k] * (q[FC] + (q[FS] - q[FC]) * phi) + q[OFF]
    }

    fn jacobian_at(&self, q: &[f64; 6]) -> DMatrix<f64> {
        DMatrix::from_fn(self.u.len(), self.free.len(), |k, j| {
            self.column(q, self.free[j], k)
        })
    }
}

impl Residuals for Problem<'_> {
    fn len(&self) -> usize {
        self.u.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        let q = self.expand(p);
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.model(&q, k) - self.u[k];
        }
        Ok(())
    }
    fn jacobian(&self, p: &[f64], jac: &mut DMatrix<f64>) -> Option<Result<(), FitError>> {
        *jac = self.jacobian_at(&self.expand(p));
        Some(Ok(()))
    }
}

/// Ordinary least squares of the linear (first-stage) problem for target `u`.
fn ols(p: &Problem<'_>, u: &[f64]) -> Result<Vec<f64>, FitError> {
    let q = p.full;
    let w = p.jacobian_at(&q);
    let known: Vec<f64> = (0..u.len())
        .map(|k| {
            (0..4)
                .filter(|i| !p.free.contains(i))
                .map(|i| q[i] * p.column(&q, i, k))
                .sum()
        })
        .collect();
    let rows: Vec<Vec<f64>> = w.row_iter().map(|r| r.iter().copied().collect()).collect();
    let b: Vec<f64> = u.iter().zip(&known).map(|(u, k)| u - k).collect();
    Ok(crate::identify::lsq::solve(&rows, &b, None)?.theta)
}

/// Identifies `j`, `fv`, `fc` (and `offset`; `fs`, `vs` in the second stage).
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let u = table.column("u", PROCEDURE.name)?;
    let offset = given_offset(given)?;
    let reg = regression(t, x, u, given)?;
    let target: Vec<f64> = reg.u.iter().map(|u| u - offset.known()).collect();
    let stribeck = model != "coulomb_viscous";
    let delta = given_f64(given, "delta")?.unwrap_or_else(|| {
        crate::registry::entry(model)
            .ok()
            .and_then(|e| e.defaults().get("delta").and_then(Value::as_f64))
            .unwrap_or(1.0)
    });
    let mut full = [0.0; 6];
    let mut free = Vec::new();
    for (i, name) in NAMES.iter().enumerate().take(3) {
        match given_f64(given, name)? {
            Some(v) => full[i] = v,
            None => free.push(i),
        }
    }
    if offset.fitted() {
        free.push(OFF);
    }
    if free.is_empty() {
        return Err(FitError::Config {
            field: "given".into(),
            value: f64::NAN,
            rule: "holds j, fv and fc all fixed: nothing is left to fit".into(),
        });
    }
    let mut problem = Problem {
        r: &reg,
        u: &target,
        full,
        free: free.clone(),
        stribeck: false,
        delta,
    };
    let theta = ols(&problem, &target)?;
    let mut best = problem.expand(&theta);
    let mut first_sse = None;
    if stribeck {
        let (q, sse1) = second_stage(&mut problem, best, given)?;
        first_sse = Some(sse1);
        best = q;
    }
    report(model, &problem, &best, &reg, offset, first_sse, given, t)
}

/// The Stribeck stage from the first stage's optimum `q1`; returns the best parameters and the
/// first stage's SSE.
fn second_stage(
    problem: &mut Problem<'_>,
    q1: [f64; 6],
    given: &Given,
) -> Result<([f64; 6], f64), FitError> {
    let sse = |p: &Problem<'_>, q: &[f64; 6]| -> f64 {
        (0..p.u.len())
            .map(|k| (p.model(q, k) - p.u[k]).powi(2))
            .sum()
    };
    let sse1 = sse(problem, &q1);
    let mut speeds: Vec<f64> = problem
        .r
        .v
        .iter()
        .map(|v| v.abs())
        .filter(|v| *v > 0.0)
        .collect();
    speeds.sort_by(f64::total_cmp);
    if speeds.is_empty() {
        return Err(FitError::Data("idim_ls: the axis never moves".into()));
    }
    let quantile = |f: f64| speeds[((speeds.len() - 1) as f64 * f) as usize];
    problem.stribeck = true;
    let mut full = q1;
    full[FS] = given_f64(given, "fs")?.unwrap_or(q1[FC]);
    full[VS] = given_f64(given, "vs")?.unwrap_or(quantile(0.2));
    problem.full = full;
    for (i, n) in [(FS, "fs"), (VS, "vs")] {
        if !given.contains_key(n) {
            problem.free.push(i);
        }
    }
    let (lo, hi): (Vec<f64>, Vec<f64>) = problem
        .free
        .iter()
        .map(|i| match *i {
            VS => (quantile(0.0) * 1e-2, quantile(1.0)),
            FS => (0.0, f64::INFINITY),
            _ => (f64::NEG_INFINITY, f64::INFINITY),
        })
        .unzip();
    let bounds = Bounds {
        lower: lo,
        upper: hi,
    };
    // Start 0: the first stage exactly (fs = fc); then fs above fc at several vs.
    let mut starts = vec![full];
    for f in [0.05, 0.2, 0.5] {
        let mut s = full;
        s[FS] = 1.5 * q1[FC].abs();
        s[VS] = quantile(f);
        starts.push(s);
    }
    let mut best = (q1, sse1);
    for s in starts {
        let p0: Vec<f64> = problem.free.iter().map(|i| s[*i]).collect();
        let lm = LevenbergMarquardt::new().with_bounds(bounds.clone());
        let r = Runner::new(&*problem, lm).max_iters(200).run(p0)?;
        if r.cost < best.1 {
            best = (problem.expand(&r.params), r.cost);
        }
    }
    Ok((best.0, sse1))
}

#[allow(clippy::too_many_arguments)]
fn report(
    model: &str,
    problem: &Problem<'_>,
    q: &[f64; 6],
    reg: &Regression,
    offset: Offset,
    first_sse: Option<f64>,
    given: &Given,
    t: &[f64],
) -> Result<FitReport, FitError> {
    let m = problem.u.len();
    let resid: Vec<f64> = (0..m).map(|k| problem.u[k] - problem.model(q, k)).collect();
    let jac = problem.jacobian_at(q);
    let unc = stats::least_squares(&jac, &resid, true);
    let method = if problem.stribeck {
        "ordinary_least_squares+levenberg_marquardt"
    } else {
        "ordinary_least_squares"
    };
    let mut rep = FitReport::new(PROCEDURE.name, model, method, PROCEDURE.columns, m, given);
    rep.time_range(t);
    let names: Vec<String> = problem.free.iter().map(|i| NAMES[*i].to_string()).collect();
    let shown: &[usize] = if problem.stribeck {
        &[J, FV, FC, FS, VS]
    } else {
        &[J, FV, FC]
    };
    for i in shown {
        rep.set(NAMES[*i], q[*i], None);
    }
    if problem.stribeck {
        rep.set("delta", problem.delta, None);
    }
    match offset {
        Offset::Fit => rep.set("offset", q[OFF], None),
        Offset::Known(c) => rep.set("offset", c, None),
        Offset::None => {}
    }
    if let Some(Uncertainty {
        std_errors,
        n_eff,
        lag,
    }) = &unc
    {
        for (n, se) in names.iter().zip(std_errors) {
            rep.std_errors.insert(n.clone(), num(*se));
        }
        rep.n_eff = Some(*n_eff);
        rep.provenance
            .settings
            .insert("serial_correlation_window".into(), json!(lag));
    }
    let sse: f64 = resid.iter().map(|r| r * r).sum();
    rep.mse = Some(sse / m as f64);
    rep.goodness(problem.u, &resid, names.len());
    rep.condition = scaled_condition(&jac);
    rep.provenance.settings.extend(reg.settings.clone());
    rep.provenance.notes.extend(reg.notes.iter().cloned());
    rep.provenance.notes.push(
        "mse is of the decimated force regression; j is the axis's inertia (mass on a linear axis), fc is symmetric (sgn v)"
            .into(),
    );
    let held: Vec<&str> = ["j", "fv", "fc"]
        .into_iter()
        .filter(|n| given.contains_key(*n))
        .collect();
    rep.note_held(&held);
    if let Offset::Known(c) = offset {
        rep.provenance
            .notes
            .push(format!("known offset {c} subtracted from u"));
    }
    let norm_u = problem.u.iter().map(|u| u * u).sum::<f64>().sqrt();
    let mut details = json!({
        "samples_used": m,
        "relative_error_pct": num(100.0 * sse.sqrt() / norm_u),
        "fitted": names,
    });
    if let Some(sse1) = first_sse {
        let k1 = names.len() - 2;
        details["first_stage"] = json!({"mse": num(sse1 / m as f64), "parameters": k1});
        details["nested"] = super::nested::judge(
            &rep,
            "the Coulomb + viscous first stage",
            (sse1, k1),
            (sse, names.len()),
            &["fs", "vs"],
        );
    }
    rep.details = details;
    if let Some((replicates, seed)) = given_bootstrap(given)? {
        let fitted: Vec<f64> = (0..m).map(|k| problem.model(q, k)).collect();
        let block = stats::andrews_lag(&resid);
        let boot = stats::block_bootstrap(&fitted, &resid, block, replicates, seed, |y| {
            if problem.stribeck {
                let p0: Vec<f64> = problem.free.iter().map(|i| q[*i]).collect();
                let bp = Problem {
                    r: problem.r,
                    u: y,
                    full: *q,
                    free: problem.free.clone(),
                    stribeck: true,
                    delta: problem.delta,
                };
                Ok(Runner::new(&bp, LevenbergMarquardt::new())
                    .max_iters(100)
                    .run(p0)?
                    .params)
            } else {
                ols(problem, y)
            }
        })?;
        rep.use_bootstrap(&names, &boot);
    }
    Ok(rep)
}

/// The least-squares normal matrix is the Jacobian's; kept for the tests' cross-check.
#[cfg(test)]
fn normal_solution(w: &DMatrix<f64>, u: &[f64]) -> nalgebra::DVector<f64> {
    let y = nalgebra::DVector::from_column_slice(u);
    (w.transpose() * w).try_inverse().unwrap() * w.transpose() * y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::procedures::synthetic::BallScrew;

    #[test]
    fn ols_matches_the_normal_equations() {
        let rec = BallScrew {
            duration: 8.0,
            ..BallScrew::default()
        }
        .simulate()
        .unwrap();
        let (t, x, u) = (
            rec.get("t").unwrap(),
            rec.get("x").unwrap(),
            rec.get("u").unwrap(),
        );
        let reg = regression(t, x, u, &Given::new()).unwrap();
        let p = Problem {
            r: &reg,
            u: &reg.u,
            full: [0.0; 6],
            free: vec![J, FV, FC, OFF],
            stribeck: false,
            delta: 1.0,
        };
        let theta = ols(&p, &reg.u).unwrap();
        let direct = normal_solution(&p.jacobian_at(&p.full), &reg.u);
        for (a, b) in theta.iter().zip(direct.iter()) {
            assert!((a - b).abs() < 1e-6 * b.abs().max(1.0), "{a} {b}");
        }
    }
}
