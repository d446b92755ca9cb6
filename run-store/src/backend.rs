//! The two engines a store can live in: a SQLite file (a bench's own store) or a PostgreSQL
//! database (a lab's store, `postgres://` URL).
//!
//! Every query is written once. SQL text uses `$N` placeholders, which both engines read, and the
//! few statements that differ take their fragment from [`Dialect`]. [`on!`] runs one body against
//! whichever pool or connection a store holds; the body is compiled once per engine, so a query
//! that does not type-check on either engine does not build.

use sqlx::{PgConnection, PgPool, Postgres, Sqlite, SqliteConnection, SqlitePool};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a store lives: a SQLite file, or a PostgreSQL database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`).
    Postgres(String),
}

impl Location {
    /// A `postgres://` or `postgresql://` URL is a PostgreSQL database; anything else a file.
    pub fn parse(text: &str) -> Location {
        if is_postgres_url(text) {
            Location::Postgres(text.to_string())
        } else {
            Location::Sqlite(PathBuf::from(text))
        }
    }

    /// The SQLite file, if this is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Location::Sqlite(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }
}

/// Whether `text` names a PostgreSQL database.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Location {
        match path.to_str() {
            Some(text) if is_postgres_url(text) => Location::Postgres(text.to_string()),
            _ => Location::Sqlite(path.to_path_buf()),
        }
    }
}

impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Location {
        Location::from(path.as_path())
    }
}

impl From<&PathBuf> for Location {
    fn from(path: &PathBuf) -> Location {
        Location::from(path.as_path())
    }
}

impl From<&str> for Location {
    fn from(text: &str) -> Location {
        Location::parse(text)
    }
}

impl From<&Location> for Location {
    fn from(location: &Location) -> Location {
        location.clone()
    }
}

impl fmt::Display for Location {
    /// The file path, or the URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&redact_password(url)),
        }
    }
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// One value per engine: a pool, a connection, ...
#[derive(Debug)]
pub(crate) enum Either<S, P> {
    /// The SQLite one.
    Sqlite(S),
    /// The PostgreSQL one.
    Postgres(P),
}

/// A pool of either engine.
pub(crate) type PoolRef<'a> = Either<&'a SqlitePool, &'a PgPool>;
/// A connection (or open transaction) of either engine.
pub(crate) type ConnRef<'a> = Either<&'a mut SqliteConnection, &'a mut PgConnection>;
/// A connection of one engine, seen as a [`ConnRef`] (lets an engine-generic body hand its
/// transaction to a helper).
pub(crate) trait AsConn {
    fn conn(&mut self) -> ConnRef<'_>;
}

impl AsConn for SqliteConnection {
    fn conn(&mut self) -> ConnRef<'_> {
        Either::Sqlite(self)
    }
}

impl AsConn for PgConnection {
    fn conn(&mut self) -> ConnRef<'_> {
        Either::Postgres(self)
    }
}

impl<'a> Either<&'a mut SqliteConnection, &'a mut PgConnection> {
    /// The same connection, borrowed again (to hand to one helper after another).
    pub(crate) fn reborrow(&mut self) -> ConnRef<'_> {
        match self {
            Either::Sqlite(c) => Either::Sqlite(&mut **c),
            Either::Postgres(c) => Either::Postgres(&mut **c),
        }
    }
}

/// What differs between the engines' SQL.
pub(crate) trait Dialect {
    /// Opens a write transaction. SQLite takes its write lock at once (`IMMEDIATE`), so a
    /// transaction never fails half-way for want of it.
    const BEGIN_WRITE: &'static str;
    /// The JSON log in `column` (`interruption_log` or `run_log`) with one entry appended,
    /// from the placeholders `$at`, `$t`, `$reason`.
    fn log_append(column: &str, at: u8, t: u8, reason: u8) -> String;
    /// An aggregate of every row as one JSON array text of arrays of `columns` (a large
    /// answer in one row: sqlx hands SQLite's rows over one at a time, at several µs each).
    fn json_rows(columns: &str) -> String;
}

impl Dialect for Sqlite {
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
    fn log_append(column: &str, at: u8, t: u8, reason: u8) -> String {
        format!(
            "json_insert({column}, '$[#]', json_object('at', ${at}, 't', ${t}, \
             'reason', ${reason}))"
        )
    }
    fn json_rows(columns: &str) -> String {
        format!("json_group_array(json_array({columns}))")
    }
}

impl Dialect for Postgres {
    const BEGIN_WRITE: &'static str = "BEGIN";
    fn log_append(column: &str, at: u8, t: u8, reason: u8) -> String {
        format!(
            "({column}::jsonb || jsonb_build_array(jsonb_build_object('at', ${at}::text, \
             't', ${t}::float8, 'reason', ${reason}::text)))::text"
        )
    }
    fn json_rows(columns: &str) -> String {
        format!("coalesce(json_agg(json_build_array({columns})), '[]')::text")
    }
}

/// Runs `$body` with `$p` bound to the pool or connection inside an [`Either`] and `$db` to its
/// engine type (`sqlx::Sqlite` or `sqlx::Postgres`); the body is compiled once per engine.
macro_rules! on {
    ($either:expr, |$p:ident, $db:ident| $body:expr) => {
        match $either {
            $crate::backend::Either::Sqlite($p) => {
                #[allow(dead_code)]
                type $db = sqlx::Sqlite;
                $body
            }
            $crate::backend::Either::Postgres($p) => {
                #[allow(dead_code)]
                type $db = sqlx::Postgres;
                $body
            }
        }
    };
}
pub(crate) use on;

/// The time now as the stores keep it: UTC, RFC 3339, milliseconds.
pub(crate) fn now_text() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// A new random (version 4) UUID, as the stores keep it.
pub(crate) fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_postgres_and_anything_else_a_file() {
        assert_eq!(
            Location::parse("postgresql://lab/runs"),
            Location::Postgres("postgresql://lab/runs".into())
        );
        assert_eq!(
            Location::from(Path::new("postgres://u@h/db")),
            Location::Postgres("postgres://u@h/db".into())
        );
        assert_eq!(
            Location::parse("runs/postgres.db"),
            Location::Sqlite("runs/postgres.db".into())
        );
        assert_eq!(
            Location::parse("postgres://ann:s3cret@lab:5432/runs").to_string(),
            "postgres://ann:***@lab:5432/runs"
        );
        assert_eq!(
            Location::parse("postgres://ann@lab/runs?host=/tmp").to_string(),
            "postgres://ann@lab/runs?host=/tmp"
        );
    }
}
