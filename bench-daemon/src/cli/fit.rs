//! `bench fit --model ID --procedure NAME (--run ID [--db PATH] | --csv FILE) [--json]`.
//!
//! Runs one identification procedure of `friction::identify::procedures` on recorded data and
//! prints the fitted parameters (by the model's names), their standard errors, the residual MSE
//! and the provenance. CSV columns: `static_curve` reads `v,friction`, `phi_s` reads
//! `rate,breakaway`, the time-series procedures read the columns `bench simulate` writes
//! (`t,x,v,u,friction`). `--given` holds known values (held fixed) and procedure options.
//!
//! From a stored run (`--run`), the table is built from what the run recorded: the Stribeck
//! points of a `constant_velocity_sweep` run's results (`static_curve`), the breakaway table of a
//! `torque_ramp` run's results (`phi_s`), or the run's samples as `t,x,v,u,friction` (see
//! [`super::run_data`]) for the time-series procedures, optionally cut with `--segments` and
//! `--t-range`. The result is then saved as a named parameter set: the model's full parameter
//! document (defaults overlaid with the fitted values, so `build_model` loads it) with the
//! report's provenance and `runs: [ID]`. A failed fit saves nothing.

use super::run_data::{self, Selection};
use super::runs::{DbArgs, runtime, store_error};
use super::{InputError, json_arg, start};
use experiments::{Kind, Results, Role};
use friction::identify::procedures::{self, FitReport, Given, PROCEDURES, Table};
use run_store::{Run, Store};
use serde_json::{Map, Value, json};

/// Arguments of `bench fit`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["run", "csv"])))]
pub struct FitArgs {
    /// Model id whose parameters are fitted (see `bench models`).
    #[arg(long)]
    model: String,
    /// Procedure: static_curve, phi_s, idim_ls, power_rls, staircase, presliding_sine,
    /// step_damping, nnaji, lugre_regression, maxwell_slip, ruina_step, aep, output_error.
    #[arg(long)]
    procedure: String,
    /// Stored run to fit (see `bench runs list`); the result is saved as a parameter set.
    #[arg(long, value_name = "ID")]
    run: Option<i64>,
    /// CSV file with a header of column names.
    #[arg(long, value_name = "FILE")]
    csv: Option<String>,
    #[command(flatten)]
    db: DbArgs,
    /// With --run, time-series procedures: plan segment indices A..B (B excluded; A.. or ..B).
    #[arg(long, value_name = "A..B", requires = "run")]
    segments: Option<String>,
    /// With --run, time-series procedures: run time A..B \[s\] (both included; A.. or ..B).
    #[arg(long, value_name = "A..B", requires = "run")]
    t_range: Option<String>,
    /// With --run: name of the saved parameter set (default `<model>`-run`<ID>`-`<procedure>`).
    #[arg(long, requires = "run")]
    name: Option<String>,
    /// Known values and options as JSON or @file, e.g. {"j": 0.167, "delta": 2} or
    /// {"offset": true}; keys a procedure does not take are refused.
    #[arg(long)]
    given: Option<String>,
    /// Print the report as JSON (fitted values under `params`; `parameter_set_id` with --run).
    #[arg(long)]
    json: bool,
    /// Bench configuration whose `geometry` sets the printed units (default: rotary).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
}

/// The run kinds each time-series procedure can use (`aep` and `output_error`: any kind).
const TIME_SERIES_KINDS: &[(&str, &[&str])] = &[
    ("idim_ls", &["prbs", "validation_profile", "imported"]),
    ("power_rls", &["prbs", "validation_profile", "imported"]),
    ("staircase", &["breakaway_staircase"]),
    ("presliding_sine", &["presliding"]),
    ("step_damping", &["presliding"]),
    ("nnaji", &["presliding", "frictional_lag"]),
    ("lugre_regression", &["presliding"]),
    ("maxwell_slip", &["presliding"]),
    ("ruina_step", &["constant_velocity_sweep", "frictional_lag"]),
    ("aep", Kind::NAMES),
    ("output_error", Kind::NAMES),
];

/// Runs the fit and prints the report.
pub fn run(args: &FitArgs) -> anyhow::Result<()> {
    let given = given_of(args)?;
    let Some(id) = args.run else {
        if args.db.db.is_some() {
            return Err(InputError("--db is used with --run only".into()).into());
        }
        let csv = args.csv.as_deref().unwrap_or_default();
        let text = std::fs::read_to_string(csv)
            .map_err(|e| InputError(format!("--csv: cannot read {csv}: {e}")))?;
        let table = Table::from_csv(&text).map_err(|e| InputError(format!("--csv {csv}: {e}")))?;
        let report = fit(args, &table, &given)?;
        return super::fit_print::print(args.json, args.config.as_deref(), &report, None);
    };
    let sel = Selection::parse(args.segments.as_deref(), args.t_range.as_deref())?;
    check_procedure(&args.procedure)?;
    let (report, set, name) = runtime()?.block_on(fit_stored(args, given, id, &sel))?;
    super::fit_print::print(
        args.json,
        args.config.as_deref(),
        &report,
        Some((set, &name)),
    )
}

/// The fit of stored run `id` as `bench fit --run ID --json` prints it (for `POST /api/fits`,
/// which runs it in-process).
pub fn fit_json(args: &FitArgs) -> anyhow::Result<Value> {
    let id = args
        .run
        .ok_or_else(|| InputError("--run: a stored run is required".into()))?;
    let given = given_of(args)?;
    let sel = Selection::parse(args.segments.as_deref(), args.t_range.as_deref())?;
    check_procedure(&args.procedure)?;
    let (report, set, name) = runtime()?.block_on(fit_stored(args, given, id, &sel))?;
    report_json(&report, Some((set, &name)))
}

/// `--given` as an object (empty without it).
fn given_of(args: &FitArgs) -> anyhow::Result<Given> {
    match &args.given {
        Some(g) => match json_arg("--given", g)? {
            Value::Object(m) => Ok(m),
            _ => Err(InputError("--given must be a JSON object".into()).into()),
        },
        None => Ok(Given::new()),
    }
}

/// An unknown procedure is an input error naming the known ones.
fn check_procedure(procedure: &str) -> anyhow::Result<()> {
    if PROCEDURES.iter().any(|p| p.name == procedure) {
        return Ok(());
    }
    let known: Vec<&str> = PROCEDURES.iter().map(|p| p.name).collect();
    Err(InputError(format!(
        "--procedure: unknown procedure '{procedure}' (known: {})",
        known.join(", ")
    ))
    .into())
}

/// Fits stored run `id` and saves the result as a parameter set; returns the report, the
/// set's id and its name.
async fn fit_stored(
    args: &FitArgs,
    given: Given,
    id: i64,
    sel: &Selection,
) -> anyhow::Result<(FitReport, i64, String)> {
    let store = super::runs::open(&args.db).await?;
    let run = run_data::load_run(&store, id, "--run").await?;
    let (table, notes) = run_table(&store, &run, &args.procedure, sel).await?;
    let mut given = given;
    let start = start::start_for(&store, &args.model, &args.procedure).await?;
    if ITERATIVE.contains(&args.procedure.as_str()) {
        start_under_params(&start, &mut given);
    }
    let mut report = fit(args, &table, &given)?;
    if friction::identify::control::cancelled() {
        anyhow::bail!(Cancelled);
    }
    report.provenance.notes.extend(notes);
    report.provenance.notes.extend(start.notes());
    let (doc, other) = parameter_document(&args.model, &start.values, &report)?;
    let mut replayed = doc.clone();
    if let (Some(c), Value::Object(d)) = (report.param("offset"), &mut replayed) {
        d.insert("offset".into(), json!(c));
    }
    if let Some(replay) = replay(&args.model, &replayed, &table) {
        report.details["replay"] = replay;
    }
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
        provenance["start_from"] = first.clone();
        provenance["start_sources"] = json!(start.sources);
    }
    if !other.is_empty() {
        provenance["other_values"] = Value::Object(other);
    }
    if *sel != Selection::default() {
        provenance["selection"] = sel.to_json();
    }
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-run{id}-{}", args.model, args.procedure));
    if name.trim().is_empty() {
        return Err(InputError("--name must not be empty".into()).into());
    }
    let set = store
        .add_parameter_set(&name, &args.model, &doc, &provenance)
        .await
        .map_err(store_error)?;
    store.close().await;
    Ok((report, set, name))
}

/// A fit or comparison cancelled from outside (`DELETE /api/fits/{id}`): nothing was stored.
#[derive(Debug, thiserror::Error)]
#[error("cancelled: nothing was stored")]
pub struct Cancelled;

/// Runs the procedure; its input errors exit with code 2.
fn fit(args: &FitArgs, table: &Table, given: &Given) -> anyhow::Result<FitReport> {
    procedures::run(&args.procedure, &args.model, table, given).map_err(|e| -> anyhow::Error {
        if e.is_input() {
            InputError(e.to_string()).into()
        } else {
            anyhow::Error::new(e).context("fit failed")
        }
    })
}

/// The procedure's table from what run `run` recorded, and notes on the data used.
async fn run_table(
    store: &Store,
    run: &Run,
    procedure: &str,
    sel: &Selection,
) -> anyhow::Result<(Table, Vec<String>)> {
    let imported = run.kind == run_store::IMPORTED_KIND;
    let wrong_kind = |works: &[&str]| {
        let also = if procedure == "phi_s" {
            ""
        } else {
            ", imported"
        };
        InputError(format!(
            "--run {}: procedure {procedure} cannot use a '{}' run (it uses: {}{also})",
            run.id,
            run.kind,
            works.join(", ")
        ))
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
        Table::new(cols).map_err(|e| anyhow::anyhow!("BUG: table of run {}: {e}", run.id))
    };
    match procedure {
        "static_curve" if imported => {
            // A recording's friction–velocity scatter, sample by sample.
            let ts = run_data::time_series(store, run, sel).await?;
            let named = ts.named();
            let col = |n: &str| named.iter().find(|(k, _)| k == n).map(|(_, c)| c.clone());
            let (Some(v), Some(f)) = (col("v"), col("friction")) else {
                return Err(InputError(format!(
                    "--run {}: static_curve reads the v and friction columns, and this imported recording has {}",
                    run.id,
                    ts.names.join(", ")
                ))
                .into());
            };
            Ok((
                table(vec![("v".into(), v), ("friction".into(), f)])?,
                ts.notes,
            ))
        }
        "static_curve" => {
            if run.kind != "constant_velocity_sweep" {
                return Err(wrong_kind(&["constant_velocity_sweep"]).into());
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
        "phi_s" => {
            if run.kind != "torque_ramp" {
                return Err(wrong_kind(&["torque_ramp"]).into());
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
        _ => {
            let works = TIME_SERIES_KINDS
                .iter()
                .find(|(p, _)| *p == procedure)
                .map(|(_, k)| *k)
                .ok_or_else(|| {
                    anyhow::anyhow!("BUG: procedure {procedure} has no run kinds listed")
                })?;
            // A recording made elsewhere is whatever its owner fits it with.
            if !imported && !works.contains(&run.kind.as_str()) {
                return Err(wrong_kind(works).into());
            }
            let (sel, part) = match part_of(run, procedure, sel)? {
                Some((part, note)) => (part, Some(note)),
                None => (*sel, None),
            };
            let ts = run_data::time_series(store, run, &sel).await?;
            Ok((
                table(ts.named())?,
                part.into_iter().chain(ts.notes).collect(),
            ))
        }
    }
}

/// The part of a presliding run each presliding procedure reads.
const PRESLIDING_PARTS: &[(&str, Role, &str)] = &[
    ("presliding_sine", Role::TorqueSine, "sine"),
    ("step_damping", Role::TorqueStep, "step"),
    ("maxwell_slip", Role::DisplacementRamp, "ramp"),
    ("lugre_regression", Role::Reversals, "reversals"),
];

/// Without `--segments`/`--t-range`, a presliding procedure reads its own part of a
/// `presliding` run: the selection of that part's segments and a note saying so.
fn part_of(
    run: &Run,
    procedure: &str,
    sel: &Selection,
) -> anyhow::Result<Option<(Selection, String)>> {
    let Some((_, role, part)) = PRESLIDING_PARTS.iter().find(|p| p.0 == procedure) else {
        return Ok(None);
    };
    if run.kind != "presliding" || *sel != Selection::default() {
        return Ok(None);
    }
    let plan = run_data::plan(run)?;
    let of_part: Vec<u32> = (0..plan.segments.len() as u32)
        .filter(|&i| plan.segments[i as usize].tag.role == *role)
        .collect();
    let (Some(&a), Some(&b)) = (of_part.first(), of_part.last()) else {
        return Err(InputError(format!(
            "--run {}: procedure {procedure} reads the '{part}' part of a presliding run, and this run has none (its spec's params.parts)",
            run.id
        ))
        .into());
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

/// Procedures that iterate from start values (`given.params`).
const ITERATIVE: &[&str] = &["output_error", "aep"];

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
) -> anyhow::Result<(Value, Map<String, Value>)> {
    let entry = friction::registry::entry(model).map_err(|e| InputError(e.to_string()))?;
    let Value::Object(mut doc) = entry.defaults() else {
        anyhow::bail!("BUG: the defaults of {model} are not a JSON object");
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

/// The report as `--json` prints it.
pub(super) fn report_json(report: &FitReport, saved: Option<(i64, &str)>) -> anyhow::Result<Value> {
    let mut v = serde_json::to_value(report)?;
    if let Some((id, name)) = saved {
        v["parameter_set_id"] = json!(id);
        v["parameter_set_name"] = json!(name);
    }
    Ok(v)
}
