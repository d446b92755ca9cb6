//! `bench`: the frictionbench command line.

mod cli {
    pub mod probe;
}

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "bench",
    about = "frictionbench: friction test bench controller"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read every readable signal of a device and print JSON lines in SI units.
    Probe(cli::probe::ProbeArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Probe(args) => tokio::runtime::Runtime::new()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(cli::probe::run(args))),
    };
    if let Err(e) = result {
        eprintln!("bench: {e:#}");
        std::process::exit(1);
    }
}
