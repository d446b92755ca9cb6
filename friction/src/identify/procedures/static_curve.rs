//! Static friction-curve fits on steady-state sweep points: S4 §4.1 and §4.4 (eqs. 5 and 22),
//! S1 8.19–8.21, S3 §5.1.1 eqs. 16–22; docs/src/models/stribeck_exp.md, docs/src/models/tustin.md, docs/src/identification.md#static_curve.
//!
//! At constant velocity the friction equals the applied torque (S4 eq. 22), so sweep points
//! `(v, friction)` sample the steady-state curve
//!
//! $$F(v) = \operatorname{sgn}(v)\left[f_c + (f_s - f_c)\,\phi(v)\right] + f_v v$$
//!
//! with the shape `phi` of the model: generalised exponential `exp(-|v/v_s|^delta)` (Armstrong,
//! S4 eq. 5; `stribeck_exp`, `static_armstrong`, `karnopp`, `lugre`, `improved_armstrong`,
//! `improved_lugre`), Gaussian (delta = 2: `hybrid`, or any exponential model with
//! `given.delta = 2`), Tustin (delta = 1, S1 8.21: `tustin`), Lorentzian (Hess–Soom, S1 8.19:
//! `stribeck_lorentz`), or none (`coulomb_viscous`). The fit is bounded Levenberg–Marquardt
//! ([`LevenbergMarquardt`]) on the magnitudes, per direction: points with `v > 0` fit the
//! positive set, points with `v < 0` the `negative` set (S4 Table 1) when the model is
//! asymmetric; a symmetric model pools both directions.
//!
//! **Initial guesses from the data** (S4 §4.3): `fc`, `fv` from a straight line through the
//! fastest third of the points (intercept and slope), `fs` from the largest friction (less the
//! viscous part) among the slowest third, `vs` where the Stribeck excess has fallen to 1/e of
//! `fs - fc`; for a free exponent the fit starts from delta = 0.7, 1 and 2 and keeps the best.
//!
//! **Requirements on the data.** Columns `v` \[m/s\] and `friction` \[N\]: steady-state points (one
//! per constant-velocity run), at least one more per direction than the free parameters, with
//! speeds spanning the Stribeck region (several points below `vs`) and the viscous region (the
//! fastest third should be past the Stribeck dip, where the curve is a straight line). Points at
//! `v = 0` are ignored. Any parameter in `given` (by the model's name) is held fixed, as S4 §4.4
//! fixes `fs`, `fc`, `fv` before fitting the shape; `given.negative` (an object of the same
//! names) holds values of the negative direction only, over those of both (an asymmetric
//! bench's breakaway, measured per direction).
//!
//! **Offset** (`given.offset = true`): a constant `c` in the measured friction,
//! `F(v) + c`; on magnitudes `|F| + sgn(v) c`, so it needs points in both directions, which then
//! share one curve (a per-direction Coulomb level would absorb it). A known offset is
//! subtracted from the friction first.
//!
//! **Nested start.** A curve with a Stribeck term contains the straight line
//! (Coulomb + viscous: `fs = fc`), so it is also started from the line's least-squares optimum
//! with `fs = fc` (exactly the line) and from `fs` above it at several `vs`; the best optimum is
//! kept, so it is never worse than the line, and `details.nested` says whether the Stribeck
//! parameters are supported (docs/src/identification.md#nested-models). `given.nested = false` skips this.
//!
//! **Uncertainty.** Standard errors from the Jacobian and the residual variance (the points
//! are independent runs); `given.bootstrap = N` resamples the residuals instead (`seed`).

use super::quality::{on_bound, scaled_condition};
use super::{FitReport, Given, Procedure, Table, given_f64, need_rows, num};
use crate::curve::{phi_exp, phi_lorentz};
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::stats;
use crate::identify::{Bounds, FitError, Residuals, Runner, TerminationReason};
use serde_json::{Map, Value};

/// `static_curve`: the models whose steady-state curve it fits.
pub const PROCEDURE: Procedure = Procedure {
    name: "static_curve",
    models: &[
        "stribeck_exp",
        "static_armstrong",
        "karnopp",
        "stribeck_lorentz",
        "tustin",
        "coulomb_viscous",
        "lugre",
        "gms",
        "hybrid",
        "improved_armstrong",
        "improved_lugre",
    ],
    columns: &["v", "friction"],
    options: &["offset", "bootstrap", "seed", "nested", "negative"],
    known_params: true,
};

/// Shape of the Stribeck term.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// `exp(-|v/vs|^delta)`.
    Exp,
    /// `1/(1 + (v/vs)^2)`.
    Lorentz,
    /// No Stribeck term: `fc + fv v`.
    Line,
}

/// Internal parameter order: fc, fs, fv, vs, delta, offset.
const FC: usize = 0;
const FS: usize = 1;
const FV: usize = 2;
const VS: usize = 3;
const DELTA: usize = 4;
const OFFSET: usize = 5;
/// Internal parameters.
const N: usize = 6;

/// How a model names the five curve parameters (`None`: not a parameter of the model) and
/// which values its shape fixes.
struct Layout {
    shape: Shape,
    names: [Option<&'static str>; N],
    fixed_delta: Option<f64>,
}

fn layout(model: &str) -> Layout {
    let exp = |fv: &'static str, delta: &'static str| Layout {
        shape: Shape::Exp,
        names: [
            Some("fc"),
            Some("fs"),
            Some(fv),
            Some("vs"),
            Some(delta),
            None,
        ],
        fixed_delta: None,
    };
    match model {
        "lugre" | "gms" => exp("sigma2", "delta"),
        "improved_armstrong" | "improved_lugre" => exp("fv", "delta_v"),
        "hybrid" => Layout {
            shape: Shape::Exp,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None, None],
            fixed_delta: Some(2.0),
        },
        "tustin" => Layout {
            shape: Shape::Exp,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None, None],
            fixed_delta: Some(1.0),
        },
        "stribeck_lorentz" => Layout {
            shape: Shape::Lorentz,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None, None],
            fixed_delta: None,
        },
        "coulomb_viscous" => Layout {
            shape: Shape::Line,
            names: [Some("fc"), None, Some("fv"), None, None, None],
            fixed_delta: None,
        },
        _ => exp("fv", "delta"),
    }
}

/// The curve magnitude `fc + (fs - fc) phi(s) + fv s` at speed `s >= 0`.
fn curve(shape: Shape, p: &[f64; N], s: f64) -> f64 {
    let phi = match shape {
        Shape::Exp => phi_exp(s, p[VS], p[DELTA]),
        Shape::Lorentz => phi_lorentz(s, p[VS]),
        Shape::Line => 0.0,
    };
    p[FC] + (p[FS] - p[FC]) * phi + p[FV] * s
}

/// Least-squares problem on magnitudes `y` at speeds `s` (with the direction `sign` of each
/// point for the offset); the free parameters are `free`.
struct CurveProblem<'a> {
    s: &'a [f64],
    y: &'a [f64],
    sign: &'a [f64],
    shape: Shape,
    full: [f64; N],
    free: Vec<usize>,
}

impl CurveProblem<'_> {
    fn expand(&self, p: &[f64]) -> [f64; N] {
        let mut full = self.full;
        for (i, x) in self.free.iter().zip(p) {
            full[*i] = *x;
        }
        full
    }

    fn predict(&self, q: &[f64; N], i: usize) -> f64 {
        curve(self.shape, q, self.s[i]) + self.sign[i] * q[OFFSET]
    }
}

impl Residuals for CurveProblem<'_> {
    fn len(&self) -> usize {
        self.s.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        let full = self.expand(p);
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.predict(&full, i) - self.y[i];
        }
        Ok(())
    }
    fn jacobian(
        &self,
        p: &[f64],
        jac: &mut nalgebra::DMatrix<f64>,
    ) -> Option<Result<(), FitError>> {
        let q = self.expand(p);
        jac.resize_mut(self.s.len(), self.free.len(), 0.0);
        for (i, &s) in self.s.iter().enumerate() {
            let amp = q[FS] - q[FC];
            // phi and its derivatives in vs and delta.
            let (phi, dvs, ddelta) = match self.shape {
                Shape::Exp => {
                    let r = s / q[VS];
                    let rd = if r > 0.0 { r.powf(q[DELTA]) } else { 0.0 };
                    let phi = (-rd).exp();
                    let ln_r = if r > 0.0 { r.ln() } else { 0.0 };
                    (phi, phi * rd * q[DELTA] / q[VS], -phi * rd * ln_r)
                }
                Shape::Lorentz => {
                    let r2 = (s / q[VS]).powi(2);
                    let phi = 1.0 / (1.0 + r2);
                    (phi, phi * phi * 2.0 * r2 / q[VS], 0.0)
                }
                Shape::Line => (0.0, 0.0, 0.0),
            };
            for (j, &k) in self.free.iter().enumerate() {
                jac[(i, j)] = match k {
                    FC => 1.0 - phi,
                    FS => phi,
                    FV => s,
                    VS => amp * dvs,
                    OFFSET => self.sign[i],
                    _ => amp * ddelta,
                };
            }
        }
        Some(Ok(()))
    }
}

/// One direction's fit (or the pooled one).
#[derive(Clone, Debug)]
struct DirFit {
    p: [f64; N],
    se: Option<Vec<f64>>,
    /// Bootstrap percentile intervals by internal index (when asked for).
    ci: Option<Vec<[f64; 2]>>,
    cost: f64,
    n: usize,
    termination: TerminationReason,
    /// Internal indices of free parameters that ended on a bound.
    at_bound: Vec<usize>,
    /// Scaled condition number of `JᵀJ` at the optimum.
    condition: Option<f64>,
    /// The straight line's SSE and free-parameter count, for the nested judgement.
    line: Option<(f64, usize)>,
    /// Number of free parameters.
    k: usize,
    /// Sum of squares of the magnitudes about their mean (for R²).
    sst: f64,
}

/// Initial guess from the data (see the module doc); `s` sorted ascending.
fn initial_guess(s: &[f64], y: &[f64]) -> [f64; N] {
    let n = s.len();
    let k = (n / 3).max(2).min(n);
    let (hs, hy) = (&s[n - k..], &y[n - k..]);
    let (ms, my) = (super::mean(hs), super::mean(hy));
    let sxx: f64 = hs.iter().map(|x| (x - ms).powi(2)).sum();
    let sxy: f64 = hs.iter().zip(hy).map(|(x, y)| (x - ms) * (y - my)).sum();
    let mut fv = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let mut fc = my - fv * ms;
    if fc.is_nan() || fc <= 0.0 {
        fv = 0.0;
        fc = y.iter().cloned().fold(f64::INFINITY, f64::min).max(1e-12);
    }
    let fs = s[..k]
        .iter()
        .zip(&y[..k])
        .map(|(s, y)| y - fv * s)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(fc * 1.001);
    let target = (fs - fc) / std::f64::consts::E;
    let vs = s
        .iter()
        .zip(y)
        .find(|(s, y)| *y - fc - fv * *s < target)
        .map_or(s[n / 2], |(s, _)| *s)
        .max(s[0].max(1e-12));
    [fc, fs, fv, vs, 1.0, 0.0]
}

/// What a direction's fit is asked to do.
struct Ask<'a> {
    lay: &'a Layout,
    fixed: &'a [Option<f64>; N],
    offset: bool,
    nested: bool,
    bootstrap: Option<(usize, u64)>,
}

/// The free internal parameters of a layout (fixed ones set in `full`).
fn free_of(ask: &Ask<'_>, full: &mut [f64; N]) -> Vec<usize> {
    let lay = ask.lay;
    let mut free = Vec::new();
    for (i, value) in full.iter_mut().enumerate() {
        let used = match (i, lay.shape) {
            (OFFSET, _) => ask.offset,
            (_, Shape::Line) => i == FC || i == FV,
            (_, Shape::Lorentz) => i != DELTA,
            (_, Shape::Exp) => i != DELTA || lay.fixed_delta.is_none(),
        };
        match ask.fixed[i] {
            Some(x) => *value = x,
            None if used => free.push(i),
            None => {}
        }
    }
    if lay.shape == Shape::Line {
        full[FS] = full[FC];
    }
    free
}

/// Runs LM from each start; returns the best `(params, cost, termination)`.
fn best_of(
    problem: &mut CurveProblem<'_>,
    starts: &[[f64; N]],
    bounds: &Bounds,
) -> Result<(Vec<f64>, f64, TerminationReason, [f64; N]), FitError> {
    let mut best: Option<(Vec<f64>, f64, TerminationReason, [f64; N])> = None;
    for start in starts {
        problem.full = *start;
        let p0: Vec<f64> = problem.free.iter().map(|i| start[*i]).collect();
        let lm = LevenbergMarquardt::new().with_bounds(bounds.clone());
        let r = Runner::new(&*problem, lm).max_iters(200).run(p0)?;
        if best.as_ref().is_none_or(|b| r.cost < b.1) {
            best = Some((r.params, r.cost, r.termination, *start));
        }
    }
    best.ok_or_else(|| FitError::Bug("no start ran".into()))
}

fn fit_direction(
    s: &[f64],
    y: &[f64],
    sign: &[f64],
    ask: &Ask<'_>,
    what: &str,
) -> Result<DirFit, FitError> {
    let lay = ask.lay;
    let mut idx: Vec<usize> = (0..s.len()).collect();
    idx.sort_by(|a, b| s[*a].total_cmp(&s[*b]));
    let s: Vec<f64> = idx.iter().map(|i| s[*i]).collect();
    let y: Vec<f64> = idx.iter().map(|i| y[*i]).collect();
    let sign: Vec<f64> = idx.iter().map(|i| sign[*i]).collect();
    let mut full = initial_guess(&s, &y);
    if let Some(d) = lay.fixed_delta {
        full[DELTA] = d;
    }
    let free = free_of(ask, &mut full);
    need_rows(s.len(), free.len() + 1, what)?;
    let s_min = s.iter().cloned().find(|x| *x > 0.0).unwrap_or(1e-12);
    let (lo, hi): (Vec<f64>, Vec<f64>) = free
        .iter()
        .map(|i| match *i {
            VS => (s_min * 1e-3, f64::INFINITY),
            DELTA => (0.05, 20.0),
            OFFSET => (f64::NEG_INFINITY, f64::INFINITY),
            _ => (0.0, f64::INFINITY),
        })
        .unzip();
    let bounds = Bounds {
        lower: lo.clone(),
        upper: hi.clone(),
    };
    let mut problem = CurveProblem {
        s: &s,
        y: &y,
        sign: &sign,
        shape: lay.shape,
        full,
        free: free.clone(),
    };
    let mut starts: Vec<[f64; N]> = if free.contains(&DELTA) {
        [1.0, 0.7, 2.0]
            .iter()
            .map(|d| {
                let mut st = full;
                st[DELTA] = *d;
                st
            })
            .collect()
    } else {
        vec![full]
    };
    // The straight line the curve contains, and starts from it.
    let stribeck = lay.shape != Shape::Line && free.contains(&FS) && free.contains(&VS);
    let mut line = None;
    if ask.nested && stribeck {
        let line_lay = Layout {
            shape: Shape::Line,
            names: lay.names,
            fixed_delta: None,
        };
        let line_ask = Ask {
            lay: &line_lay,
            nested: false,
            bootstrap: None,
            ..*ask
        };
        let l = fit_direction(&s, &y, &sign, &line_ask, what)?;
        line = Some((l.cost, l.k));
        let mut exact = full;
        exact[FC] = l.p[FC];
        exact[FS] = l.p[FC];
        exact[FV] = l.p[FV];
        exact[OFFSET] = l.p[OFFSET];
        starts.push(exact);
        for f in [0.1, 0.3, 0.6] {
            let mut st = exact;
            st[FS] = 1.3 * l.p[FC];
            st[VS] = s[((s.len() - 1) as f64 * f) as usize].max(s_min);
            starts.push(st);
        }
    }
    // A held Stribeck level (the breakaway, measured apart) leaves only the fall's speed to
    // find, from below the slowest point (the sweep may not have held a speed below vs) up.
    if free.contains(&VS) && !free.contains(&FS) && lay.shape != Shape::Line {
        for f in [0.3, 0.5, 0.7, 1.0, 2.0] {
            let mut st = full;
            st[VS] = f * s_min;
            starts.push(st);
        }
    }
    let (p, cost, termination, start) = best_of(&mut problem, &starts, &bounds)?;
    problem.full = start;
    let mut jac = nalgebra::DMatrix::zeros(0, 0);
    let jac_ok = matches!(problem.jacobian(&p, &mut jac), Some(Ok(())));
    let mut resid = vec![0.0; s.len()];
    problem.residuals(&p, &mut resid)?;
    let se = jac_ok
        .then(|| stats::least_squares(&jac, &resid, false))
        .flatten()
        .map(|u| {
            let mut all = vec![f64::NAN; N];
            for (i, e) in free.iter().zip(u.std_errors) {
                all[*i] = e;
            }
            all
        });
    let at_bound = free
        .iter()
        .enumerate()
        .filter(|(j, _)| on_bound(p[*j], lo[*j]) || on_bound(p[*j], hi[*j]))
        .map(|(_, i)| *i)
        .collect();
    let condition = if jac_ok { scaled_condition(&jac) } else { None };
    let q = problem.expand(&p);
    let (se, ci) = match ask.bootstrap {
        Some((replicates, seed)) => {
            let fitted: Vec<f64> = (0..s.len()).map(|i| problem.predict(&q, i)).collect();
            let r: Vec<f64> = resid.iter().map(|e| -e).collect();
            let boot = stats::block_bootstrap(&fitted, &r, 1, replicates, seed, |yb| {
                let bp = CurveProblem {
                    y: yb,
                    full: q,
                    free: free.clone(),
                    ..problem
                };
                let lm = LevenbergMarquardt::new().with_bounds(bounds.clone());
                Ok(Runner::new(&bp, lm).max_iters(200).run(p.clone())?.params)
            })?;
            let mut se = vec![f64::NAN; N];
            let mut ci = vec![[f64::NAN; 2]; N];
            for (j, i) in free.iter().enumerate() {
                se[*i] = boot.std_errors[j];
                ci[*i] = boot.ci95[j];
            }
            (Some(se), Some(ci))
        }
        None => (se, None),
    };
    Ok(DirFit {
        p: q,
        se,
        ci,
        cost,
        n: s.len(),
        termination,
        at_bound,
        condition,
        line,
        k: free.len(),
        sst: {
            let m = super::mean(&y);
            y.iter().map(|v| (v - m).powi(2)).sum()
        },
    })
}

/// Writes one direction's parameters by the model's names into `params` / `errors` / `ci`.
fn emit(fit: &DirFit, lay: &Layout, fixed: &[Option<f64>; N], out: &mut [Map<String, Value>; 3]) {
    let [params, errors, ci] = out;
    for i in 0..5 {
        if let Some(name) = lay.names[i] {
            params.insert(name.into(), num(fit.p[i]));
            if fixed[i].is_none()
                && let Some(se) = &fit.se
                && se[i].is_finite()
            {
                errors.insert(name.into(), num(se[i]));
                if let Some(c) = &fit.ci {
                    ci.insert(name.into(), serde_json::json!([num(c[i][0]), num(c[i][1])]));
                }
            }
        }
    }
}

/// Splits sweep points into magnitudes per direction: `(speed, |friction|, sign)` of
/// `v > 0` and of `v < 0` (`friction` less the known `offset`).
type Points = (Vec<f64>, Vec<f64>, Vec<f64>);

fn split(v: &[f64], f: &[f64], offset: f64) -> (Points, Points) {
    let (mut pos, mut neg): (Points, Points) = Default::default();
    for (v, f) in v.iter().zip(f) {
        if !(v.is_finite() && f.is_finite()) {
            continue;
        }
        let f = f - offset;
        if *v > 0.0 {
            pos.0.push(*v);
            pos.1.push(f);
            pos.2.push(1.0);
        } else if *v < 0.0 {
            neg.0.push(-v);
            neg.1.push(-f);
            neg.2.push(-1.0);
        }
    }
    (pos, neg)
}

/// Fits the steady-state curve of `model` to the `v, friction` points of `table`.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let v = table.column("v", PROCEDURE.name)?;
    let f = table.column("friction", PROCEDURE.name)?;
    let lay = layout(model);
    let fixed = held(&lay, given, "")?;
    let fixed_neg = match given.get("negative") {
        None | Some(Value::Null) => fixed,
        Some(Value::Object(neg)) => {
            let mut f = held(&lay, neg, "negative.")?;
            for (f, both) in f.iter_mut().zip(fixed) {
                *f = f.or(both);
            }
            f
        }
        Some(v) => {
            return Err(FitError::Config {
                field: "given.negative".into(),
                value: f64::NAN,
                rule: format!(
                    "must be an object of the negative direction's known values (got {v})"
                ),
            });
        }
    };
    let offset = super::given_offset(given)?;
    let nested = match given.get("nested") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(FitError::Config {
                field: "given.nested".into(),
                value: f64::NAN,
                rule: "must be true or false".into(),
            });
        }
    };
    let ask = Ask {
        lay: &lay,
        fixed: &fixed,
        offset: offset.fitted(),
        nested,
        bootstrap: super::given_bootstrap(given)?,
    };
    let asymmetric = crate::registry::entry(model)
        .map(|e| e.asymmetric)
        .unwrap_or(false);
    let (mut pos, mut neg) = split(v, f, offset.known());
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "levenberg_marquardt",
        PROCEDURE.columns,
        pos.0.len() + neg.0.len(),
        given,
    );
    let zeros = v.len() - pos.0.len() - neg.0.len();
    if zeros > 0 {
        report
            .provenance
            .notes
            .push(format!("{zeros} points at v = 0 (or non-finite) ignored"));
    }
    if offset.fitted() && (pos.0.is_empty() || neg.0.is_empty()) {
        return Err(FitError::Data(
            "static_curve: an offset needs points in both directions (on one side it is the Coulomb level)".into(),
        ));
    }
    if !asymmetric || offset.fitted() {
        for (a, b) in [
            (&mut pos.0, &mut neg.0),
            (&mut pos.1, &mut neg.1),
            (&mut pos.2, &mut neg.2),
        ] {
            a.append(b);
        }
        report.provenance.notes.push(if asymmetric {
            "with an offset both directions share one curve (magnitudes pooled): a per-direction level would absorb it".into()
        } else {
            "symmetric model: both directions pooled (magnitudes)".into()
        });
    }
    let mut out: [Map<String, Value>; 3] = Default::default();
    let mut fits = Vec::new();
    if !pos.0.is_empty() {
        let d = fit_direction(&pos.0, &pos.1, &pos.2, &ask, "positive-velocity points")?;
        emit(&d, &lay, &fixed, &mut out);
        fits.push(d);
    }
    if !neg.0.is_empty() {
        let ask = Ask {
            fixed: if asymmetric { &fixed_neg } else { &fixed },
            ..ask
        };
        let d = fit_direction(&neg.0, &neg.1, &neg.2, &ask, "negative-velocity points")?;
        let mut sub: [Map<String, Value>; 3] = Default::default();
        emit(&d, &lay, ask.fixed, &mut sub);
        if out[0].is_empty() {
            report
                .provenance
                .notes
                .push("only negative-velocity points: the fit is used for both directions".into());
            out = sub.clone();
        }
        for (o, s) in out.iter_mut().zip(sub) {
            if !s.is_empty() {
                o.insert("negative".into(), Value::Object(s));
            }
        }
        fits.push(d);
    }
    if fits.is_empty() {
        return Err(FitError::Data("static_curve: no point with v != 0".into()));
    }
    let [params, errors, ci] = out;
    report.params = params;
    report.std_errors = errors;
    report.ci95 = ci;
    match offset {
        super::Offset::Fit => {
            let d = &fits[0];
            let se = d.se.as_ref().map(|s| s[OFFSET]).filter(|x| x.is_finite());
            report.set("offset", d.p[OFFSET], se);
            if let Some(c) = &d.ci {
                report.ci95.insert(
                    "offset".into(),
                    serde_json::json!([num(c[OFFSET][0]), num(c[OFFSET][1])]),
                );
            }
        }
        super::Offset::Known(c) => {
            report.set("offset", c, None);
            report
                .provenance
                .notes
                .push(format!("known offset {c} subtracted from the friction"));
        }
        super::Offset::None => {}
    }
    finish(&mut report, &fits, &lay, &fixed, ask.bootstrap);
    let neg_held: Vec<&str> = (0..N)
        .filter(|i| fixed_neg[*i] != fixed[*i])
        .filter_map(|i| lay.names[i])
        .collect();
    if asymmetric && !neg_held.is_empty() {
        report.provenance.notes.push(format!(
            "held fixed for the negative direction (given.negative): {}",
            neg_held.join(", ")
        ));
    }
    Ok(report)
}

/// The values of `given` held fixed, by the layout's names; `prefix` names their field.
fn held(lay: &Layout, given: &Given, prefix: &str) -> Result<[Option<f64>; N], FitError> {
    let mut fixed = [None; N];
    for (i, name) in lay.names.iter().enumerate() {
        if let Some(n) = name {
            fixed[i] = given_f64(given, n).map_err(|e| match e {
                FitError::Config { field, value, rule } => FitError::Config {
                    field: field.replacen("given.", &format!("given.{prefix}"), 1),
                    value,
                    rule,
                },
                e => e,
            })?;
        }
    }
    Ok(fixed)
}

/// MSE, goodness, termination, bounds, condition, notes and details of the finished fits.
fn finish(
    report: &mut FitReport,
    fits: &[DirFit],
    lay: &Layout,
    fixed: &[Option<f64>; N],
    bootstrap: Option<(usize, u64)>,
) {
    let (cost, n, k): (f64, usize, usize) = fits
        .iter()
        .fold((0.0, 0, 0), |(c, n, k), d| (c + d.cost, n + d.n, k + d.k));
    report.mse = Some(cost / n as f64);
    let sst: f64 = fits.iter().map(|d| d.sst).sum();
    report.r2 = (sst > 0.0).then(|| 1.0 - cost / sst);
    let nf = n as f64;
    report.aic = Some(nf * (cost / nf).ln() + 2.0 * k as f64);
    report.bic = Some(nf * (cost / nf).ln() + k as f64 * nf.ln());
    report.provenance.termination = Some(
        fits.iter()
            .map(|d| d.termination)
            .find(|t| *t != TerminationReason::Converged)
            .unwrap_or(TerminationReason::Converged),
    );
    let negative_only = fits.len() == 1 && report.params.contains_key("negative");
    for (i, d) in fits.iter().enumerate() {
        let prefix = if i == 1 || negative_only {
            "negative."
        } else {
            ""
        };
        report.at_bound.extend(
            d.at_bound
                .iter()
                .filter_map(|i| {
                    if *i == OFFSET {
                        Some("offset")
                    } else {
                        lay.names[*i]
                    }
                })
                .map(|n| format!("{prefix}{n}")),
        );
    }
    report.condition = fits.iter().filter_map(|d| d.condition).reduce(f64::max);
    let held: Vec<&str> = lay
        .names
        .iter()
        .zip(fixed)
        .filter_map(|(n, f)| f.and(*n))
        .collect();
    if !held.is_empty() {
        report
            .provenance
            .notes
            .push(format!("held fixed (given): {}", held.join(", ")));
    }
    let dirs: Vec<Value> = fits
        .iter()
        .map(|d| serde_json::json!({"n_points": d.n, "mse": num(d.cost / d.n as f64), "termination": d.termination}))
        .collect();
    report.details = serde_json::json!({ "shape": format!("{:?}", lay.shape).to_lowercase(), "directions": dirs });
    if fits.iter().all(|d| d.line.is_some()) {
        let (sse0, k0) = fits
            .iter()
            .filter_map(|d| d.line)
            .fold((0.0, 0), |(s, k), (a, b)| (s + a, k + b));
        report.details["nested"] = super::nested::judge(
            report,
            "the Coulomb + viscous line",
            (sse0, k0),
            (cost, k),
            &["fs", "vs"],
        );
    }
    if let Some((replicates, seed)) = bootstrap {
        report.provenance.notes.push(format!(
            "standard errors and ci95 from a bootstrap of the residuals: {replicates} replicates per direction, seed {seed}"
        ));
        report.details["bootstrap"] =
            serde_json::json!({"replicates": replicates, "block": 1, "seed": seed});
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(points: &[(f64, f64)]) -> Table {
        Table::new(vec![
            ("v".into(), points.iter().map(|p| p.0).collect()),
            ("friction".into(), points.iter().map(|p| p.1).collect()),
        ])
        .unwrap()
    }

    #[test]
    fn noise_free_lorentz_curve_is_recovered_exactly() {
        let truth = [1.0, 1.5, 0.4, 2e-3, 0.0, 0.0];
        let pts: Vec<(f64, f64)> = (0..40)
            .map(|i| {
                let s = 1e-4 * 1.2f64.powi(i);
                (s, curve(Shape::Lorentz, &truth, s))
            })
            .collect();
        let r = fit("stribeck_lorentz", &table(&pts), &Given::new()).unwrap();
        for (n, t) in [("fc", 1.0), ("fs", 1.5), ("fv", 0.4), ("vs", 2e-3)] {
            let e = r.param(n).unwrap();
            assert!((e - t).abs() / t < 1e-6, "{n}: {e}");
        }
        assert!(r.params.get("delta").is_none());
    }

    #[test]
    fn given_values_are_held_and_have_no_error() {
        let truth = [1.0, 1.5, 0.4, 1e-2, 2.0, 0.0];
        let pts: Vec<(f64, f64)> = (0..30)
            .map(|i| {
                let s = 1e-3 * 1.25f64.powi(i);
                (-s, -curve(Shape::Exp, &truth, s))
            })
            .collect();
        let mut given = Given::new();
        given.insert("delta".into(), serde_json::json!(2.0));
        let r = fit("hybrid", &table(&pts), &given).unwrap();
        assert!((r.param("vs").unwrap() - 1e-2).abs() < 1e-8);
        let mut given = Given::new();
        given.insert("fv".into(), serde_json::json!(0.4));
        let r = fit("stribeck_exp", &table(&pts), &given).unwrap();
        assert_eq!(r.negative_param("fv"), Some(0.4));
        assert!(r.std_errors["negative"].get("fv").is_none());
        assert!((r.negative_param("fc").unwrap() - 1.0).abs() < 1e-8);
    }

    #[test]
    fn a_negative_given_holds_that_direction_only() {
        let (pos, neg) = (
            [1.0, 1.5, 0.4, 0.3, 2.0, 0.0],
            [0.8, 1.1, 0.4, 0.3, 2.0, 0.0],
        );
        let pts: Vec<(f64, f64)> = (0..30)
            .flat_map(|i| {
                let s = 0.05 * 1.15f64.powi(i);
                [
                    (s, curve(Shape::Exp, &pos, s)),
                    (-s, -curve(Shape::Exp, &neg, s)),
                ]
            })
            .collect();
        let given: Given = serde_json::from_value(serde_json::json!(
            {"fs": 1.5, "delta": 2.0, "negative": {"fs": 1.1}}
        ))
        .unwrap();
        let r = fit("stribeck_exp", &table(&pts), &given).unwrap();
        assert_eq!(
            (r.param("fs"), r.negative_param("fs")),
            (Some(1.5), Some(1.1))
        );
        assert!(r.std_errors.get("fs").is_none() && r.std_errors["negative"].get("fs").is_none());
        assert!(
            (r.negative_param("fc").unwrap() - 0.8).abs() < 1e-6,
            "{:?}",
            r.params
        );
        assert!(
            (r.negative_param("vs").unwrap() - 0.3).abs() < 1e-6,
            "{:?}",
            r.params
        );
        let bad: Given =
            serde_json::from_value(serde_json::json!({"negative": {"fs": "x"}})).unwrap();
        let e = fit("stribeck_exp", &table(&pts), &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("given.negative.fs"), "{e}");
    }
}
