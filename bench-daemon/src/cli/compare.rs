//! `bench compare --estimate FILES --validate FILES --models IDS [--json]`: fit every chosen
//! model on the estimation data and print the MSE table per regime (after Nnaji Tables 6–7).

use super::InputError;
use friction::identify::procedures::compare::{self, CompareOptions, ModelChoice, Regimes, Table};
use friction::identify::procedures::output_error::{Replay, Segment};
use std::io::Write;
use std::time::Duration;

/// Arguments of `bench compare`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "RUNS are CSV files for now (header t,x,v,u,friction as `bench simulate` \
writes them; extra columns are ignored); run ids of the run store will be accepted once it exists.\n\n\
Models: ID fits every parameter whose rules make it positive and whose default is > 0; \
ID=p1+p2 fits these; ID=none scores the defaults. Example: --models lugre=sigma0+sigma1+fc+fs+vs+sigma2,coulomb_viscous"
)]
pub struct CompareArgs {
    /// Estimation runs (CSV files), comma separated or repeated.
    #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
    estimate: Vec<String>,
    /// Validation runs (CSV files), comma separated or repeated.
    #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
    validate: Vec<String>,
    /// Models: ID, ID=p1+p2 or ID=none, comma separated.
    #[arg(long, required = true, value_delimiter = ',')]
    models: Vec<String>,
    /// Replay: `velocity` (friction error) or `torque` (position error through the plant).
    #[arg(long, value_enum, default_value_t = ReplayKind::Velocity)]
    replay: ReplayKind,
    /// Plant mass or inertia for `--replay torque` [kg or kg m^2].
    #[arg(long, default_value_t = 1.0)]
    mass: f64,
    /// |v| below this is presliding [m/s or rad/s].
    #[arg(long, default_value_t = 1e-3)]
    presliding_velocity: f64,
    /// Displacement since the last reversal within which motion is presliding [m or rad].
    #[arg(long)]
    presliding_displacement: Option<f64>,
    /// Levenberg–Marquardt iteration cap per model.
    #[arg(long, default_value_t = 100)]
    max_iters: u64,
    /// Wall-time budget per model fit [s].
    #[arg(long)]
    timeout_s: Option<f64>,
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
}

/// How the data drive the models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ReplayKind {
    Velocity,
    Torque,
}

/// Reads a CSV file with a header row into a segment (columns by name).
pub fn read_segment(path: &str) -> anyhow::Result<Segment> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("cannot read {path}: {e}")))?;
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let header = lines
        .next()
        .ok_or_else(|| InputError(format!("{path}: empty file")))?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != names.len() {
            return Err(InputError(format!(
                "{path}: row {} has {} fields, the header {}",
                i + 2,
                cells.len(),
                names.len()
            ))
            .into());
        }
        for (c, cell) in cols.iter_mut().zip(cells) {
            let x: f64 = cell.trim().parse().map_err(|_| {
                InputError(format!(
                    "{path}: row {}: '{}' is not a number",
                    i + 2,
                    cell.trim()
                ))
            })?;
            c.push(x);
        }
    }
    Segment::from_columns(path, &names, &cols).map_err(|e| InputError(e.to_string()).into())
}

/// Runs the comparison and prints the table.
pub fn run(args: &CompareArgs) -> anyhow::Result<()> {
    let pv = args.presliding_velocity;
    if !(pv.is_finite() && pv >= 0.0) {
        return Err(InputError(format!("--presliding-velocity ({pv}) must be >= 0")).into());
    }
    if let Some(d) = args
        .presliding_displacement
        .filter(|d| !(d.is_finite() && *d >= 0.0))
    {
        return Err(InputError(format!("--presliding-displacement ({d}) must be >= 0")).into());
    }
    if args.replay == ReplayKind::Torque && !(args.mass.is_finite() && args.mass > 0.0) {
        return Err(InputError(format!("--mass ({}) must be > 0", args.mass)).into());
    }
    let timeout = match args.timeout_s {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(InputError(format!("--timeout-s ({t}) must be > 0")).into());
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let models = args
        .models
        .iter()
        .map(|m| ModelChoice::parse(m).map_err(|e| InputError(format!("--models: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let estimate = args
        .estimate
        .iter()
        .map(|p| read_segment(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let validate = args
        .validate
        .iter()
        .map(|p| read_segment(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let opts = CompareOptions {
        replay: match args.replay {
            ReplayKind::Velocity => Replay::Velocity,
            ReplayKind::Torque => Replay::Torque { mass: args.mass },
        },
        regimes: Regimes {
            presliding_velocity: pv,
            presliding_displacement: args.presliding_displacement,
        },
        max_iters: args.max_iters,
        timeout,
    };
    let table = compare::compare(&estimate, &validate, &models, &opts)
        .map_err(|e| InputError(e.to_string()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &table)?;
        writeln!(out)?;
    } else {
        write_text(&mut out, &table)?;
    }
    Ok(())
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.4e}"),
        _ => "-".into(),
    }
}

/// The table as text: one row per model, MSE per regime on estimation and validation data.
fn write_text(w: &mut impl Write, t: &Table) -> std::io::Result<()> {
    writeln!(
        w,
        "MSE of {} (presliding: |v| < {}{}), ranked by validation MSE",
        t.residual,
        t.regimes.presliding_velocity,
        t.regimes
            .presliding_displacement
            .map_or(String::new(), |d| format!(
                " or within {d} of the last reversal"
            ))
    )?;
    writeln!(
        w,
        "{:<4} {:<22} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}  fit",
        "rank", "model", "est.pre", "est.gross", "est.all", "val.pre", "val.gross", "val.all"
    )?;
    for r in &t.rows {
        let fit = match (&r.fit, &r.error) {
            (_, Some(e)) => format!("error: {e}"),
            (Some(f), None) => format!(
                "{} ({}, {} iterations, {} evaluations)",
                f.details["fitted"]
                    .as_array()
                    .map(|a| a
                        .iter()
                        .filter_map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join("+"))
                    .unwrap_or_default(),
                f.provenance
                    .termination
                    .map_or("-".into(), |t| format!("{t:?}").to_lowercase()),
                f.details["iterations"],
                f.details["evaluations"]
            ),
            (None, None) => "defaults".into(),
        };
        writeln!(
            w,
            "{:<4} {:<22} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}  {fit}",
            r.rank,
            r.model,
            num(r.estimation.presliding),
            num(r.estimation.gross_sliding),
            num(Some(r.estimation.all)),
            num(r.validation.presliding),
            num(r.validation.gross_sliding),
            num(Some(r.validation.all)),
        )?;
    }
    Ok(())
}
