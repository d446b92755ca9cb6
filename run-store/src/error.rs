//! Errors of the run store.

use std::path::PathBuf;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No database file at the path given (only when opening an existing store).
    #[error("no run database at {}", path.display())]
    NoDatabase {
        /// The path asked for.
        path: PathBuf,
    },
    /// No run has this id.
    #[error("run {id} not found")]
    RunNotFound {
        /// The id asked for.
        id: i64,
    },
    /// No parameter set or comparison has this id or name.
    #[error("{what} {key} not found")]
    NotFound {
        /// What was looked up (`parameter set`, `comparison`).
        what: &'static str,
        /// The id, or the name in quotes.
        key: String,
    },
    /// A caller-given value the store cannot use (a bad date, a zero decimation, ...).
    #[error("{field} ({value}) {rule}")]
    InvalidInput {
        /// The argument's name.
        field: &'static str,
        /// Its offending value.
        value: String,
        /// The rule it breaks, phrased after the value.
        rule: String,
    },
    /// A batch does not fit the run it is recorded into.
    #[error("batch for run {run_id}: {reason}")]
    BadBatch {
        /// The run being recorded.
        run_id: i64,
        /// What is wrong (e.g. the model output count).
        reason: String,
    },
    /// The recorder task is gone (it failed earlier or was closed).
    #[error("the recorder of run {run_id} has stopped")]
    RecorderStopped {
        /// The run being recorded.
        run_id: i64,
    },
    /// A run could not be archived (its samples stay in the database).
    #[error("archive of run {run_id}: {reason}")]
    Archive {
        /// The run.
        run_id: i64,
        /// What went wrong.
        reason: String,
    },
    /// SQLite or sqlx failed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed to apply.
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A JSON column could not be encoded or decoded.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// A file operation failed (creating the database directory, writing an export).
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}
