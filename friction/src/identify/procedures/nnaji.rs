//! Nnaji et al. dynamic parameters (S3 §5.1.2–§5.1.3; docs/src/identification.md#nnaji): procedure `nnaji`.
//!
//! With the static parameters `fs, fc, vs, fv` fixed (from the static fit, docs/src/identification.md#static_curve):
//!
//! 1. **Z_b** (docs/src/identification.md#nnaji) from a slow presliding run from rest: the friction follows the virgin
//!    branch `F = fs sin((pi/2) z/Z_b)` (eq. 8; its linearisation from rest is eq. 26/29,
//!    `F = (pi fs/(2 Z_b)) z`). We fit Z_b by output error of the `nnaji` model itself on the
//!    measured motion, so the full branch shape is used rather than its linearisation (which
//!    biases Z_b by up to 5 % at half the breakaway force) and the damping term is kept.
//! 2. **sigma** (docs/src/identification.md#nnaji) from an assumed damping ratio of the linearised presliding plant,
//!    `sigma = 2 zeta sqrt(J pi fs/(2 Z_b)) - fv` ([`sigma_from_damping`], S3 eqs. 29–33;
//!    `zeta = 0.7` in S3, a design choice; `J` from the data sheet).
//! 3. **tau** (docs/src/identification.md#nnaji) from gross-sliding frictional-lag runs (S3: `v = 1 + 0.95 sin(omega t)`
//!    or a chirp): in gross sliding `F = gamma + fv v`, `dgamma/dt = (g(v) - gamma)/tau`
//!    (eqs. 12–13, 34–35); a one-parameter output-error fit of the `nnaji` model.

use super::options::INERTIA;
use super::output_error::{self, FreeParam, Method, Options, Replay, Segment};
use super::typed::{Positive, Whole, typed};
use super::{FitReport, Given, Offset, Procedure, Reads, Table};
use crate::identify::FitError;
pub use crate::models::nnaji::sigma_from_damping;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Settings of the Nnaji procedure.
#[derive(Clone, Debug, PartialEq)]
pub struct NnajiOptions {
    /// `nnaji` parameters over its defaults: the static `fs, fc, vs, fv` (fixed), and start
    /// values of `zb` and `tau`.
    pub params: Value,
    /// Inertia or mass `J` \[kg m^2 or kg\] for sigma (docs/src/identification.md#nnaji).
    pub inertia: f64,
    /// Assumed damping ratio (S3: 0.7).
    pub zeta: f64,
    /// LM iteration cap of each fit.
    pub max_iters: u64,
    /// A force offset in the measured friction, fitted in each step (the report's is the
    /// tau step's) or known.
    pub offset: Offset,
}

impl NnajiOptions {
    /// `zeta = 0.7` (S3), 100 LM iterations.
    pub fn new(params: Value, inertia: f64) -> NnajiOptions {
        NnajiOptions {
            params,
            inertia,
            zeta: 0.7,
            max_iters: 100,
            offset: Offset::None,
        }
    }
}

fn one(params: &Value, name: &str, max_iters: u64, offset: Offset) -> Options {
    Options {
        model: "nnaji".into(),
        params: params.clone(),
        free: vec![FreeParam::named(name)],
        replay: Replay::Velocity,
        warmup_s: 0.0,
        method: Method::Lm,
        max_iters,
        timeout: None,
        threads: 0,
        diff_step: 1e-6,
        offset,
        substeps: None,
        nested: false,
        bootstrap: None,
        hold: super::output_error::Hold::Linear,
        speed: super::output_error::Speed::Linear,
    }
}

/// Micro-damping used in the Z_b step, where S3 neglects the dynamics (`F = F_hyst(z)`): small
/// enough that `sigma v` is negligible against the branch, finite so the model stays valid.
pub const SIGMA_NEGLECTED: f64 = 1e-9;

/// Step 1: Z_b from presliding segments (from rest; friction measured), dynamics neglected
/// (`sigma` = [`SIGMA_NEGLECTED`], S3 §5.1.2).
pub fn fit_zb(
    presliding: &[Segment],
    params: &Value,
    max_iters: u64,
    offset: Offset,
) -> Result<FitReport, FitError> {
    let mut p = match params.clone() {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    p.insert("sigma".into(), Value::from(SIGMA_NEGLECTED));
    let mut r = output_error::fit(presliding, &one(&Value::Object(p), "zb", max_iters, offset))?;
    r.provenance.procedure = "nnaji.zb".into();
    Ok(r)
}

/// Step 3: tau from gross-sliding frictional-lag segments.
pub fn fit_tau(
    lag: &[Segment],
    params: &Value,
    max_iters: u64,
    offset: Offset,
) -> Result<FitReport, FitError> {
    let mut r = output_error::fit(lag, &one(params, "tau", max_iters, offset))?;
    r.provenance.procedure = "nnaji.tau".into();
    Ok(r)
}

/// The whole procedure: Z_b, then sigma, then tau. The report's `params` is the full `nnaji`
/// set; `fitted` is `zb, sigma, tau` (sigma computed, so it has no standard error); the steps'
/// provenance is under `provenance.settings.steps`.
pub fn fit(
    presliding: &[Segment],
    lag: &[Segment],
    opts: &NnajiOptions,
) -> Result<FitReport, FitError> {
    if !(opts.inertia.is_finite() && opts.inertia > 0.0) {
        return Err(FitError::Config {
            field: "inertia".into(),
            value: opts.inertia,
            rule: "must be > 0".into(),
        });
    }
    if !(opts.zeta.is_finite() && opts.zeta > 0.0) {
        return Err(FitError::Config {
            field: "zeta".into(),
            value: opts.zeta,
            rule: "must be > 0".into(),
        });
    }
    let zb = fit_zb(presliding, &opts.params, opts.max_iters, opts.offset)?;
    let get =
        |v: &Map<String, Value>, n: &str| v.get(n).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let p = &zb.params;
    let sigma = sigma_from_damping(
        opts.inertia,
        get(p, "fs"),
        get(p, "zb"),
        get(p, "fv"),
        opts.zeta,
    );
    if sigma.is_nan() || sigma <= 0.0 {
        return Err(FitError::Data(format!(
            "sigma from the damping ratio ({sigma}) is not > 0: fv ({}) exceeds the damping 2 zeta sqrt(J k0)",
            get(p, "fv")
        )));
    }
    let mut with_sigma = match opts.params.clone() {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    with_sigma.insert("zb".into(), Value::from(get(p, "zb")));
    with_sigma.insert("sigma".into(), Value::from(sigma));
    let tau = fit_tau(lag, &Value::Object(with_sigma), opts.max_iters, opts.offset)?;
    let mut r = tau.clone();
    r.params.insert("zb".into(), super::num(get(p, "zb")));
    r.params.insert("sigma".into(), super::num(sigma));
    r.std_errors.extend(zb.std_errors.clone());
    r.provenance.procedure = "nnaji".into();
    r.provenance.n_points += zb.provenance.n_points;
    let mut notes = zb.provenance.notes.clone();
    notes.push(format!(
        "sigma = 2 zeta sqrt(J pi fs/(2 zb)) - fv = {sigma} (S3 eqs. 29-33; J = {}, zeta = {})",
        opts.inertia, opts.zeta
    ));
    notes.extend(tau.provenance.notes.clone());
    r.provenance.notes = notes;
    let iters = |x: &FitReport, k: &str| x.details[k].as_u64().unwrap_or(0);
    r.details = serde_json::json!({
        "fitted": ["zb", "sigma", "tau"],
        "iterations": iters(&zb, "iterations") + iters(&tau, "iterations"),
        "evaluations": iters(&zb, "evaluations") + iters(&tau, "evaluations"),
        "steps": {
            "zb": {"mse": zb.mse, "termination": zb.provenance.termination, "details": zb.details},
            "sigma": {"inertia": opts.inertia, "zeta": opts.zeta, "value": sigma, "equation": "S3 eqs. 29-33"},
            "tau": {"mse": tau.mse, "termination": tau.provenance.termination, "details": tau.details},
        },
    });
    Ok(r)
}

/// `bench fit --procedure nnaji --model nnaji`.
pub const PROCEDURE: Procedure = Procedure {
    name: "nnaji",
    models: &["nnaji"],
    columns: &["t", "v", "friction"],
    options: typed::<NnajiGiven>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["presliding", "frictional_lag"])),
    part: None,
    iterates: false,
    offset_refused: None,
    fit: fit_table,
};

/// What `nnaji` takes in `given`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NnajiGiven {
    /// Values of the model's parameters: the fixed ones and the start values
    pub params: Option<Map<String, Value>>,
    /// Which step: zb (presliding), tau (frictional lag) or all
    #[serde(default)]
    pub step: Step,
    /// Inertia J, needed for sigma
    #[schemars(extend("x-unit" = INERTIA))]
    pub inertia: Option<Positive>,
    /// Damping ratio
    #[schemars(extend("default" = 0.7))]
    pub zeta: Option<Positive>,
    /// Step all: rows before it are the presliding run, the rest the frictional-lag run
    #[schemars(extend("x-unit" = "s"))]
    pub presliding_until_s: Option<f64>,
    /// Most iterations of the solver
    #[serde(default = "max_iters")]
    pub max_iters: Whole<1, 1_000_000>,
    /// A constant in the measured force: true fits it (params.offset), a number is a known offset subtracted first
    #[serde(default)]
    pub offset: Offset,
}

/// The steps `nnaji` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Both, from one table split at `presliding_until_s`.
    #[default]
    All,
    /// `Z_b` from a presliding run.
    Zb,
    /// `tau` from a frictional-lag run.
    Tau,
}

fn max_iters() -> Whole<1, 1_000_000> {
    Whole(100)
}

/// `bench fit --procedure nnaji` on one table ([`NnajiGiven`]).
pub fn fit_table(_model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let g: NnajiGiven = PROCEDURE.options_of(given)?;
    let seg = Segment::from_table("csv", table)?;
    let params = Value::Object(g.params.unwrap_or_default());
    let (max_iters, offset) = (g.max_iters.0, g.offset);
    let mut r = match g.step {
        Step::Zb => fit_zb(&[seg], &params, max_iters, offset)?,
        Step::Tau => fit_tau(&[seg], &params, max_iters, offset)?,
        Step::All => {
            let split = g.presliding_until_s.ok_or_else(|| FitError::Setting {
                field: "given.presliding_until_s".into(),
                rule: "is needed for step all (rows before it: presliding run; after: frictional-lag run)".into(),
            })?;
            let k = seg.t.partition_point(|&t| t < split);
            let part = |a: usize, b: usize, name: &str| Segment {
                source: format!("csv ({name})"),
                t: seg.t[a..b].to_vec(),
                x: seg.x[a..b].to_vec(),
                v: seg.v[a..b].to_vec(),
                u: seg.u[a..b].to_vec(),
                friction: seg.friction[a..b].to_vec(),
            };
            let inertia = g.inertia.ok_or_else(|| FitError::Setting {
                field: "given.inertia".into(),
                rule: "is needed for sigma (S3 eq. 33)".into(),
            })?;
            let mut o = NnajiOptions::new(params, inertia.0);
            o.max_iters = max_iters;
            o.offset = offset;
            if let Some(z) = g.zeta {
                o.zeta = z.0;
            }
            fit(
                &[part(0, k, "presliding")],
                &[part(k, seg.len(), "lag")],
                &o,
            )?
        }
    };
    r.provenance.given = given.clone();
    Ok(r)
}
