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
//! Between samples the model is integrated in sub-steps with the signals interpolated
//! (docs/src/identification.md#sub-steps); each interval at its own spacing, so non-uniform time stamps are
//! replayed as recorded. Unless `substeps` is given, the count is chosen from the data: after
//! a fit, the replay is redone with twice the sub-steps and the change it would make to the
//! optimum (one Gauss–Newton step on the difference) is compared with the standard errors;
//! while it exceeds a tenth of one, the sub-steps grow (the extrapolated replay converges in
//! the square of the sub-step) and the fit continues from its optimum.
//!
//! A force offset (`Offset::Fit`, the pseudo-parameter `offset`) is subtracted from the
//! measurement: from the friction in a velocity replay, from the applied force in a torque
//! replay. A model that contains a simpler one (docs/src/identification.md#nested-models) starts from the simpler
//! one's output-error optimum on the same data and a multi-start over the parameters it adds.
//!
//! Each segment starts from the model at rest. Parameters are chosen by name, each with bounds
//! and a scale: by default a parameter whose rule makes it positive (probed through the model's
//! own validation) is searched in `log10` within `default / 1e3 .. default * 1e3`, so that
//! `sigma0 ~ 1e5` and `vs ~ 1e-3` are equally well conditioned; any other parameter linearly,
//! unbounded, relative to its default. A parameter set the model's validation refuses (e.g.
//! `fs < fc`) has an infinite cost, which the fitter steps back from. The fit is the bounded
//! [`LevenbergMarquardt`] through the [`Runner`] with a forward-difference Jacobian computed on
//! all cores, or the global [`Aep`] search (optionally polished by LM); standard errors come
//! from the Jacobian at the optimum, corrected for serially correlated residuals
//! ([`stats::least_squares`]) and mapped back through the scaling; `bootstrap` replaces them by
//! a moving-block bootstrap.

use super::quality::{on_bound, scaled_condition};
use super::replay::{ReplaySetup, replay_segment};
pub use super::segment::{DataUsed, Segment, excitation_velocity};
use super::{FitReport, Given, Offset, Procedure, Table, num};
use crate::identify::aep::Aep;
use crate::identify::lm::LevenbergMarquardt;
use crate::identify::stats;
use crate::identify::{Bounds, FitError, FitResult, Residuals, Runner};
use crate::registry::{self, ModelEntry};
use crate::{BuildError, FrictionModel};
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
    /// A constant force offset in the measurement: fitted, known or none.
    pub offset: Offset,
    /// Integration sub-steps per sample interval; `None`: chosen from the data (module doc).
    pub substeps: Option<usize>,
    /// Start a model that contains a simpler one from the simpler one's optimum
    /// (docs/src/identification.md#nested-models).
    pub nested: bool,
    /// Moving-block bootstrap of the standard errors: replicates and seed.
    pub bootstrap: Option<(usize, u64)>,
    /// The applied force between samples: held (a drive's command) or interpolated (a
    /// measured force).
    pub hold: Hold,
}

/// How the applied force `u` runs between two samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// Linear between the samples (a measured, continuous force).
    #[default]
    Linear,
    /// Held at the sample's value until the next (zero-order hold: a drive's command).
    Zoh,
}

impl Options {
    /// LM with velocity replay, no warm-up, 200 iterations, all cores, no offset, sub-steps
    /// from the data, nested start, analytic standard errors.
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
            offset: Offset::None,
            substeps: None,
            nested: true,
            bootstrap: None,
            hold: Hold::Linear,
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
    /// The scaled coordinate of value `v`.
    pub(crate) fn internal(&self, v: f64) -> f64 {
        self.to_internal(v)
    }
    /// The value at scaled coordinate `q`.
    pub(crate) fn value_at(&self, q: f64) -> f64 {
        self.to_value(q)
    }
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
    skip: Vec<usize>,
    replay: Replay,
    offset: f64,
    substeps: usize,
    richardson: bool,
    torque: bool,
    hold: Hold,
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
        let Value::Object(mut base) = opts.params.clone() else {
            return Err(FitError::Config {
                field: "params".into(),
                value: f64::NAN,
                rule: "must be a JSON object".into(),
            });
        };
        if segs.is_empty() {
            return Err(FitError::Data("no segment to fit".into()));
        }
        // A stored set's offset (params.offset) or the option's known one; fitted when free.
        let set_offset = match base.remove("offset") {
            None | Some(Value::Null) => None,
            Some(v) => {
                Some(
                    v.as_f64()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| FitError::Config {
                            field: "params.offset".into(),
                            value: f64::NAN,
                            rule: format!("must be a number [N or N m] (got {v})"),
                        })?,
                )
            }
        };
        let offset = match opts.offset {
            Offset::Known(c) => c,
            _ => set_offset.unwrap_or(0.0),
        };
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
            let (d, positive) = if f.name == "offset" {
                (offset, false)
            } else if f.name == "mass" && matches!(opts.replay, Replay::Torque { .. }) {
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
            segs,
            skip,
            replay: opts.replay,
            offset,
            substeps: opts.substeps.unwrap_or(1).max(1),
            richardson: opts.replay == Replay::Velocity && !start_model.state_names().is_empty(),
            torque: matches!(opts.replay, Replay::Torque { .. }),
            hold: opts.hold,
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

    /// The parameter object (over the defaults), the plant mass and the offset at scaled
    /// point `q`.
    fn params_at(&self, q: &[f64]) -> (Value, f64, f64) {
        let mut m = self.base.clone();
        let mut mass = match self.replay {
            Replay::Torque { mass } => mass,
            Replay::Velocity => 0.0,
        };
        let mut offset = self.offset;
        for (r, q) in self.free.iter().zip(q) {
            let v = r.to_value(*q);
            if r.name == "offset" {
                offset = v;
            } else if r.name == "mass" && matches!(self.replay, Replay::Torque { .. }) {
                mass = v;
            } else {
                m.insert(r.name.clone(), Value::from(v));
            }
        }
        (Value::Object(m), mass, offset)
    }

    /// The model at scaled point `q` and how to replay it (`None` when its validation refuses
    /// the set).
    pub fn model_at(&self, q: &[f64]) -> Option<(Box<dyn FrictionModel>, ReplaySetup)> {
        let (p, mass, offset) = self.params_at(q);
        if matches!(self.replay, Replay::Torque { .. }) && !(mass.is_finite() && mass > 0.0) {
            return None;
        }
        let setup = ReplaySetup {
            replay: self.replay,
            mass,
            offset,
            substeps: self.substeps,
            richardson: self.richardson,
            hold: self.hold,
        };
        self.entry.build(p).ok().map(|m| (m, setup))
    }

    /// Quantiles `qs` (0..1) of the nonzero recorded speeds `|v|` (empty if it never moves).
    pub fn speed_quantiles(&self, qs: &[f64]) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .segs
            .iter()
            .flat_map(|s| s.v.iter().map(|v| v.abs()))
            .filter(|v| *v > 0.0 && v.is_finite())
            .collect();
        if v.is_empty() {
            return Vec::new();
        }
        v.sort_by(f64::total_cmp);
        qs.iter()
            .map(|q| v[((v.len() - 1) as f64 * q.clamp(0.0, 1.0)) as usize])
            .collect()
    }

    /// Integration sub-steps per sample interval.
    pub fn substeps(&self) -> usize {
        self.substeps
    }

    /// True when the model's output depends on the signals between samples (it has a state,
    /// or the plant integrates it): sub-steps matter.
    pub fn between_samples(&self) -> bool {
        self.richardson || self.torque
    }

    /// The measured target of each residual (friction, or position in a torque replay), in the
    /// order of the residuals.
    pub fn target(&self) -> Vec<f64> {
        self.segs
            .iter()
            .zip(&self.skip)
            .flat_map(|(s, k)| match self.replay {
                Replay::Velocity => s.friction[*k..].to_vec(),
                Replay::Torque { .. } => s.x[*k..].to_vec(),
            })
            .collect()
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
        let Some((mut model, setup)) = self.model_at(q) else {
            out.fill(f64::INFINITY);
            return Ok(());
        };
        let mut o = 0;
        for (i, s) in self.segs.iter().enumerate() {
            let n = s.len() - self.skip[i];
            replay_segment(model.as_mut(), s, &setup, self.skip[i], &mut out[o..o + n]);
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

/// A sub-step count is enough when doubling it moves the optimum by at most this many standard
/// errors ...
pub const SUBSTEP_TOLERANCE: f64 = 0.1;
/// ... or by at most this fraction of each value.
pub const SUBSTEP_RELATIVE: f64 = 1e-4;
/// Iteration cap of the refit after the sub-steps grew.
pub const REFINE_ITERS: u64 = 40;
/// The most sub-steps per sample interval chosen from the data.
pub const MAX_SUBSTEPS: usize = 256;

/// A finished fit and the work it took.
struct Run {
    result: FitResult,
    evaluations: u64,
    method: Value,
}

/// Runs `opts.method` on `problem` from `starts` (the best result is kept).
fn run_method(
    problem: &OutputError<'_>,
    opts: &Options,
    starts: Vec<Vec<f64>>,
) -> Result<Run, FitError> {
    let bounds = problem.bounds();
    let lm = |q0: Vec<f64>| -> Result<FitResult, FitError> {
        let mut r = Runner::new(
            problem,
            LevenbergMarquardt::new().with_bounds(bounds.clone()),
        )
        .max_iters(opts.max_iters);
        if let Some(t) = opts.timeout {
            r = r.timeout(t);
        }
        r.run(q0)
    };
    let before = problem.evaluations();
    let (result, method) = match &opts.method {
        Method::Lm => {
            let mut best: Option<FitResult> = None;
            let n_starts = starts.len();
            for q0 in starts {
                let r = lm(q0)?;
                best = Some(match best {
                    Some(b) if b.cost <= r.cost => FitResult {
                        iters: b.iters + r.iters,
                        evals: b.evals + r.evals,
                        elapsed_s: b.elapsed_s + r.elapsed_s,
                        ..b
                    },
                    Some(b) => FitResult {
                        iters: b.iters + r.iters,
                        evals: b.evals + r.evals,
                        elapsed_s: b.elapsed_s + r.elapsed_s,
                        ..r
                    },
                    None => r,
                });
            }
            let best = best.ok_or_else(|| FitError::Bug("no start to fit from".into()))?;
            (best, serde_json::json!({"kind": "lm", "starts": n_starts}))
        }
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
            let mut r = Runner::new(problem, aep).max_iters(*generations);
            if let Some(t) = opts.timeout {
                r = r.timeout(t);
            }
            let q0 = starts.into_iter().next().unwrap_or_else(|| problem.start());
            let global = r.run(q0)?;
            let settings = serde_json::json!({
                "kind": "aep", "population": population, "beta1": beta1, "beta2": beta2, "seed": seed,
                "generations": generations, "polish": polish, "aep_iterations": global.iters,
                "aep_evaluations": global.evals, "aep_mse": global.mse, "aep_termination": global.termination,
            });
            if *polish {
                let mut p = lm(global.params.clone())?;
                p.evals += global.evals;
                p.iters += global.iters;
                p.elapsed_s += global.elapsed_s;
                (p, settings)
            } else {
                (global, settings)
            }
        }
    };
    Ok(Run {
        result,
        evaluations: problem.evaluations() - before,
        method,
    })
}

/// `opts` with `n` sub-steps.
fn with_substeps(opts: &Options, n: usize) -> Options {
    Options {
        substeps: Some(n),
        ..opts.clone()
    }
}

/// How far doubling the sub-steps from `n` would move the optimum `q` (one Gauss–Newton step
/// `(JᵀJ)⁻¹ Jᵀ (r_2n - r_n)`): the largest shift over its allowance, the larger of
/// [`SUBSTEP_TOLERANCE`] standard errors and [`SUBSTEP_RELATIVE`] of the value (data so
/// precise that a tenth of a standard error is below any use need not be replayed finer); and
/// that shift in standard errors.
fn substep_change(
    segs: &[Segment],
    opts: &Options,
    n: usize,
    q: &[f64],
) -> Result<(f64, f64), FitError> {
    let coarse = OutputError::new(segs, &with_substeps(opts, n))?;
    let fine = OutputError::new(segs, &with_substeps(opts, 2 * n))?;
    let m = coarse.len();
    let (mut rc, mut rf) = (vec![0.0; m], vec![0.0; m]);
    coarse.residuals(q, &mut rc)?;
    fine.residuals(q, &mut rf)?;
    let mut jac = DMatrix::zeros(0, 0);
    match coarse.jacobian(q, &mut jac) {
        Some(r) => r?,
        None => return Err(FitError::Bug("the output-error Jacobian is missing".into())),
    }
    let Some(unc) = stats::least_squares(&jac, &rc, true) else {
        return Ok((0.0, 0.0));
    };
    let d = nalgebra::DVector::from_iterator(m, rc.iter().zip(&rf).map(|(c, f)| f - c));
    let Some(inv) = (jac.transpose() * &jac).try_inverse() else {
        return Ok((0.0, 0.0));
    };
    let step = inv * (jac.transpose() * d);
    let (mut worst, mut in_se) = (0.0f64, 0.0f64);
    for (j, (s, e)) in step.iter().zip(&unc.std_errors).enumerate() {
        let f = &coarse.free[j];
        let slope = f.slope(q[j]).abs();
        let value = f.to_value(q[j]).abs();
        let allowance = (SUBSTEP_TOLERANCE * e * slope).max(SUBSTEP_RELATIVE * value);
        worst = worst.max(s.abs() * slope / allowance.max(f64::MIN_POSITIVE));
        in_se = in_se.max(s.abs() / e.max(f64::MIN_POSITIVE));
    }
    Ok((worst, in_se))
}

/// Fits `opts.free` of `opts.model` to `segs`; the result carries provenance, standard errors
/// and intervals, the goodness of fit, the sub-steps used and, for a model that contains a
/// simpler one, the comparison with it.
pub fn fit(segs: &[Segment], opts: &Options) -> Result<FitReport, FitError> {
    if opts.free.is_empty() && !opts.offset.fitted() {
        return evaluate(segs, opts);
    }
    let mut opts = opts.clone();
    if opts.offset.fitted() && !opts.free.iter().any(|f| f.name == "offset") {
        opts.free.push(FreeParam {
            name: "offset".into(),
            scale: Some(Scale::Linear),
            ..FreeParam::default()
        });
    }
    let contained = if opts.nested && opts.method == Method::Lm {
        super::nested::contained_start(segs, &opts)?
    } else {
        None
    };
    let plain_opts = opts.clone();
    let mut contained = contained;
    if let Some(c) = &contained {
        let mut with = opts.clone();
        c.apply(&mut with);
        let ok = OutputError::new(segs, &with)
            .ok()
            .is_some_and(|p| p.model_at(&p.start()).is_some());
        if ok {
            opts = with;
        } else {
            // The simpler optimum breaks a rule of this model with its fixed values (fs below
            // the simpler fc): start from the given values instead.
            contained = None;
        }
    }
    let mut n_sub = opts.substeps.unwrap_or(1).max(1);
    let problem = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
    let q0 = problem.start();
    if problem.model_at(&q0).is_none() {
        return Err(FitError::Config {
            field: "params".into(),
            value: f64::NAN,
            rule: "the start values break the model's rules".into(),
        });
    }
    let starts = match &contained {
        Some(c) => {
            // The given (or default) start competes too: a degenerate simpler optimum (no
            // Stribeck effect in it) must not cost the richer model its own start.
            let plain = OutputError::new(segs, &with_substeps(&plain_opts, n_sub))?;
            let q_plain = plain.start();
            let extra = (plain.free().len() == problem.free().len()).then_some(q_plain);
            super::nested::screen(&problem, &q0, extra, &c.added, 1)?
        }
        None => vec![q0],
    };
    let mut run = run_method(&problem, &opts, starts)?;
    let mut checks = Vec::new();
    // A global search without a polish is not refitted; its check is reported.
    let refits = !matches!(opts.method, Method::Aep { polish: false, .. });
    if opts.substeps.is_none() && problem.between_samples() {
        for _ in 0..6 {
            let (ratio, in_se) = substep_change(segs, &opts, n_sub, &run.result.params)?;
            checks.push(serde_json::json!({
                "substeps": n_sub, "change_in_std_errors": num(in_se), "over_allowance": num(ratio),
            }));
            if ratio.is_nan() || ratio <= 1.0 || n_sub >= MAX_SUBSTEPS || !refits {
                break;
            }
            // The extrapolated replay converges in the square of the sub-step, the plain one
            // (torque replay: stick and slip make extrapolation unsafe) in proportion.
            let ratio = if problem.richardson {
                ratio.sqrt()
            } else {
                ratio
            };
            let want = (n_sub as f64 * ratio).ceil() as usize;
            n_sub = want.next_power_of_two().clamp(2 * n_sub, MAX_SUBSTEPS);
            let refined = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
            // From the coarser optimum: a refinement, not a new search.
            let lm_opts = Options {
                method: Method::Lm,
                max_iters: opts.max_iters.min(REFINE_ITERS),
                ..opts.clone()
            };
            let next = run_method(&refined, &lm_opts, vec![run.result.params.clone()])?;
            if let Some(c) = checks.last_mut() {
                c["then_iterations"] = serde_json::json!(next.result.iters);
            }
            run = Run {
                result: FitResult {
                    iters: run.result.iters + next.result.iters,
                    evals: run.result.evals + next.result.evals,
                    elapsed_s: run.result.elapsed_s + next.result.elapsed_s,
                    ..next.result
                },
                evaluations: run.evaluations + next.evaluations,
                method: run.method,
            };
        }
    }
    let problem = OutputError::new(segs, &with_substeps(&opts, n_sub))?;
    let mut rep = report(&problem, &opts, &run, "output_error")?;
    rep.provenance
        .settings
        .insert("substeps".into(), serde_json::json!(n_sub));
    if !checks.is_empty() {
        rep.provenance
            .settings
            .insert("substep_checks".into(), Value::Array(checks));
    }
    if let Some(c) = &contained {
        rep.details["nested"] = c.judge(&rep, run.result.cost, problem.free.len());
    }
    if let Some((replicates, seed)) = opts.bootstrap {
        bootstrap(&mut rep, &problem, &opts, &run.result, replicates, seed)?;
    }
    rep.assess();
    Ok(rep)
}

/// Replaces the standard errors by a moving-block bootstrap of the residuals: the target
/// (friction, or position in a torque replay) is rebuilt as fit plus resampled residual
/// blocks and refitted by LM from the optimum, at the same sub-steps.
fn bootstrap(
    rep: &mut FitReport,
    problem: &OutputError<'_>,
    opts: &Options,
    r: &FitResult,
    replicates: usize,
    seed: u64,
) -> Result<(), FitError> {
    if problem.skip.iter().any(|k| *k > 0) {
        return Err(FitError::Config {
            field: "given.bootstrap".into(),
            value: replicates as f64,
            rule: "cannot be combined with warmup_s (the warm-up samples have no residual)".into(),
        });
    }
    let m = problem.len();
    let mut resid = vec![0.0; m];
    problem.residuals(&r.params, &mut resid)?;
    let target = problem.target();
    let fitted: Vec<f64> = target.iter().zip(&resid).map(|(y, e)| y + e).collect();
    let resid: Vec<f64> = resid.iter().map(|e| -e).collect();
    let block = stats::andrews_lag(&resid);
    let lm_opts = Options {
        method: Method::Lm,
        nested: false,
        bootstrap: None,
        substeps: Some(problem.substeps),
        ..opts.clone()
    };
    let boot = stats::block_bootstrap(&fitted, &resid, block, replicates, seed, |y| {
        let mut segs = problem.segs.to_vec();
        let mut o = 0;
        for s in &mut segs {
            let n = s.len();
            match opts.replay {
                Replay::Velocity => s.friction.copy_from_slice(&y[o..o + n]),
                Replay::Torque { .. } => s.x.copy_from_slice(&y[o..o + n]),
            }
            o += n;
        }
        let p = OutputError::new(&segs, &lm_opts)?;
        let fit = run_method(&p, &lm_opts, vec![r.params.clone()])?;
        Ok(p.values(&fit.result.params))
    })?;
    let names: Vec<String> = problem.free.iter().map(|f| f.name.clone()).collect();
    rep.use_bootstrap(&names, &boot);
    Ok(())
}

/// Builds the report of a finished fit of `problem`: the full parameter set under `params`
/// (with `mass` and `offset` when fitted or known), standard errors, MSE, R², AIC, BIC,
/// provenance (procedure, model, method, termination, samples, columns, time range, sources in
/// `notes`) and, under `details`, the fitted names, iterations, evaluations, wall time, data
/// used per segment and the settings.
fn report(
    problem: &OutputError<'_>,
    opts: &Options,
    run: &Run,
    procedure: &str,
) -> Result<FitReport, FitError> {
    let r = &run.result;
    let Some((model, setup)) = problem.model_at(&r.params) else {
        return Err(FitError::Bug(
            "the best parameters break the model's rules".into(),
        ));
    };
    let Value::Object(mut params) = model.params_json() else {
        return Err(FitError::Bug("parameters are not a JSON object".into()));
    };
    let values = problem.values(&r.params);
    let m = problem.len();
    let mut resid = vec![0.0; m];
    problem.residuals(&r.params, &mut resid)?;
    let mut jac = DMatrix::zeros(0, 0);
    let jac_ok = matches!(problem.jacobian(&r.params, &mut jac), Some(Ok(())));
    let unc = if jac_ok {
        stats::least_squares(&jac, &resid, true)
    } else {
        None
    };
    let mut std_errors = Map::new();
    for (i, f) in problem.free.iter().enumerate() {
        if let Some(se) = unc
            .as_ref()
            .map(|u| u.std_errors[i])
            .filter(|s| s.is_finite())
        {
            std_errors.insert(f.name.clone(), num(se * f.slope(r.params[i])));
        }
        if f.name == "mass" && matches!(opts.replay, Replay::Torque { .. }) {
            params.insert("mass".into(), num(values[i]));
        }
    }
    if problem.free.iter().any(|f| f.name == "offset") || setup.offset != 0.0 {
        params.insert("offset".into(), num(setup.offset));
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
        m,
        &Given::new(),
    );
    rep.params = params;
    rep.std_errors = std_errors;
    rep.mse = Some(r.mse);
    rep.n_eff = unc.as_ref().map(|u| u.n_eff);
    rep.goodness(&problem.target(), &resid, problem.free.len());
    rep.provenance.termination = Some(r.termination);
    let b = problem.bounds();
    rep.at_bound = problem
        .free
        .iter()
        .enumerate()
        .filter(|(i, _)| on_bound(r.params[*i], b.lower[*i]) || on_bound(r.params[*i], b.upper[*i]))
        .map(|(_, f)| f.name.clone())
        .collect();
    rep.condition = if jac_ok { scaled_condition(&jac) } else { None };
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
        "residual: {} (model replayed from rest on each segment, {} sub-steps per sample interval)",
        opts.replay.residual_name(),
        problem.substeps
    ));
    if setup.offset != 0.0 && !problem.free.iter().any(|f| f.name == "offset") {
        rep.provenance.notes.push(format!(
            "known offset {} subtracted from the measured {}",
            setup.offset,
            match opts.replay {
                Replay::Velocity => "friction",
                Replay::Torque { .. } => "applied force",
            }
        ));
    }
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
    if let Some(u) = &unc {
        rep.provenance
            .settings
            .insert("serial_correlation_window".into(), serde_json::json!(u.lag));
    }
    rep.details = serde_json::json!({
        "fitted": problem.free.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        "iterations": r.iters,
        "evaluations": run.evaluations,
        "elapsed_s": r.elapsed_s,
        "residual": opts.replay.residual_name(),
        "data": problem.segs.iter().map(Segment::used).collect::<Vec<_>>(),
        "settings": {
            "replay": opts.replay, "warmup_s": opts.warmup_s, "free": problem.free, "method": run.method,
            "max_iters": opts.max_iters, "substeps": problem.substeps,
            "jacobian": format!("forward differences, step {} in scaled coordinates", problem.diff_step),
        },
    });
    rep.assess();
    Ok(rep)
}

/// Replays `segs` through `model` with `params` (over its defaults; `mass` and `offset`, when
/// present, set the plant mass and the force offset subtracted from the measurement) and
/// returns the residuals per segment and sample (no fit): what the comparison table scores.
/// The sub-steps double from 1 until the replay changes by less than 1 % of its RMS residual
/// (at most [`MAX_SUBSTEPS`]).
pub fn residuals_of(
    model: &str,
    params: &Value,
    segs: &[Segment],
    replay: Replay,
) -> Result<Vec<Vec<f64>>, FitError> {
    Ok(replay_of(model, params, segs, replay, Hold::Linear)?.0)
}

/// [`residuals_of`] with the applied force's `hold`; also returns the sub-steps used.
pub fn replay_of(
    model: &str,
    params: &Value,
    segs: &[Segment],
    replay: Replay,
    hold: Hold,
) -> Result<(Vec<Vec<f64>>, usize), FitError> {
    let mass = match replay {
        Replay::Torque { mass } => params.get("mass").and_then(Value::as_f64).unwrap_or(mass),
        Replay::Velocity => 0.0,
    };
    let offset = params.get("offset").and_then(Value::as_f64).unwrap_or(0.0);
    let mut params = params.clone();
    if let Value::Object(o) = &mut params {
        o.remove("mass");
        o.remove("offset");
    }
    let mut m = registry::entry(model)
        .map_err(model_err)?
        .build(params)
        .map_err(model_err)?;
    for s in segs {
        s.check(Some(&replay))?;
    }
    let stateful = !m.state_names().is_empty();
    let between = stateful || replay != Replay::Velocity;
    let run = |m: &mut dyn FrictionModel, substeps: usize| -> Vec<Vec<f64>> {
        let setup = ReplaySetup {
            replay,
            mass,
            offset,
            substeps,
            richardson: stateful && replay == Replay::Velocity,
            hold,
        };
        segs.iter()
            .map(|s| {
                let mut r = vec![0.0; s.len()];
                replay_segment(m, s, &setup, 0, &mut r);
                r
            })
            .collect()
    };
    let rms = |r: &[Vec<f64>]| {
        let (s, n) = r
            .iter()
            .flatten()
            .fold((0.0, 0usize), |(s, n), x| (s + x * x, n + 1));
        (s / n.max(1) as f64).sqrt()
    };
    let mut n = 1;
    let mut out = run(m.as_mut(), n);
    while between && n < MAX_SUBSTEPS {
        let finer = run(m.as_mut(), 2 * n);
        let diff: Vec<Vec<f64>> = out
            .iter()
            .zip(&finer)
            .map(|(a, b)| a.iter().zip(b).map(|(a, b)| a - b).collect())
            .collect();
        let (d, f) = (rms(&diff), rms(&finer));
        let done = d.is_nan() || d <= 0.01 * f;
        out = finer;
        n *= 2;
        if done {
            break;
        }
    }
    Ok((out, n))
}

/// The report of a replay without a fit (`fit: []`): the residual of the given values, with
/// its MSE and R², the sub-steps chosen as in [`residuals_of`].
fn evaluate(segs: &[Segment], opts: &Options) -> Result<FitReport, FitError> {
    let mut params = opts.params.clone();
    if let (Value::Object(p), Offset::Known(c)) = (&mut params, opts.offset) {
        p.insert("offset".into(), Value::from(c));
    }
    let (res, n_sub) = replay_of(&opts.model, &params, segs, opts.replay, opts.hold)?;
    let resid: Vec<f64> = res.iter().flatten().copied().collect();
    let target: Vec<f64> = segs
        .iter()
        .flat_map(|s| match opts.replay {
            Replay::Velocity => s.friction.clone(),
            Replay::Torque { .. } => s.x.clone(),
        })
        .collect();
    let model = registry::entry(&opts.model)
        .map_err(model_err)?
        .build(strip(&params))
        .map_err(model_err)?;
    let Value::Object(mut all) = model.params_json() else {
        return Err(FitError::Bug("parameters are not a JSON object".into()));
    };
    for k in ["mass", "offset"] {
        if let Some(v) = params.get(k) {
            all.insert(k.into(), v.clone());
        }
    }
    if let Replay::Torque { mass } = opts.replay {
        all.entry("mass").or_insert(num(mass));
    }
    let columns: &[&str] = match opts.replay {
        Replay::Velocity => &["t", "v", "friction"],
        Replay::Torque { .. } => &["t", "x", "v", "u"],
    };
    let mut rep = FitReport::new(
        "output_error",
        &opts.model,
        "replay",
        columns,
        resid.len(),
        &Given::new(),
    );
    rep.params = all;
    rep.mse = Some(resid.iter().map(|r| r * r).sum::<f64>() / resid.len().max(1) as f64);
    rep.goodness(&target, &resid, 0);
    rep.provenance
        .settings
        .insert("substeps".into(), serde_json::json!(n_sub));
    rep.provenance.notes.push(format!(
        "no parameter fitted (fit: []): the given values replayed, residual {} ({} sub-steps per sample interval)",
        opts.replay.residual_name(),
        n_sub
    ));
    rep.details = serde_json::json!({
        "fitted": [], "residual": opts.replay.residual_name(),
        "rms": num(rep.mse.unwrap_or(f64::NAN).sqrt()),
        "data": segs.iter().map(Segment::used).collect::<Vec<_>>(),
        "settings": {"replay": opts.replay, "hold": opts.hold, "substeps": n_sub},
    });
    rep.assess();
    Ok(rep)
}

/// `params` without the pseudo-parameters `mass` and `offset`.
fn strip(params: &Value) -> Value {
    let mut p = params.clone();
    if let Value::Object(o) = &mut p {
        o.remove("mass");
        o.remove("offset");
    }
    p
}

/// `bench fit --procedure output_error`: applies to every registry model; reads the columns
/// `bench simulate` writes (`t, v` and, per replay, `friction` or `x, u`).
pub const PROCEDURE: Procedure = Procedure {
    name: "output_error",
    models: &["*"],
    columns: &["t"],
    options: OPTIONS,
    known_params: false,
};

/// The `given` keys of output error (and of `aep`).
pub const OPTIONS: &[&str] = &[
    "fit",
    "params",
    "bounds",
    "scale",
    "replay",
    "mass",
    "warmup_s",
    "max_iters",
    "diff_step",
    "timeout_s",
    "method",
    "population",
    "beta1",
    "beta2",
    "seed",
    "generations",
    "polish",
    "offset",
    "substeps",
    "nested",
    "bootstrap",
    "hold",
];

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
/// `warmup_s`, `max_iters`, `diff_step`, `timeout_s`, `offset` (`true` or a known value),
/// `substeps` (a count; default: from the data), `nested` (default true), `bootstrap`
/// (replicates) with `seed`; for AEP (`method: "aep"` or the `aep` procedure): `population`,
/// `beta1`, `beta2`, `seed`, `generations`, `polish`.
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
    if names.is_empty() && !matches!(given.get("fit"), Some(Value::Array(a)) if a.is_empty()) {
        return Err(given_err(
            "fit",
            "must name the parameters to fit, e.g. {\"fit\": [\"fc\", \"fs\"]} ([] replays the given values without a fit)",
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
    o.offset = super::given_offset(given)?;
    if let Some(n) = given_num(given, "substeps")? {
        if n.fract() != 0.0 || !(1.0..=MAX_SUBSTEPS as f64).contains(&n) {
            return Err(given_err(
                "substeps",
                &format!(
                    "must be a whole number in 1..={MAX_SUBSTEPS} (omit it to choose from the data)"
                ),
            ));
        }
        o.substeps = Some(n as usize);
    }
    match given.get("nested") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => o.nested = *b,
        Some(_) => return Err(given_err("nested", "must be true or false")),
    }
    o.bootstrap = super::given_bootstrap(given)?;
    o.hold = match super::given_str(given, "hold") {
        None | Some("linear") => Hold::Linear,
        Some("zoh") => Hold::Zoh,
        Some(_) => {
            return Err(given_err(
                "hold",
                "must be \"linear\" (a measured force) or \"zoh\" (a drive's held command)",
            ));
        }
    };
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
