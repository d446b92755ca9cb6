//! `bench fit --procedure output_error`: the procedure, its `given` keys and their options.

use super::super::options::{self, Default, Min, Opt, Ty};
use super::super::{FitReport, Given, Procedure, Reads, Table};
use super::{FreeParam, Hold, MAX_SUBSTEPS, Method, Options, Replay, Scale, Segment, Speed, fit};
use crate::identify::FitError;
use serde_json::Value;
use std::time::Duration;

/// `bench fit --procedure output_error`: applies to every registry model; reads the columns
/// `bench simulate` writes (`t, v` and, per replay, `friction` or `x, u`).
pub const PROCEDURE: Procedure = Procedure {
    name: "output_error",
    models: &["*"],
    columns: &["t"],
    options: super::super::Options::Listed(OPTIONS),
    known_params: false,
    reads: Reads::TimeSeries(None),
    part: None,
    iterates: true,
    offset_refused: None,
    fit: fit_table,
};

/// The `given` keys of output error (and of `aep`).
pub const OPTIONS: &[Opt] = &[
    Opt {
        name: "fit",
        ty: Ty::Names,
        default: Default::FromData,
        description: "The parameters to fit (absent: the procedure's default free set; []: replay the given values)",
    },
    options::PARAMS,
    Opt::object(
        "bounds",
        "Bounds per fitted parameter: {\"name\": [lower, upper]}",
    ),
    Opt::object(
        "scale",
        "Scale per fitted parameter: {\"name\": \"log\" | \"linear\"}",
    ),
    Opt::choice(
        "replay",
        &["velocity", "torque"],
        "velocity: the model's friction on the measured speed; torque: the plant driven by the measured torque",
    ),
    Opt::number(
        "mass",
        options::INERTIA,
        Min::Positive,
        "Inertia of the torque replay's plant",
    )
    .or(1.0),
    Opt::number(
        "warmup_s",
        "s",
        Min::Any,
        "Start of the record left out of the cost",
    )
    .or(0.0),
    options::MAX_ITERS.or(200.0),
    Opt::number(
        "diff_step",
        "",
        Min::Positive,
        "Relative step of the finite-difference Jacobian",
    )
    .or(1e-6),
    Opt::number("timeout_s", "s", Min::Positive, "Time limit of the fit"),
    Opt::choice(
        "method",
        &["lm", "aep"],
        "lm: Levenberg-Marquardt; aep: adaptive evolutionary search, then lm",
    ),
    Opt::integer(
        "population",
        1,
        100_000,
        Default::Number(20.0),
        "AEP: the population",
    ),
    Opt::number("beta1", "", Min::Positive, "AEP: the first step factor").or(0.2),
    Opt::number("beta2", "", Min::Positive, "AEP: the second step factor").or(0.05),
    options::SEED,
    Opt::integer(
        "generations",
        0,
        10_000_000,
        Default::Number(150.0),
        "AEP: the generations",
    ),
    Opt::flag(
        "polish",
        true,
        "AEP: refine the best member with Levenberg-Marquardt",
    ),
    options::OFFSET,
    Opt::integer(
        "substeps",
        1,
        MAX_SUBSTEPS as u64,
        Default::FromData,
        "Model steps per sample (absent: from the data)",
    ),
    Opt::flag(
        "nested",
        true,
        "Report the nested-model tests of the parameters",
    ),
    options::BOOTSTRAP,
    Opt::choice(
        "hold",
        &["linear", "zoh"],
        "linear: a measured force; zoh: a drive's held command",
    ),
    Opt::choice(
        "speed",
        &["linear", "displacement"],
        "Velocity replay, the speed between samples: linear (default); displacement: linear plus the bump that makes each interval's displacement the recorded one (as the comparison scores a model)",
    ),
    options::LOAD,
    options::ASYMMETRIC,
];

fn given_err(field: &str, rule: &str) -> FitError {
    FitError::Setting {
        field: format!("given.{field}"),
        rule: rule.into(),
    }
}

fn given_num(given: &Given, name: &str) -> Result<Option<f64>, FitError> {
    super::super::given_f64(given, name)
}

/// Options from `bench fit --given`: `fit` (names, array or comma-separated; `default_free` if
/// absent), `params` (fixed values and start values, an object), `bounds` (`{"name": [lo,
/// hi]}`), `scale` (`{"name": "log"|"linear"}`), `replay` (`velocity` or `torque`), `mass`,
/// `warmup_s`, `max_iters`, `diff_step`, `timeout_s`, `offset` (`true` or a known value),
/// `substeps` (a count; default: from the data), `load` (a known load on the torque replay's
/// plant, [`crate::load`]), `nested` (default true), `asymmetric` (each fitted parameter also
/// for negative motion, see `per_direction`), `bootstrap`
/// (replicates) with `seed`, `speed` (`linear` or `displacement`, a velocity replay's speed
/// between samples); for AEP (`method: "aep"` or the `aep` procedure): `population`,
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
    let offset = super::super::given_offset(given)?;
    let names = if super::super::asymmetric_without_fitted_offset(given, offset)? {
        let entry = crate::registry::entry(model).map_err(super::model_err)?;
        super::per_direction::with_negative_sides(entry, &names)?
    } else {
        names
    };
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
    o.replay = match super::super::given_str(given, "replay") {
        None | Some("velocity") => Replay::Velocity,
        Some("torque") => Replay::Torque {
            mass: super::super::given_positive(given, "mass")?.unwrap_or(1.0),
            load: super::super::given_load(given)?,
        },
        Some(_) => return Err(given_err("replay", "must be \"velocity\" or \"torque\"")),
    };
    if o.replay == Replay::Velocity && given.get("load").is_some_and(|l| !l.is_null()) {
        return Err(given_err(
            "load",
            "acts on the plant of a torque replay (\"replay\": \"torque\"); a velocity replay compares the measured friction, which no load enters",
        ));
    }
    if let Some(w) = given_num(given, "warmup_s")? {
        o.warmup_s = w.max(0.0);
    }
    if let Some(m) = given_num(given, "max_iters")? {
        o.max_iters = m.max(1.0) as u64;
    }
    if let Some(h) = super::super::given_positive(given, "diff_step")? {
        o.diff_step = h;
    }
    if let Some(t) = super::super::given_positive(given, "timeout_s")? {
        o.timeout = Some(Duration::from_secs_f64(t));
    }
    o.offset = offset;
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
    o.bootstrap = super::super::given_bootstrap(given)?;
    o.hold = match super::super::given_str(given, "hold") {
        None | Some("linear") => Hold::Linear,
        Some("zoh") => Hold::Zoh,
        Some(_) => {
            return Err(given_err(
                "hold",
                "must be \"linear\" (a measured force) or \"zoh\" (a drive's held command)",
            ));
        }
    };
    o.speed = speed_from_given(given, o.replay)?;
    if aep || super::super::given_str(given, "method") == Some("aep") {
        let int = |n: &str, d: u64| -> Result<u64, FitError> {
            Ok(given_num(given, n)?.map_or(d, |x| x.max(0.0) as u64))
        };
        o.method = Method::Aep {
            population: int("population", 20)? as usize,
            beta1: super::super::given_positive(given, "beta1")?.unwrap_or(0.2),
            beta2: super::super::given_positive(given, "beta2")?.unwrap_or(0.05),
            seed: int("seed", 1)?,
            generations: int("generations", 150)?,
            polish: given.get("polish").and_then(Value::as_bool).unwrap_or(true),
        };
    }
    Ok(o)
}

/// `speed` (`linear`, the default, or `displacement`): how a velocity replay runs the speed
/// between samples; a torque replay integrates its own motion, so it refuses the key.
fn speed_from_given(given: &Given, replay: Replay) -> Result<Speed, FitError> {
    let speed = match super::super::given_str(given, "speed") {
        None | Some("linear") => Speed::Linear,
        Some("displacement") => Speed::Displacement,
        Some(_) => {
            return Err(given_err(
                "speed",
                "must be \"linear\" or \"displacement\" (the speed between samples of a velocity replay)",
            ));
        }
    };
    if speed != Speed::Linear && replay != Replay::Velocity {
        return Err(given_err(
            "speed",
            "applies to a velocity replay (\"replay\": \"velocity\"); a torque replay integrates its own motion",
        ));
    }
    Ok(speed)
}

/// `bench fit --procedure output_error` on one table.
pub fn fit_table(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let seg = Segment::from_table("csv", table)?;
    let opts = options_from_given(model, given, &[], false)?;
    let mut r = fit(&[seg], &opts)?;
    r.provenance.given = given.clone();
    Ok(r)
}
