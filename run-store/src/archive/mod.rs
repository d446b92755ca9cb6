//! The archive: raw samples of old runs moved out of the database into hive-partitioned
//! Parquet files (`DIR/bench=ID/date=YYYY-MM-DD/run=N.parquet`, docs/src/archive.md), the
//! runs themselves kept and their samples read from the file from then on.
//!
//! [`Store::archive`] writes each run's file from its chunks a page at a time, reads it back,
//! and only when the rows and their checksum match (and the database still holds as many
//! rows) deletes the chunks and records the file in `run_archives`, in one transaction. The
//! file's columns and encodings are in `file.rs`.

mod file;
mod read;

use crate::backend::on;
use crate::store::Select;
use crate::types::{SampleQuery, SampleSet};
use crate::{Error, Store};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What `bench archive` moves and where.
#[derive(Clone, Debug, Default)]
pub struct ArchiveOptions {
    /// Runs that started before this UTC time (`YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ`).
    pub before: String,
    /// The archive's root directory (created if missing).
    pub to: PathBuf,
    /// Keep the lockstep model outputs too (float32); without, they are dropped (a replay of
    /// the samples recomputes them).
    pub with_models: bool,
}

/// One run moved to the archive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArchivedRun {
    /// The run.
    pub run_id: i64,
    /// Its file.
    pub path: PathBuf,
    /// Rows in the file.
    pub rows: u64,
    /// Size of the file \[bytes\].
    pub bytes: u64,
    /// Hex SHA-256 of the rows as written, matched on the file read back.
    pub checksum: String,
}

/// What [`Store::archive`] did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArchiveReport {
    /// Runs archived.
    pub runs: u64,
    /// Sample rows moved.
    pub rows: u64,
    /// Bytes of the files written.
    pub bytes: u64,
    /// Values stored: rows × (the eight sample fields `t` … `flags` + model columns).
    pub values: u64,
    /// `bytes / values` (0 when nothing was archived).
    pub bytes_per_value: f64,
    /// Each run's file.
    pub files: Vec<ArchivedRun>,
}

crate::rows::from_row! {
    /// Where an archived run's samples are (a row of `run_archives`).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct Archive {
        /// The Parquet file.
        pub path: String,
        /// Rows in it.
        pub rows: i64,
        /// Its last sample index.
        pub last_idx: Option<i64>,
        /// Its size \[bytes\].
        pub bytes: i64,
        /// Hex SHA-256 of its rows.
        pub checksum: String,
        /// Its model output columns (JSON array).
        pub models: String,
        /// When it was written (RFC 3339 UTC).
        pub archived_at: String,
    }
}

impl Archive {
    /// The model output columns the file carries.
    pub fn model_columns(&self) -> Vec<String> {
        serde_json::from_str(&self.models).unwrap_or_default()
    }
}

/// A run's file written and not yet checked.
struct Written {
    run: i64,
    tmp: PathBuf,
    path: PathBuf,
    rows: u64,
    sum: String,
    models: Vec<String>,
    last_idx: Option<i64>,
}

impl ArchiveReport {
    fn add(&mut self, (done, values): (ArchivedRun, u64)) {
        self.runs += 1;
        self.rows += done.rows;
        self.bytes += done.bytes;
        self.values += values;
        self.files.push(done);
    }
}

crate::rows::from_row! {
    struct Candidate {
        id: i64,
        bench_id: String,
        at: String,
    }
}

impl Store {
    /// Moves the samples of every finished run that started before `opts.before` (and still
    /// has samples in the database) into the archive.
    pub async fn archive(&self, opts: &ArchiveOptions) -> Result<ArchiveReport, Error> {
        let before = crate::store::normalise_time("before", &opts.before)?;
        let root = std::path::absolute(&opts.to)?;
        let runs: Vec<Candidate> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, bench_id, coalesce(started_at, created_at) AS at FROM runs r
                 WHERE coalesce(started_at, created_at) < $1
                   AND status NOT IN ('queued', 'running')
                   AND NOT EXISTS (SELECT 1 FROM run_archives a WHERE a.run_id = r.id)
                   AND EXISTS (SELECT 1 FROM samples s WHERE s.run_id = r.id)
                 ORDER BY id",
            )
            .bind(&before)
            .fetch_all(p)
            .await?
        });
        let mut report = ArchiveReport::default();
        // Two runs in flight: run k+1's file is written (the database reading, this process
        // encoding) while run k's is read back, checked and its rows deleted.
        let mut checking: Option<std::pin::Pin<Box<dyn Future<Output = _> + Send + '_>>> = None;
        for c in runs {
            let path = root.join(partition(&c.bench_id, &c.at, c.id));
            let write = self.write_run(c.id, path, opts.with_models);
            let written = match checking.take() {
                Some(check) => {
                    let (written, checked) = tokio::join!(write, check);
                    match (written, checked) {
                        (Ok(w), Ok(done)) => {
                            report.add(done);
                            w
                        }
                        (Ok(w), Err(e)) => {
                            let _ = std::fs::remove_file(&w.tmp);
                            return Err(e);
                        }
                        (Err(e), _) => return Err(e),
                    }
                }
                None => write.await?,
            };
            checking = Some(Box::pin(self.check_and_delete(written)));
        }
        if let Some(check) = checking {
            report.add(check.await?);
        }
        if report.values > 0 {
            report.bytes_per_value = report.bytes as f64 / report.values as f64;
        }
        Ok(report)
    }

    /// Where run `run`'s samples are archived; `None` while they are in the database.
    pub async fn archive_of(&self, run: i64) -> Result<Option<Archive>, Error> {
        Ok(on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT path, rows, last_idx, bytes, checksum, models, archived_at
                 FROM run_archives WHERE run_id = $1",
            )
            .bind(run)
            .fetch_optional(p)
            .await?
        }))
    }

    /// Writes run `run`'s file beside its final path (`.parquet.tmp`), refusing a path that
    /// already exists.
    async fn write_run(
        &self,
        run: i64,
        path: PathBuf,
        with_models: bool,
    ) -> Result<Written, Error> {
        if path.exists() {
            return Err(archive_error(
                run,
                format!(
                    "{} already exists (another store's archive in the same directory?); \
                 nothing was deleted",
                    path.display()
                ),
            ));
        }
        let dir = path.parent().expect("BUG: a partition path has a parent");
        std::fs::create_dir_all(dir)?;
        let tmp = path.with_extension("parquet.tmp");
        match self.write_file(run, &tmp, with_models).await {
            Ok((rows, sum, models, last_idx)) => Ok(Written {
                run,
                tmp,
                path,
                rows,
                sum,
                models,
                last_idx,
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Moves a written file to its path, reads it back (off the async workers) and, when its
    /// rows and checksum match and the database still holds as many rows, records it and
    /// deletes the run's chunks in one transaction; returns it and the values it holds.
    async fn check_and_delete(&self, w: Written) -> Result<(ArchivedRun, u64), Error> {
        let (run, rows, last_idx) = (w.run, w.rows, w.last_idx);
        let (path, sum, models) = (w.path, w.sum, w.models);
        std::fs::rename(&w.tmp, &path)?;
        let back = {
            let (path, models) = (path.clone(), models.clone());
            tokio::task::spawn_blocking(move || read::checksum(&path, &models))
                .await
                .map_err(|e| std::io::Error::other(format!("BUG: archive check: {e}")))??
        };
        if back != (rows, sum.clone()) {
            let _ = std::fs::remove_file(&path);
            return Err(archive_error(
                run,
                format!(
                    "the file read back holds {} rows with checksum {}, {rows} rows with {sum} were \
                 written; nothing was deleted",
                    back.0, back.1
                ),
            ));
        }
        let bytes = std::fs::metadata(&path)?.len();
        let text = path.to_string_lossy().into_owned();
        let models_json = serde_json::to_string(&models)?;
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let in_db: Option<i64> =
                sqlx::query_scalar("SELECT CAST(sum(n) AS BIGINT) FROM samples WHERE run_id = $1")
                    .bind(run)
                    .fetch_one(&mut *tx)
                    .await?;
            if in_db != Some(rows as i64) {
                drop(tx);
                let _ = std::fs::remove_file(&path);
                return Err(archive_error(
                    run,
                    format!(
                        "the database holds {} rows, the file {rows}; nothing was deleted",
                        in_db.unwrap_or(0)
                    ),
                ));
            }
            sqlx::query(
                "INSERT INTO run_archives (run_id, path, rows, last_idx, bytes, checksum, models)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(run)
            .bind(&text)
            .bind(rows as i64)
            .bind(last_idx)
            .bind(bytes as i64)
            .bind(&sum)
            .bind(&models_json)
            .execute(&mut *tx)
            .await?;
            for delete in [
                "DELETE FROM samples WHERE run_id = $1",
                "DELETE FROM model_outputs WHERE run_id = $1",
            ] {
                sqlx::query(delete).bind(run).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        });
        let values = rows * (8 + models.len() as u64);
        let done = ArchivedRun {
            run_id: run,
            path,
            rows,
            bytes,
            checksum: sum,
        };
        Ok((done, values))
    }

    /// Writes run `run`'s samples to `path`; returns the rows, their checksum, the model
    /// columns and the last index.
    async fn write_file(
        &self,
        run: i64,
        path: &Path,
        with_models: bool,
    ) -> Result<(u64, String, Vec<String>, Option<i64>), Error> {
        let mut pages = self.sample_pages(run, &SampleQuery::default()).await?;
        let models = if with_models {
            pages.models().to_vec()
        } else {
            Vec::new()
        };
        let out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
        let mut w = file::FileWriter::new(out, run, &models)?;
        let mut last = None;
        let mut next = pages.next_page().await?;
        while let Some(set) = next {
            last = set.idx.last().map(|&i| i as i64).or(last);
            // The next page's query goes out first, then this page is encoded while the
            // server reads and decompresses the next chunks (on PostgreSQL about half the
            // time of a run's archive).
            let (fetched, written) = tokio::join!(pages.next_page(), async { w.page(&set) });
            written?;
            next = fetched?;
        }
        let (rows, sum, out) = w.finish()?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok((rows, sum, models, last))
    }

    /// The samples of an archived run that `select` picks, read from its file off the async
    /// workers.
    pub(crate) async fn read_archived(
        &self,
        archive: Archive,
        mut models: Vec<String>,
        select: Select,
        every: u64,
    ) -> Result<SampleSet, Error> {
        for m in archive.model_columns() {
            if !models.contains(&m) {
                models.push(m);
            }
        }
        let path = PathBuf::from(&archive.path);
        tokio::task::spawn_blocking(move || read::read(&path, &models, select, every))
            .await
            .map_err(|e| std::io::Error::other(format!("BUG: archive reader: {e}")))?
    }
}

/// `bench=ID/date=YYYY-MM-DD/run=N.parquet`: the bench id with every byte outside
/// `[A-Za-z0-9._-]` percent-encoded (Hive's rule), `__HIVE_DEFAULT_PARTITION__` when empty.
fn partition(bench: &str, at: &str, run: i64) -> PathBuf {
    let mut b = String::new();
    for byte in bench.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-' => b.push(byte as char),
            _ => b.push_str(&format!("%{byte:02X}")),
        }
    }
    if b.is_empty() || b == "." || b == ".." {
        b = "__HIVE_DEFAULT_PARTITION__".into();
    }
    let day = at.get(..10).unwrap_or("unknown");
    PathBuf::from(format!("bench={b}"))
        .join(format!("date={day}"))
        .join(format!("run={run}.parquet"))
}

fn archive_error(run: i64, reason: String) -> Error {
    Error::Archive {
        run_id: run,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::partition;
    use std::path::PathBuf;

    #[test]
    fn a_partition_path_is_hive_style_and_escapes_the_bench_id() {
        let at = "2026-03-04T05:06:07.000Z";
        assert_eq!(
            partition("bench-12", at, 7),
            PathBuf::from("bench=bench-12/date=2026-03-04/run=7.parquet")
        );
        assert_eq!(
            partition("a/b c", at, 1),
            PathBuf::from("bench=a%2Fb%20c/date=2026-03-04/run=1.parquet")
        );
        assert_eq!(
            partition("", at, 1),
            PathBuf::from("bench=__HIVE_DEFAULT_PARTITION__/date=2026-03-04/run=1.parquet")
        );
    }
}
