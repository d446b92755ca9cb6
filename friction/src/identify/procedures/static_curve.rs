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
//! fixes `fs`, `fc`, `fv` before fitting the shape.

use super::quality::{on_bound, scaled_condition};
use super::{FitReport, Given, Procedure, Table, given_f64, need_rows, num};
use crate::curve::{phi_exp, phi_lorentz};
use crate::identify::lm::{LevenbergMarquardt, standard_errors};
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

/// Internal parameter order: fc, fs, fv, vs, delta.
const FC: usize = 0;
const FS: usize = 1;
const FV: usize = 2;
const VS: usize = 3;
const DELTA: usize = 4;

/// How a model names the five internal parameters (`None`: not a parameter of the model) and
/// which values its shape fixes.
struct Layout {
    shape: Shape,
    names: [Option<&'static str>; 5],
    fixed_delta: Option<f64>,
}

fn layout(model: &str) -> Layout {
    let exp = |fv: &'static str, delta: &'static str| Layout {
        shape: Shape::Exp,
        names: [Some("fc"), Some("fs"), Some(fv), Some("vs"), Some(delta)],
        fixed_delta: None,
    };
    match model {
        "lugre" | "gms" => exp("sigma2", "delta"),
        "improved_armstrong" | "improved_lugre" => exp("fv", "delta_v"),
        "hybrid" => Layout {
            shape: Shape::Exp,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None],
            fixed_delta: Some(2.0),
        },
        "tustin" => Layout {
            shape: Shape::Exp,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None],
            fixed_delta: Some(1.0),
        },
        "stribeck_lorentz" => Layout {
            shape: Shape::Lorentz,
            names: [Some("fc"), Some("fs"), Some("fv"), Some("vs"), None],
            fixed_delta: None,
        },
        "coulomb_viscous" => Layout {
            shape: Shape::Line,
            names: [Some("fc"), None, Some("fv"), None, None],
            fixed_delta: None,
        },
        _ => exp("fv", "delta"),
    }
}

/// The curve magnitude `fc + (fs - fc) phi(s) + fv s` at speed `s >= 0`.
fn curve(shape: Shape, p: &[f64; 5], s: f64) -> f64 {
    let phi = match shape {
        Shape::Exp => phi_exp(s, p[VS], p[DELTA]),
        Shape::Lorentz => phi_lorentz(s, p[VS]),
        Shape::Line => 0.0,
    };
    p[FC] + (p[FS] - p[FC]) * phi + p[FV] * s
}

/// Least-squares problem on one direction's magnitudes; the free parameters are `free`.
struct CurveProblem<'a> {
    s: &'a [f64],
    y: &'a [f64],
    shape: Shape,
    full: [f64; 5],
    free: Vec<usize>,
}

impl CurveProblem<'_> {
    fn expand(&self, p: &[f64]) -> [f64; 5] {
        let mut full = self.full;
        for (i, x) in self.free.iter().zip(p) {
            full[*i] = *x;
        }
        full
    }
}

impl Residuals for CurveProblem<'_> {
    fn len(&self) -> usize {
        self.s.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        let full = self.expand(p);
        for ((o, s), y) in out.iter_mut().zip(self.s).zip(self.y) {
            *o = curve(self.shape, &full, *s) - y;
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
                    _ => amp * ddelta,
                };
            }
        }
        Some(Ok(()))
    }
}

/// One direction's fit.
#[derive(Clone, Debug)]
struct DirFit {
    p: [f64; 5],
    se: Option<Vec<f64>>,
    cost: f64,
    n: usize,
    termination: TerminationReason,
    /// Internal indices of free parameters that ended on a bound.
    at_bound: Vec<usize>,
    /// Scaled condition number of `JᵀJ` at the optimum.
    condition: Option<f64>,
}

/// Initial guess from the data (see the module doc); `s` sorted ascending.
fn initial_guess(s: &[f64], y: &[f64]) -> [f64; 5] {
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
    [fc, fs, fv, vs, 1.0]
}

fn fit_direction(
    s: &[f64],
    y: &[f64],
    lay: &Layout,
    fixed: &[Option<f64>; 5],
    what: &str,
) -> Result<DirFit, FitError> {
    let mut idx: Vec<usize> = (0..s.len()).collect();
    idx.sort_by(|a, b| s[*a].total_cmp(&s[*b]));
    let s: Vec<f64> = idx.iter().map(|i| s[*i]).collect();
    let y: Vec<f64> = idx.iter().map(|i| y[*i]).collect();
    let mut full = initial_guess(&s, &y);
    if let Some(d) = lay.fixed_delta {
        full[DELTA] = d;
    }
    let mut free = Vec::new();
    for i in 0..5 {
        let used = match lay.shape {
            Shape::Line => i == FC || i == FV,
            Shape::Lorentz => i != DELTA,
            Shape::Exp => i != DELTA || lay.fixed_delta.is_none(),
        };
        match fixed[i] {
            Some(x) => full[i] = x,
            None if used => free.push(i),
            None => {}
        }
    }
    if lay.shape == Shape::Line {
        full[FS] = full[FC];
    }
    need_rows(s.len(), free.len() + 1, what)?;
    let s_min = s.iter().cloned().find(|x| *x > 0.0).unwrap_or(1e-12);
    let (lo, hi): (Vec<f64>, Vec<f64>) = free
        .iter()
        .map(|i| match *i {
            VS => (s_min * 1e-3, f64::INFINITY),
            DELTA => (0.05, 20.0),
            _ => (0.0, f64::INFINITY),
        })
        .unzip();
    let starts: Vec<f64> = if free.contains(&DELTA) {
        vec![1.0, 0.7, 2.0]
    } else {
        vec![full[DELTA]]
    };
    let mut best: Option<(Vec<f64>, f64, TerminationReason, CurveProblem)> = None;
    for d in starts {
        let mut start = full;
        start[DELTA] = d;
        let problem = CurveProblem {
            s: &s,
            y: &y,
            shape: lay.shape,
            full: start,
            free: free.clone(),
        };
        let p0: Vec<f64> = free.iter().map(|i| start[*i]).collect();
        let lm = LevenbergMarquardt::new().with_bounds(Bounds {
            lower: lo.clone(),
            upper: hi.clone(),
        });
        let r = Runner::new(&problem, lm).max_iters(200).run(p0)?;
        if best.as_ref().is_none_or(|b| r.cost < b.1) {
            best = Some((r.params, r.cost, r.termination, problem));
        }
    }
    let (p, cost, termination, problem) =
        best.ok_or_else(|| FitError::Bug("no start ran".into()))?;
    let se = standard_errors(&problem, &p, cost).map(|se| {
        let mut all = vec![f64::NAN; 5];
        for (i, e) in free.iter().zip(se) {
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
    let mut jac = nalgebra::DMatrix::zeros(0, 0);
    let condition = match problem.jacobian(&p, &mut jac) {
        Some(Ok(())) => scaled_condition(&jac),
        _ => None,
    };
    Ok(DirFit {
        p: problem.expand(&p),
        se,
        cost,
        n: s.len(),
        termination,
        at_bound,
        condition,
    })
}

/// Writes one direction's parameters by the model's names into `params` / `errors`.
fn emit(
    fit: &DirFit,
    lay: &Layout,
    fixed: &[Option<f64>; 5],
    params: &mut Map<String, Value>,
    errors: &mut Map<String, Value>,
) {
    for i in 0..5 {
        if let Some(name) = lay.names[i] {
            params.insert(name.into(), num(fit.p[i]));
            if fixed[i].is_none()
                && let Some(se) = &fit.se
            {
                errors.insert(name.into(), num(se[i]));
            }
        }
    }
}

/// Fits the steady-state curve of `model` to the `v, friction` points of `table`.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let v = table.column("v", PROCEDURE.name)?;
    let f = table.column("friction", PROCEDURE.name)?;
    let lay = layout(model);
    let mut fixed = [None; 5];
    for (i, name) in lay.names.iter().enumerate() {
        if let Some(n) = name {
            fixed[i] = given_f64(given, n)?;
        }
    }
    let asymmetric = crate::registry::entry(model)
        .map(|e| e.asymmetric)
        .unwrap_or(false);
    let (mut ps, mut py, mut ns, mut ny) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (v, f) in v.iter().zip(f) {
        if !(v.is_finite() && f.is_finite()) {
            continue;
        }
        if *v > 0.0 {
            ps.push(*v);
            py.push(*f);
        } else if *v < 0.0 {
            ns.push(-v);
            ny.push(-f);
        }
    }
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "levenberg_marquardt",
        PROCEDURE.columns,
        ps.len() + ns.len(),
        given,
    );
    let zeros = v.len() - ps.len() - ns.len();
    if zeros > 0 {
        report
            .provenance
            .notes
            .push(format!("{zeros} points at v = 0 (or non-finite) ignored"));
    }
    if !asymmetric {
        ps.extend_from_slice(&ns);
        py.extend_from_slice(&ny);
        ns.clear();
        ny.clear();
        report
            .provenance
            .notes
            .push("symmetric model: both directions pooled (magnitudes)".into());
    }
    let (mut params, mut errors) = (Map::new(), Map::new());
    let mut fits = Vec::new();
    if !ps.is_empty() {
        let pos = fit_direction(&ps, &py, &lay, &fixed, "positive-velocity points")?;
        emit(&pos, &lay, &fixed, &mut params, &mut errors);
        fits.push(pos);
    }
    if !ns.is_empty() {
        let neg = fit_direction(&ns, &ny, &lay, &fixed, "negative-velocity points")?;
        let (mut np, mut ne) = (Map::new(), Map::new());
        emit(&neg, &lay, &fixed, &mut np, &mut ne);
        if params.is_empty() {
            report
                .provenance
                .notes
                .push("only negative-velocity points: the fit is used for both directions".into());
            params = np.clone();
            errors = ne.clone();
        }
        params.insert("negative".into(), Value::Object(np));
        if !ne.is_empty() {
            errors.insert("negative".into(), Value::Object(ne));
        }
        fits.push(neg);
    }
    if fits.is_empty() {
        return Err(FitError::Data("static_curve: no point with v != 0".into()));
    }
    let (cost, n): (f64, usize) = fits
        .iter()
        .fold((0.0, 0), |(c, n), d| (c + d.cost, n + d.n));
    report.mse = Some(cost / n as f64);
    report.provenance.termination = Some(
        fits.iter()
            .map(|d| d.termination)
            .find(|t| *t != TerminationReason::Converged)
            .unwrap_or(TerminationReason::Converged),
    );
    for (d, prefix) in fits.iter().zip(if ps.is_empty() {
        ["negative."; 2]
    } else {
        ["", "negative."]
    }) {
        report.at_bound.extend(
            d.at_bound
                .iter()
                .filter_map(|i| lay.names[*i])
                .map(|n| format!("{prefix}{n}")),
        );
    }
    report.condition = fits.iter().filter_map(|d| d.condition).reduce(f64::max);
    let held: Vec<&str> = lay
        .names
        .iter()
        .zip(&fixed)
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
    report.params = params;
    report.std_errors = errors;
    Ok(report)
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
        let truth = [1.0, 1.5, 0.4, 2e-3, 0.0];
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
        let truth = [1.0, 1.5, 0.4, 1e-2, 2.0];
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
}
