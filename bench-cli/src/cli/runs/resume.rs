//! `bench runs resume ID (--sim [--virtual-time] | --config bench.toml) [--db PATH] [--json]`:
//! a continuation of an interrupted, failed or aborted run ([`bench_daemon::resume`]), run from the
//! terminal as `bench run` runs a spec, with the same checks, progress bar and exit codes.

use super::super::InputError;
use super::super::db::DbArgs;
use super::super::run::{Target, db_path, execute};
use bench_daemon::config::Loaded;
use bench_daemon::resume::{self, ResumeError};

/// Arguments of `bench runs resume`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("bench").required(true).multiple(true).args(["sim", "config"])))]
pub struct ResumeArgs {
    /// The run to continue (interrupted, failed or aborted; the last of its chain).
    id: i64,
    #[command(flatten)]
    target: Target,
    #[command(flatten)]
    db: DbArgs,
    /// Print the outcome as JSON on stdout (after the `run ID` line), with `continues`.
    #[arg(long)]
    json: bool,
}

/// Runs the continuation.
pub fn run(args: &ResumeArgs) -> anyhow::Result<()> {
    let t = &args.target;
    let probe = Loaded::for_command(t.config.as_deref(), t.sim.then_some("127.0.0.1:0"))?;
    let path = db_path(&args.db, &probe);
    if !run_store::is_postgres_url(&path.to_string_lossy()) && !path.is_file() {
        return Err(InputError(format!("--db {}: no such run database", path.display())).into());
    }
    let id = args.id;
    execute(t, &args.db, args.json, async |store, loaded| {
        resume::continuation(store, loaded, id)
            .await
            .map_err(|e| match e {
                ResumeError::Input(e) => e.into(),
                ResumeError::Store(run_store::Error::RunNotFound { id }) => {
                    InputError(format!("run {id} not found in {}", store.location())).into()
                }
                ResumeError::Store(e) => anyhow::Error::from(e),
            })
    })
}
