//! One identification procedure of `friction::identify::procedures` on a stored run, saved as
//! a named parameter set ([`fit_stored`]); the procedure alone on a table ([`fit_table`]).
//!
//! The table is built from what the run recorded: the Stribeck points of a
//! `constant_velocity_sweep` run's results (`static_curve`), the breakaway table of a
//! `torque_ramp` run's results (`phi_s`), or the run's samples as `t,x,v,u,friction` (see
//! [`super::run_data`]) for the time-series procedures, optionally cut by plan segments and run
//! time. The result is saved as the model's full parameter document (defaults overlaid with the
//! bench's earlier fits, then the fitted values, so `build_model` loads it) with the report's
//! provenance and `runs: [ID]`. A failed or cancelled fit saves nothing.

use super::run_data::{self, Selection};
use super::{Field, FitError, FitRequest, start};
use crate::InputError;
use experiments::{Results, Role};
use friction::identify::procedures::{self, FitReport, Given, Procedure, Reads, Table};
use run_store::{Run, Store};
use serde_json::{Map, Value, json};
use std::path::Path;

/// A fit done and saved.
#[derive(Debug)]
pub struct Fitted {
    /// The procedure's report.
    pub report: FitReport,
    /// The saved parameter set's id.
    pub set_id: i64,
    /// Its name.
    pub name: String,
}

impl Fitted {
    /// The report as `bench fit --json` prints it and `POST /api/fits` answers it: the
    /// report's fields with `parameter_set_id` and `parameter_set_name`.
    pub fn to_json(&self) -> Result<Value, FitError> {
        report_json(&self.report, Some((self.set_id, &self.name)))
    }
}

/// The report as JSON, with the saved set's id and name if one was saved.
pub fn report_json(report: &FitReport, saved: Option<(i64, &str)>) -> Result<Value, FitError> {
    let mut v = serde_json::to_value(report).map_err(anyhow::Error::from)?;
    if let Some((id, name)) = saved {
        v["parameter_set_id"] = json!(id);
        v["parameter_set_name"] = json!(name);
    }
    Ok(v)
}

/// The registry's procedure `name`: the request's procedure, read once at the edge; an unknown
/// one is an input error naming the known ones.
pub fn check_procedure(name: &str) -> Result<&'static Procedure, FitError> {
    procedures::procedure(name).map_err(|e| FitError::field(Field::Procedure, format!(": {e}")))
}

/// Fits the stored run of `req` in the run database at `db` and saves the result as a
/// parameter set (on a runtime of its own: call it from a blocking thread).
pub fn fit_stored(req: &FitRequest, db: &Path) -> Result<Fitted, FitError> {
    super::non_empty(Field::Model, &req.model)?;
    super::non_empty(Field::Procedure, &req.procedure)?;
    let sel = Selection::parse(req.segments.as_deref(), req.t_range.as_deref())?;
    let procedure = check_procedure(&req.procedure)?;
    if req.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        return Err(FitError::field(Field::Name, " must not be empty"));
    }
    on_store(db, async |store| fit_in(store, req, procedure, &sel).await)
}

/// Runs `f` on the run database at `db` on a runtime of its own, closing the store after it.
pub(super) fn on_store<T>(
    db: &Path,
    f: impl AsyncFnOnce(&Store) -> Result<T, FitError>,
) -> Result<T, FitError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?
        .block_on(async {
            let store = crate::db::open_existing(db)
                .await
                .map_err(input_or_failed)?;
            let done = f(&store).await;
            store.close().await;
            done
        })
}

/// An `anyhow` error carrying an [`InputError`] as one, any other as a failure.
fn input_or_failed(e: anyhow::Error) -> FitError {
    match e.downcast::<InputError>() {
        Ok(input) => FitError::Input(input),
        Err(e) => FitError::Failed(e),
    }
}

async fn fit_in(
    store: &Store,
    req: &FitRequest,
    procedure: &'static Procedure,
    sel: &Selection,
) -> Result<Fitted, FitError> {
    let id = req.run;
    let run = run_data::load_run(store, id, Field::Run).await?;
    let (table, notes) = run_table(store, &run, procedure, sel, req.encoder_velocity).await?;
    let mut given = req.given.clone().unwrap_or_default();
    let load_note = super::plant::load_from_run(&run, procedure, &mut given);
    let start = start::start_for(store, &req.model, procedure).await?;
    if procedure.iterates {
        start_under_params(&start, &mut given);
    }
    // A procedure taking the breakaway level `fs` (the bristle loop's, presliding_sine).
    let level = procedure
        .takes("fs")
        .then(|| bristle_level(&start, &mut given))
        .flatten();
    let mut report = fit_table(procedure.name, &req.model, &table, &given)?;
    if let Some(fs) = level {
        report.provenance.notes.push(format!(
            "given.fs = {fs} (the bristle loop's level): the smaller fs of the start values"
        ));
    }
    if friction::identify::control::cancelled() {
        return Err(FitError::Cancelled);
    }
    report.provenance.notes.extend(notes);
    report.provenance.notes.extend(load_note);
    report.provenance.notes.extend(start.notes());
    let (doc, other) = parameter_document(&req.model, &start.values, &report)?;
    let mut replayed = doc.clone();
    if let (Some(c), Value::Object(d)) = (report.param("offset"), &mut replayed) {
        d.insert("offset".into(), json!(c));
    }
    if let Some(replay) = replay(&req.model, &replayed, &table) {
        report.details["replay"] = replay;
    }
    let provenance = provenance(&report, &start, other, id, sel).map_err(anyhow::Error::from)?;
    let name = req
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-run{id}-{}", req.model, req.procedure));
    let set_id = store
        .add_parameter_set(&name, &req.model, &doc, &provenance)
        .await?;
    Ok(Fitted {
        report,
        set_id,
        name,
    })
}

/// The saved set's provenance: the report's, the run, the fit's quality, its start values and
/// the data selection.
fn provenance(
    report: &FitReport,
    start: &start::Start,
    other: Map<String, Value>,
    id: i64,
    sel: &Selection,
) -> serde_json::Result<Value> {
    let mut provenance = serde_json::to_value(&report.provenance)?;
    provenance["runs"] = json!([id]);
    if let Some(mse) = report.mse {
        provenance["mse"] = json!(mse);
    }
    provenance["std_errors"] = Value::Object(report.std_errors.clone());
    provenance["fitted"] = Value::Object(report.params.clone());
    provenance["at_bound"] = json!(report.at_bound);
    provenance["relative_std_errors"] = Value::Object(report.relative_std_errors.clone());
    provenance["condition"] = json!(report.condition);
    provenance["ci95"] = Value::Object(report.ci95.clone());
    provenance["n_eff"] = json!(report.n_eff);
    provenance["r2"] = json!(report.r2);
    provenance["aic"] = json!(report.aic);
    provenance["bic"] = json!(report.bic);
    if let Some(offset) = report.param("offset") {
        // Subtracted from the measured force wherever the set is used (lockstep, comparisons).
        provenance["offset"] = json!({
            "value": offset,
            "std_error": report.std_errors.get("offset"),
            "ci95": report.ci95.get("offset"),
        });
    }
    provenance["verdict"] = serde_json::to_value(&report.verdict)?;
    if let Some(first) = start.sources.first() {
        // The static source first, as before; every source under `start_sources`.
        provenance["start_from"] = serde_json::to_value(first)?;
        provenance["start_sources"] = json!(start.sources);
    }
    if !other.is_empty() {
        provenance["other_values"] = Value::Object(other);
    }
    if *sel != Selection::default() {
        provenance["selection"] = sel.to_json();
    }
    Ok(provenance)
}

/// Runs `procedure` for `model` on `table`; the procedure's input errors are input errors.
pub fn fit_table(
    procedure: &str,
    model: &str,
    table: &Table,
    given: &Given,
) -> Result<FitReport, FitError> {
    procedures::run(procedure, model, table, given).map_err(|e| {
        if e.is_input() {
            FitError::Input(InputError(e.to_string()))
        } else {
            FitError::Failed(anyhow::Error::new(e).context("fit failed"))
        }
    })
}

/// The registry's procedure `name`, an unknown one refused as the user's mistake.
pub(super) fn registered(name: &str) -> Result<&'static Procedure, FitError> {
    procedures::procedure(name).map_err(|e| FitError::Input(InputError(e.to_string())))
}

/// The procedure's table from what run `run` recorded, and notes on the data used.
pub(super) async fn run_table(
    store: &Store,
    run: &Run,
    proc: &'static Procedure,
    sel: &Selection,
    encoder_velocity: bool,
) -> Result<(Table, Vec<String>), FitError> {
    let imported = run.kind == run_store::IMPORTED_KIND;
    let (procedure, reads) = (proc.name, proc.reads);
    let wrong_kind = |works: &[&str]| {
        let also = match reads {
            Reads::BreakawayRates => "",
            _ => ", imported",
        };
        FitError::field(
            Field::Run,
            format!(
                " {}: procedure {procedure} cannot use a '{}' run (it uses: {}{also})",
                run.id,
                run.kind,
                works.join(", ")
            ),
        )
    };
    let from_results = |what: &str| {
        if sel != &Selection::default() {
            return Err(InputError(format!(
                "--segments/--t-range: procedure {procedure} reads the run's {what}, not its samples"
            )));
        }
        run_data::results(run)
    };
    let table = |cols: Vec<(String, Vec<f64>)>| {
        Table::new(cols)
            .map_err(|e| FitError::Failed(anyhow::anyhow!("BUG: table of run {}: {e}", run.id)))
    };
    match reads {
        Reads::SweepPoints if imported => imported_curve(store, run, sel).await,
        Reads::SweepPoints => {
            if run.kind != "constant_velocity_sweep" {
                return Err(wrong_kind(&["constant_velocity_sweep"]));
            }
            let Results::ConstantVelocitySweep(out) = from_results("Stribeck points")? else {
                return Err(InputError(format!(
                    "run {}: its results are not a constant_velocity_sweep analysis",
                    run.id
                ))
                .into());
            };
            // Points in stick-slip are averages over stick and slip, not the steady state.
            let all = || out.positive.iter().chain(&out.negative);
            let points: Vec<_> = all().filter(|p| !p.stick_slip).collect();
            let v = points.iter().map(|p| p.velocity_rad_s).collect();
            let f = points.iter().map(|p| p.mean_torque_nm).collect();
            let note = format!(
                "run {} (constant_velocity_sweep, {}): {} Stribeck points (+: {}, -: {}) from its results, {} in stick-slip left out",
                run.id,
                run.status,
                points.len(),
                points.iter().filter(|p| p.setpoint_rad_s >= 0.0).count(),
                points.iter().filter(|p| p.setpoint_rad_s < 0.0).count(),
                all().count() - points.len()
            );
            Ok((
                table(vec![("v".into(), v), ("friction".into(), f)])?,
                vec![note],
            ))
        }
        Reads::BreakawayRates => {
            if run.kind != "torque_ramp" {
                return Err(wrong_kind(&["torque_ramp"]));
            }
            let Results::TorqueRamp(out) = from_results("breakaway table")? else {
                return Err(InputError(format!(
                    "run {}: its results are not a torque_ramp analysis",
                    run.id
                ))
                .into());
            };
            let rows: Vec<_> = out.positive.iter().chain(&out.negative).collect();
            let rate = rows.iter().map(|r| r.rate_nm_s).collect();
            let brk = rows.iter().map(|r| r.breakaway_torque_nm).collect();
            let note = format!(
                "run {} (torque_ramp, {}): {} breakaway-vs-rate points (+: {}, -: {}) from its results",
                run.id,
                run.status,
                rows.len(),
                out.positive.len(),
                out.negative.len()
            );
            Ok((
                table(vec![("rate".into(), rate), ("breakaway".into(), brk)])?,
                vec![note],
            ))
        }
        Reads::TimeSeries(kinds) => {
            // A recording made elsewhere is whatever its owner fits it with.
            if let Some(works) =
                kinds.filter(|works| !imported && !works.contains(&run.kind.as_str()))
            {
                return Err(wrong_kind(works));
            }
            let (sel, part) = match part_of(run, proc, sel)? {
                Some((part, note)) => (part, Some(note)),
                None => (*sel, None),
            };
            let mut ts = run_data::time_series(store, run, &sel).await?;
            if encoder_velocity {
                ts.speed_from_encoder();
            }
            Ok((
                table(ts.named())?,
                part.into_iter().chain(ts.notes).collect(),
            ))
        }
    }
}

/// A recording's friction–velocity scatter, sample by sample (`static_curve` on an imported
/// run).
async fn imported_curve(
    store: &Store,
    run: &Run,
    sel: &Selection,
) -> Result<(Table, Vec<String>), FitError> {
    let ts = run_data::time_series(store, run, sel).await?;
    let named = ts.named();
    let col = |n: &str| named.iter().find(|(k, _)| k == n).map(|(_, c)| c.clone());
    let (Some(v), Some(f)) = (col("v"), col("friction")) else {
        return Err(FitError::field(
            Field::Run,
            format!(
                " {}: static_curve reads the v and friction columns, and this imported recording has {}",
                run.id,
                ts.names.join(", ")
            ),
        ));
    };
    let table = Table::new(vec![("v".into(), v), ("friction".into(), f)])
        .map_err(|e| FitError::Failed(anyhow::anyhow!("BUG: table of run {}: {e}", run.id)))?;
    Ok((table, ts.notes))
}

/// A part's roles as the plan names them (a name the registry gives that no role has is a bug
/// the registry test catches first).
fn part_roles(part: &procedures::Part) -> Result<Vec<Role>, FitError> {
    part.roles
        .iter()
        .map(|r| {
            serde_json::from_value(json!(r)).map_err(|e| {
                FitError::Failed(anyhow::anyhow!("BUG: part '{}': role {r}: {e}", part.name))
            })
        })
        .collect()
}

/// Without `--segments`/`--t-range`, a presliding procedure reads its own part of a
/// `presliding` run: the selection of that part's segments and a note saying so.
fn part_of(
    run: &Run,
    procedure: &Procedure,
    sel: &Selection,
) -> Result<Option<(Selection, String)>, FitError> {
    let Some(part) = procedure.part else {
        return Ok(None);
    };
    let procedure = procedure.name;
    let roles = part_roles(&part)?;
    let part = part.name;
    if run.kind != "presliding" || *sel != Selection::default() {
        return Ok(None);
    }
    let plan = run_data::plan(run)?;
    let of_part: Vec<u32> = (0..plan.segments.len() as u32)
        .filter(|&i| roles.contains(&plan.segments[i as usize].tag.role))
        .collect();
    let (Some(&a), Some(&b)) = (of_part.first(), of_part.last()) else {
        return Err(FitError::field(
            Field::Run,
            format!(
                " {}: procedure {procedure} reads the '{part}' part of a presliding run, and this run has none (its spec's params.parts)",
                run.id
            ),
        ));
    };
    let sel = Selection {
        segments: Some((Some(a), Some(b + 1))),
        t_range: None,
    };
    let note = format!(
        "the run's '{part}' part: segments {a}..{} (--segments chooses others)",
        b + 1
    );
    Ok(Some((sel, note)))
}

/// Points of the replay a report carries (the dashboard draws them).
const REPLAY_POINTS: usize = 2000;

/// The stored set replayed on the fitted time series, velocity-driven: `{"t", "measured",
/// "model"}` (friction, decimated to about [`REPLAY_POINTS`]), so that the model's output can
/// be seen against the measurement it was fitted to (the measurement less the set's offset,
/// when it has one). `None` for tables that are not time series (sweep points, breakaway
/// tables).
fn replay(model: &str, doc: &Value, table: &Table) -> Option<Value> {
    use friction::identify::procedures::output_error::{self, Replay, Segment};
    let names = run_data::TimeSeries::NAMES;
    if !names.iter().all(|n| table.get(n).is_some()) {
        return None;
    }
    let seg = Segment::from_table("fit", table).ok()?;
    let residual = output_error::residuals_of(model, doc, &[seg], Replay::Velocity).ok()?;
    let (t, measured) = (table.get("t")?, table.get("friction")?);
    let every = t.len().div_ceil(REPLAY_POINTS).max(1);
    let pick = |c: &[f64]| c.iter().step_by(every).copied().collect::<Vec<f64>>();
    let offset = doc.get("offset").and_then(Value::as_f64).unwrap_or(0.0);
    let measured: Vec<f64> = measured.iter().map(|m| m - offset).collect();
    let model_out: Vec<f64> = residual[0]
        .iter()
        .zip(&measured)
        .map(|(r, m)| r + m)
        .collect();
    Some(json!({
        "t": pick(t),
        "measured": pick(&measured),
        "model": pick(&model_out),
        "every": every,
    }))
}

/// The bristle level `given.fs` (of `presliding_sine`), when the user gave none: the smaller `fs` of
/// the start values (the sine crosses both directions). Returns the value it put there.
fn bristle_level(start: &start::Start, given: &mut Given) -> Option<f64> {
    if given.contains_key("fs") {
        return None;
    }
    let v = &start.values;
    let pos = v.get("fs").and_then(Value::as_f64)?;
    let neg = v
        .get("negative")
        .and_then(|n| n.get("fs"))
        .and_then(Value::as_f64)
        .unwrap_or(pos);
    let fs = pos.abs().min(neg.abs());
    given.insert("fs".into(), json!(fs));
    Some(fs)
}

/// The start values under `given.params`, below the user's.
fn start_under_params(start: &start::Start, given: &mut Given) {
    let mut params = match given.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return, // the procedure reports the bad value
    };
    start.under(&mut params);
    if !params.is_empty() {
        given.insert("params".into(), Value::Object(params));
    }
}

/// The model's full parameter document: its defaults overlaid with the start values from the
/// bench's earlier fits, then with the fitted values (a `negative` set overlaid on the full
/// positive one), checked by building the model. Fitted values that are not parameters of the
/// model (an inertia, a plant mass) are returned apart.
fn parameter_document(
    model: &str,
    start: &Map<String, Value>,
    report: &FitReport,
) -> Result<(Value, Map<String, Value>), FitError> {
    let entry = friction::registry::entry(model).map_err(|e| InputError(e.to_string()))?;
    let Value::Object(mut doc) = entry.defaults() else {
        return Err(FitError::Failed(anyhow::anyhow!(
            "BUG: the defaults of {model} are not a JSON object"
        )));
    };
    for (k, v) in start {
        if k != "negative" && doc.contains_key(k) {
            doc.insert(k.clone(), v.clone());
        }
    }
    let mut other = Map::new();
    for (k, v) in &report.params {
        if k == "negative" {
            continue;
        }
        if doc.contains_key(k) {
            doc.insert(k.clone(), v.clone());
        } else {
            other.insert(k.clone(), v.clone());
        }
    }
    let start_neg = start.get("negative").and_then(Value::as_object);
    let fitted_neg = report.params.get("negative").and_then(Value::as_object);
    if entry.asymmetric && (start_neg.is_some() || fitted_neg.is_some()) {
        let mut n = doc.clone();
        for (k, v) in start_neg.into_iter().flatten() {
            // A value fitted for both sides at once (no fitted negative set) wins over it.
            if n.contains_key(k) && (fitted_neg.is_some() || !report.params.contains_key(k)) {
                n.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in fitted_neg.into_iter().flatten() {
            if n.contains_key(k) {
                n.insert(k.clone(), v.clone());
            } else {
                other.insert(format!("negative.{k}"), v.clone());
            }
        }
        doc.insert("negative".into(), Value::Object(n));
    }
    let doc = Value::Object(doc);
    entry.build(doc.clone()).map_err(|e| {
        anyhow::anyhow!("the fitted values do not make a valid {model} model ({e}); nothing saved")
    })?;
    Ok((doc, other))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part the registry declares names roles a plan has; every run kind it names is a
    /// kind (or an imported recording).
    #[test]
    fn the_registry_names_only_roles_and_kinds_that_exist() {
        for p in procedures::PROCEDURES {
            if let Some(part) = &p.part {
                assert!(part_roles(part).is_ok(), "{}: {part:?}", p.name);
            }
            for kind in p.reads.run_kinds().unwrap_or_default() {
                assert!(
                    experiments::Kind::NAMES.contains(kind) || *kind == run_store::IMPORTED_KIND,
                    "{}: run kind {kind}",
                    p.name
                );
            }
        }
        let bogus = procedures::Part {
            name: "bogus",
            roles: &["no_such_role"],
        };
        assert!(part_roles(&bogus).is_err());
    }
}
