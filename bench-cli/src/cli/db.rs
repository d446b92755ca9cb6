//! The run database as every command opens it: `--db PATH|URL`, a runtime to read it on, and
//! the store's errors in the command line's words.

use run_store::Store;
use std::path::PathBuf;

/// `--db PATH`, shared by every command that opens the run database.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// Run database: a SQLite file, or a PostgreSQL database as a postgres:// URL (a lab's
    /// store). Default: $FRICTIONBENCH_DB if set, else
    /// $XDG_DATA_HOME/frictionbench/frictionbench.db, else
    /// ~/.local/share/frictionbench/frictionbench.db, else ./frictionbench.db.
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database path: `--db`, or [`bench_daemon::db::default_path`].
    pub fn path(&self) -> PathBuf {
        self.db
            .clone()
            .unwrap_or_else(bench_daemon::db::default_path)
    }
}

pub use bench_daemon::db::store_error;

/// A single-threaded tokio runtime for a command.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Opens the existing run database of `--db`; a missing file is an input error naming the flag.
pub async fn open(db: &DbArgs) -> anyhow::Result<Store> {
    bench_daemon::db::open_existing(&db.path()).await
}
