//! `bench compare --estimate RUNS --validate RUNS --models IDS [--db PATH] [--json]`: fit every
//! chosen model on the estimation data and print the MSE table per regime (after Nnaji Tables
//! 6–7). RUNS are run ids of the run database or CSV files; when run ids are used, the table is
//! stored with the runs (`bench runs show ID` lists it) and its comparison id printed.

use super::InputError;
use super::run_data::{self, Selection};
use super::runs::{DbArgs, runtime, store_error};
use friction::identify::procedures::Offset;
use friction::identify::procedures::compare::{self, CompareOptions, ModelChoice, Regimes, Table};
use friction::identify::procedures::output_error::{Replay, Segment};
use run_store::{NewComparison, Store};
use std::io::Write;
use std::time::Duration;

/// Arguments of `bench compare`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "RUNS are run ids (integers: the run's samples as t,x,v,u,friction with u the applied \
and friction the measured torque) or CSV files (header t,x,v,u,friction as `bench simulate` \
writes them; extra columns are ignored; write ./12 for a file named 12). With run ids the table \
is stored in the run database and `bench runs show ID` lists it.\n\n\
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
    /// Print the table as JSON (with `comparison_id` when it was stored).
    #[arg(long)]
    json: bool,
}

/// One RUNS item: a stored run or a CSV file.
#[derive(Clone, Debug, PartialEq)]
enum Source {
    Run(i64),
    Csv(String),
}

impl Source {
    fn parse(text: &str) -> Source {
        match text.trim().parse::<i64>() {
            Ok(id) => Source::Run(id),
            Err(_) => Source::Csv(text.to_string()),
        }
    }
}

/// Reads the segments of `sources`; run ids come from `store`.
async fn read_sources(
    flag: &str,
    sources: &[Source],
    store: Option<&Store>,
) -> anyhow::Result<Vec<Segment>> {
    let mut out = Vec::with_capacity(sources.len());
    for s in sources {
        out.push(match (s, store) {
            (Source::Csv(path), _) => read_segment(path)?,
            (Source::Run(id), Some(store)) => {
                let run = run_data::load_run(store, *id, flag).await?;
                let ts = run_data::time_series(store, &run, &Selection::default()).await?;
                Segment::from_columns(&format!("run {id}"), &ts.names, &ts.cols)
                    .map_err(|e| InputError(format!("{flag}: {e}")))?
            }
            (Source::Run(_), None) => anyhow::bail!("BUG: run ids without a store"),
        });
    }
    Ok(out)
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
    let done = compare_stored(args)?;
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

/// The table as `bench compare --json` prints it (for `POST /api/comparisons`, which runs it
/// in-process).
pub fn compare_json(args: &CompareArgs) -> anyhow::Result<serde_json::Value> {
    Ok(compare_stored(args)?.json)
}

/// A comparison done (and stored when it used runs).
struct Done {
    table: Table,
    /// The table as JSON, with `comparison_id` once stored.
    json: serde_json::Value,
    stored: Option<i64>,
    /// What the residual is, in the bench's units.
    residual: String,
}

fn compare_stored(args: &CompareArgs) -> anyhow::Result<Done> {
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
    let mut models = args
        .models
        .iter()
        .map(|m| ModelChoice::parse(m).map_err(|e| InputError(format!("--models: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let est_src: Vec<Source> = args.estimate.iter().map(|s| Source::parse(s)).collect();
    let val_src: Vec<Source> = args.validate.iter().map(|s| Source::parse(s)).collect();
    let run_ids = |src: &[Source]| -> Vec<i64> {
        src.iter()
            .filter_map(|s| match s {
                Source::Run(id) => Some(*id),
                Source::Csv(_) => None,
            })
            .collect()
    };
    let files = |src: &[Source]| -> Vec<String> {
        src.iter()
            .filter_map(|s| match s {
                Source::Csv(p) => Some(p.clone()),
                Source::Run(_) => None,
            })
            .collect()
    };
    let (est_runs, val_runs) = (run_ids(&est_src), run_ids(&val_src));
    let uses_runs = !(est_runs.is_empty() && val_runs.is_empty());
    let rt = runtime()?;
    let store = if uses_runs {
        Some(rt.block_on(super::runs::open(&args.db))?)
    } else {
        None
    };
    // On the bench's runs, each model starts from the bench's own fits of it.
    let mut starts = serde_json::Map::new();
    if let Some(store) = &store {
        for m in &mut models {
            let start = rt.block_on(super::start::start_for(store, &m.model, "output_error"))?;
            if let serde_json::Value::Object(p) = &mut m.params {
                start.under(p);
            }
            if !start.sources.is_empty() {
                starts.insert(m.model.clone(), serde_json::json!(start.sources));
            }
        }
    }
    let estimate = rt.block_on(read_sources("--estimate", &est_src, store.as_ref()))?;
    let validate = rt.block_on(read_sources("--validate", &val_src, store.as_ref()))?;
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
        offset: if args.offset {
            Offset::Fit
        } else {
            Offset::None
        },
    };
    let table = compare::compare(&estimate, &validate, &models, &opts)
        .map_err(|e| InputError(e.to_string()))?;
    let mut table_json = serde_json::to_value(&table)?;
    // The residual in the bench's units (friction [N m] on a rotary bench).
    let geometry = crate::config::geometry_of(args.config.as_deref())?;
    let residual = match args.replay {
        ReplayKind::Velocity => format!("friction [{}]", geometry.force()),
        ReplayKind::Torque => format!("position [{}]", geometry.position()),
    };
    table_json["residual"] = serde_json::json!(residual);
    let stored = match &store {
        Some(store) => {
            let options = serde_json::json!({
                "replay": match args.replay {
                    ReplayKind::Velocity => "velocity",
                    ReplayKind::Torque => "torque",
                },
                "mass": (args.replay == ReplayKind::Torque).then_some(args.mass),
                "presliding_velocity": pv,
                "presliding_displacement": args.presliding_displacement,
                "max_iters": args.max_iters,
                "timeout_s": args.timeout_s,
                "offset": args.offset,
                "csv": {"estimate": files(&est_src), "validate": files(&val_src)},
                "start_from": starts,
            });
            if friction::identify::control::cancelled() {
                anyhow::bail!(super::fit::Cancelled);
            }
            let new = NewComparison {
                estimate_runs: est_runs,
                validate_runs: val_runs,
                models: args.models.clone(),
                options,
                table: table_json.clone(),
            };
            let id = rt
                .block_on(store.add_comparison(&new))
                .map_err(store_error)?;
            rt.block_on(store.close());
            Some(id)
        }
        None => None,
    };
    if let Some(id) = stored {
        table_json["comparison_id"] = serde_json::json!(id);
    }
    Ok(Done {
        table,
        json: table_json,
        stored,
        residual,
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
