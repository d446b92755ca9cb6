//! `bench params list|show`: the stored parameter sets (saved by `bench fit --run`, or given).

use super::runs::{DbArgs, open, runtime, store_error};
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
        write_set(&mut w, &set)?;
    }
    Ok(())
}

fn write_set(w: &mut impl Write, s: &ParameterSet) -> std::io::Result<()> {
    writeln!(w, "parameter set {}: {} ({})", s.id, s.name, s.model_id)?;
    writeln!(w, "  created:    {}", s.created_at)?;
    for (title, value) in [("params", &s.params), ("provenance", &s.provenance)] {
        writeln!(w, "  {title}:")?;
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        for line in text.lines() {
            writeln!(w, "    {line}")?;
        }
    }
    Ok(())
}
