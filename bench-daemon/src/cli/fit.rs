//! `bench fit --model ID --procedure NAME (--run ID [--db PATH] | --csv FILE) [--json]`.
//!
//! Runs one identification procedure of `friction::identify::procedures` on recorded data and
//! prints the fitted parameters (by the model's names), their standard errors, the residual MSE
//! and the provenance. CSV columns: `static_curve` reads `v,friction`, `phi_s` reads
//! `rate,breakaway`, the time-series procedures read the columns `bench simulate` writes
//! (`t,x,v,u,friction`). `--given` holds known values (held fixed) and procedure options.
//!
//! From a stored run (`--run`) the flags make the same [`FitRequest`] as a `POST /api/fits`
//! body, fitted and saved by [`crate::fitting::fit_stored`].

use super::runs::DbArgs;
use super::{InputError, json_arg};
use crate::config::Geometry;
use crate::fitting::{FitError, FitRequest, fit};
use friction::identify::procedures::quality::Status;
use friction::identify::procedures::{FitReport, Given, Table};
use serde_json::Value;

/// Arguments of `bench fit`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["run", "csv"])))]
pub struct FitArgs {
    /// Model id whose parameters are fitted (see `bench models`).
    #[arg(long)]
    model: String,
    /// Procedure: static_curve, phi_s, power_rls, staircase, presliding_sine, step_damping,
    /// nnaji, lugre_regression, maxwell_slip, ruina_step, aep, output_error.
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
    /// Known values and options as JSON or @file, e.g. {"j": 0.167, "delta": 2}.
    #[arg(long)]
    given: Option<String>,
    /// Print the report as JSON (fitted values under `params`; `parameter_set_id` with --run).
    #[arg(long)]
    json: bool,
    /// Bench configuration whose `geometry` sets the printed units (default: rotary).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
}

/// Runs the fit and prints the report.
pub fn run(args: &FitArgs) -> anyhow::Result<()> {
    let given = given_of(args)?;
    let Some(run) = args.run else {
        if args.db.db.is_some() {
            return Err(InputError("--db is used with --run only".into()).into());
        }
        let csv = args.csv.as_deref().unwrap_or_default();
        let text = std::fs::read_to_string(csv)
            .map_err(|e| InputError(format!("--csv: cannot read {csv}: {e}")))?;
        let table = Table::from_csv(&text).map_err(|e| InputError(format!("--csv {csv}: {e}")))?;
        let report = fit::fit_table(&args.procedure, &args.model, &table, &given)
            .map_err(FitError::into_cli)?;
        return print(args, &report, None);
    };
    let request = FitRequest {
        model: args.model.clone(),
        procedure: args.procedure.clone(),
        run,
        given: Some(given),
        name: args.name.clone(),
        segments: args.segments.clone(),
        t_range: args.t_range.clone(),
        timeout_s: None,
    };
    let done = crate::fitting::fit_stored(&request, &args.db.path()).map_err(FitError::into_cli)?;
    print(args, &done.report, Some((done.set_id, &done.name)))
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

fn print(args: &FitArgs, report: &FitReport, saved: Option<(i64, &str)>) -> anyhow::Result<()> {
    if args.json {
        let json = fit::report_json(report, saved).map_err(FitError::into_cli)?;
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    let geometry = crate::config::geometry_of(args.config.as_deref())?;
    let p = &report.provenance;
    println!(
        "model {}  procedure {}  method {}  (units: {} bench)",
        p.model,
        p.procedure,
        p.method,
        geometry.name()
    );
    let units = Units {
        model: &p.model,
        geometry,
    };
    print_params(&units, "", &report.params, &report.std_errors);
    if let Some(mse) = report.mse {
        println!("mse {mse:e} {}", residual_unit(report, geometry));
    }
    let range = p
        .time_range_s
        .map(|[a, b]| format!(", t {a}..{b} s"))
        .unwrap_or_default();
    println!(
        "data: {} points, columns {}{range}",
        p.n_points,
        p.columns.join(",")
    );
    print_quality(report);
    for n in &p.notes {
        println!("note: {n}");
    }
    if let Some((id, name)) = saved {
        println!("saved parameter set {id} '{name}'");
    }
    Ok(())
}

/// How the printed parameters get their units.
struct Units<'a> {
    model: &'a str,
    geometry: Geometry,
}

impl Units<'_> {
    fn of(&self, name: &str) -> String {
        friction::units::param_unit(self.model, name, self.geometry)
            .filter(|u| u != "-")
            .map(|u| format!(" {u}"))
            .unwrap_or_default()
    }
}

/// The unit of the MSE: the squared residual (position in a torque replay, else friction).
fn residual_unit(report: &FitReport, g: Geometry) -> String {
    let position = report
        .details
        .pointer("/settings/replay/kind")
        .and_then(Value::as_str)
        == Some("torque");
    format!("({})^2", if position { g.position() } else { g.force() })
}

/// Termination, parameters at a bound, relative errors, condition and the verdict.
fn print_quality(report: &FitReport) {
    if let Some(t) = report.termination {
        let t = serde_json::to_value(t).unwrap_or_default();
        println!("termination: {}", t.as_str().unwrap_or_default());
    }
    if !report.at_bound.is_empty() {
        println!("at bound: {}", report.at_bound.join(", "));
    }
    if let Some(c) = report.condition {
        println!("condition (scaled JᵀJ): {c:.3e}");
    }
    let v = &report.verdict;
    match v.status {
        Status::Ok => println!("verdict: ok"),
        Status::Warning => {
            println!("verdict: WARNING");
            for r in &v.reasons {
                println!("  - {r}");
            }
        }
    }
}

fn print_params(
    units: &Units<'_>,
    prefix: &str,
    params: &serde_json::Map<String, serde_json::Value>,
    errors: &serde_json::Map<String, serde_json::Value>,
) {
    for (name, value) in params {
        match value {
            serde_json::Value::Object(sub) => {
                let empty = serde_json::Map::new();
                let sub_err = errors
                    .get(name)
                    .and_then(|e| e.as_object())
                    .unwrap_or(&empty);
                print_params(units, &format!("{prefix}{name}."), sub, sub_err);
            }
            v => {
                let unit = units.of(name);
                match (errors.get(name).and_then(|e| e.as_f64()), v.as_f64()) {
                    (Some(se), Some(x)) if x != 0.0 => println!(
                        "{prefix}{name} = {v}{unit}  ± {se:e}{unit} ({:.2} %)",
                        100.0 * se / x.abs()
                    ),
                    (Some(se), _) => println!("{prefix}{name} = {v}{unit}  ± {se:e}{unit}"),
                    (None, _) => println!("{prefix}{name} = {v}{unit}"),
                }
            }
        }
    }
}
