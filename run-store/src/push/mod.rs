//! Push: copies finished runs, parameter sets and comparisons from one store to another (a
//! bench's SQLite file to the lab's PostgreSQL, `bench runs push`).
//!
//! Records are recognised by their UUID, never by id (each store numbers its own). A run is
//! copied in one transaction on the target (its record, samples, model outputs and results), so
//! a push killed midway leaves either the whole run or nothing, and the next push copies what is
//! missing. Every copied run is verified: the checksum of its samples read back from the target
//! must equal the source's, or the copy is deleted and the run reported failed. The sensors'
//! calibrations and each run's sensor rows follow the runs (`sensors.rs`).

use crate::backend::{AsConn, ConnRef, Location, on};
use crate::comparisons::{ComparisonRow, insert_comparison};
use crate::recorder::{BYTES_PER_STMT, OutputRow, SampleRow, insert_chunks};
use crate::store::{ParameterSetRow, RunRow};
use crate::{Error, Store};
use futures_util::{StreamExt, TryStreamExt};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

mod sensors;

/// Runs copied at the same time (10 M samples SQLite → PostgreSQL on 2 cores: 4.9 M samples/s
/// with 2, 5.2 M/s with 3).
const PUSH_PARALLEL: usize = 3;

/// What to push.
#[derive(Clone, Debug, Default)]
pub struct PushOptions {
    /// Only runs created at or after this date (`YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ`, UTC).
    pub since: Option<String>,
}

/// One run a push copied, found already there, or failed to copy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PushedRun {
    /// The run's UUID.
    pub uuid: String,
    /// Its id in the source store.
    pub id: i64,
    /// Its id in the target store (none when it failed).
    pub target_id: Option<i64>,
    /// The bench it was recorded on.
    pub bench_id: String,
    /// Samples it holds.
    pub samples: u64,
    /// SHA-256 of its samples ([`Store::sample_checksum`]), equal in both stores.
    pub checksum: Option<String>,
    /// Why it was skipped or failed.
    pub reason: Option<String>,
}

/// Counts of the records a push copied and found already there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Copied {
    /// Copied by this push.
    pub pushed: u64,
    /// Already in the target.
    pub skipped: u64,
}

impl Copied {
    /// Counts one row: `inserted` by this push, or already there.
    fn count(&mut self, inserted: bool) {
        if inserted {
            self.pushed += 1;
        } else {
            self.skipped += 1;
        }
    }
}

/// What a push did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PushReport {
    /// Runs copied (and verified) by this push.
    pub pushed: Vec<PushedRun>,
    /// Runs already in the target (same UUID).
    pub skipped: Vec<PushedRun>,
    /// Runs whose copy failed (nothing of them is left in the target).
    pub failed: Vec<PushedRun>,
    /// Parameter sets.
    pub parameter_sets: Copied,
    /// Comparisons (one whose runs are not all in the target waits for a later push).
    pub comparisons: Copied,
    /// Links of a continuation to the run it continues (`bench runs resume`), set once both
    /// runs are in the target.
    pub chains: Copied,
    /// Calibration records of the sensors (`bench sensors calibrate`).
    pub calibrations: Copied,
    /// What each run read its sensors with (the calibration, the zero it measured).
    pub run_sensors: Copied,
    /// Samples copied.
    pub samples: u64,
}

/// Incremental SHA-256 over a run's sample chunks: each chunk's first index and the digest of
/// its bytes, in index order. The same definition on both engines; PostgreSQL computes the
/// chunk digests itself, so verifying a copy reads 32 bytes per chunk, not the samples.
#[derive(Default)]
struct Checksum(Sha256);

impl Checksum {
    fn chunk(&mut self, idx0: i64, digest: &[u8]) {
        self.0.update(idx0.to_le_bytes());
        self.0.update(digest);
    }

    fn data(&mut self, idx0: i64, data: &[u8]) {
        self.chunk(idx0, &Sha256::digest(data));
    }

    fn hex(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl Store {
    /// The checksum of run `run`'s samples (hex SHA-256; see `docs/src/lab.md`).
    pub async fn sample_checksum(&self, run: i64) -> Result<String, Error> {
        self.require_run(run).await?;
        // PostgreSQL hashes each chunk itself; SQLite hands over the bytes.
        let (on_server, sql) = match self.reader() {
            crate::backend::Either::Postgres(_) => (
                true,
                "SELECT idx0, sha256(data) FROM samples WHERE run_id = $1 ORDER BY idx0",
            ),
            crate::backend::Either::Sqlite(_) => (
                false,
                "SELECT idx0, data FROM samples WHERE run_id = $1 ORDER BY idx0",
            ),
        };
        let mut sum = Checksum::default();
        on!(self.reader(), |p, DB| {
            let mut rows = sqlx::query_as::<_, (i64, Vec<u8>)>(sql).bind(run).fetch(p);
            while let Some((idx0, bytes)) = rows.try_next().await? {
                match on_server {
                    true => sum.chunk(idx0, &bytes),
                    false => sum.data(idx0, &bytes),
                }
            }
        });
        Ok(sum.hex())
    }

    /// Copies into `target` every finished run of this store it lacks (with samples, model
    /// outputs and results), then parameter sets and comparisons.
    pub async fn push(&self, target: &Store, options: &PushOptions) -> Result<PushReport, Error> {
        let since = options
            .since
            .as_deref()
            .map(|s| crate::store::normalise_time("since", s))
            .transpose()?;
        let runs: Vec<(i64, String, String, i64)> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, bench_id, sample_count FROM runs
                 WHERE status NOT IN ('queued', 'running') AND ($1 IS NULL OR created_at >= $1)
                 ORDER BY id",
            )
            .bind(since)
            .fetch_all(p)
            .await?
        });
        let mut report = PushReport::default();
        let mut to_copy = Vec::new();
        for (id, uuid, bench_id, samples) in runs {
            let entry = PushedRun {
                uuid,
                id,
                target_id: None,
                bench_id,
                samples: samples as u64,
                checksum: None,
                reason: None,
            };
            if self.archive_of(id).await?.is_some() {
                // Its samples are in a Parquet file: a copy would arrive without them.
                report.skipped.push(PushedRun {
                    reason: Some("its samples are archived (bench archive)".into()),
                    ..entry
                });
                continue;
            }
            match target.run_by_uuid(&entry.uuid).await? {
                Some(target_id) => report.skipped.push(PushedRun {
                    target_id: Some(target_id),
                    reason: Some("already in the target".into()),
                    ..entry
                }),
                None => to_copy.push(entry),
            }
        }
        // Runs are copied PUSH_PARALLEL at a time: the target engine's work (compression, WAL)
        // for one run overlaps reading and checking the next.
        let mut copies = futures_util::stream::iter(to_copy)
            .map(|entry| async move {
                let result = self.push_run(target, entry.id).await;
                (entry, result)
            })
            .buffer_unordered(PUSH_PARALLEL);
        while let Some((entry, result)) = copies.next().await {
            match result {
                Ok((target_id, checksum)) => {
                    report.samples += entry.samples;
                    report.pushed.push(PushedRun {
                        target_id: Some(target_id),
                        checksum: Some(checksum),
                        ..entry
                    });
                }
                Err(e) => report.failed.push(PushedRun {
                    reason: Some(e.to_string()),
                    ..entry
                }),
            }
        }
        drop(copies);
        report.pushed.sort_by_key(|r| r.id);
        report.failed.sort_by_key(|r| r.id);
        let ids = self.id_map(target).await?;
        let (calibrations, calibration_ids) = self.push_calibrations(target).await?;
        report.calibrations = calibrations;
        report.run_sensors = self
            .push_run_sensors(target, &ids, &calibration_ids)
            .await?;
        report.parameter_sets = self.push_parameter_sets(target, &ids).await?;
        report.comparisons = self.push_comparisons(target, &ids).await?;
        report.chains = self.push_chains(target, &ids).await?;
        let mut benches: Vec<&str> = (report.pushed.iter().chain(&report.skipped))
            .map(|r| r.bench_id.as_str())
            .collect();
        benches.sort_unstable();
        benches.dedup();
        target.note_push(&benches).await?;
        Ok(report)
    }

    /// The id of the run with this UUID, if the store has it.
    pub async fn run_by_uuid(&self, uuid: &str) -> Result<Option<i64>, Error> {
        Ok(on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT id FROM runs WHERE uuid = $1")
                .bind(uuid)
                .fetch_optional(p)
                .await?
        }))
    }

    /// Copies run `id` into `target` in one transaction and verifies its samples there;
    /// returns its id in the target and the checksum.
    async fn push_run(&self, target: &Store, id: i64) -> Result<(i64, String), Error> {
        let (record, results) = self.run_record(id).await?;
        let uuid = record.uuid.clone();
        let Some((target_id, ours)) = self.copy_run(target, id, &record, results).await? else {
            // Another push copied it in the meantime.
            let there = target.run_by_uuid(&uuid).await?.unwrap_or_default();
            return Ok((there, target.sample_checksum(there).await?));
        };
        let there = target.sample_checksum(target_id).await?;
        if there != ours {
            target.delete_run(target_id).await?;
            return Err(Error::InvalidInput {
                field: "checksum",
                value: there,
                rule: format!("differs from the source's {ours} (the copy was removed)"),
            });
        }
        Ok((target_id, there))
    }

    /// Run `id`'s record and its results (analysis, time).
    async fn run_record(&self, id: i64) -> Result<(RunRow, Option<(String, String)>), Error> {
        on!(self.reader(), |p, DB| {
            let record = sqlx::query_as("SELECT * FROM runs WHERE id = $1")
                .bind(id)
                .fetch_one(p)
                .await?;
            let results =
                sqlx::query_as("SELECT analysis, created_at FROM results WHERE run_id = $1")
                    .bind(id)
                    .fetch_optional(p)
                    .await?;
            Ok((record, results))
        })
    }

    /// Writes the record, the chunks of run `id` (streamed from this store, about 1 MiB at a
    /// time) and its results into `target` in one transaction; `None` if a run with its UUID
    /// is already there. Returns the new id and the checksum of the samples read.
    async fn copy_run(
        &self,
        target: &Store,
        id: i64,
        r: &RunRow,
        results: Option<(String, String)>,
    ) -> Result<Option<(i64, String)>, Error> {
        let tags = self.tags_of(id).await?;
        on!(target.writer(), |q, Target| {
            let mut tx = q.begin().await?;
            let new_id: Option<i64> = sqlx::query_scalar(
                "INSERT INTO runs (uuid, kind, name, spec, status, status_reason, created_at,
                     started_at, finished_at, bench_config, device_profiles, software_version,
                     operator_note, models, period_s, period_error_p50_us, period_error_p99_us,
                     period_error_max_us, overruns, dropped_batches, dropped_samples,
                     sample_count, interruption_log, reason_code, run_log,
                     period_error_p999_us, tick_work_p50_us)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                     $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)
                 ON CONFLICT (uuid) DO NOTHING RETURNING id",
            )
            .bind(&r.uuid)
            .bind(&r.kind)
            .bind(&r.name)
            .bind(&r.spec)
            .bind(&r.status)
            .bind(&r.status_reason)
            .bind(&r.created_at)
            .bind(&r.started_at)
            .bind(&r.finished_at)
            .bind(&r.bench_config)
            .bind(&r.device_profiles)
            .bind(&r.software_version)
            .bind(&r.operator_note)
            .bind(&r.models)
            .bind(r.period_s)
            .bind(r.period_error_p50_us)
            .bind(r.period_error_p99_us)
            .bind(r.period_error_max_us)
            .bind(r.overruns)
            .bind(r.dropped_batches)
            .bind(r.dropped_samples)
            .bind(r.sample_count)
            .bind(&r.interruption_log)
            .bind(&r.reason_code)
            .bind(&r.run_log)
            .bind(r.period_error_p999_us)
            .bind(r.tick_work_p50_us)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(new_id) = new_id else {
                return Ok(None);
            };
            let checksum = self.copy_chunks(id, new_id, tx.conn()).await?;
            for tag in &tags {
                sqlx::query("INSERT INTO run_tags (run_id, tag) VALUES ($1, $2)")
                    .bind(new_id)
                    .bind(tag)
                    .execute(&mut *tx)
                    .await?;
            }
            if let Some((analysis, created_at)) = results {
                sqlx::query(
                    "INSERT INTO results (run_id, analysis, created_at) VALUES ($1, $2, $3)",
                )
                .bind(new_id)
                .bind(&analysis)
                .bind(created_at)
                .execute(&mut *tx)
                .await?;
                crate::summary::write_results(tx.conn(), new_id, &analysis).await?;
            }
            tx.commit().await?;
            Ok(Some((new_id, checksum)))
        })
    }

    /// Streams the sample and output chunks of run `id` into `conn` as run `new_id`; returns
    /// the checksum of the samples.
    async fn copy_chunks(
        &self,
        id: i64,
        new_id: i64,
        mut conn: ConnRef<'_>,
    ) -> Result<String, Error> {
        let mut sum = Checksum::default();
        on!(self.reader(), |p, DB| {
            let samples = sqlx::query_as::<_, SampleRow>(
                "SELECT idx0, n, t0, t1, data FROM samples WHERE run_id = $1 ORDER BY idx0",
            )
            .bind(id)
            .fetch(p)
            .inspect_ok(|row| sum.data(row.0, &row.4));
            in_statements(
                samples,
                |row| row.4.len(),
                async |rows| insert_chunks(conn.reborrow(), new_id, rows, Vec::new()).await,
            )
            .await?;
            let outputs = sqlx::query_as::<_, OutputRow>(
                "SELECT idx0, model, n, force FROM model_outputs WHERE run_id = $1
                 ORDER BY idx0, model",
            )
            .bind(id)
            .fetch(p);
            in_statements(
                outputs,
                |row| row.3.len(),
                async |rows| insert_chunks(conn.reborrow(), new_id, Vec::new(), rows).await,
            )
            .await?;
        });
        Ok(sum.hex())
    }

    /// This store's run ids mapped to the target's, by UUID, for the runs both have.
    async fn id_map(&self, target: &Store) -> Result<BTreeMap<i64, i64>, Error> {
        let ours: Vec<(i64, String)> = on!(self.reader(), |p, DB| {
            sqlx::query_as("SELECT id, uuid FROM runs")
                .fetch_all(p)
                .await?
        });
        let mut map = BTreeMap::new();
        for (id, uuid) in ours {
            if let Some(theirs) = target.run_by_uuid(&uuid).await? {
                map.insert(id, theirs);
            }
        }
        Ok(map)
    }

    /// Sets in `target` each chain link (`continues`) whose two runs it has: after the copies,
    /// which run in parallel and in any order. A link the target holds otherwise (its run is
    /// continued there by another) is left as it is and counted as skipped.
    async fn push_chains(&self, target: &Store, ids: &BTreeMap<i64, i64>) -> Result<Copied, Error> {
        let links: Vec<(i64, i64)> = on!(self.reader(), |p, DB| {
            sqlx::query_as("SELECT id, continues FROM runs WHERE continues IS NOT NULL")
                .fetch_all(p)
                .await?
        });
        let mut copied = Copied::default();
        for (id, of) in links {
            let (Some(&id), Some(&of)) = (ids.get(&id), ids.get(&of)) else {
                continue;
            };
            if target.continues(id).await?.is_some() {
                copied.count(false);
                continue;
            }
            match target.set_continues(id, of).await {
                Ok(()) => copied.count(true),
                Err(Error::InvalidInput { .. }) => copied.count(false),
                Err(e) => return Err(e),
            }
        }
        Ok(copied)
    }

    async fn push_parameter_sets(
        &self,
        target: &Store,
        ids: &BTreeMap<i64, i64>,
    ) -> Result<Copied, Error> {
        let sets: Vec<ParameterSetRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, name, model_id, params, provenance, created_at
                 FROM parameter_sets ORDER BY id",
            )
            .fetch_all(p)
            .await?
        });
        let mut copied = Copied::default();
        for set in sets {
            let provenance = translate_provenance(&set.provenance, set.id, ids, self.location())?;
            let inserted = on!(target.writer(), |p, DB| {
                let mut tx = p.begin().await?;
                let id: Option<i64> = sqlx::query_scalar(
                    "INSERT INTO parameter_sets (uuid, name, model_id, params, provenance,
                         created_at)
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (uuid) DO NOTHING RETURNING id",
                )
                .bind(&set.uuid)
                .bind(&set.name)
                .bind(&set.model_id)
                .bind(&set.params)
                .bind(&provenance)
                .bind(&set.created_at)
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(id) = id {
                    let (model, params) = (&set.model_id, &set.params);
                    crate::summary::write_set(tx.conn(), id, model, params, &provenance).await?;
                }
                tx.commit().await?;
                id.is_some()
            });
            copied.count(inserted);
        }
        Ok(copied)
    }

    async fn push_comparisons(
        &self,
        target: &Store,
        ids: &BTreeMap<i64, i64>,
    ) -> Result<Copied, Error> {
        let rows: Vec<ComparisonRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, created_at, estimate_runs, validate_runs, models, options,
                     result
                 FROM comparisons ORDER BY id",
            )
            .fetch_all(p)
            .await?
        });
        let mut copied = Copied::default();
        for c in rows {
            let estimate: Vec<i64> = serde_json::from_str(&c.estimate_runs)?;
            let validate: Vec<i64> = serde_json::from_str(&c.validate_runs)?;
            let map = |runs: &[i64]| {
                runs.iter()
                    .map(|r| ids.get(r).copied())
                    .collect::<Option<Vec<i64>>>()
            };
            let (Some(estimate), Some(validate)) = (map(&estimate), map(&validate)) else {
                continue;
            };
            let translated = ComparisonRow {
                estimate_runs: serde_json::to_string(&estimate)?,
                validate_runs: serde_json::to_string(&validate)?,
                ..c
            };
            let inserted = on!(target.writer(), |p, DB| {
                let mut tx = p.begin().await?;
                let id = insert_comparison(tx.conn(), &translated, &estimate, &validate).await?;
                tx.commit().await?;
                id.is_some()
            });
            copied.count(inserted);
        }
        Ok(copied)
    }
}

/// Hands the rows of `rows` to `write` in batches of about [`BYTES_PER_STMT`] (`bytes` of each
/// row), so a run of any length is copied in bounded memory.
async fn in_statements<R>(
    mut rows: impl futures_util::Stream<Item = Result<R, sqlx::Error>> + Unpin,
    bytes: impl Fn(&R) -> usize,
    mut write: impl AsyncFnMut(Vec<R>) -> Result<(), Error>,
) -> Result<(), Error> {
    let (mut batch, mut size) = (Vec::new(), 0);
    while let Some(row) = rows.try_next().await? {
        size += bytes(&row);
        batch.push(row);
        if size >= BYTES_PER_STMT {
            write(std::mem::take(&mut batch)).await?;
            size = 0;
        }
    }
    write(batch).await
}

/// A parameter set's provenance as the target keeps it: its `runs` ids translated to the
/// target's where all are known, and `pushed_from` saying where it came from.
fn translate_provenance(
    text: &str,
    id: i64,
    ids: &BTreeMap<i64, i64>,
    source: &Location,
) -> Result<String, Error> {
    let mut doc: serde_json::Value = serde_json::from_str(text)?;
    let Some(obj) = doc.as_object_mut() else {
        return Ok(text.to_string());
    };
    if obj.contains_key("pushed_from") {
        return Ok(text.to_string());
    }
    let runs = obj.get("runs").cloned();
    let translated = runs.as_ref().and_then(|r| r.as_array()).and_then(|r| {
        r.iter()
            .map(|v| v.as_i64().and_then(|id| ids.get(&id).copied()))
            .collect::<Option<Vec<i64>>>()
    });
    if let Some(t) = translated {
        obj.insert("runs".into(), serde_json::json!(t));
    }
    let origin = match source {
        Location::Sqlite(path) => path.display().to_string(),
        Location::Postgres(_) => source.to_string(),
    };
    obj.insert(
        "pushed_from".into(),
        serde_json::json!({"store": origin, "id": id, "runs": runs}),
    );
    Ok(serde_json::to_string(&doc)?)
}
