//! Rate-dependent breakaway fit `phi_s(taudot)`: S4 eq. 14 and §4.2–4.4; docs/src/models/improved_static.md, docs/src/identification.md#phi_s.
//!
//! $$\phi_s(\dot\tau) = f_c + (f_s - f_c)\,e^{-|\dot\tau/t_s|^{\delta_t}}$$
//!
//! Torque ramps `tau = m t` of different slopes `m` [N/s] each give one point `(rate = m,
//! breakaway = torque at motion onset)`. `f_s` is the curve's upper bound (`rate → 0`) and `f_c`
//! its lower bound (`rate → ∞`) (S4 §4.3); with both fixed, `(t_s, delta_t)` are fitted by bounded
//! Levenberg–Marquardt (S4 used MATLAB cftool). When `fs` or `fc` is not given it is fitted too,
//! starting from the largest (smallest) breakaway of the data. Points with `rate < 0` (negative
//! ramps) fit the `negative` set of an asymmetric model, on magnitudes.
//!
//! **Requirements on the data.** Columns `rate` \[N/s\] and `breakaway` \[N\]: at least one point
//! more than the free parameters per direction, with rates spread over several decades around
//! `t_s` (S4: 0.888 N m/s; `delta_t = 0.172` flattens the curve, so both bounds are approached
//! only at extreme rates). Give `fs` and `fc` (from the static curve, S4 §4.3) when the rates
//! do not reach the plateaus: then only the shape is fitted, which is what S4 does.

use super::{FitReport, Given, Procedure, Reads, Table, given_f64, need_rows, num};
use super::typed::{OffsetOnly, typed};
use crate::identify::lm::{LevenbergMarquardt, standard_errors};
use crate::identify::{Bounds, FitError, Residuals, Runner};
use serde_json::{Map, Value};

/// `phi_s`: the Sánchez-Mazuca models with a rate-dependent breakaway.
pub const PROCEDURE: Procedure = Procedure {
    name: "phi_s",
    models: &["improved_static", "improved_armstrong", "improved_lugre"],
    columns: &["rate", "breakaway"],
    options: typed::<OffsetOnly>(),
    known_params: true,
    reads: Reads::BreakawayRates,
    part: None,
    iterates: false,
    offset_refused: None,
    fit,
};

/// Parameter order: fc, fs, ts, delta_t.
const NAMES: [&str; 4] = ["fc", "fs", "ts", "delta_t"];

/// `phi_s(rate)` for `p = [fc, fs, ts, delta_t]` (S4 eq. 14).
pub fn phi_s(p: &[f64; 4], rate: f64) -> f64 {
    p[0] + (p[1] - p[0]) * (-(rate / p[2]).abs().powf(p[3])).exp()
}

struct PhiProblem<'a> {
    r: &'a [f64],
    y: &'a [f64],
    full: [f64; 4],
    free: Vec<usize>,
}

impl PhiProblem<'_> {
    fn expand(&self, p: &[f64]) -> [f64; 4] {
        let mut f = self.full;
        for (i, x) in self.free.iter().zip(p) {
            f[*i] = *x;
        }
        f
    }
}

impl Residuals for PhiProblem<'_> {
    fn len(&self) -> usize {
        self.r.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        let q = self.expand(p);
        for ((o, r), y) in out.iter_mut().zip(self.r).zip(self.y) {
            *o = phi_s(&q, *r) - y;
        }
        Ok(())
    }
}

struct DirFit {
    p: [f64; 4],
    se: Option<Vec<f64>>,
    cost: f64,
    n: usize,
}

fn fit_direction(
    r: &[f64],
    y: &[f64],
    fixed: &[Option<f64>; 4],
    what: &str,
) -> Result<DirFit, FitError> {
    let hi = y.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let lo = y.iter().cloned().fold(f64::INFINITY, f64::min);
    let fc = fixed[0].unwrap_or(lo);
    let fs = fixed[1].unwrap_or(hi);
    // ts: the rate where the curve is at 1/e of its span (geometric mean of neighbours).
    let mut pts: Vec<(f64, f64)> = r.iter().cloned().zip(y.iter().cloned()).collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let target = fc + (fs - fc) / std::f64::consts::E;
    let ts = pts
        .iter()
        .find(|p| p.1 < target)
        .map_or(pts[pts.len() / 2].0, |p| p.0)
        .max(1e-12);
    let mut full = [fc, fs, ts, 0.5];
    let mut free = Vec::new();
    for i in 0..4 {
        match fixed[i] {
            Some(x) => full[i] = x,
            None => free.push(i),
        }
    }
    need_rows(r.len(), free.len() + 1, what)?;
    let r_min = pts.iter().map(|p| p.0).find(|x| *x > 0.0).unwrap_or(1e-12);
    let (lower, upper): (Vec<f64>, Vec<f64>) = free
        .iter()
        .map(|i| match *i {
            2 => (r_min * 1e-6, f64::INFINITY),
            3 => (0.01, 10.0),
            _ => (0.0, f64::INFINITY),
        })
        .unzip();
    let mut best: Option<(Vec<f64>, f64, PhiProblem)> = None;
    let starts: Vec<f64> = if free.contains(&3) {
        vec![0.3, 1.0, 0.1]
    } else {
        vec![full[3]]
    };
    for d in starts {
        let mut start = full;
        start[3] = d;
        let problem = PhiProblem {
            r,
            y,
            full: start,
            free: free.clone(),
        };
        let p0: Vec<f64> = free.iter().map(|i| start[*i]).collect();
        let lm = LevenbergMarquardt::new().with_bounds(Bounds {
            lower: lower.clone(),
            upper: upper.clone(),
        });
        let res = Runner::new(&problem, lm).max_iters(300).run(p0)?;
        if best.as_ref().is_none_or(|b| res.cost < b.1) {
            best = Some((res.params, res.cost, problem));
        }
    }
    let (p, cost, problem) = best.ok_or_else(|| FitError::Bug("no start ran".into()))?;
    let se = standard_errors(&problem, &p, cost).map(|se| {
        let mut all = vec![f64::NAN; 4];
        for (i, e) in free.iter().zip(se) {
            all[*i] = e;
        }
        all
    });
    Ok(DirFit {
        p: problem.expand(&p),
        se,
        cost,
        n: r.len(),
    })
}

fn emit(d: &DirFit, fixed: &[Option<f64>; 4]) -> (Map<String, Value>, Map<String, Value>) {
    let (mut p, mut e) = (Map::new(), Map::new());
    for i in 0..4 {
        p.insert(NAMES[i].into(), num(d.p[i]));
        if let (None, Some(se)) = (fixed[i], &d.se) {
            e.insert(NAMES[i].into(), num(se[i]));
        }
    }
    (p, e)
}

/// Fits `(ts, delta_t)` (and `fs`, `fc` unless given) to the `rate, breakaway` points.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let offset = PROCEDURE.options_of::<OffsetOnly>(given)?.offset;
    let rate = table.column("rate", PROCEDURE.name)?;
    let brk = table.column("breakaway", PROCEDURE.name)?;
    let mut fixed = [None; 4];
    for (i, n) in NAMES.iter().enumerate() {
        fixed[i] = given_f64(given, n)?;
    }
    if offset.fitted() {
        return Err(FitError::Setting {
            field: "given.offset".into(),
            rule: "phi_s cannot fit an offset (breakaway points alone cannot tell it from the per-direction levels fs, fc); give a known one [N or N m], e.g. from idim_ls or output_error on a time series".into(),
        });
    }
    let (mut pr, mut py, mut nr, mut ny) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (r, b) in rate.iter().zip(brk) {
        let b = &(b - offset.known());
        if !(r.is_finite() && b.is_finite()) || *r == 0.0 {
            continue;
        }
        if *r > 0.0 {
            pr.push(*r);
            py.push(b.abs());
        } else {
            nr.push(-r);
            ny.push(b.abs());
        }
    }
    let asymmetric = crate::registry::entry(model)
        .map(|e| e.asymmetric)
        .unwrap_or(false);
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "levenberg_marquardt",
        PROCEDURE.columns,
        pr.len() + nr.len(),
        given,
    );
    if !asymmetric {
        pr.append(&mut nr);
        py.append(&mut ny);
    }
    let mut fits = Vec::new();
    if !pr.is_empty() {
        let d = fit_direction(&pr, &py, &fixed, "positive-rate points")?;
        let (p, e) = emit(&d, &fixed);
        report.params = p;
        report.std_errors = e;
        fits.push(d);
    }
    if !nr.is_empty() {
        let d = fit_direction(&nr, &ny, &fixed, "negative-rate points")?;
        let (p, e) = emit(&d, &fixed);
        if report.params.is_empty() {
            report.params = p.clone();
            report.std_errors = e.clone();
        }
        report.params.insert("negative".into(), Value::Object(p));
        report
            .std_errors
            .insert("negative".into(), Value::Object(e));
        fits.push(d);
    }
    if fits.is_empty() {
        return Err(FitError::Data("phi_s: no point with a nonzero rate".into()));
    }
    if let super::Offset::Known(c) = offset {
        report.set("offset", c, None);
        report.provenance.notes.push(format!(
            "known offset {c} subtracted from the signed breakaway torques"
        ));
    }
    let (cost, n) = fits
        .iter()
        .fold((0.0, 0), |(c, n), d| (c + d.cost, n + d.n));
    report.mse = Some(cost / n as f64);
    let held: Vec<&str> = NAMES
        .iter()
        .zip(&fixed)
        .filter(|(_, f)| f.is_some())
        .map(|(n, _)| *n)
        .collect();
    report.note_held(&held);
    Ok(report)
}
