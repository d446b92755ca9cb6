//! `bench fit --model ID --procedure NAME --csv FILE [--given JSON|@file] [--json]`.
//!
//! Runs one identification procedure of `friction::identify::procedures` on recorded data and
//! prints the fitted parameters (by the model's names), their standard errors, the residual MSE
//! and the provenance. CSV columns: `static_curve` reads `v,friction`, `phi_s` reads
//! `rate,breakaway`, the time-series procedures read the columns `bench simulate` writes
//! (`t,x,v,u,friction`). `--given` holds known values (held fixed) and procedure options.

use super::{InputError, json_arg};
use friction::identify::procedures::{self, Given, Table};

/// Arguments of `bench fit`.
#[derive(Debug, clap::Args)]
pub struct FitArgs {
    /// Model id whose parameters are fitted (see `bench models`).
    #[arg(long)]
    model: String,
    /// Procedure: static_curve, phi_s, power_rls, staircase, presliding_sine, step_damping,
    /// lugre_regression, ruina_step, ...
    #[arg(long)]
    procedure: String,
    /// CSV file with a header of column names.
    #[arg(long)]
    csv: String,
    /// Known values and options as JSON or @file, e.g. {"j": 0.167, "delta": 2}.
    #[arg(long)]
    given: Option<String>,
    /// Print the report as JSON (fitted values under `params`).
    #[arg(long)]
    json: bool,
}

/// Runs the fit and prints the report.
pub fn run(args: &FitArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.csv)
        .map_err(|e| InputError(format!("--csv: cannot read {}: {e}", args.csv)))?;
    let table =
        Table::from_csv(&text).map_err(|e| InputError(format!("--csv {}: {e}", args.csv)))?;
    let given: Given = match &args.given {
        Some(g) => match json_arg("--given", g)? {
            serde_json::Value::Object(m) => m,
            _ => return Err(InputError("--given must be a JSON object".into()).into()),
        },
        None => Given::new(),
    };
    let report = procedures::run(&args.procedure, &args.model, &table, &given).map_err(
        |e| -> anyhow::Error {
            if e.is_input() {
                InputError(e.to_string()).into()
            } else {
                anyhow::Error::new(e).context("fit failed")
            }
        },
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let p = &report.provenance;
    println!(
        "model {}  procedure {}  method {}",
        p.model, p.procedure, p.method
    );
    print_params("", &report.params, &report.std_errors);
    if let Some(mse) = report.mse {
        println!("mse {mse:e}");
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
    if let Some(t) = p.termination {
        println!("termination: {t:?}");
    }
    for n in &p.notes {
        println!("note: {n}");
    }
    Ok(())
}

fn print_params(
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
                print_params(&format!("{prefix}{name}."), sub, sub_err);
            }
            v => match errors.get(name).and_then(|e| e.as_f64()) {
                Some(se) => println!("{prefix}{name} = {v}  ± {se:e}"),
                None => println!("{prefix}{name} = {v}"),
            },
        }
    }
}
