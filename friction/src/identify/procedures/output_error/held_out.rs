//! Output error on a held-out record: the fitted set replayed on a record it was not fitted
//! on, the replay (velocity or torque), hold, speed and offset as in the fit.

use super::super::{FitReport, Table};
use super::{Replay, Segment, options_from_given, replay_with};
use crate::identify::FitError;
use serde_json::{Map, Value};

/// `(measured, predicted)` on `table`: the friction in a velocity replay, the position in a
/// torque replay (the offset of the set subtracted from the measured friction).
pub fn predict(report: &FitReport, table: &Table) -> Result<(Vec<f64>, Vec<f64>), FitError> {
    let model = report.provenance.model.as_str();
    let given = &report.provenance.given;
    let opts = options_from_given(model, given, &[], false)?;
    let doc = document(model, opts.params.as_object(), &report.params)?;
    let seg = Segment::from_table("held-out", table)?;
    let (residuals, _) = replay_with(
        model,
        &doc,
        std::slice::from_ref(&seg),
        opts.replay,
        opts.hold,
        opts.speed,
    )?;
    let measured = match opts.replay {
        Replay::Velocity => {
            let offset = report.param("offset").unwrap_or(0.0);
            seg.friction.iter().map(|f| f - offset).collect()
        }
        Replay::Torque { .. } => seg.x.clone(),
    };
    let residual = residuals.into_iter().next().unwrap_or_default();
    let predicted = residual.iter().zip(&measured).map(|(r, m)| r + m).collect();
    Ok((measured, predicted))
}

/// The model's defaults, overlaid with the given `params` and then the fitted values (a
/// `negative` set over a copy of the positive one).
fn document(
    model: &str,
    given: Option<&Map<String, Value>>,
    fitted: &Map<String, Value>,
) -> Result<Value, FitError> {
    let entry = crate::registry::entry(model).map_err(super::model_err)?;
    let Value::Object(mut doc) = entry.defaults() else {
        return Err(FitError::Bug(format!(
            "the defaults of {model} are not an object"
        )));
    };
    let layers = [given, Some(fitted)];
    for layer in layers.into_iter().flatten() {
        for (k, v) in layer {
            if k == "negative" {
                continue;
            }
            doc.insert(k.clone(), v.clone());
        }
    }
    let negatives: Vec<&Map<String, Value>> = layers
        .into_iter()
        .flatten()
        .filter_map(|l| l.get("negative").and_then(Value::as_object))
        .collect();
    if !negatives.is_empty() {
        let mut neg = doc.clone();
        neg.remove("mass");
        neg.remove("offset");
        for n in negatives {
            neg.extend(n.clone());
        }
        doc.insert("negative".into(), Value::Object(neg));
    }
    Ok(Value::Object(doc))
}
