//! Start values from the bench's own earlier fits (docs/src/identification.md#order).
//!
//! A dynamic model shares its steady-state curve with the static fits of the same bench, and
//! its presliding part with the presliding fits. So a fit (`bench fit --run`) or a comparison
//! (`bench compare` on run ids) of a model starts from:
//!
//! - the **Stribeck curve** (`fc`, `fs`, `vs`, `delta` and the viscous coefficient, per
//!   direction) of the newest `static_curve` set of the model itself, else of `stribeck_exp`
//!   or `static_armstrong`; failing those (their static fits refused `fs` below `fc`: no
//!   Stribeck rise), the Coulomb level and viscous coefficient of the newest `static_curve`
//!   set of `coulomb_viscous`, with `fs` = `fc`;
//! - its **presliding part** (the values a presliding procedure fitted: `sigma0`, the GMS
//!   elements `k` and `alpha`, ...) from the newest set of the model itself fitted by one.
//!
//! Iterative fits iterate from these values; every fit stores its set completed with them,
//! so the bench's parameter set of a model is whole, not its defaults where one run could not
//! tell. Values the user gives win. A source set whose fit found a force offset in the
//! measurement passes it on as `offset` (docs/src/identification.md#offset): an output-error
//! fit or a comparison subtracts it from the measured force unless it fits its own.

use crate::db::store_error;
use friction::identify::procedures::compare::StartSource;
use friction::identify::procedures::{self, Procedure};
use run_store::{ParameterSet, Store};
use serde_json::{Map, Value};

/// Models whose static fit may start a fit of any model with `fc`, `fs`, `vs`.
const STATIC_SOURCES: &[&str] = &["stribeck_exp", "static_armstrong"];

/// Names of the viscous coefficient across models.
const VISCOUS: &[&str] = &["fv", "sigma2"];

/// Start values and where they came from.
#[derive(Debug, Default)]
pub struct Start {
    /// Parameter values (with a `negative` object for an asymmetric model).
    pub values: Map<String, Value>,
    /// One per source set.
    pub sources: Vec<StartSource>,
}

impl Start {
    /// The notes of every source.
    pub fn notes(&self) -> impl Iterator<Item = String> + '_ {
        self.sources.iter().map(|s| s.note.clone())
    }

    /// Puts the values under `params` (of `fit`'s or a comparison's options), below what the
    /// user put there.
    pub fn under(&self, params: &mut Map<String, Value>) {
        for (k, v) in &self.values {
            match (params.get_mut(k), v) {
                (Some(Value::Object(user)), Value::Object(ours)) => {
                    for (n, x) in ours {
                        user.entry(n.clone()).or_insert_with(|| x.clone());
                    }
                }
                (Some(_), _) => {}
                (None, v) => {
                    params.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// The start of a fit of `model` by `procedure` from the sets in `store`.
pub async fn start_for(store: &Store, model: &str, procedure: &Procedure) -> anyhow::Result<Start> {
    let Ok(entry) = friction::registry::entry(model) else {
        return Ok(Start::default());
    };
    let sets = store.parameter_sets(None).await.map_err(store_error)?;
    let has = |n: &str| entry.params.iter().any(|p| p.name == n);
    let mut start = Start::default();
    if !procedure.fits_static_curve() {
        if let Some(set) = newest_static(&sets, model) {
            let names = stribeck_names(&set.model_id, has);
            add(&mut start, set, &names, entry.asymmetric, "static fit");
        } else if has("fs")
            && let Some(set) = newest_line(&sets)
        {
            let mut names = stribeck_names(&set.model_id, has);
            names.push(("fc".into(), "fs".into()));
            let what = "Coulomb + viscous static fit (fs = fc, no Stribeck rise fitted)";
            add(&mut start, set, &names, entry.asymmetric, what);
        }
    }
    if !procedure.fits_presliding()
        && let Some(set) = sets
            .iter()
            .filter(|s| s.model_id == model && fitted_by(s, Procedure::fits_presliding))
            .max_by_key(|s| s.id)
    {
        let names: Vec<(String, String)> = set
            .provenance
            .get("fitted")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|f| f.keys())
            .filter(|n| has(n))
            .map(|n| (n.clone(), n.clone()))
            .collect();
        add(&mut start, set, &names, false, "presliding fit");
    }
    Ok(start)
}

/// Whether the registry's procedure that fitted `set` is one `what` holds for (a set fitted by
/// a procedure no longer registered: no).
fn fitted_by(set: &ParameterSet, what: fn(&Procedure) -> bool) -> bool {
    set.provenance
        .get("procedure")
        .and_then(Value::as_str)
        .and_then(|name| procedures::procedure(name).ok())
        .is_some_and(what)
}

/// The newest `static_curve` set of `model`, else of a static source model.
fn newest_static<'a>(sets: &'a [ParameterSet], model: &str) -> Option<&'a ParameterSet> {
    std::iter::once(model)
        .chain(STATIC_SOURCES.iter().copied())
        .find_map(|m| newest_static_of(sets, m, &["fc", "fs", "vs"]))
}

/// The newest `static_curve` set of `coulomb_viscous` (the line a Stribeck model's steady
/// state reduces to when no rise was fitted).
fn newest_line(sets: &[ParameterSet]) -> Option<&ParameterSet> {
    newest_static_of(sets, "coulomb_viscous", &["fc"])
}

/// The newest set of `model` fitted by a static-curve procedure with every one of `values`
/// a number.
fn newest_static_of<'a>(
    sets: &'a [ParameterSet],
    model: &str,
    values: &[&str],
) -> Option<&'a ParameterSet> {
    sets.iter()
        .filter(|s| s.model_id == model && fitted_by(s, Procedure::fits_static_curve))
        .filter(|s| {
            values
                .iter()
                .all(|n| s.params.get(n).is_some_and(Value::is_number))
        })
        .max_by_key(|s| s.id)
}

/// `(source name, target name)` of the Stribeck-curve values a model (with the parameters
/// `has` accepts) takes from a static set of `source`: `fc`, `fs`, `vs`, `delta`, and the viscous coefficient by either name.
fn stribeck_names(source: &str, has: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = ["fc", "fs", "vs", "delta"]
        .into_iter()
        .filter(|n| has(n))
        .map(|n| (n.to_string(), n.to_string()))
        .collect();
    let from = friction::registry::entry(source).ok();
    let viscous_of =
        |has: &dyn Fn(&str) -> bool| VISCOUS.iter().copied().find(|n| has(n)).map(str::to_string);
    let source_has = |n: &str| from.is_some_and(|e| e.params.iter().any(|p| p.name == n));
    if let (Some(s), Some(t)) = (viscous_of(&source_has), viscous_of(&has)) {
        names.push((s, t));
    }
    names
}

/// Adds `set`'s values of `names` (and of its negative set when `per_side`) not yet taken.
fn add(
    start: &mut Start,
    set: &ParameterSet,
    names: &[(String, String)],
    per_side: bool,
    what: &str,
) {
    let mut values = Map::new();
    let pick = |from: &Map<String, Value>, out: &mut Map<String, Value>| {
        for (s, t) in names {
            if let Some(v) = from.get(s) {
                out.insert(t.clone(), v.clone());
            }
        }
    };
    if let Value::Object(p) = &set.params {
        pick(p, &mut values);
    }
    if per_side && let Some(Value::Object(neg)) = set.params.get("negative") {
        let mut n = Map::new();
        pick(neg, &mut n);
        if !n.is_empty() {
            values.insert("negative".into(), Value::Object(n));
        }
    }
    if let Some(offset) = set.provenance.pointer("/offset/value")
        && offset.is_number()
    {
        values.insert("offset".into(), offset.clone());
    }
    values.retain(|k, _| !start.values.contains_key(k));
    if values.is_empty() {
        return;
    }
    let note = format!(
        "start values {} from {what} parameter set {} '{}' ({})",
        Value::Object(values.clone()),
        set.id,
        set.name,
        set.model_id
    );
    start.sources.push(StartSource {
        set_id: set.id,
        set_name: set.name.clone(),
        model: set.model_id.clone(),
        values: values.clone(),
        note,
    });
    start.values.extend(values);
}
