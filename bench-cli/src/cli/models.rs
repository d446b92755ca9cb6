//! `bench models [--json]`.

use friction::registry::MODELS;
use friction::units::bench_unit;
use std::io::Write;

/// Arguments of `bench models`.
#[derive(Debug, clap::Args)]
pub struct ModelsArgs {
    /// Print JSON (id, description, asymmetric, params with name, unit, default, description).
    #[arg(long)]
    json: bool,
    /// Bench configuration whose `geometry` sets the units shown (default: rotary).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
}

/// Prints the model catalogue.
pub fn run(args: &ModelsArgs) -> anyhow::Result<()> {
    let geometry = bench_daemon::config::geometry_of(args.config.as_deref())?;
    let mut out = std::io::stdout().lock();
    if args.json {
        // `unit` stays the registry's SI (linear) unit; `bench_unit` is this bench's label.
        serde_json::to_writer_pretty(&mut out, &friction::units::catalogue_in(geometry))?;
        writeln!(out)?;
        return Ok(());
    }
    for e in MODELS {
        let defaults = e.defaults();
        let asym = if e.asymmetric {
            "  (accepts a `negative` parameter set)"
        } else {
            ""
        };
        writeln!(out, "{}: {}{asym}", e.id, e.description)?;
        for p in e.params {
            let d = defaults
                .get(p.name)
                .map(|v| v.to_string())
                .unwrap_or_default();
            writeln!(
                out,
                "    {:<16} {:>10} [{}]  {}",
                p.name,
                d,
                bench_unit(p.unit, geometry),
                p.description
            )?;
        }
    }
    Ok(())
}
