//! The schema's migrations (`migrations/sqlite`, `migrations/postgres` at the workspace root),
//! embedded in the binary.
//!
//! Listed here rather than found by sqlx's `migrate!` macro, whose macro crate compiles sqlx,
//! SQLite and the PostgreSQL driver a second time for the build host (`crate::rows` says why
//! that matters). Each migration gets what `migrate!` gave it: version and description from
//! the file name, SHA-384 of the text as its checksum, so a database the macro migrated opens
//! unchanged. A test holds each list to its directory.

use sqlx::SqlSafeStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// `(file name, text)` of each migration in `migrations/DIR`, oldest first.
macro_rules! embedded {
    ($dir:literal: $($file:literal),* $(,)?) => {
        &[$(($file, include_str!(concat!("../../../migrations/", $dir, "/", $file)))),*]
    };
}

const SQLITE: &[(&str, &str)] = embedded!("sqlite":
    "0001_run_store.sql", "0002_comparisons.sql", "0003_serve_queue.sql", "0004_bench_id.sql",
    "0005_uuids.sql", "0006_bench_scope.sql", "0008_reason_codes.sql", "0009_tags_audit.sql",
    "0010_run_log.sql", "0011_campaigns.sql", "0012_continues.sql", "0013_tick_timing.sql",
    "0014_campaign_interrupted.sql", "0015_run_summaries.sql", "0016_run_archives.sql",
    "0017_bench_heartbeats.sql", "0018_sensor_calibrations.sql",
);

const POSTGRES: &[(&str, &str)] = embedded!("postgres":
    "0001_run_store.sql", "0008_reason_codes.sql", "0009_tags_audit.sql", "0010_run_log.sql",
    "0011_campaigns.sql", "0012_continues.sql", "0013_tick_timing.sql",
    "0014_campaign_interrupted.sql", "0015_run_summaries.sql", "0016_run_archives.sql",
    "0017_bench_heartbeats.sql", "0018_sensor_calibrations.sql",
);

/// The SQLite store's migrator.
pub(super) fn sqlite() -> Migrator {
    migrator(SQLITE)
}

/// The PostgreSQL store's migrator (it serialises concurrent migrators with an advisory lock).
pub(super) fn postgres() -> Migrator {
    migrator(POSTGRES)
}

fn migrator(files: &[(&str, &'static str)]) -> Migrator {
    Migrator::with_migrations(
        files
            .iter()
            .map(|&(file, sql)| migration(file, sql))
            .collect(),
    )
}

/// A migration as `migrate!` reads `NNNN_some_name.sql`: version NNNN, description
/// "some name", `-- no-transaction` as its first line opting out of the transaction.
fn migration(file: &str, sql: &'static str) -> Migration {
    let (version, rest) = file
        .split_once('_')
        .unwrap_or_else(|| panic!("{file}: a migration is named NNNN_name.sql"));
    let version = version
        .parse()
        .unwrap_or_else(|_| panic!("{file}: a migration's name starts with its version"));
    let kind = MigrationType::from_filename(rest);
    let description = rest.trim_end_matches(kind.suffix()).replace('_', " ");
    let no_tx = sql.starts_with("-- no-transaction");
    Migration::new(version, description.into(), kind, sql.into_sql_str(), no_tx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The files of `migrations/DIR`, sorted.
    fn files_in(dir: &str) -> Vec<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../migrations")
            .join(dir);
        let mut files: Vec<String> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        files
    }

    #[test]
    fn each_list_holds_every_file_of_its_directory_in_order() {
        for (dir, list) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            let listed: Vec<&str> = list.iter().map(|(file, _)| *file).collect();
            assert_eq!(
                listed,
                files_in(dir),
                "migrations/{dir}: add the new file to its list"
            );
        }
    }

    #[test]
    fn a_migration_reads_its_version_description_and_checksum_as_sqlx_does() {
        let m = migration("0014_campaign_interrupted.sql", "SELECT 1;");
        assert_eq!(m.version, 14);
        assert_eq!(m.description, "campaign interrupted");
        assert_eq!(m.migration_type, MigrationType::Simple);
        // SHA-384 of the text (Python's hashlib.sha384(b"SELECT 1;")).
        let hex: String = m.checksum.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "26e71cc37450b183fb5bb72ec4f644ed27de1b55fad3d4d6cfb0ca0d71f42ca990911d74649814105a190325e15d2092"
        );
        assert!(!m.no_tx);
        let versions: Vec<i64> = sqlite().migrations.iter().map(|m| m.version).collect();
        assert_eq!(versions.len(), SQLITE.len());
        assert!(versions.is_sorted());
    }
}
