//! Output-error fitting of any registry model's chosen parameters to recorded segments
//! (issue 5; the cost of docs/src/identification.md#aep generalised to every model).
//!
//! Two replays of a segment `t, x, v, u, friction` (the columns `bench simulate` writes):
//!
//! - **velocity** (`Replay::Velocity`): the measured motion drives the model in lockstep,
//!   `F_k = model.step(t_k, x_k, v_k, u_k, du_k)`, and the residual is the friction error
//!   `F_k - friction_k` \[N\];
//! - **torque** (`Replay::Torque`): the measured applied force drives [`crate::plant`] with the
//!   model, from the measured initial position and velocity, and the residual is the motion
//!   error `x_sim,k - x_k` \[m\]. The plant mass is given, or fitted as the pseudo-parameter `mass`.
//!
//! Each segment starts from the model at rest. Parameters are chosen by name, each with bounds
//! and a scale: by default a parameter whose rule makes it positive (probed through the model's
//! own validation) is searched in `log10` within `default / 1e3 .. default * 1e3`, so that
//! `sigma0 ~ 1e5` and `vs ~ 1e-3` are equally well conditioned; any other parameter linearly,
//! unbounded, relative to its default. A parameter set the model's validation refuses (e.g.
//! `fs < fc`) has an infinite cost, which the fitter steps back from. The fit is the bounded
//! [`LevenbergMarquardt`] through the [`Runner`] with a forward-difference Jacobian computed on
//! all cores, or the global [`Aep`] search (optionally polished by LM); standard errors come
//! from the Jacobian at the optimum ([`standard_errors`], mapped back through the scaling).

use super::quality::{on_bound, scaled_condition};
pub use super::segment::{DataUsed, Segment, excitation_velocity};
use super::{FitReport, Given, Procedure, Table, num};
use crate::identify::aep::Aep;
use crate::identify::lm::{LevenbergMarquardt, standard_errors};
use crate::identify::{Bounds, FitError, FitResult, Residuals, Runner};
use crate::plant::{self, Applied, PlantParams, PlantState};
use crate::registry::{self, ModelEntry};
use crate::{BuildError, FrictionModel, Input};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How a segment is replayed through the model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Replay {
    /// Measured velocity drives the model; friction error \[N\].
    Velocity,
    /// Measured applied force drives a plant of this mass \[kg or kg m^2\]; position error \[m\].
    Torque {
        /// Mass or inertia (a start value when `mass` is fitted).
        mass: f64,
    },
}

impl Replay {
    /// What the residual is.
    pub fn residual_name(&self) -> &'static str {
        match self {
            Replay::Velocity => "friction [N or N m]",
            Replay::Torque { .. } => "position [m or rad]",
        }
    }
}

/// How a parameter is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// `log10(value)`: positive parameters spanning decades.
    Log,
    /// `value / |default|`.
    Linear,
}

/// A parameter to fit, as the user chose it; missing fields take the defaults described in the
/// module doc.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FreeParam {
    /// Parameter name (the model's, or `mass` in a torque replay).
    pub name: String,
    /// Lower bound.
    #[serde(default)]
    pub lower: Option<f64>,
    /// Upper bound.
    #[serde(default)]
    pub upper: Option<f64>,
    /// Search scale.
    #[serde(default)]
    pub scale: Option<Scale>,
}

impl FreeParam {
    /// A parameter with default bounds and scale.
    pub fn named(name: &str) -> FreeParam {
        FreeParam {
            name: name.into(),
            ..FreeParam::default()
        }
    }
}

/// The search method.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Method {
    /// Bounded Levenberg–Marquardt from the start values.
    Lm,
    /// Accelerated evolutionary programming within the (finite) bounds, then LM if `polish`.
    Aep {
        /// Population size.
        population: usize,
        /// Rule 2 constant for young individuals.
        beta1: f64,
        /// Rule 2 constant for aged individuals.
        beta2: f64,
        /// Random seed.
        seed: u64,
        /// Generations.
        generations: u64,
        /// Polish the best individual with LM.
        polish: bool,
    },
}

/// Settings of an output-error fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Model id.
    pub model: String,
    /// Fixed parameters and start values over the model's defaults (a JSON object).
    pub params: Value,
    /// The parameters to fit.
    pub free: Vec<FreeParam>,
    /// How the data drive the model.
    pub replay: Replay,
    /// Samples at the start of each segment left out of the cost (initial transient) \[s\].
    pub warmup_s: f64,
    /// Search method.
    pub method: Method,
    /// LM iteration cap.
    pub max_iters: u64,
    /// Wall-time budget of the whole fit.
    pub timeout: Option<Duration>,
    /// Threads for the Jacobian (0 = all cores).
    pub threads: usize,
    /// Forward-difference step of the Jacobian in scaled coordinates (decades for a log
    /// parameter, fractions of the start value for a linear one); default 1e-6. A larger step
    /// smooths a cost with kinks (stick/slip switching in a torque replay).
    pub diff_step: f64,
}

impl Options {
    /// LM with velocity replay, no warm-up, 200 iterations, all cores.
    pub fn new(model: &str, free: &[&str]) -> Options {
        Options {
            model: model.into(),
            params: Value::Object(Map::new()),
            free: free.iter().map(|n| FreeParam::named(n)).collect(),
            replay: Replay::Velocity,
            warmup_s: 0.0,
            method: Method::Lm,
            max_iters: 200,
            timeout: None,
            threads: 0,
            diff_step: 1e-6,
        }
    }
}

/// One resolved free parameter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Resolved {
    /// Name.
    pub name: String,
    /// Lower bound (parameter units).
    pub lower: f64,
    /// Upper bound (parameter units).
    pub upper: f64,
    /// Scale.
    pub scale: Scale,
    /// Divisor of a linear parameter.
    pub unit: f64,
    /// Start value.
    pub start: f64,
}

impl Resolved {
    fn to_internal(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Log => v.log10(),
            Scale::Linear => v / self.unit,
        }
    }
    fn to_value(&self, q: f64) -> f64 {
        match self.scale {
            Scale::Log => 10f64.powf(q),
            Scale::Linear => q * self.unit,
        }
    }
    /// `d value / d q` at `q`.
    fn slope(&self, q: f64) -> f64 {
        match self.scale {
            Scale::Log => 10f64.powf(q) * std::f64::consts::LN_10,
            Scale::Linear => self.unit,
        }
    }
}

/// The output-error problem over one or more segments ([`Residuals`] in scaled coordinates).
#[derive(Debug)]
pub struct OutputError<'a> {
    entry: &'static ModelEntry,
    base: Map<String, Value>,
    free: Vec<Resolved>,
    segs: &'a [Segment],
    dts: Vec<Vec<f64>>,
    dus: Vec<Vec<f64>>,
    skip: Vec<usize>,
    replay: Replay,
    len: usize,
    threads: usize,
    diff_step: f64,
    evals: AtomicU64,
}

fn model_err(e: BuildError) -> FitError {
    FitError::Config {
        field: "params".into(),
        value: f64::NAN,
        rule: e.to_string(),
    }
}

impl<'a> OutputError<'a> {
    /// Resolves names, bounds and scales against the model and checks the data.
    pub fn new(segs: &'a [Segment], opts: &Options) -> Result<OutputError<'a>, FitError> {
        let entry = registry::entry(&opts.model).map_err(model_err)?;
        let Value::Object(base) = opts.params.clone() else {
            return Err(FitError::Config {
                field: "params".into(),
                value: f64::NAN,
                rule: "must be a JSON object".into(),
            });
        };
        if segs.is_empty() {
            return Err(FitError::Data("no segment to fit".into()));
        }
        for s in segs {
            s.check(Some(&opts.replay))?;
        }
        if opts.free.is_empty() {
            return Err(FitError::Config {
                field: "free".into(),
                value: 0.0,
                rule: "must name at least one parameter".into(),
            });
        }
        // The full start set (validated): the user's values over the defaults.
        let start_model = entry
            .build(Value::Object(base.clone()))
            .map_err(model_err)?;
        let start = start_model.params_json();
        let mut free = Vec::new();
        for f in &opts.free {
            if free.iter().any(|r: &Resolved| r.name == f.name) {
                return Err(FitError::Config {
                    field: f.name.clone(),
                    value: f64::NAN,
                    rule: "is named twice".into(),
                });
            }
            let (d, positive) = if f.name == "mass" && matches!(opts.replay, Replay::Torque { .. })
            {
                let Replay::Torque { mass } = opts.replay else {
                    unreachable!()
                };
                (mass, true)
            } else {
                let Some(d) = start.get(&f.name).and_then(Value::as_f64) else {
                    let known: Vec<&str> = entry.params.iter().map(|p| p.name).collect();
                    return Err(FitError::Config {
                        field: f.name.clone(),
                        value: f64::NAN,
                        rule: format!(
                            "is not a numeric parameter of '{}' (known: {})",
                            entry.id,
                            known.join(", ")
                        ),
                    });
                };
                (d, probe_positive(entry, &base, &f.name, d))
            };
            let scale = f.scale.unwrap_or(if positive && d > 0.0 {
                Scale::Log
            } else {
                Scale::Linear
            });
            let (dl, du) = match scale {
                Scale::Log => (d / 1e3, d * 1e3),
                Scale::Linear if positive => (0.0, f64::INFINITY),
                Scale::Linear => (f64::NEG_INFINITY, f64::INFINITY),
            };
            let (lower, upper) = (f.lower.unwrap_or(dl), f.upper.unwrap_or(du));
            let ordered = matches!(lower.partial_cmp(&upper), Some(o) if o.is_le());
            if !ordered
                || (scale == Scale::Log
                    && lower.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater))
            {
                return Err(FitError::Config {
                    field: format!("{}.lower", f.name),
                    value: lower,
                    rule: format!(
                        "must be <= upper ({upper}){}",
                        if scale == Scale::Log {
                            " and > 0 on a log scale"
                        } else {
                            ""
                        }
                    ),
                });
            }
            let unit = if d != 0.0 { d.abs() } else { 1.0 };
            free.push(Resolved {
                name: f.name.clone(),
                lower,
                upper,
                scale,
                unit,
                start: d.clamp(lower, upper),
            });
        }
        let mut len = 0;
        let mut skip = Vec::new();
        for s in segs {
            let k =
                s.t.partition_point(|&t| t < s.t[0] + opts.warmup_s)
                    .min(s.len() - 1);
            skip.push(k);
            len += s.len() - k;
        }
        let threads = if opts.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            opts.threads
        };
        let threads =
            crate::identify::control::max_threads().map_or(threads, |cap| threads.min(cap.max(1)));
        Ok(OutputError {
            entry,
            base,
            free,
            dts: segs.iter().map(Segment::dts).collect(),
            dus: segs.iter().map(Segment::du_dt).collect(),
            segs,
            skip,
            replay: opts.replay,
            len,
            threads,
            diff_step: if opts.diff_step > 0.0 {
                opts.diff_step
            } else {
                1e-6
            },
            evals: AtomicU64::new(0),
        })
    }

    /// Residual evaluations so far (each one replays every segment), Jacobian columns included.
    pub fn evaluations(&self) -> u64 {
        self.evals.load(Ordering::Relaxed)
    }

    /// The resolved free parameters.
    pub fn free(&self) -> &[Resolved] {
        &self.free
    }

    /// Start point in scaled coordinates.
    pub fn start(&self) -> Vec<f64> {
        self.free.iter().map(|r| r.to_internal(r.start)).collect()
    }

    /// Bounds in scaled coordinates.
    pub fn bounds(&self) -> Bounds {
        Bounds {
            lower: self.free.iter().map(|r| r.to_internal(r.lower)).collect(),
            upper: self.free.iter().map(|r| r.to_internal(r.upper)).collect(),
        }
    }

    /// Parameter values from scaled coordinates.
    pub fn values(&self, q: &[f64]) -> Vec<f64> {
        self.free
            .iter()
            .zip(q)
            .map(|(r, q)| r.to_value(*q))
            .collect()
    }

    /// The parameter object (over the defaults) and the plant mass at scaled point `q`.
    fn params_at(&self, q: &[f64]) -> (Value, f64) {
        let mut m = self.base.clone();
        let mut mass = match self.replay {
            Replay::Torque { mass } => mass,
            Replay::Velocity => 0.0,
        };
        for (r, q) in self.free.iter().zip(q) {
            let v = r.to_value(*q);
            if r.name == "mass" && matches!(self.replay, Replay::Torque { .. }) {
                mass = v;
            } else {
                m.insert(r.name.clone(), Value::from(v));
            }
        }
        (Value::Object(m), mass)
    }

    /// The model at scaled point `q` (`None` when its validation refuses the set).
    pub fn model_at(&self, q: &[f64]) -> Option<(Box<dyn FrictionModel>, f64)> {
        let (p, mass) = self.params_at(q);
        if matches!(self.replay, Replay::Torque { .. }) && !(mass.is_finite() && mass > 0.0) {
            return None;
        }
        self.entry.build(p).ok().map(|m| (m, mass))
    }

    /// Replays every segment with `model` and writes the residuals (all samples, warm-up
    /// included) per segment into `out`.
    pub fn replay_all(&self, model: &mut dyn FrictionModel, mass: f64, out: &mut [Vec<f64>]) {
        for (i, s) in self.segs.iter().enumerate() {
            out[i].resize(s.len(), 0.0);
            replay_segment(
                model,
                s,
                &self.dts[i],
                &self.dus[i],
                self.replay,
                mass,
                0,
                &mut out[i],
            );
        }
    }
}

/// Replays one segment; `out[k - skip]` is the residual at sample `k >= skip`.
#[allow(clippy::too_many_arguments)]
fn replay_segment(
    model: &mut dyn FrictionModel,
    s: &Segment,
    dts: &[f64],
    dus: &[f64],
    replay: Replay,
    mass: f64,
    skip: usize,
    out: &mut [f64],
) {
    model.reset();
    match replay {
        Replay::Velocity => {
            for k in 0..s.len() {
                let input = Input {
                    t: s.t[k],
                    x: s.x[k],
                    v: s.v[k],
                    u: s.u[k],
                    du_dt: dus[k],
                };
                let f = model.step(&input, dts[k]);
                if k >= skip {
                    out[k - skip] = f - s.friction[k];
                }
            }
        }
        Replay::Torque { .. } => {
            let pp = PlantParams { mass };
            let mut st = PlantState {
                t: s.t[0],
                x: s.x[0],
                v: s.v[0],
            };
            for k in 0..s.len() {
                if k >= skip {
                    out[k - skip] = st.x - s.x[k];
                }
                plant::step(model, &pp, &mut st, &Applied::force(s.u[k], dus[k]), dts[k]);
            }
        }
    }
}

/// True when the model's rules refuse `name = 0` or `name < 0` (a positive or non-negative
/// parameter), probed through its own validation.
fn probe_positive(entry: &ModelEntry, base: &Map<String, Value>, name: &str, d: f64) -> bool {
    let refuses = |v: f64| {
        let mut m = base.clone();
        m.insert(name.into(), Value::from(v));
        matches!(entry.build(Value::Object(m)), Err(BuildError::Invalid { source, .. }) if source.field == name)
    };
    refuses(0.0) || refuses(-d.abs().max(1.0))
}

impl Residuals for OutputError<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn residuals(&self, q: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        self.evals.fetch_add(1, Ordering::Relaxed);
        let Some((mut model, mass)) = self.model_at(q) else {
            out.fill(f64::INFINITY);
            return Ok(());
        };
        let mut o = 0;
        for (i, s) in self.segs.iter().enumerate() {
            let n = s.len() - self.skip[i];
            replay_segment(
                model.as_mut(),
                s,
                &self.dts[i],
                &self.dus[i],
                self.replay,
                mass,
                self.skip[i],
                &mut out[o..o + n],
            );
            o += n;
        }
        Ok(())
    }

    /// Forward differences (one replay per parameter, on all cores), in scaled coordinates with
    /// step `diff_step` (backward at an upper bound or where the forward point is refused).
    fn jacobian(&self, q: &[f64], jac: &mut DMatrix<f64>) -> Option<Result<(), FitError>> {
        let (m, n) = (self.len, q.len());
        let mut r0 = vec![0.0; m];
        if let Err(e) = self.residuals(q, &mut r0) {
            return Some(Err(e));
        }
        if r0.iter().any(|x| !x.is_finite()) {
            return Some(Err(FitError::Eval(
                "the Jacobian was asked at a point the model refuses".into(),
            )));
        }
        jac.resize_mut(m, n, 0.0);
        let b = self.bounds();
        let column = |j: usize, col: &mut [f64]| -> Result<(), FitError> {
            let h = self.diff_step;
            let mut x = q.to_vec();
            let mut r = vec![0.0; m];
            for step in [h, -h] {
                x[j] = q[j] + step;
                if x[j] > b.upper[j] || x[j] < b.lower[j] {
                    continue;
                }
                self.residuals(&x, &mut r)?;
                if r.iter().all(|v| v.is_finite()) {
                    for i in 0..m {
                        col[i] = (r[i] - r0[i]) / step;
                    }
                    return Ok(());
                }
            }
            col.fill(0.0);
            Ok(())
        };
        let threads = self.threads.clamp(1, n.max(1));
        let data = jac.as_mut_slice();
        let result = std::thread::scope(|sc| {
            let mut cols: Vec<(usize, &mut [f64])> = data.chunks_mut(m).enumerate().collect();
            let per = n.div_ceil(threads);
            let mut handles = Vec::new();
            while !cols.is_empty() {
                let rest = cols.split_off(per.min(cols.len()));
                let mine = std::mem::replace(&mut cols, rest);
                let column = &column;
                handles.push(sc.spawn(move || {
                    for (j, col) in mine {
                        column(j, col)?;
                    }
                    Ok::<(), FitError>(())
                }));
            }
            handles.into_iter().try_for_each(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(FitError::Bug("a Jacobian thread panicked".into())))
            })
        });
        Some(result)
    }
}

/// Fits `opts.free` of `opts.model` to `segs`; the result carries provenance and standard errors.
pub fn fit(segs: &[Segment], opts: &Options) -> Result<FitReport, FitError> {
    let problem = OutputError::new(segs, opts)?;
    let q0 = problem.start();
    if problem.model_at(&q0).is_none() {
        return Err(FitError::Config {
            field: "params".into(),
            value: f64::NAN,
            rule: "the start values break the model's rules".into(),
        });
    }
    let bounds = problem.bounds();
    let lm = |q0: Vec<f64>, timeout: Option<Duration>| -> Result<FitResult, FitError> {
        let mut r = Runner::new(
            &problem,
            LevenbergMarquardt::new().with_bounds(bounds.clone()),
        )
        .max_iters(opts.max_iters);
        if let Some(t) = timeout {
            r = r.timeout(t);
        }
        r.run(q0)
    };
    let (result, settings_method) = match &opts.method {
        Method::Lm => (lm(q0, opts.timeout)?, serde_json::json!({"kind": "lm"})),
        Method::Aep {
            population,
            beta1,
            beta2,
            seed,
            generations,
            polish,
        } => {
            let aep = Aep::new(bounds.clone())?
                .with_population(*population)?
                .with_betas(*beta1, *beta2)?
                .with_seed(*seed);
            let mut r = Runner::new(&problem, aep).max_iters(*generations);
            if let Some(t) = opts.timeout {
                r = r.timeout(t);
            }
            let global = r.run(q0)?;
            let settings = serde_json::json!({
                "kind": "aep", "population": population, "beta1": beta1, "beta2": beta2, "seed": seed,
                "generations": generations, "polish": polish, "aep_iterations": global.iters,
                "aep_evaluations": global.evals, "aep_mse": global.mse, "aep_termination": global.termination,
            });
            if *polish {
                let mut p = lm(global.params.clone(), opts.timeout)?;
                p.evals += global.evals;
                p.iters += global.iters;
                p.elapsed_s += global.elapsed_s;
                (p, settings)
            } else {
                (global, settings)
            }
        }
    };
    report(&problem, opts, &result, "output_error", settings_method)
}

/// Builds the report of a finished fit of `problem`: the full parameter set under `params`,
/// standard errors, MSE, provenance (procedure, model, method, termination, samples, columns,
/// time range, sources in `notes`) and, under `details`, the fitted names, iterations,
/// evaluations, wall time, data used per segment and the settings.
pub(crate) fn report(
    problem: &OutputError<'_>,
    opts: &Options,
    r: &FitResult,
    procedure: &str,
    method: Value,
) -> Result<FitReport, FitError> {
    let Some((model, _)) = problem.model_at(&r.params) else {
        return Err(FitError::Bug(
            "the best parameters break the model's rules".into(),
        ));
    };
    let Value::Object(mut params) = model.params_json() else {
        return Err(FitError::Bug("parameters are not a JSON object".into()));
    };
    let values = problem.values(&r.params);
    let se = standard_errors(problem, &r.params, r.cost);
    let mut std_errors = Map::new();
    for (i, f) in problem.free.iter().enumerate() {
        if let Some(se) = se.as_ref().map(|s| s[i]).filter(|s| s.is_finite()) {
            std_errors.insert(f.name.clone(), num(se * f.slope(r.params[i])));
        }
        if f.name == "mass" && matches!(opts.replay, Replay::Torque { .. }) {
            params.insert("mass".into(), num(values[i]));
        }
    }
    let columns: &[&str] = match opts.replay {
        Replay::Velocity => &["t", "x", "v", "u", "friction"],
        Replay::Torque { .. } => &["t", "x", "v", "u"],
    };
    let method_name = match &opts.method {
        Method::Lm => "levenberg_marquardt".to_string(),
        Method::Aep { polish: true, .. } => "aep+levenberg_marquardt".to_string(),
        Method::Aep { .. } => "aep".to_string(),
    };
    let mut rep = FitReport::new(
        procedure,
        &opts.model,
        &method_name,
        columns,
        problem.len,
        &Given::new(),
    );
    rep.params = params;
    rep.std_errors = std_errors;
    rep.mse = Some(r.mse);
    rep.provenance.termination = Some(r.termination);
    let b = problem.bounds();
    rep.at_bound = problem
        .free
        .iter()
        .enumerate()
        .filter(|(i, _)| on_bound(r.params[*i], b.lower[*i]) || on_bound(r.params[*i], b.upper[*i]))
        .map(|(_, f)| f.name.clone())
        .collect();
    let mut jac = DMatrix::zeros(0, 0);
    rep.condition = match problem.jacobian(&r.params, &mut jac) {
        Some(Ok(())) => scaled_condition(&jac),
        _ => None,
    };
    let t0 = problem
        .segs
        .iter()
        .map(|s| s.t[0])
        .fold(f64::INFINITY, f64::min);
    let t1 = problem
        .segs
        .iter()
        .map(|s| s.t[s.len() - 1])
        .fold(f64::NEG_INFINITY, f64::max);
    rep.provenance.time_range_s = Some([t0, t1]);
    rep.provenance.notes.push(format!(
        "residual: {} (model replayed from rest on each segment)",
        opts.replay.residual_name()
    ));
    for s in problem.segs {
        let u = s.used();
        rep.provenance.notes.push(format!(
            "data: {} ({} samples, t {}..{} s)",
            u.source, u.samples, u.t_start, u.t_end
        ));
    }
    if let Value::Object(given) = &opts.params {
        rep.provenance.given = given.clone();
    }
    rep.details = serde_json::json!({
        "fitted": problem.free.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        "iterations": r.iters,
        "evaluations": problem.evaluations(),
        "elapsed_s": r.elapsed_s,
        "residual": opts.replay.residual_name(),
        "data": problem.segs.iter().map(Segment::used).collect::<Vec<_>>(),
        "settings": {
            "replay": opts.replay, "warmup_s": opts.warmup_s, "free": problem.free, "method": method,
            "max_iters": opts.max_iters,
            "jacobian": format!("forward differences, step {} in scaled coordinates", problem.diff_step),
        },
    });
    rep.assess();
    Ok(rep)
}

/// Replays `segs` through `model` with `params` (over its defaults) and returns the residuals
/// per segment and sample (no fit): what the comparison table scores.
pub fn residuals_of(
    model: &str,
    params: &Value,
    segs: &[Segment],
    replay: Replay,
) -> Result<Vec<Vec<f64>>, FitError> {
    let mass = match replay {
        Replay::Torque { mass } => params.get("mass").and_then(Value::as_f64).unwrap_or(mass),
        Replay::Velocity => 0.0,
    };
    let mut params = params.clone();
    if let Value::Object(o) = &mut params {
        o.remove("mass");
    }
    let mut m = registry::entry(model)
        .map_err(model_err)?
        .build(params)
        .map_err(model_err)?;
    let mut out = Vec::new();
    for s in segs {
        s.check(Some(&replay))?;
        let mut r = vec![0.0; s.len()];
        replay_segment(m.as_mut(), s, &s.dts(), &s.du_dt(), replay, mass, 0, &mut r);
        out.push(r);
    }
    Ok(out)
}

/// `bench fit --procedure output_error`: applies to every registry model; reads the columns
/// `bench simulate` writes (`t, v` and, per replay, `friction` or `x, u`).
pub const PROCEDURE: Procedure = Procedure {
    name: "output_error",
    models: &["*"],
    columns: &["t", "v"],
};

fn given_err(field: &str, rule: &str) -> FitError {
    FitError::Config {
        field: format!("given.{field}"),
        value: f64::NAN,
        rule: rule.into(),
    }
}

fn given_num(given: &Given, name: &str) -> Result<Option<f64>, FitError> {
    super::given_f64(given, name)
}

/// Options from `bench fit --given`: `fit` (names, array or comma-separated; `default_free` if
/// absent), `params` (fixed values and start values, an object), `bounds` (`{"name": [lo,
/// hi]}`), `scale` (`{"name": "log"|"linear"}`), `replay` (`velocity` or `torque`), `mass`,
/// `warmup_s`, `max_iters`, `diff_step`, `timeout_s`; for AEP (`method: "aep"` or the `aep`
/// procedure): `population`, `beta1`, `beta2`, `seed`, `generations`, `polish`.
pub fn options_from_given(
    model: &str,
    given: &Given,
    default_free: &[&str],
    aep: bool,
) -> Result<Options, FitError> {
    let names: Vec<String> = match given.get("fit") {
        None | Some(Value::Null) => default_free.iter().map(|s| s.to_string()).collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| given_err("fit", "must list parameter names"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(given_err("fit", "must be a list of parameter names")),
    };
    if names.is_empty() {
        return Err(given_err(
            "fit",
            "must name the parameters to fit, e.g. {\"fit\": [\"fc\", \"fs\"]}",
        ));
    }
    let mut o = Options::new(model, &[]);
    match given.get("params") {
        None | Some(Value::Null) => {}
        Some(p @ Value::Object(_)) => o.params = p.clone(),
        Some(_) => {
            return Err(given_err(
                "params",
                "must be a JSON object of parameter values",
            ));
        }
    }
    let bounds = given.get("bounds").and_then(Value::as_object);
    let scales = given.get("scale").and_then(Value::as_object);
    for n in &names {
        let mut f = FreeParam::named(n);
        if let Some(b) = bounds.and_then(|b| b.get(n)) {
            let pair = b
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| given_err(&format!("bounds.{n}"), "must be [lower, upper]"))?;
            f.lower = pair[0].as_f64();
            f.upper = pair[1].as_f64();
        }
        if let Some(s) = scales.and_then(|s| s.get(n)) {
            f.scale = Some(match s.as_str() {
                Some("log") => Scale::Log,
                Some("linear") => Scale::Linear,
                _ => {
                    return Err(given_err(
                        &format!("scale.{n}"),
                        "must be \"log\" or \"linear\"",
                    ));
                }
            });
        }
        o.free.push(f);
    }
    o.replay = match super::given_str(given, "replay") {
        None | Some("velocity") => Replay::Velocity,
        Some("torque") => Replay::Torque {
            mass: super::given_positive(given, "mass")?.unwrap_or(1.0),
        },
        Some(_) => return Err(given_err("replay", "must be \"velocity\" or \"torque\"")),
    };
    if let Some(w) = given_num(given, "warmup_s")? {
        o.warmup_s = w.max(0.0);
    }
    if let Some(m) = given_num(given, "max_iters")? {
        o.max_iters = m.max(1.0) as u64;
    }
    if let Some(h) = super::given_positive(given, "diff_step")? {
        o.diff_step = h;
    }
    if let Some(t) = super::given_positive(given, "timeout_s")? {
        o.timeout = Some(Duration::from_secs_f64(t));
    }
    if aep || super::given_str(given, "method") == Some("aep") {
        let int = |n: &str, d: u64| -> Result<u64, FitError> {
            Ok(given_num(given, n)?.map_or(d, |x| x.max(0.0) as u64))
        };
        o.method = Method::Aep {
            population: int("population", 20)? as usize,
            beta1: super::given_positive(given, "beta1")?.unwrap_or(0.2),
            beta2: super::given_positive(given, "beta2")?.unwrap_or(0.05),
            seed: int("seed", 1)?,
            generations: int("generations", 150)?,
            polish: given.get("polish").and_then(Value::as_bool).unwrap_or(true),
        };
    }
    Ok(o)
}

/// `bench fit --procedure output_error` on one table.
pub fn fit_table(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let seg = Segment::from_table("csv", table)?;
    let opts = options_from_given(model, given, &[], false)?;
    let mut r = fit(&[seg], &opts)?;
    r.provenance.given = given.clone();
    Ok(r)
}
