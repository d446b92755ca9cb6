//! Output error per direction (`given.asymmetric = true`, docs/src/identification.md#direction-dependent-friction):
//! each fitted parameter the model's negative set takes gets a companion `negative.NAME`,
//! fitted on the same replay; the report puts it under `params.negative` and says whether the
//! two sides differ beyond their standard errors ([`super::super::sides`]).
//!
//! A name `negative.NAME` is also accepted in `given.fit` directly (one side's parameter
//! alone).

use super::super::sides::{self, Directions, Pair};
use super::OutputError;
use crate::identify::FitError;
use crate::registry::ModelEntry;
use nalgebra::DMatrix;
use serde_json::{Map, Value};

/// The prefix of a negative-side parameter's name.
pub(crate) const NEGATIVE: &str = "negative.";

/// The value of `name` (`negative.NAME` inside the `negative` object) in `map`.
pub(crate) fn get<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    match name.strip_prefix(NEGATIVE) {
        Some(n) => map.get("negative").and_then(|s| s.get(n)),
        None => map.get(name),
    }
}

/// Sets `name` (`negative.NAME` inside the `negative` object, created when absent) in `map`.
pub(crate) fn put(map: &mut Map<String, Value>, name: &str, v: Value) {
    match name.strip_prefix(NEGATIVE) {
        Some(n) => {
            let side = map
                .entry("negative")
                .or_insert_with(|| Value::Object(Map::new()));
            if !side.is_object() {
                *side = Value::Object(Map::new());
            }
            if let Value::Object(s) = side {
                s.insert(n.into(), v);
            }
        }
        None => {
            map.insert(name.into(), v);
        }
    }
}

/// `names` with a `negative.NAME` for each model parameter whose negative side the model
/// takes (not `mass`, `offset` or a parameter both sides share).
pub(super) fn with_negative_sides(
    entry: &ModelEntry,
    names: &[String],
) -> Result<Vec<String>, FitError> {
    let refuse = |rule: String| FitError::Setting {
        field: "given.asymmetric".into(),
        rule,
    };
    if !entry.asymmetric {
        return Err(refuse(format!(
            "needs a model with a parameter set for negative motion; '{}' has none",
            entry.id
        )));
    }
    let mut out = names.to_vec();
    for n in names {
        let own = format!("{NEGATIVE}{n}");
        if !n.starts_with(NEGATIVE) && negative_taken(entry, &own) && !out.contains(&own) {
            out.push(own);
        }
    }
    if out.len() == names.len() {
        return Err(refuse(format!(
            "needs a fitted parameter the negative set of '{}' takes (given.fit: {})",
            entry.id,
            names.join(", ")
        )));
    }
    Ok(out)
}

/// False for `negative.NAME` when the model's negative set does not take `NAME` (a symmetric
/// model, a parameter both sides share, or no such parameter).
pub(crate) fn negative_taken(entry: &ModelEntry, name: &str) -> bool {
    let Some(n) = name.strip_prefix(NEGATIVE) else {
        return true;
    };
    let Some(d) = entry.defaults().get(n).cloned() else {
        return false;
    };
    let mut probe = Map::new();
    put(&mut probe, name, d);
    entry.build(Value::Object(probe)).is_ok()
}

/// Whether the sides differ, for every parameter fitted on both; `jac` is the Jacobian at the
/// scaled optimum `q`, turned here into parameter units (the difference is of values).
pub(super) fn directions(
    problem: &OutputError<'_>,
    q: &[f64],
    jac: &DMatrix<f64>,
    resid: &[f64],
    n_eff: Option<f64>,
) -> Option<Directions> {
    let free = problem.free();
    let values = problem.values(q);
    let pairs: Vec<Pair<'_>> = free
        .iter()
        .enumerate()
        .filter_map(|(p, f)| {
            let n = free
                .iter()
                .position(|g| g.name.strip_prefix(NEGATIVE) == Some(f.name.as_str()))?;
            Some(Pair {
                name: f.name.as_str(),
                columns: (p, n),
                values: (values[p], values[n]),
            })
        })
        .collect();
    if pairs.is_empty() || jac.ncols() != free.len() {
        return None;
    }
    let mut in_units = jac.clone();
    for (i, f) in free.iter().enumerate() {
        let s = f.slope(q[i]);
        in_units.column_mut(i).unscale_mut(s);
    }
    let dof = n_eff.unwrap_or(resid.len() as f64) - free.len() as f64;
    sides::compare(&in_units, resid, &pairs, dof)
}
