//! The store: one handle over a SQLite file or a PostgreSQL database, opened with its
//! migrations applied and runs a dead daemon left `running` recovered. What it stores lives in
//! the submodules, one job each: run records (`runs`), reading them back (`queries`),
//! samples (`samples`) and parameter sets (`params`).

use crate::Error;
use crate::backend::{Dialect, Either, Location, PoolRef, now_text, on};
use crate::liveness;
use crate::types::IMPORTED_KIND;
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

mod migrations;
mod params;
mod queries;
mod runs;
mod samples;

pub(crate) use params::ParameterSetRow;
pub(crate) use queries::{RunRow, normalise_time};
pub(crate) use runs::{finish, set_timing};
pub(crate) use samples::{Select, check_query};

/// The reason logged into runs found `running` when a store opens.
pub const INTERRUPTED_REASON: &str =
    "the daemon stopped while the run was running; samples up to the last commit are kept";

/// Connections a process opens to a PostgreSQL store (a lab serves many readers; each
/// recording run holds one more, for its lock).
const PG_CONNECTIONS: u32 = 8;

/// A run store: a SQLite file (WAL, synchronous NORMAL, busy timeout 5 s) or a PostgreSQL
/// database.
///
/// On SQLite, reads go through a small pool and every write through a second pool of exactly
/// one connection, so writes never contend for SQLite's lock inside the process. PostgreSQL
/// takes both through one pool. Cloning is cheap and shares the pools.
#[derive(Clone, Debug)]
pub struct Store {
    location: Location,
    pools: Pools,
    interrupted: Vec<i64>,
    /// The bench whose queue settings and schedule this handle reads and writes
    /// ([`Store::for_bench`]); '' for none in particular.
    bench: std::sync::Arc<str>,
}

#[derive(Clone, Debug)]
enum Pools {
    Sqlite { read: SqlitePool, write: SqlitePool },
    Postgres(PgPool),
}

impl Store {
    /// Opens the store at `location` for the process that records runs (the daemon, `bench
    /// run`): creates a missing SQLite file (and its directory), applies the migrations of its
    /// engine, derives the summary rows an older store lacks, then marks `interrupted` every run left `running` that no live process records
    /// (their committed samples stay). [`Store::interrupted_at_open`] lists them. Runs another
    /// live process records (it holds their lock) are left alone. Readers use
    /// [`Store::open_existing`].
    pub async fn open(location: impl Into<Location>) -> Result<Store, Error> {
        let location = location.into();
        if let Some(dir) = location
            .file()
            .and_then(Path::parent)
            .filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)?;
        }
        let mut store = Store::connect(location, true).await?;
        store.interrupted = store.mark_interrupted().await?;
        Ok(store)
    }

    /// Opens an existing store to query it (the `bench runs` commands): applies pending
    /// migrations but leaves `running` runs alone, since a daemon may be recording them.
    pub async fn open_existing(location: impl Into<Location>) -> Result<Store, Error> {
        let location = location.into();
        if let Some(path) = location.file().filter(|p| !p.is_file()) {
            return Err(Error::NoDatabase {
                path: path.to_path_buf(),
            });
        }
        Store::connect(location, false).await
    }

    async fn connect(location: Location, create: bool) -> Result<Store, Error> {
        let pools = match &location {
            Location::Sqlite(path) => connect_sqlite(path, create).await?,
            Location::Postgres(url) => connect_postgres(url).await?,
        };
        let store = Store {
            location,
            pools,
            interrupted: Vec::new(),
            bench: "".into(),
        };
        store.backfill_summaries().await?;
        Ok(store)
    }

    /// Marks `interrupted` the `running` runs no live process records (another recorder's
    /// runs are left alone: it holds their locks). An import whose process died is deleted
    /// instead: an import stores the whole recording or nothing.
    async fn mark_interrupted(&self) -> Result<Vec<i64>, Error> {
        let running: Vec<(i64, String)> = on!(self.writer(), |p, DB| {
            sqlx::query_as("SELECT id, kind FROM runs WHERE status = 'running'")
                .fetch_all(p)
                .await?
        });
        let mut ids = Vec::new();
        for (id, kind) in running {
            if liveness::is_recorded(self, id).await? {
                continue;
            }
            if kind == IMPORTED_KIND {
                self.delete_run(id).await?;
                continue;
            }
            let at = now_text();
            let done = on!(self.writer(), |p, DB| {
                let sql = format!(
                    "UPDATE runs SET status = 'interrupted', status_reason = $3, finished_at = $1,
                         reason_code = 'interrupted',
                         interruption_log = {}
                     WHERE id = $4 AND status = 'running'",
                    DB::log_append("interruption_log", 1, 2, 3)
                );
                sqlx::query(AssertSqlSafe(sql))
                    .bind(&at)
                    .bind(None::<f64>)
                    .bind(INTERRUPTED_REASON)
                    .bind(id)
                    .execute(p)
                    .await?
                    .rows_affected()
            });
            if done == 1 {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// The same store, with its queue, queue settings and schedule scoped to bench `bench_id`
    /// (several benches may record into one store; each `bench serve` keeps its own queue).
    pub fn for_bench(&self, bench_id: &str) -> Store {
        Store {
            bench: bench_id.into(),
            ..self.clone()
        }
    }

    /// The bench [`Store::for_bench`] scoped this handle to ('' for none).
    pub fn bench_scope(&self) -> &str {
        &self.bench
    }

    /// The runs [`Store::open`] found `running` and marked `interrupted`.
    pub fn interrupted_at_open(&self) -> &[i64] {
        &self.interrupted
    }

    /// Where the store lives.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The pool every write goes through (on SQLite, the single write connection).
    pub(crate) fn writer(&self) -> PoolRef<'_> {
        match &self.pools {
            Pools::Sqlite { write, .. } => Either::Sqlite(write),
            Pools::Postgres(pool) => Either::Postgres(pool),
        }
    }

    /// The read pool.
    pub(crate) fn reader(&self) -> PoolRef<'_> {
        match &self.pools {
            Pools::Sqlite { read, .. } => Either::Sqlite(read),
            Pools::Postgres(pool) => Either::Postgres(pool),
        }
    }

    /// On PostgreSQL, `VACUUM ANALYZE`: what its autovacuum does to a table some minutes after
    /// many rows arrive, done at once (a bulk fill, then queries timed at once, would otherwise
    /// be planned on the empty tables' statistics). SQLite keeps no such statistics unasked:
    /// nothing.
    pub async fn settle_statistics(&self) -> Result<(), Error> {
        if let Pools::Postgres(pool) = &self.pools {
            sqlx::query("VACUUM ANALYZE").execute(pool).await?;
        }
        Ok(())
    }

    /// Closes the pools (waits for connections to finish; on SQLite, checkpoints the WAL).
    pub async fn close(&self) {
        match &self.pools {
            Pools::Sqlite { read, write } => {
                read.close().await;
                write.close().await;
            }
            Pools::Postgres(pool) => pool.close().await,
        }
    }
}

/// A pool whose connections are never reaped for idleness or age, so sqlx starts no maintenance
/// task for it. In sqlx 0.9.0 that task can spin at 100 % of a core for good, and then hold up
/// the runtime's shutdown: a connection returned to the pool is counted idle only after it can
/// be taken again, the count can wrap below zero, and the task then checks 2^64 connections
/// without awaiting (sqlx issue 3645, fixed upstream after 0.9.0). It happened once in the
/// test command: `bench runs resume` of a completed run, refused, never exited. A bench's
/// store needs no reaping: SQLite's connections are files, and a PostgreSQL connection that
/// broke is found and replaced when it is next taken (sqlx pings it first).
fn without_reaper<DB: sqlx::Database>(
    options: sqlx::pool::PoolOptions<DB>,
) -> sqlx::pool::PoolOptions<DB> {
    options.idle_timeout(None).max_lifetime(None)
}

async fn connect_sqlite(path: &Path, create: bool) -> Result<Pools, Error> {
    // sqlx applies busy_timeout before switching the journal mode to WAL, on every
    // connection of the pool.
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(create)
        .busy_timeout(Duration::from_secs(5))
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true);
    let write = without_reaper(SqlitePoolOptions::new())
        .max_connections(1)
        .connect_with(options.clone())
        .await?;
    migrations::sqlite().run(&write).await?;
    let read = without_reaper(SqlitePoolOptions::new())
        .max_connections(4)
        .connect_with(options)
        .await?;
    Ok(Pools::Sqlite { read, write })
}

async fn connect_postgres(url: &str) -> Result<Pools, Error> {
    // The server's notices (`relation ... already exists, skipping`) are not the user's news.
    // No JIT: the store's queries are index seeks of milliseconds, and a plan whose estimate
    // crosses PostgreSQL's JIT threshold (the fleet's per-bench subquery at 100 000 runs) spent
    // 0.9 s compiling itself to run in 2 ms (`bench perf lab`'s fleet_ms p50 1363 ms -> ms).
    let options = PgConnectOptions::from_str(url)?
        .options([("client_min_messages", "warning"), ("jit", "off")]);
    let pool = without_reaper(PgPoolOptions::new())
        .max_connections(PG_CONNECTIONS)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await?;
    // sqlx serialises concurrent migrators on PostgreSQL with an advisory lock.
    migrations::postgres().run(&pool).await?;
    Ok(Pools::Postgres(pool))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No pool of a store reaps connections, so sqlx starts no maintenance task
    /// ([`without_reaper`] says why).
    #[tokio::test]
    async fn a_stores_pools_reap_no_connection() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let Pools::Sqlite { read, write } = &store.pools else {
            panic!("a file is a SQLite store");
        };
        for pool in [read, write] {
            let options = pool.options();
            assert_eq!(options.get_idle_timeout(), None);
            assert_eq!(options.get_max_lifetime(), None);
        }
        store.close().await;
    }
}
