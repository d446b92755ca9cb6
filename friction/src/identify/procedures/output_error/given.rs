//! `bench fit --procedure output_error`: the procedure, what it takes in `given` (also `aep`'s)
//! and the [`Options`] made of it.

use super::super::options::INERTIA;
use super::super::shared::{Bootstrap, ForceTerms};
use super::super::typed::{Positive, Whole, typed};
use super::super::{FitReport, Given, Procedure, Reads, Table};
use super::{FreeParam, Hold, MAX_SUBSTEPS, Method, Options, Replay, Scale, Segment, Speed, fit};
use crate::identify::FitError;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

/// `bench fit --procedure output_error`: applies to every registry model; reads the columns
/// `bench simulate` writes (`t, v` and, per replay, `friction` or `x, u`).
pub const PROCEDURE: Procedure = Procedure {
    name: "output_error",
    models: &["*"],
    columns: &["t"],
    options: typed::<OutputErrorGiven>(),
    known_params: false,
    reads: Reads::TimeSeries(None),
    part: None,
    iterates: true,
    offset_refused: None,
    fit: fit_table,
};

/// What `output_error` (and `aep`) take in `given`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct OutputErrorGiven {
    /// The parameters to fit (absent: the procedure's default free set; []: replay the given values)
    #[serde(default)]
    pub fit: FitNames,
    /// Values of the model's parameters: the fixed ones and the start values
    pub params: Option<Map<String, Value>>,
    /// Bounds per fitted parameter: {"name": [lower, upper]}
    pub bounds: Option<BTreeMap<String, Bound>>,
    /// Scale per fitted parameter: {"name": "log" | "linear"}
    pub scale: Option<BTreeMap<String, Scale>>,
    /// velocity: the model's friction on the measured speed; torque: the plant driven by the measured torque
    #[serde(default)]
    pub replay: ReplayKind,
    /// Inertia of the torque replay's plant
    #[serde(default = "one")]
    #[schemars(extend("x-unit" = INERTIA))]
    pub mass: Positive,
    /// Start of the record left out of the cost
    #[serde(default)]
    #[schemars(extend("x-unit" = "s"))]
    pub warmup_s: f64,
    /// Most iterations of the solver
    #[schemars(extend("default" = 200))]
    pub max_iters: Option<Whole<1, 1_000_000>>,
    /// Relative step of the finite-difference Jacobian
    #[schemars(extend("default" = 1e-6))]
    pub diff_step: Option<Positive>,
    /// Time limit of the fit
    #[schemars(extend("x-unit" = "s"))]
    pub timeout_s: Option<Positive>,
    /// lm: Levenberg-Marquardt; aep: adaptive evolutionary search, then lm
    #[serde(default)]
    pub method: MethodKind,
    /// AEP: the population
    #[serde(default = "population")]
    pub population: Whole<1, 100_000>,
    /// AEP: the first step factor
    #[serde(default = "beta1")]
    pub beta1: Positive,
    /// AEP: the second step factor
    #[serde(default = "beta2")]
    pub beta2: Positive,
    /// AEP: the generations
    #[serde(default = "generations")]
    pub generations: Whole<0, 10_000_000>,
    /// AEP: refine the best member with Levenberg-Marquardt
    #[serde(default = "yes")]
    pub polish: bool,
    /// Model steps per sample (absent: from the data)
    pub substeps: Option<Whole<1, { MAX_SUBSTEPS as u64 }>>,
    /// Report the nested-model tests of the parameters
    #[serde(default = "yes")]
    pub nested: bool,
    /// linear: a measured force; zoh: a drive's held command
    #[serde(default)]
    pub hold: Hold,
    /// Velocity replay, the speed between samples: linear (default); displacement: linear plus the bump that makes each interval's displacement the recorded one (as the comparison scores a model)
    #[serde(default)]
    pub speed: Speed,
    /// Offset, per direction, known load.
    #[serde(flatten)]
    pub terms: ForceTerms,
    /// Bootstrap intervals and the seed (of the AEP population too).
    #[serde(flatten)]
    pub bootstrap: Bootstrap,
}

/// `given.replay`: what drives the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplayKind {
    /// The measured speed; the residual is the friction error.
    #[default]
    Velocity,
    /// The measured force through the plant; the residual is the position error.
    Torque,
}

/// `given.method`: the search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    /// Levenberg–Marquardt from the start values.
    #[default]
    Lm,
    /// Adaptive evolutionary search in the bounds, then Levenberg–Marquardt.
    Aep,
}

/// `given.fit`: parameter names, a list or one comma-separated string; `None` when absent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FitNames(pub Option<Vec<String>>);

impl<'de> Deserialize<'de> for FitNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FitNames, D::Error> {
        let names: Vec<String> = match Value::deserialize(d)? {
            Value::String(s) => {
                let names: Vec<String> = s
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                if names.is_empty() {
                    return Err(D::Error::custom(
                        "must name the parameters to fit, e.g. {\"fit\": [\"fc\", \"fs\"]} ([] replays the given values without a fit)",
                    ));
                }
                names
            }
            Value::Array(a) if a.iter().all(Value::is_string) => a
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            v => {
                return Err(D::Error::custom(format!(
                    "must be a list of parameter names (got {v})"
                )));
            }
        };
        Ok(FitNames(Some(names)))
    }
}

impl JsonSchema for FitNames {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "FitNames".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"anyOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "string"}
        ]})
    }
}

/// A fitted parameter's bounds, `[lower, upper]` (`null`: the default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound(pub Option<f64>, pub Option<f64>);

impl<'de> Deserialize<'de> for Bound {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bound, D::Error> {
        let v = Value::deserialize(d)?;
        let side = |b: &Value| match b {
            Value::Null => Some(None),
            b => b.as_f64().map(Some),
        };
        if let Some([lo, hi]) = v.as_array().map(Vec::as_slice)
            && let (Some(lo), Some(hi)) = (side(lo), side(hi))
        {
            return Ok(Bound(lo, hi));
        }
        Err(D::Error::custom(format!(
            "must be [lower, upper] (got {v})"
        )))
    }
}

impl JsonSchema for Bound {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Bound".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "items": {"type": ["number", "null"]}, "minItems": 2, "maxItems": 2})
    }
}

fn one() -> Positive {
    Positive(1.0)
}
fn population() -> Whole<1, 100_000> {
    Whole(20)
}
fn beta1() -> Positive {
    Positive(0.2)
}
fn beta2() -> Positive {
    Positive(0.05)
}
fn generations() -> Whole<0, 10_000_000> {
    Whole(150)
}
fn yes() -> bool {
    true
}

fn given_err(field: &str, rule: &str) -> FitError {
    FitError::Setting {
        field: format!("given.{field}"),
        rule: rule.into(),
    }
}

impl OutputErrorGiven {
    /// The fit's [`Options`] for `model`: `default_free` fitted unless `fit` names others,
    /// AEP when `aep` or `method` asks for it. Refuses a load on a velocity replay, a speed
    /// other than linear on a torque replay and a fitted offset per direction.
    pub fn options(self, model: &str, default_free: &[&str], aep: bool) -> Result<Options, FitError> {
        let names = match self.fit.0 {
            Some(names) => names,
            None if default_free.is_empty() => {
                return Err(given_err(
                    "fit",
                    "must name the parameters to fit, e.g. {\"fit\": [\"fc\", \"fs\"]} ([] replays the given values without a fit)",
                ));
            }
            None => default_free.iter().map(|s| s.to_string()).collect(),
        };
        let names = if self.terms.asymmetric()? {
            let entry = crate::registry::entry(model).map_err(super::model_err)?;
            super::per_direction::with_negative_sides(entry, &names)?
        } else {
            names
        };
        let mut o = Options::new(model, &[]);
        if let Some(p) = self.params {
            o.params = Value::Object(p);
        }
        for n in &names {
            let mut f = FreeParam::named(n);
            if let Some(Bound(lower, upper)) = self.bounds.as_ref().and_then(|b| b.get(n)) {
                (f.lower, f.upper) = (*lower, *upper);
            }
            f.scale = self.scale.as_ref().and_then(|s| s.get(n)).copied();
            o.free.push(f);
        }
        o.replay = match self.replay {
            ReplayKind::Velocity if self.terms.load.is_some() => {
                return Err(given_err(
                    "load",
                    "acts on the plant of a torque replay (\"replay\": \"torque\"); a velocity replay compares the measured friction, which no load enters",
                ));
            }
            ReplayKind::Velocity => Replay::Velocity,
            ReplayKind::Torque => Replay::Torque {
                mass: self.mass.0,
                load: self.terms.load()?,
            },
        };
        if self.speed != Speed::Linear && o.replay != Replay::Velocity {
            return Err(given_err(
                "speed",
                "applies to a velocity replay (\"replay\": \"velocity\"); a torque replay integrates its own motion",
            ));
        }
        o.warmup_s = self.warmup_s.max(0.0);
        if let Some(m) = self.max_iters {
            o.max_iters = m.0;
        }
        if let Some(h) = self.diff_step {
            o.diff_step = h.0;
        }
        o.timeout = self.timeout_s.map(|t| Duration::from_secs_f64(t.0));
        o.offset = self.terms.offset;
        o.substeps = self.substeps.map(|n| n.0 as usize);
        o.nested = self.nested;
        o.bootstrap = self.bootstrap.replicates();
        o.hold = self.hold;
        o.speed = self.speed;
        if aep || self.method == MethodKind::Aep {
            o.method = Method::Aep {
                population: self.population.0 as usize,
                beta1: self.beta1.0,
                beta2: self.beta2.0,
                seed: self.bootstrap.seed.0,
                generations: self.generations.0,
                polish: self.polish,
            };
        }
        Ok(o)
    }
}

/// [`Options`] from `bench fit --given` ([`OutputErrorGiven`]; keys of other procedures are
/// left out).
pub fn options_from_given(
    model: &str,
    given: &Given,
    default_free: &[&str],
    aep: bool,
) -> Result<Options, FitError> {
    PROCEDURE
        .options_of::<OutputErrorGiven>(given)?
        .options(model, default_free, aep)
}

/// `bench fit --procedure output_error` on one table.
pub fn fit_table(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts = options_from_given(model, given, &[], false)?;
    let seg = Segment::from_table("csv", table)?;
    let mut r = fit(&[seg], &opts)?;
    r.provenance.given = given.clone();
    Ok(r)
}
