//! The run database's location and opening: the explicit path (`--db`), else bench.toml's
//! `database`, else `$FRICTIONBENCH_DB`, else the per-user file; and the filters a run listing
//! takes, checked the same way for the command line and the REST API.

use crate::InputError;
use crate::config::Loaded;
use run_store::Store;
use std::path::{Path, PathBuf};

/// File name of the run database.
pub const DB_FILE: &str = "frictionbench.db";

/// The default database path: $FRICTIONBENCH_DB if set, else [`per_user_path`].
pub fn default_path() -> PathBuf {
    env_path("FRICTIONBENCH_DB").unwrap_or_else(per_user_path)
}

/// The per-user database path, ignoring $FRICTIONBENCH_DB (its directory is created on first
/// use): $XDG_DATA_HOME/frictionbench/frictionbench.db, else
/// ~/.local/share/frictionbench/frictionbench.db, else ./frictionbench.db.
pub fn per_user_path() -> PathBuf {
    let data =
        env_path("XDG_DATA_HOME").or_else(|| env_path("HOME").map(|h| h.join(".local/share")));
    match data {
        Some(dir) => dir.join("frictionbench").join(DB_FILE),
        None => PathBuf::from(DB_FILE),
    }
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The database of a command on a bench: `explicit` (`--db`), else the configuration's
/// `database`, else [`default_path`].
pub fn for_bench(explicit: Option<&Path>, loaded: &Loaded) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| loaded.config.database.clone())
        .unwrap_or_else(default_path)
}

/// Refuses a database whose directory does not exist unless `create`: a mistyped `--db` (or
/// `database`, or $FRICTIONBENCH_DB) must not silently start a new, empty store elsewhere.
/// The per-user default directory is always created.
pub fn check_dir(db: &Path, create: bool) -> Result<(), InputError> {
    if run_store::Location::from(db).file().is_none() {
        return Ok(());
    }
    let dir = match db.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => return Ok(()),
    };
    if create || dir.is_dir() || db == per_user_path() {
        return Ok(());
    }
    Err(InputError(format!(
        "database {}: the directory {} does not exist: check the path, or give --create to \
         create it",
        db.display(),
        dir.display()
    )))
}

/// Opens the existing run database at `path`; a missing file, or a server that refuses, is an
/// input error naming `--db`.
pub async fn open_existing(path: &Path) -> anyhow::Result<Store> {
    Store::open_existing(path).await.map_err(|e| match e {
        run_store::Error::NoDatabase { .. } => {
            InputError(format!("--db: no run database at {}", path.display())).into()
        }
        run_store::Error::Database(e) if run_store::Location::from(path).file().is_none() => {
            InputError(format!("--db: {}: {e}", run_store::Location::from(path))).into()
        }
        e => store_error(e),
    })
}

/// A store error as the user sees it: unknown ids and bad arguments are their input errors.
pub fn store_error(err: run_store::Error) -> anyhow::Error {
    match err {
        e @ (run_store::Error::RunNotFound { .. }
        | run_store::Error::NotFound { .. }
        | run_store::Error::NoDatabase { .. }
        | run_store::Error::InvalidInput { .. }) => InputError(e.to_string()).into(),
        e => anyhow::Error::new(e),
    }
}

/// A kind to filter runs by, checked: a mistyped kind is an error, not an empty list.
pub fn kind_filter(kind: Option<&str>) -> Result<Option<String>, String> {
    let names = experiments::Kind::NAMES;
    match kind {
        Some(k) if !names.contains(&k) && k != run_store::IMPORTED_KIND => Err(format!(
            "unknown kind '{k}' (known: {}, {})",
            names.join(", "),
            run_store::IMPORTED_KIND
        )),
        k => Ok(k.map(str::to_string)),
    }
}

/// A bench id to filter runs by, checked against the bench id rule.
pub fn bench_filter(bench: Option<&str>) -> Result<Option<String>, String> {
    match bench {
        Some(b) => crate::config::check_bench_id(b)
            .map(|()| Some(b.to_string()))
            .map_err(|rule| format!("'{b}' {rule}")),
        None => Ok(None),
    }
}
