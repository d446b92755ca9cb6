//! `bench fit --model ID --procedure NAME (--run ID [--db PATH] | --csv FILE) [--validate RUN|CSV]...
//! [--json]`.
//!
//! Runs one identification procedure of `friction::identify::procedures` on recorded data and
//! prints the fitted parameters (by the model's names), their standard errors, the residual MSE
//! and the provenance. CSV columns: `static_curve` reads `v,friction`, `phi_s` reads
//! `rate,breakaway`, the time-series procedures read the columns `bench simulate` writes
//! (`t,x,v,u,friction`). `--given` holds known values (held fixed) and procedure options.
//!
//! `--validate` (repeatable) scores the fitted set on each held-out record (a stored run's id or
//! a CSV file) the procedure's own way ([`bench_daemon::fitting::validate`]): JSON `validation`.
//!
//! From a stored run (`--run`) the flags make the same [`FitRequest`] as a `POST /api/fits`
//! body, fitted and saved by [`bench_daemon::fitting::fit_stored`].

use super::db::DbArgs;
use super::{InputError, json_arg};
use bench_daemon::fitting::validate::{Record, held_out};
use bench_daemon::fitting::{FitError, FitRequest, fit};
use friction::identify::procedures::{Given, PROCEDURES, Table};
use serde_json::Value;

/// Arguments of `bench fit`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["run", "csv"])))]
pub struct FitArgs {
    /// Model id whose parameters are fitted (see `bench models`).
    #[arg(long)]
    model: String,
    #[arg(long, help = procedures_help())]
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
    /// Held-out record to score the fitted set on (idim_ls, power_rls, output_error): a stored
    /// run's id or a CSV file; repeatable. JSON `validation`: rms, rel_error_pct, r2, n each.
    #[arg(long, value_name = "RUN|CSV")]
    validate: Vec<String>,
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
    let held: Vec<Record> = args.validate.iter().map(|v| Record::parse(v)).collect();
    let Some(run) = args.run else {
        let stored = held.iter().any(|r| matches!(r, Record::Run(_)));
        if args.db.db.is_some() && !stored {
            return Err(InputError("--db is used with --run or --validate RUN only".into()).into());
        }
        let csv = args.csv.as_deref().unwrap_or_default();
        let text = std::fs::read_to_string(csv)
            .map_err(|e| InputError(format!("--csv: cannot read {csv}: {e}")))?;
        let table = Table::from_csv(&text).map_err(|e| InputError(format!("--csv {csv}: {e}")))?;
        let mut report = fit::fit_table(&args.procedure, &args.model, &table, &given)
            .map_err(FitError::into_cli)?;
        report.validation =
            held_out(&report, &held, &args.db.path()).map_err(FitError::into_cli)?;
        return super::fit_print::print(args.json, args.config.as_deref(), &report, None);
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
        encoder_velocity: false,
    };
    let mut done =
        bench_daemon::fitting::fit_stored(&request, &args.db.path()).map_err(FitError::into_cli)?;
    done.report.validation =
        held_out(&done.report, &held, &args.db.path()).map_err(FitError::into_cli)?;
    super::fit_print::print(
        args.json,
        args.config.as_deref(),
        &done.report,
        Some((done.set_id, &done.name)),
    )
}

/// `--procedure`'s help: the registry's procedures, so that a new one is listed without an edit.
fn procedures_help() -> String {
    let names: Vec<&str> = PROCEDURES.iter().map(|p| p.name).collect();
    format!("Procedure: {}", names.join(", "))
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
