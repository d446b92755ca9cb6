//! Which `running` runs still have a live recorder.
//!
//! A recorder holds a lock from before it marks the run `running` until after it has written
//! the final status, and the lock dies with its process, however it dies (SIGKILL, the OOM
//! killer, a pulled network cable): so a `running` run whose lock is free belongs to a dead
//! process. Readers report it `interrupted` at once, and the next process that opens the store
//! for recording persists that. A second recorder on the same store never touches a run it does
//! not hold.
//!
//! - SQLite: an exclusive OS lock (`flock`) on `<database>.locks/run-<id>.lock`; the kernel
//!   releases it when the process ends.
//! - PostgreSQL: a session advisory lock `(RUN_LOCK_CLASS, id)` held by a connection of its own;
//!   the server releases it when that session ends, and `pg_locks` shows it to every other
//!   process, on any machine.

use crate::backend::Location;
use crate::{Error, Store};
use sqlx::{Connection, PgConnection};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The reason a run without a live recorder is reported (and then stored) with.
pub const DEAD_RECORDER_REASON: &str = "the process recording the run ended without closing it \
     (killed or crashed); samples up to its last commit are kept";

/// The first key of the PostgreSQL advisory locks of recorded runs (the second is the run id).
const RUN_LOCK_CLASS: i32 = 0x4642_5255; // "FBRU"

/// The lock of one run being recorded; released on drop (the file removed, or the session
/// closed).
#[derive(Debug)]
pub(crate) enum RunLock {
    File { _file: File, path: PathBuf },
    Session { _session: PgConnection },
}

impl Drop for RunLock {
    fn drop(&mut self) {
        if let RunLock::File { path, .. } = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn lock_path(db: &Path, run: i64) -> PathBuf {
    let mut dir = db.as_os_str().to_owned();
    dir.push(".locks");
    PathBuf::from(dir).join(format!("run-{run}.lock"))
}

fn lock_key(run: i64) -> Result<i32, Error> {
    i32::try_from(run).map_err(|_| Error::InvalidInput {
        field: "run",
        value: run.to_string(),
        rule: "must be below 2^31 to be recorded into PostgreSQL".into(),
    })
}

fn held_elsewhere(run: i64, place: &str) -> Error {
    Error::Io(std::io::Error::other(format!(
        "run {run} is being recorded by another process ({place})"
    )))
}

/// Takes the recording lock of `run`; fails if another process holds it.
pub(crate) async fn acquire(store: &Store, run: i64) -> Result<RunLock, Error> {
    match store.location() {
        Location::Sqlite(db) => Ok(acquire_file(db, run)?),
        Location::Postgres(url) => {
            let mut session = PgConnection::connect(url).await?;
            let got: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
                .bind(RUN_LOCK_CLASS)
                .bind(lock_key(run)?)
                .fetch_one(&mut session)
                .await?;
            if !got {
                return Err(held_elsewhere(run, "PostgreSQL advisory lock"));
            }
            Ok(RunLock::Session { _session: session })
        }
    }
}

fn acquire_file(db: &Path, run: i64) -> Result<RunLock, Error> {
    let path = lock_path(db, run);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(RunLock::File { _file: file, path }),
        Err(TryLockError::WouldBlock) => Err(held_elsewhere(run, &path.display().to_string())),
        Err(TryLockError::Error(e)) => Err(e.into()),
    }
}

/// Whether a live process holds the recording lock of `run`.
pub(crate) async fn is_recorded(store: &Store, run: i64) -> Result<bool, Error> {
    match store.location() {
        Location::Sqlite(db) => Ok(file_is_locked(db, run)),
        Location::Postgres(_) => {
            let crate::backend::Either::Postgres(pool) = store.reader() else {
                unreachable!("a PostgreSQL location has a PostgreSQL pool");
            };
            Ok(sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM pg_locks
                     WHERE locktype = 'advisory' AND granted AND objsubid = 2
                       AND classid::bigint = $1 AND objid::bigint = $2
                       AND database = (SELECT oid FROM pg_database
                                       WHERE datname = current_database()))",
            )
            .bind(i64::from(RUN_LOCK_CLASS))
            .bind(run)
            .fetch_one(pool)
            .await?)
        }
    }
}

fn file_is_locked(db: &Path, run: i64) -> bool {
    let Ok(file) = File::open(lock_path(db, run)) else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => false,
        Err(TryLockError::WouldBlock) => true,
        // Cannot tell: do not declare a live run dead.
        Err(TryLockError::Error(_)) => true,
    }
}
