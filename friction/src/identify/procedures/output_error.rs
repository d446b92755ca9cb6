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
//! [`LevenbergMarquardt`](crate::identify::lm::LevenbergMarquardt) through the [`Runner`](crate::identify::Runner) with a forward-difference Jacobian computed on
//! all cores, or the global [`Aep`](crate::identify::aep::Aep) search (optionally polished by LM); standard errors come
//! from the Jacobian at the optimum, corrected for serially correlated residuals
//! ([`stats::least_squares`](crate::identify::stats::least_squares)) and mapped back through the scaling; `bootstrap` replaces them by
//! a moving-block bootstrap.

use super::Offset;
use super::replay::{ReplaySetup, replay_segment};
pub use super::segment::{DataUsed, Segment, excitation_velocity};
use crate::identify::{Bounds, FitError, Residuals};
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

pub(super) fn model_err(e: BuildError) -> FitError {
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

    /// The same problem replayed without the extrapolation (one run of `substeps` per
    /// interval): a cheaper ranking of candidates for a global search.
    pub(crate) fn without_extrapolation(&self) -> Result<OutputError<'a>, FitError> {
        Ok(OutputError {
            entry: self.entry,
            base: self.base.clone(),
            free: self.free.clone(),
            segs: self.segs,
            skip: self.skip.clone(),
            replay: self.replay,
            offset: self.offset,
            substeps: self.substeps,
            richardson: false,
            torque: self.torque,
            hold: self.hold,
            len: self.len,
            threads: self.threads,
            diff_step: self.diff_step,
            evals: AtomicU64::new(0),
        })
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

mod fitting;
mod given;
mod replaying;

pub use fitting::{MAX_SUBSTEPS, REFINE_ITERS, SUBSTEP_RELATIVE, SUBSTEP_TOLERANCE, fit};
pub use given::{OPTIONS, PROCEDURE, fit_table, options_from_given};
pub use replaying::{replay_of, residuals_of};
