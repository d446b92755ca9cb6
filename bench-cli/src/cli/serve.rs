//! `bench serve (--sim | --config bench.toml) [--listen ADDR] [--db PATH] [--create] [--web DIR]
//! [--token T] [--token-for-reads]`:
//! the control loop, the run queue and schedule, and the REST API with its live stream in one
//! process (see `bench_service`). `bench serve --lab --db postgres://...`: the API and dashboard
//! read-only over every bench's runs, no bench attached.

use super::InputError;
use super::db::DbArgs;
use bench_service::Options;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Arguments of `bench serve`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("bench").required(true).multiple(true).args(["sim", "config", "lab"])))]
pub struct ServeArgs {
    /// Serve the simulated bench, started in-process (with --config: that file's limits,
    /// gains and models, the simulated devices in place of its own).
    #[arg(long)]
    sim: bool,
    /// Bench configuration file (bench.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A lab view: serve the runs, fits and comparisons of the --db store (typically the lab's
    /// postgres:// URL, every bench's runs) read-only, with no bench attached: every POST, PUT
    /// and DELETE answers 409.
    #[arg(long, conflicts_with_all = ["sim", "config", "create"])]
    lab: bool,
    /// Address to listen on. Beyond loopback a token is required.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: String,
    #[command(flatten)]
    db: DbArgs,
    /// Dashboard directory served at / (default: the dashboard embedded in the binary at
    /// build time from web/dist).
    #[arg(long, value_name = "DIR")]
    web: Option<PathBuf>,
    /// Bearer token (at least 16 characters) every POST/PUT/DELETE but the e-stop then needs,
    /// on any listener (else $FRICTIONBENCH_TOKEN, else the configuration's `token`).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Require the token of every /api/ GET too (but /api/health).
    #[arg(long)]
    token_for_reads: bool,
    /// Create the database's directory if it does not exist (else a mistyped --db is refused).
    #[arg(long)]
    create: bool,
}

/// Daemon messages go to stderr through `tracing`, filtered by `RUST_LOG` (default `info`, e.g.
/// `RUST_LOG=warn` or `RUST_LOG=bench=debug`).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Serves until Ctrl-C or SIGTERM.
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    init_logging();
    let listen: SocketAddr = args.listen.parse().map_err(|e| {
        InputError(format!(
            "--listen {}: {e} (give IP:PORT, e.g. 127.0.0.1:8080)",
            args.listen
        ))
    })?;
    let token = match (&args.token, std::env::var("FRICTIONBENCH_TOKEN")) {
        (Some(t), _) => Some((t.clone(), "--token")),
        (None, Ok(t)) => Some((t, "$FRICTIONBENCH_TOKEN")),
        (None, Err(_)) => None,
    };
    let options = Options {
        sim: args.sim,
        lab: args.lab,
        config: args.config.clone(),
        listen,
        db: args.db.db.clone(),
        web: args.web.clone(),
        token,
        token_for_reads: args.token_for_reads,
        create: args.create,
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(bench_service::serve(options))
}
