//! `bench models [--json]`.

use friction::registry::{self, MODELS};
use std::io::Write;

/// Arguments of `bench models`.
#[derive(Debug, clap::Args)]
pub struct ModelsArgs {
    /// Print JSON (id, description, asymmetric, params with name, unit, default, description).
    #[arg(long)]
    json: bool,
}

/// Prints the model catalogue.
pub fn run(args: &ModelsArgs) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &registry::catalogue())?;
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
                p.name, d, p.unit, p.description
            )?;
        }
    }
    Ok(())
}
