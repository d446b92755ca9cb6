//! `bench compare --estimate RUNS --validate RUNS --models IDS [--db PATH] [--json]`: fit every
//! chosen model on the estimation data and print the MSE table per regime (after Nnaji Tables
//! 6–7). RUNS are run ids of the run database or CSV files; when run ids are used, the table is
//! stored with the runs (`bench runs show ID` lists it) and its comparison id printed.

use super::db::DbArgs;
use bench_daemon::fitting::{CompareJob, FitError, ReplayKind, Source};
use friction::identify::procedures::compare::Table;
use std::io::Write;

/// Arguments of `bench compare`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "RUNS are run ids (integers: the run's samples as t,x,v,u,friction with u the applied \
and friction the measured torque) or CSV files (header t,x,v,u,friction as `bench simulate` \
writes them; extra columns are ignored; write ./12 for a file named 12). With run ids the table \
is stored in the run database and `bench runs show ID` lists it.\n\n\
With --replay inverse the records are t,x,u (an imported run, the EMPS files): every model is \
fitted by IDIM-LS on the one --estimate record (--given: its options) and scored by its force.\n\n\
Models: ID fits every parameter whose rules make it positive and whose default is > 0; \
ID=p1+p2 fits these; ID=none scores the defaults. Example: --models lugre=sigma0+sigma1+fc+fs+vs+sigma2,coulomb_viscous"
)]
pub struct CompareArgs {
    /// Estimation runs (run ids or CSV files), comma separated or repeated.
    #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
    estimate: Vec<String>,
    /// Validation runs (run ids or CSV files), comma separated or repeated.
    #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
    validate: Vec<String>,
    /// Models: ID, ID=p1+p2 or ID=none, comma separated.
    #[arg(long, required = true, value_delimiter = ',')]
    models: Vec<String>,
    /// Bench configuration whose `geometry` sets the residual's unit (default: rotary).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
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
    /// Wall-time budget per model fit \[s\].
    #[arg(long)]
    timeout_s: Option<f64>,
    /// Fit a constant force offset per model, subtracted from the measurement (a stored set's
    /// offset is always subtracted).
    #[arg(long)]
    offset: bool,
    #[command(flatten)]
    db: DbArgs,
    /// With `--replay inverse`: the options of every IDIM-LS fit, a JSON object (e.g.
    /// '{"asymmetric": true, "force_held": true}').
    #[arg(long, value_name = "JSON")]
    given: Option<String>,
    /// Print the table as JSON (with `comparison_id` when it was stored).
    #[arg(long)]
    json: bool,
}

/// Runs the comparison and prints the table.
pub fn run(args: &CompareArgs) -> anyhow::Result<()> {
    let done = job(args)?.run().map_err(FitError::into_cli)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &done.json)?;
        writeln!(out)?;
    } else {
        write_text(&mut out, &done.table, &done.residual)?;
        if let Some(id) = done.stored {
            writeln!(out, "stored as comparison {id}")?;
        }
    }
    Ok(())
}

/// The comparison the flags ask for.
fn job(args: &CompareArgs) -> anyhow::Result<CompareJob> {
    Ok(CompareJob {
        estimate: args.estimate.iter().map(|s| Source::parse(s)).collect(),
        validate: args.validate.iter().map(|s| Source::parse(s)).collect(),
        models: args.models.clone(),
        replay: args.replay,
        mass: args.mass,
        presliding_velocity: args.presliding_velocity,
        presliding_displacement: args.presliding_displacement,
        max_iters: args.max_iters,
        timeout_s: args.timeout_s,
        offset: args.offset,
        db: args.db.path(),
        geometry: bench_daemon::config::geometry_of(args.config.as_deref())?,
        given: match &args.given {
            None => serde_json::Map::new(),
            Some(text) => match serde_json::from_str(text) {
                Ok(serde_json::Value::Object(m)) => m,
                _ => {
                    return Err(bench_daemon::InputError(format!(
                        "--given {text}: must be a JSON object, e.g. '{{\"asymmetric\": true}}'"
                    ))
                    .into());
                }
            },
        },
    })
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.4e}"),
        _ => "-".into(),
    }
}

/// The table as text: one row per model, MSE per regime on estimation and validation data.
fn write_text(w: &mut impl Write, t: &Table, residual: &str) -> std::io::Result<()> {
    writeln!(
        w,
        "MSE of {residual} (presliding: |v| < {}{}), ranked by validation MSE",
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
                "{} ({}, {} iterations, {} evaluations) verdict {}",
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
                f.details["evaluations"],
                if f.verdict.reasons.is_empty() {
                    "ok".to_string()
                } else {
                    format!("WARNING: {}", f.verdict.reasons.join("; "))
                }
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
