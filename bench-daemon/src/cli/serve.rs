//! `bench serve (--sim | --config bench.toml) [--listen ADDR] [--db PATH] [--web DIR] [--token T]`:
//! the control loop, the run queue and schedule, and the REST API with its live stream in one
//! process (see `crate::serve`).

use super::InputError;
use super::runs::DbArgs;
use crate::serve::{self, Options};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Arguments of `bench serve`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("bench").required(true).multiple(true).args(["sim", "config"])))]
pub struct ServeArgs {
    /// Serve the simulated bench, started in-process (with --config: that file's limits,
    /// gains and models, the simulated devices in place of its own).
    #[arg(long)]
    sim: bool,
    /// Bench configuration file (bench.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on. Beyond loopback every POST/PUT/DELETE needs
    /// `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: String,
    #[command(flatten)]
    db: DbArgs,
    /// Dashboard directory served at / (default: the dashboard embedded in the binary at
    /// build time from web/dist).
    #[arg(long, value_name = "DIR")]
    web: Option<PathBuf>,
    /// Bearer token for a non-loopback listener (else $FRICTIONBENCH_TOKEN, else the
    /// configuration's `token`).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
}

/// Serves until Ctrl-C or SIGTERM.
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let listen: SocketAddr = args.listen.parse().map_err(|e| {
        InputError(format!(
            "--listen {}: {e} (give IP:PORT, e.g. 127.0.0.1:8080)",
            args.listen
        ))
    })?;
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("FRICTIONBENCH_TOKEN").ok())
        .filter(|t| !t.is_empty());
    let options = Options {
        sim: args.sim,
        config: args.config.clone(),
        listen,
        db: args.db.clone(),
        web: args.web.clone(),
        token,
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve::serve(options))
}
