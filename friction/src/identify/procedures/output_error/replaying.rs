//! Replaying a parameter set on recorded segments without a fit: the residuals a comparison
//! scores, and the report of `fit: []`.

use super::super::replay::{ReplaySetup, replay_segment};
use super::super::{FitReport, Given, Offset, num};
use super::refining::{falls_short, promised};
use super::{Hold, MAX_SUBSTEPS, Options, Replay, Segment, Speed, model_err};
use crate::FrictionModel;
use crate::identify::FitError;
use crate::registry;
use serde_json::Value;

/// A replay without a fit is fine enough when doubling its sub-steps changes it by at most
/// this fraction of its RMS residual.
pub const REPLAY_SETTLED: f64 = 0.01;

/// Replays `segs` through `model` with `params` (over its defaults; `mass` and `offset`, when
/// present, set the plant mass and the force offset subtracted from the measurement) and
/// returns the residuals per segment and sample (no fit): what the comparison table scores.
/// The sub-steps double from 1 until the replay changes by less than [`REPLAY_SETTLED`] of its
/// RMS residual, at most [`MAX_SUBSTEPS`], and stop as the fit's refinement does when a doubling
/// cuts the change by less than the square root of what the replay's order promises
/// ([`ORDER_SHORTFALL`](super::ORDER_SHORTFALL)): a model that switches between sticking and slipping inside an
/// interval (GMS) does not settle with finer steps, and doubling on to the ceiling would only
/// cost time (a GMS replay of 44 000 samples took 2.3 s that way).
pub fn residuals_of(
    model: &str,
    params: &Value,
    segs: &[Segment],
    replay: Replay,
) -> Result<Vec<Vec<f64>>, FitError> {
    residuals_with(model, params, segs, replay, Speed::Linear)
}

/// [`residuals_of`] with the speed between samples run as `speed` (velocity replay).
pub fn residuals_with(
    model: &str,
    params: &Value,
    segs: &[Segment],
    replay: Replay,
    speed: Speed,
) -> Result<Vec<Vec<f64>>, FitError> {
    Ok(replay_with(model, params, segs, replay, Hold::Linear, speed)?.0)
}

/// [`residuals_of`] with the applied force's `hold`; also returns the sub-steps used.
pub fn replay_of(
    model: &str,
    params: &Value,
    segs: &[Segment],
    replay: Replay,
    hold: Hold,
) -> Result<(Vec<Vec<f64>>, usize), FitError> {
    replay_with(model, params, segs, replay, hold, Speed::Linear)
}

/// [`replay_of`] with the speed between samples run as `speed` (velocity replay).
pub fn replay_with(
    model: &str,
    params: &Value,
    segs: &[Segment],
    replay: Replay,
    hold: Hold,
    speed: Speed,
) -> Result<(Vec<Vec<f64>>, usize), FitError> {
    let mass = match replay {
        Replay::Torque { mass, .. } => params.get("mass").and_then(Value::as_f64).unwrap_or(mass),
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
    let richardson = stateful && replay == Replay::Velocity;
    // A model without a state reads the speed at the sample only: no displacement to keep.
    let speed = if stateful { speed } else { Speed::Linear };
    let run = |m: &mut dyn FrictionModel, substeps: usize| -> Vec<Vec<f64>> {
        let setup = ReplaySetup {
            replay,
            mass,
            offset,
            substeps,
            richardson,
            hold,
            speed,
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
    let promised = promised(2.0, richardson);
    let mut n = 1;
    let mut out = run(m.as_mut(), n);
    let mut last_change = f64::INFINITY;
    while between && n < MAX_SUBSTEPS {
        let finer = run(m.as_mut(), 2 * n);
        let diff: Vec<Vec<f64>> = out
            .iter()
            .zip(&finer)
            .map(|(a, b)| a.iter().zip(b).map(|(a, b)| a - b).collect())
            .collect();
        let (d, f) = (rms(&diff), rms(&finer));
        let settled = d.is_nan() || d <= REPLAY_SETTLED * f;
        let stalled = falls_short(last_change / d, promised);
        out = finer;
        n *= 2;
        last_change = d;
        if settled || stalled {
            break;
        }
    }
    Ok((out, n))
}

/// The report of a replay without a fit (`fit: []`): the residual of the given values, with
/// its MSE and R², the sub-steps chosen as in [`residuals_of`].
pub(super) fn evaluate(segs: &[Segment], opts: &Options) -> Result<FitReport, FitError> {
    let mut params = opts.params.clone();
    if let (Value::Object(p), Offset::Known(c)) = (&mut params, opts.offset) {
        p.insert("offset".into(), Value::from(c));
    }
    let (res, n_sub) = replay_with(
        &opts.model,
        &params,
        segs,
        opts.replay,
        opts.hold,
        opts.speed,
    )?;
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
    if let Replay::Torque { mass, .. } = opts.replay {
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
        "settings": {"replay": opts.replay, "hold": opts.hold, "speed": opts.speed, "substeps": n_sub},
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
