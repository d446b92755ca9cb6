//! Identification of the seven-parameter model by accelerated evolutionary programming
//! (Kim et al.; S1 §8.4.2.1 eqs. 8.26–8.35; docs/src/identification.md#aep): procedure `aep`.
//!
//! Unknowns `z = [fc, fv, fs_inf, gamma, tau_l, vs, kt]`, all > 0 (convention A: `fs_inf` is the
//! breakaway level, S1's `F_C + F_s,inf`). The cost is S1's `J_e = sum (y(z, t_i) - y_m(ẑ, t_i))^2`
//! with the model run on the same input as the measured system: here the output-error problem of
//! [`super::output_error`], either velocity-driven (friction error) or torque-driven through the
//! plant (position error). Note that coupled to a plant the seven-parameter model sticks
//! set-valued (see `models::seven_parameter`), so `kt` is identifiable only from a velocity
//! replay. The search is [`crate::identify::aep::Aep`] in log-scaled bounds, optionally polished
//! by Levenberg–Marquardt; `beta1`, `beta2`, the population and the seed are recorded.
//!
//! The same procedure runs on any registry model (`Options::model`, `Options::free`): AEP is a
//! generic bounded global search.

use super::output_error::{self, FreeParam, Method, Options, Replay, Segment};
use super::{FitReport, Given, Procedure, Reads, Table};
use crate::identify::FitError;
use serde_json::{Map, Value};

/// The seven unknowns of S1 8.32, in order.
pub const UNKNOWNS: [&str; 7] = ["fc", "fv", "fs_inf", "gamma", "tau_l", "vs", "kt"];

/// Default search box of each unknown around the start value: `start / RANGE .. start * RANGE`
/// (log scale), one decade either side.
pub const RANGE: f64 = 10.0;

/// AEP settings for the seven-parameter identification: population 20, `beta1 = 0.2`,
/// `beta2 = 0.05`, seed 1, 150 generations, LM polish; velocity replay; start values and box
/// from `params` over the model's defaults.
pub fn options(params: Value) -> Options {
    let start = crate::registry::entry("seven_parameter")
        .ok()
        .and_then(|e| e.build(params.clone()).ok())
        .map(|m| m.params_json())
        .unwrap_or(Value::Object(Map::new()));
    let free = UNKNOWNS
        .iter()
        .map(|n| {
            let d = start.get(*n).and_then(Value::as_f64).unwrap_or(1.0);
            FreeParam {
                name: (*n).into(),
                lower: Some(d / RANGE),
                upper: Some(d * RANGE),
                scale: None,
            }
        })
        .collect();
    Options {
        model: "seven_parameter".into(),
        params,
        free,
        replay: Replay::Velocity,
        warmup_s: 0.0,
        method: Method::Aep {
            population: 20,
            beta1: 0.2,
            beta2: 0.05,
            seed: 1,
            generations: 150,
            polish: true,
        },
        max_iters: 100,
        timeout: None,
        threads: 0,
        diff_step: 1e-6,
        offset: super::Offset::None,
        substeps: None,
        nested: false,
        bootstrap: None,
        hold: super::output_error::Hold::Linear,
        speed: super::output_error::Speed::Linear,
    }
}

/// Runs the AEP identification (`opts.method` must be [`Method::Aep`]); the report's procedure
/// is `aep`.
pub fn fit(segs: &[Segment], opts: &Options) -> Result<FitReport, FitError> {
    if !matches!(opts.method, Method::Aep { .. }) {
        return Err(FitError::Setting {
            field: "method".into(),
            rule: "must be aep for the aep procedure".into(),
        });
    }
    let mut r = output_error::fit(segs, opts)?;
    r.provenance.procedure = "aep".into();
    Ok(r)
}

/// `bench fit --procedure aep`: the seven-parameter identification for `seven_parameter`, and
/// AEP output error on the parameters named in `given.fit` for any other registry model.
pub const PROCEDURE: Procedure = Procedure {
    name: "aep",
    models: &["*"],
    columns: &["t"],
    options: super::typed::typed::<output_error::OutputErrorGiven>(),
    known_params: false,
    reads: Reads::TimeSeries(None),
    part: None,
    iterates: true,
    offset_refused: None,
    fit: fit_table,
};

/// `bench fit --procedure aep` on one table (`given` as for
/// [`output_error::options_from_given`]; bounds must be finite, and for `seven_parameter` they
/// default to a decade either side of the start values).
pub fn fit_table(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let seg = Segment::from_table("csv", table)?;
    let mut opts = output_error::options_from_given(
        model,
        given,
        if model == "seven_parameter" {
            &UNKNOWNS
        } else {
            &[]
        },
        true,
    )?;
    if model == "seven_parameter" {
        let defaults = options(opts.params.clone());
        for f in &mut opts.free {
            if let Some(d) = defaults.free.iter().find(|d| d.name == f.name) {
                f.lower = f.lower.or(d.lower);
                f.upper = f.upper.or(d.upper);
            }
        }
    }
    let mut r = fit(&[seg], &opts)?;
    r.provenance.given = given.clone();
    Ok(r)
}
