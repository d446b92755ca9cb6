//! `bench params list|show`: the stored parameter sets (saved by `bench fit --run`, or given).

use super::db::{DbArgs, open, runtime, store_error};
use bench_daemon::config::Geometry;
use run_store::ParameterSet;
use std::io::Write;

/// `bench params` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ParamsCommand {
    /// List parameter sets, newest first.
    List(ListArgs),
    /// Show one parameter set: its parameters and provenance.
    Show(ShowArgs),
}

/// Arguments of `bench params list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only the sets of this model id.
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    db: DbArgs,
    /// Print JSON: `[{id, name, model_id, params, provenance, created_at}]`.
    #[arg(long)]
    json: bool,
}

/// Arguments of `bench params show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Parameter set id, or name (the newest set with that name).
    #[arg(value_name = "ID|NAME")]
    set: String,
    #[command(flatten)]
    db: DbArgs,
    /// Print the whole record as JSON.
    #[arg(long)]
    json: bool,
    /// Bench configuration whose `geometry` sets the units shown (default: rotary).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
}

/// Runs a `bench params` subcommand.
pub fn run(cmd: &ParamsCommand) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        match cmd {
            ParamsCommand::List(args) => list(args).await,
            ParamsCommand::Show(args) => show(args).await,
        }
    })
}

async fn list(args: &ListArgs) -> anyhow::Result<()> {
    let store = open(&args.db).await?;
    let sets = store
        .parameter_sets(args.model.as_deref())
        .await
        .map_err(store_error)?;
    let mut w = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut w, &sets)?;
        writeln!(w)?;
        return Ok(());
    }
    writeln!(
        w,
        "{:>6}  {:<20}  {:<24}  {:<16}  name",
        "id", "model", "created", "runs"
    )?;
    for s in &sets {
        let runs = s
            .provenance
            .get("runs")
            .map_or_else(|| "-".to_string(), |r| r.to_string());
        writeln!(
            w,
            "{:>6}  {:<20}  {:<24}  {:<16}  {}",
            s.id, s.model_id, s.created_at, runs, s.name
        )?;
    }
    Ok(())
}

async fn show(args: &ShowArgs) -> anyhow::Result<()> {
    let store = open(&args.db).await?;
    let set = match args.set.parse::<i64>() {
        Ok(id) => store.parameter_set(id).await,
        Err(_) => store.parameter_set_by_name(&args.set).await,
    }
    .map_err(store_error)?;
    let mut w = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut w, &set)?;
        writeln!(w)?;
    } else {
        let geometry = bench_daemon::config::geometry_of(args.config.as_deref())?;
        write_set(&mut w, &set, geometry)?;
    }
    Ok(())
}

fn write_set(w: &mut impl Write, s: &ParameterSet, g: Geometry) -> std::io::Result<()> {
    writeln!(w, "parameter set {}: {} ({})", s.id, s.name, s.model_id)?;
    writeln!(w, "  created:    {}", s.created_at)?;
    writeln!(w, "  params ({} bench units):", g.name())?;
    write_values(w, &s.model_id, "", &s.params, g)?;
    if let Some(v) = s.provenance.get("verdict") {
        let status = v["status"].as_str().unwrap_or("?");
        writeln!(w, "  verdict:    {status}")?;
        for r in v["reasons"].as_array().into_iter().flatten() {
            writeln!(w, "    - {}", r.as_str().unwrap_or_default())?;
        }
    }
    writeln!(w, "  provenance:")?;
    let text = serde_json::to_string_pretty(&s.provenance).unwrap_or_default();
    for line in text.lines() {
        writeln!(w, "    {line}")?;
    }
    Ok(())
}

/// `name = value unit` per parameter (a nested set, e.g. `negative`, prefixed).
fn write_values(
    w: &mut impl Write,
    model: &str,
    prefix: &str,
    v: &serde_json::Value,
    g: Geometry,
) -> std::io::Result<()> {
    let Some(obj) = v.as_object() else {
        return writeln!(w, "    {prefix}{v}");
    };
    for (k, x) in obj {
        if x.is_object() {
            write_values(w, model, &format!("{prefix}{k}."), x, g)?;
            continue;
        }
        let unit = friction::units::param_unit(model, k, g)
            .filter(|u| u != "-")
            .map(|u| format!(" {u}"))
            .unwrap_or_default();
        writeln!(w, "    {prefix}{k} = {x}{unit}")?;
    }
    Ok(())
}
