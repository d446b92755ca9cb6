//! The output-error problem: free parameters resolved against the model (bounds and scales),
//! the data checked, and the model built at a point of the search.

use super::super::replay::ReplaySetup;
use super::per_direction::{NEGATIVE, get, negative_taken, put};
use super::{Hold, Offset, Options, Replay, Scale, Segment, Speed};
use crate::identify::{Bounds, FitError};
use crate::registry::{self, ModelEntry};
use crate::{BuildError, FrictionModel};
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
    pub(super) fn to_internal(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Log => v.log10(),
            Scale::Linear => v / self.unit,
        }
    }
    pub(super) fn to_value(&self, q: f64) -> f64 {
        match self.scale {
            Scale::Log => 10f64.powf(q),
            Scale::Linear => q * self.unit,
        }
    }
    /// `d value / d q` at `q`.
    pub(super) fn slope(&self, q: f64) -> f64 {
        match self.scale {
            Scale::Log => 10f64.powf(q) * std::f64::consts::LN_10,
            Scale::Linear => self.unit,
        }
    }
}

/// The output-error problem over one or more segments
/// ([`Residuals`](crate::identify::Residuals) in scaled coordinates).
#[derive(Debug)]
pub struct OutputError<'a> {
    pub(super) entry: &'static ModelEntry,
    pub(super) base: Map<String, Value>,
    pub(super) free: Vec<Resolved>,
    pub(super) segs: &'a [Segment],
    pub(super) skip: Vec<usize>,
    pub(super) replay: Replay,
    pub(super) offset: f64,
    pub(super) substeps: usize,
    pub(super) richardson: bool,
    pub(super) torque: bool,
    pub(super) hold: Hold,
    pub(super) speed: Speed,
    pub(super) len: usize,
    pub(super) threads: usize,
    pub(super) diff_step: f64,
    pub(super) evals: AtomicU64,
    /// Evaluations after which `exhausted` is raised (a fit's budget; `u64::MAX`: none).
    pub(super) cap: u64,
    /// Raised when `evals` reaches `cap`: the fit stops at its next iteration.
    pub(super) exhausted: AtomicBool,
}

pub(crate) fn model_err(e: BuildError) -> FitError {
    FitError::Setting {
        field: "params".into(),
        rule: e.to_string(),
    }
}

impl<'a> OutputError<'a> {
    /// Resolves names, bounds and scales against the model and checks the data.
    pub fn new(segs: &'a [Segment], opts: &Options) -> Result<OutputError<'a>, FitError> {
        let entry = registry::entry(&opts.model).map_err(model_err)?;
        let Value::Object(mut base) = opts.params.clone() else {
            return Err(FitError::Setting {
                field: "params".into(),
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
                        .ok_or_else(|| FitError::Setting {
                            field: "params.offset".into(),
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
                return Err(FitError::Setting {
                    field: f.name.clone(),
                    rule: "is named twice".into(),
                });
            }
            let (d, positive) = if f.name == "offset" {
                (offset, false)
            } else if f.name == "mass" && matches!(opts.replay, Replay::Torque { .. }) {
                let Replay::Torque { mass, .. } = opts.replay else {
                    unreachable!()
                };
                (mass, true)
            } else {
                let start = start.as_object();
                let d = start
                    .and_then(|s| get(s, &f.name).or_else(|| negative_default(s, &f.name)))
                    .and_then(Value::as_f64);
                let Some(d) = d.filter(|_| negative_taken(entry, &f.name)) else {
                    let known: Vec<&str> = entry.params.iter().map(|p| p.name).collect();
                    return Err(FitError::Setting {
                        field: f.name.clone(),
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
            // A model without a state reads the speed at the sample only (as `replay_with`).
            speed: if start_model.state_names().is_empty() {
                Speed::Linear
            } else {
                opts.speed
            },
            len,
            threads,
            diff_step: if opts.diff_step > 0.0 {
                opts.diff_step
            } else {
                1e-6
            },
            evals: AtomicU64::new(0),
            cap: u64::MAX,
            exhausted: AtomicBool::new(false),
        })
    }

    /// The problem whose fits stop at the first iteration after `evaluations` residual
    /// evaluations (a work budget; an iteration under way finishes).
    pub(super) fn stop_after(mut self, evaluations: u64) -> OutputError<'a> {
        self.cap = evaluations;
        self
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
            Replay::Torque { mass, .. } => mass,
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
                put(&mut m, &r.name, Value::from(v));
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
            speed: self.speed,
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
            speed: self.speed,
            len: self.len,
            threads: self.threads,
            diff_step: self.diff_step,
            evals: AtomicU64::new(0),
            cap: u64::MAX,
            exhausted: AtomicBool::new(false),
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
        put(&mut m, name, Value::from(v));
        matches!(entry.build(Value::Object(m)), Err(BuildError::Invalid { source, .. }) if source.field == name)
    };
    refuses(0.0) || refuses(-d.abs().max(1.0))
}

/// A negative-side parameter's start when the set has no negative side: the positive value
/// (the model's negative set overlays the positive one).
fn negative_default<'a>(start: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    start.get(name.strip_prefix(NEGATIVE)?)
}
