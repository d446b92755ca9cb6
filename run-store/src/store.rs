//! The store: opening (migrations, recovery of interrupted runs), run records and queries.

use crate::Error;
use crate::backend::{AsConn, ConnRef, Dialect, Either, Location, PoolRef, now_text, on};
use crate::chunk::{SampleChunk, output_at};
use crate::liveness;
use crate::reason::{Reason, ReasonCode};
use crate::types::{
    IMPORTED_KIND, LogEntry, NewRun, ParameterSet, Run, RunFilter, RunPage, RunStatus, RunSummary,
    SampleQuery, SampleSet, TimingStats,
};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{AssertSqlSafe, FromRow, QueryBuilder};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// The reason logged into runs found `running` when a store opens.
pub const INTERRUPTED_REASON: &str =
    "the daemon stopped while the run was running; samples up to the last commit are kept";

/// Most rows any page or listing returns.
const MAX_LIMIT: u32 = 10_000;

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

/// A `runs` row as stored.
#[derive(FromRow)]
pub(crate) struct RunRow {
    pub(crate) id: i64,
    pub(crate) uuid: String,
    pub(crate) bench_id: String,
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) spec: String,
    pub(crate) status: String,
    pub(crate) status_reason: Option<String>,
    pub(crate) reason_code: Option<String>,
    pub(crate) created_at: String,
    pub(crate) started_at: Option<String>,
    pub(crate) finished_at: Option<String>,
    pub(crate) bench_config: String,
    pub(crate) device_profiles: String,
    pub(crate) software_version: String,
    pub(crate) operator_note: Option<String>,
    pub(crate) models: String,
    pub(crate) period_s: Option<f64>,
    pub(crate) period_error_p50_us: Option<f64>,
    pub(crate) period_error_p99_us: Option<f64>,
    pub(crate) period_error_max_us: Option<f64>,
    pub(crate) period_error_p999_us: Option<f64>,
    pub(crate) tick_work_p50_us: Option<f64>,
    pub(crate) overruns: i64,
    pub(crate) dropped_batches: i64,
    pub(crate) dropped_samples: i64,
    pub(crate) sample_count: i64,
    pub(crate) interruption_log: String,
    pub(crate) run_log: String,
    pub(crate) continues: Option<i64>,
}

#[derive(FromRow)]
struct SummaryRow {
    id: i64,
    bench_id: String,
    kind: String,
    name: String,
    status: String,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    sample_count: i64,
}

#[derive(FromRow)]
struct ChunkRow {
    idx0: i64,
    n: i64,
    data: Vec<u8>,
}

#[derive(FromRow)]
struct OutputChunkRow {
    idx0: i64,
    model: String,
    n: i64,
    force: Vec<u8>,
}

/// Which sample chunks to read.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Select {
    /// Chunks whose first index is in `[lo, hi)` (a page); `None`: every chunk.
    pub idx0: Option<(i64, i64)>,
    /// Samples at or after this run time \[s\].
    pub from: Option<f64>,
    /// Samples at or before this run time \[s\].
    pub to: Option<f64>,
}

/// A `parameter_sets` row as stored.
#[derive(FromRow)]
pub(crate) struct ParameterSetRow {
    pub(crate) id: i64,
    pub(crate) uuid: String,
    pub(crate) name: String,
    pub(crate) model_id: String,
    pub(crate) params: String,
    pub(crate) provenance: String,
    pub(crate) created_at: String,
}

fn status_of(text: &str) -> Result<RunStatus, Error> {
    text.parse().map_err(|e: String| {
        Error::Database(sqlx::Error::Decode(
            format!("BUG: runs.status holds {e}").into(),
        ))
    })
}

impl Store {
    /// Opens the store at `location` for the process that records runs (the daemon, `bench
    /// run`): creates a missing SQLite file (and its directory), applies the migrations of its
    /// engine, then marks `interrupted` every run left `running` that no live process records
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
        Ok(Store {
            location,
            pools,
            interrupted: Vec::new(),
            bench: "".into(),
        })
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

    /// A stored `running` status as readers should see it: `interrupted` when no live process
    /// records the run any more (re-read, since the recorder may just have closed it).
    async fn live_status(&self, id: i64, stored: RunStatus) -> Result<RunStatus, Error> {
        if stored != RunStatus::Running || liveness::is_recorded(self, id).await? {
            return Ok(stored);
        }
        let now: Option<String> = on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT status FROM runs WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?
        });
        match now.as_deref().map(status_of).transpose()? {
            Some(RunStatus::Running) | None => Ok(RunStatus::Interrupted),
            Some(s) => Ok(s),
        }
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

    /// Creates a `queued` run; returns its id.
    pub async fn create_run(&self, run: &NewRun) -> Result<i64, Error> {
        on!(self.writer(), |p, DB| {
            let mut conn = p.acquire().await?;
            insert_run(conn.conn(), run).await
        })
    }

    /// Creates `queued` runs in one transaction (a sweep's thousand runs are one write, not a
    /// thousand); returns their ids in order.
    pub async fn create_runs(&self, runs: &[NewRun]) -> Result<Vec<i64>, Error> {
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let mut ids = Vec::with_capacity(runs.len());
            for run in runs {
                ids.push(insert_run(tx.conn(), run).await?);
            }
            tx.commit().await?;
            Ok(ids)
        })
    }

    /// Sets a run's final status without a recorder (e.g. a run rejected or failed before it
    /// started recording); `reason`'s text goes into the interruption log too.
    pub async fn finish_run(
        &self,
        id: i64,
        status: RunStatus,
        reason: Option<&Reason>,
    ) -> Result<(), Error> {
        if !status.is_final() {
            return Err(Error::InvalidInput {
                field: "status",
                value: status.to_string(),
                rule: "must be a final status (completed, aborted, failed, interrupted)".into(),
            });
        }
        on!(self.writer(), |p, DB| {
            let mut conn = p.acquire().await?;
            finish(conn.conn(), id, status, reason, None).await
        })
    }

    /// Deletes run `id` with everything stored of it (samples, model outputs, results, its
    /// place in comparisons and the queue): what an import that failed leaves behind.
    pub async fn delete_run(&self, id: i64) -> Result<(), Error> {
        let done = on!(self.writer(), |p, DB| {
            sqlx::query("DELETE FROM runs WHERE id = $1")
                .bind(id)
                .execute(p)
                .await?
                .rows_affected()
        });
        if done == 0 {
            return Err(Error::RunNotFound { id });
        }
        Ok(())
    }

    /// Appends a line to a run's interruption log: for what could not travel with its
    /// samples (the recorder that carries them died).
    pub async fn append_log(&self, id: i64, t: Option<f64>, reason: &str) -> Result<(), Error> {
        self.append_to("interruption_log", id, t, reason).await
    }

    /// Appends a line to a run's own log (`run_log`): what was checked and read back before
    /// and during the run, which is not an interruption.
    pub async fn append_note(&self, id: i64, t: Option<f64>, text: &str) -> Result<(), Error> {
        self.append_to("run_log", id, t, text).await
    }

    async fn append_to(
        &self,
        column: &str,
        id: i64,
        t: Option<f64>,
        text: &str,
    ) -> Result<(), Error> {
        let done = on!(self.writer(), |p, DB| {
            let sql = format!(
                "UPDATE runs SET {column} = {} WHERE id = $4",
                DB::log_append(column, 1, 2, 3)
            );
            sqlx::query(AssertSqlSafe(sql))
                .bind(now_text())
                .bind(t)
                .bind(text)
                .bind(id)
                .execute(p)
                .await?
                .rows_affected()
        });
        if done == 0 {
            return Err(Error::RunNotFound { id });
        }
        Ok(())
    }

    /// Stores (or replaces) the analysis results of a run.
    pub async fn save_results(&self, id: i64, analysis: &serde_json::Value) -> Result<(), Error> {
        self.require_run(id).await?;
        let analysis = serde_json::to_string(analysis)?;
        on!(self.writer(), |p, DB| {
            sqlx::query(
                "INSERT INTO results (run_id, analysis, created_at) VALUES ($1, $2, $3)
                 ON CONFLICT (run_id) DO UPDATE SET analysis = excluded.analysis,
                     created_at = excluded.created_at",
            )
            .bind(id)
            .bind(&analysis)
            .bind(now_text())
            .execute(p)
            .await?;
        });
        Ok(())
    }

    pub(crate) async fn require_run(&self, id: i64) -> Result<(), Error> {
        let found: Option<i64> = on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT id FROM runs WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?
        });
        found.map(|_| ()).ok_or(Error::RunNotFound { id })
    }

    /// One run with its timing, log and results.
    pub async fn run(&self, id: i64) -> Result<Run, Error> {
        loop {
            let (row, results) = self.run_row(id).await?;
            let stored = status_of(&row.status)?;
            let status = self.live_status(row.id, stored).await?;
            if status != stored && status != RunStatus::Interrupted {
                // It ended between the read and the liveness check: read it again, whole (its
                // reason, end time and results came with that status).
                continue;
            }
            let mut run = run_of(row, status, stored, results)?;
            run.tags = self.tags_of(id).await?;
            return Ok(run);
        }
    }

    async fn run_row(&self, id: i64) -> Result<(RunRow, Option<String>), Error> {
        let (row, results): (Option<RunRow>, Option<String>) = on!(self.reader(), |p, DB| {
            let row = sqlx::query_as("SELECT * FROM runs WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?;
            let results = sqlx::query_scalar("SELECT analysis FROM results WHERE run_id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?;
            (row, results)
        });
        Ok((row.ok_or(Error::RunNotFound { id })?, results))
    }

    /// Runs matching `filter`, newest first, one page.
    pub async fn list_runs(&self, filter: &RunFilter) -> Result<RunPage, Error> {
        if filter.limit == 0 || filter.limit > MAX_LIMIT {
            return Err(Error::InvalidInput {
                field: "limit",
                value: filter.limit.to_string(),
                rule: format!("must be between 1 and {MAX_LIMIT}"),
            });
        }
        let since = filter
            .since
            .as_deref()
            .map(|s| normalise_time("since", s))
            .transpose()?;
        let until = filter
            .until
            .as_deref()
            .map(|s| normalise_time("until", s))
            .transpose()?;
        let (total, rows): (i64, Vec<SummaryRow>) = on!(self.reader(), |p, DB| {
            let push_where = |qb: &mut QueryBuilder<DB>| {
                qb.push(" WHERE 1 = 1");
                if let Some(kind) = &filter.kind {
                    qb.push(" AND kind = ").push_bind(kind.clone());
                }
                if let Some(bench) = &filter.bench {
                    qb.push(" AND bench_id = ").push_bind(bench.clone());
                }
                if let Some(status) = filter.status {
                    qb.push(" AND status = ").push_bind(status.as_str());
                }
                if let Some(since) = &since {
                    qb.push(" AND created_at >= ").push_bind(since.clone());
                }
                if let Some(until) = &until {
                    qb.push(" AND created_at < ").push_bind(until.clone());
                }
                if let Some(tag) = &filter.tag {
                    qb.push(" AND id IN (SELECT run_id FROM run_tags WHERE tag = ")
                        .push_bind(tag.clone())
                        .push(")");
                }
            };
            let mut count = QueryBuilder::<DB>::new("SELECT count(*) FROM runs");
            push_where(&mut count);
            let total = count.build_query_scalar().fetch_one(p).await?;
            let mut page = QueryBuilder::<DB>::new(
                "SELECT id, bench_id, kind, name, status, created_at, started_at, finished_at,
                     sample_count
                 FROM runs",
            );
            push_where(&mut page);
            page.push(" ORDER BY created_at DESC, id DESC LIMIT ")
                .push_bind(i64::from(filter.limit))
                .push(" OFFSET ")
                .push_bind(i64::try_from(filter.offset).unwrap_or(i64::MAX));
            (total, page.build_query_as().fetch_all(p).await?)
        });
        let mut runs = Vec::with_capacity(rows.len());
        for r in rows {
            let status = self.live_status(r.id, status_of(&r.status)?).await?;
            runs.push(RunSummary {
                id: r.id,
                bench_id: r.bench_id,
                kind: r.kind,
                name: r.name,
                status,
                created_at: r.created_at,
                started_at: r.started_at,
                finished_at: r.finished_at,
                sample_count: r.sample_count as u64,
            });
        }
        Ok(RunPage {
            total: total as u64,
            runs,
        })
    }

    /// Samples of a run by time range and decimation, with its model outputs aligned.
    pub async fn samples(&self, run: i64, q: &SampleQuery) -> Result<SampleSet, Error> {
        let models = self.run_models(run).await?;
        check_query(q)?;
        let select = Select {
            idx0: None,
            from: q.from_t,
            to: q.to_t,
        };
        self.read_chunks(run, models, select, q.every).await
    }

    /// The lockstep model ids of a run (an error if there is no such run).
    pub(crate) async fn run_models(&self, run: i64) -> Result<Vec<String>, Error> {
        let models: Option<String> = on!(self.reader(), |p, DB| {
            sqlx::query_scalar("SELECT models FROM runs WHERE id = $1")
                .bind(run)
                .fetch_optional(p)
                .await?
        });
        let models = models.ok_or(Error::RunNotFound { id: run })?;
        Ok(serde_json::from_str(&models)?)
    }

    /// The samples `select` picks whose index is a multiple of `every`, with the outputs of
    /// `models` (and of any other model found) aligned.
    pub(crate) async fn read_chunks(
        &self,
        run: i64,
        mut models: Vec<String>,
        select: Select,
        every: u64,
    ) -> Result<SampleSet, Error> {
        let every = every.max(1);
        let Select { idx0, from, to } = select;
        let chunks: Vec<ChunkRow> = on!(self.reader(), |p, DB| {
            let mut qb =
                QueryBuilder::<DB>::new("SELECT idx0, n, data FROM samples WHERE run_id = ");
            qb.push_bind(run);
            if let Some(from) = from {
                qb.push(" AND t1 >= ").push_bind(from);
            }
            if let Some(to) = to {
                qb.push(" AND t0 <= ").push_bind(to);
            }
            if let Some((lo, hi)) = idx0 {
                qb.push(" AND idx0 >= ").push_bind(lo);
                qb.push(" AND idx0 < ").push_bind(hi);
            }
            qb.push(" ORDER BY idx0");
            qb.build_query_as().fetch_all(p).await?
        });
        let mut set = SampleSet::default();
        for c in &chunks {
            let n = usize::try_from(c.n).unwrap_or(0);
            let chunk = SampleChunk::new(n, &c.data).ok_or_else(|| {
                bad_chunk(format!(
                    "samples of run {run} at {} hold {} bytes",
                    c.idx0,
                    c.data.len()
                ))
            })?;
            for i in 0..n {
                let idx = c.idx0 as u64 + i as u64;
                if !idx.is_multiple_of(every) {
                    continue;
                }
                let t = chunk.t(i);
                // A NaN time is outside every range.
                let inside =
                    from.is_none_or(|f| t >= f && !t.is_nan()) && to.is_none_or(|to| t <= to);
                if !inside {
                    continue;
                }
                set.idx.push(idx);
                set.samples.push(chunk.get(i));
            }
        }
        let (Some(first), Some(last)) = (chunks.first(), chunks.last()) else {
            set.models = models;
            return Ok(set);
        };
        let outs: Vec<OutputChunkRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT idx0, model, n, force FROM model_outputs
                 WHERE run_id = $1 AND idx0 >= $2 AND idx0 <= $3 ORDER BY idx0",
            )
            .bind(run)
            .bind(first.idx0)
            .bind(last.idx0)
            .fetch_all(p)
            .await?
        });
        for o in &outs {
            if !models.contains(&o.model) {
                models.push(o.model.clone());
            }
        }
        let m = models.len();
        set.outputs = vec![f64::NAN; set.samples.len() * m];
        for o in &outs {
            let n = usize::try_from(o.n).unwrap_or(0);
            if o.force.len() != n * 8 {
                return Err(bad_chunk(format!(
                    "outputs of {} in run {run} at {} hold {} bytes",
                    o.model,
                    o.idx0,
                    o.force.len()
                )));
            }
            let col = models.iter().position(|id| id == &o.model).unwrap_or(0);
            let (lo, hi) = (o.idx0 as u64, o.idx0 as u64 + n as u64);
            let mut p = set.idx.partition_point(|&k| k < lo);
            while p < set.idx.len() && set.idx[p] < hi {
                set.outputs[p * m + col] = output_at(&o.force, (set.idx[p] - lo) as usize);
                p += 1;
            }
        }
        set.models = models;
        Ok(set)
    }

    /// Stores a parameter set; returns its id.
    pub async fn add_parameter_set(
        &self,
        name: &str,
        model_id: &str,
        params: &serde_json::Value,
        provenance: &serde_json::Value,
    ) -> Result<i64, Error> {
        let (params, provenance) = (
            serde_json::to_string(params)?,
            serde_json::to_string(provenance)?,
        );
        Ok(on!(self.writer(), |p, DB| {
            sqlx::query_scalar(
                "INSERT INTO parameter_sets (uuid, name, model_id, params, provenance, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            )
            .bind(crate::backend::new_uuid())
            .bind(name)
            .bind(model_id)
            .bind(&params)
            .bind(&provenance)
            .bind(now_text())
            .fetch_one(p)
            .await?
        }))
    }

    /// Parameter sets, newest first, optionally of one model only.
    pub async fn parameter_sets(&self, model_id: Option<&str>) -> Result<Vec<ParameterSet>, Error> {
        let rows: Vec<ParameterSetRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, name, model_id, params, provenance, created_at
                 FROM parameter_sets
                 WHERE $1 IS NULL OR model_id = $1 ORDER BY created_at DESC, id DESC",
            )
            .bind(model_id)
            .fetch_all(p)
            .await?
        });
        rows.into_iter().map(ParameterSetRow::decode).collect()
    }

    /// The parameter set with this id.
    pub async fn parameter_set(&self, id: i64) -> Result<ParameterSet, Error> {
        let row: Option<ParameterSetRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, name, model_id, params, provenance, created_at
                 FROM parameter_sets WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(p)
            .await?
        });
        row.ok_or_else(|| Error::NotFound {
            what: "parameter set",
            key: id.to_string(),
        })?
        .decode()
    }

    /// The newest parameter set named `name` (names need not be unique; the latest wins).
    pub async fn parameter_set_by_name(&self, name: &str) -> Result<ParameterSet, Error> {
        let row: Option<ParameterSetRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, name, model_id, params, provenance, created_at
                 FROM parameter_sets WHERE name = $1 ORDER BY created_at DESC, id DESC LIMIT 1",
            )
            .bind(name)
            .fetch_optional(p)
            .await?
        });
        row.ok_or_else(|| Error::NotFound {
            what: "parameter set",
            key: format!("'{name}'"),
        })?
        .decode()
    }
}

impl ParameterSetRow {
    fn decode(self) -> Result<ParameterSet, Error> {
        Ok(ParameterSet {
            id: self.id,
            uuid: self.uuid,
            name: self.name,
            model_id: self.model_id,
            params: serde_json::from_str(&self.params)?,
            provenance: serde_json::from_str(&self.provenance)?,
            created_at: self.created_at,
        })
    }
}

fn bad_chunk(what: String) -> Error {
    Error::Database(sqlx::Error::Decode(
        format!("BUG: corrupt chunk: {what}").into(),
    ))
}

pub(crate) fn check_query(q: &SampleQuery) -> Result<(), Error> {
    if q.every == 0 {
        return Err(Error::InvalidInput {
            field: "every",
            value: "0".into(),
            rule: "must be >= 1".into(),
        });
    }
    for (field, t) in [("from", q.from_t), ("to", q.to_t)] {
        if let Some(t) = t.filter(|t| t.is_nan()) {
            return Err(Error::InvalidInput {
                field,
                value: t.to_string(),
                rule: "must be a number of seconds".into(),
            });
        }
    }
    Ok(())
}

/// Sets the final status of `id` (with `reason` logged) and, if given, its timing statistics.
pub(crate) async fn finish(
    mut conn: ConnRef<'_>,
    id: i64,
    status: RunStatus,
    reason: Option<&Reason>,
    timing: Option<&TimingStats>,
) -> Result<(), Error> {
    let text = reason.map(|r| r.text.as_str());
    let code = reason.map(|r| r.code.as_str());
    let done = on!(&mut conn, |c, DB| {
        let sql = format!(
            "UPDATE runs SET status = $4, status_reason = $3, reason_code = $6, finished_at = $1,
                 interruption_log = CASE WHEN $3 IS NULL THEN interruption_log ELSE {} END
             WHERE id = $5",
            DB::log_append("interruption_log", 1, 2, 3)
        );
        sqlx::query(AssertSqlSafe(sql))
            .bind(now_text())
            .bind(None::<f64>)
            .bind(text)
            .bind(status.as_str())
            .bind(id)
            .bind(code)
            .execute(&mut **c)
            .await?
            .rows_affected()
    });
    if done == 0 {
        return Err(Error::RunNotFound { id });
    }
    if let Some(timing) = timing {
        set_timing(conn, id, timing).await?;
    }
    Ok(())
}

/// Stores the timing statistics of a run.
pub(crate) async fn set_timing(
    conn: ConnRef<'_>,
    id: i64,
    timing: &TimingStats,
) -> Result<(), Error> {
    on!(conn, |c, DB| {
        sqlx::query(
            "UPDATE runs SET period_error_p50_us = $1, period_error_p99_us = $2,
                 period_error_max_us = $3, overruns = $4, period_error_p999_us = $5,
                 tick_work_p50_us = $6 WHERE id = $7",
        )
        .bind(timing.period_error_p50_us)
        .bind(timing.period_error_p99_us)
        .bind(timing.period_error_max_us)
        .bind(i64::try_from(timing.overruns).unwrap_or(i64::MAX))
        .bind(timing.period_error_p999_us)
        .bind(timing.tick_work_p50_us)
        .bind(id)
        .execute(c)
        .await?;
    });
    Ok(())
}

async fn insert_run(conn: ConnRef<'_>, run: &NewRun) -> Result<i64, Error> {
    let text = (
        serde_json::to_string(&run.spec)?,
        serde_json::to_string(&run.bench_config)?,
        serde_json::to_string(&run.device_profiles)?,
        serde_json::to_string(&run.models)?,
    );
    Ok(on!(conn, |c, DB| {
        sqlx::query_scalar(
            "INSERT INTO runs (uuid, kind, name, spec, bench_config, device_profiles,
                 software_version, operator_note, models, period_s, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
        )
        .bind(crate::backend::new_uuid())
        .bind(&run.kind)
        .bind(&run.name)
        .bind(&text.0)
        .bind(&text.1)
        .bind(&text.2)
        .bind(&run.software_version)
        .bind(&run.notes)
        .bind(&text.3)
        .bind(run.period_s)
        .bind(now_text())
        .fetch_one(c)
        .await?
    }))
}

/// A caller's date (`YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ`, UTC) in the stored form; anything
/// else (SQLite would also read a bare number as a Julian day) is an input error.
pub(crate) fn normalise_time(field: &'static str, text: &str) -> Result<String, Error> {
    let day = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .filter(|_| text.len() == 10)
        .and_then(|d| d.and_hms_opt(0, 0, 0));
    let time = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%SZ")
        .ok()
        .filter(|_| text.len() == 20);
    day.or(time)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .ok_or_else(|| Error::InvalidInput {
            field,
            value: text.to_string(),
            rule: "is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC)".into(),
        })
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
    let write = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options.clone())
        .await?;
    sqlx::migrate!("../migrations/sqlite").run(&write).await?;
    let read = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await?;
    Ok(Pools::Sqlite { read, write })
}

async fn connect_postgres(url: &str) -> Result<Pools, Error> {
    // The server's notices (`relation ... already exists, skipping`) are not the user's news.
    let options = PgConnectOptions::from_str(url)?.options([("client_min_messages", "warning")]);
    let pool = PgPoolOptions::new()
        .max_connections(PG_CONNECTIONS)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await?;
    // sqlx serialises concurrent migrators on PostgreSQL with an advisory lock.
    sqlx::migrate!("../migrations/postgres").run(&pool).await?;
    Ok(Pools::Postgres(pool))
}

/// A run from its row, with the status its liveness says (`stored` is the row's).
fn run_of(
    row: RunRow,
    status: RunStatus,
    stored: RunStatus,
    results: Option<String>,
) -> Result<Run, Error> {
    let (status_reason, reason_code) =
        if status == RunStatus::Interrupted && stored == RunStatus::Running {
            (
                Some(liveness::DEAD_RECORDER_REASON.to_string()),
                Some(ReasonCode::Interrupted),
            )
        } else {
            (
                row.status_reason,
                row.reason_code.as_deref().map(ReasonCode::from_stored),
            )
        };
    Ok(Run {
        id: row.id,
        uuid: row.uuid,
        bench_id: row.bench_id,
        kind: row.kind,
        name: row.name,
        status,
        status_reason,
        reason_code,
        created_at: row.created_at,
        started_at: row.started_at,
        finished_at: row.finished_at,
        spec: serde_json::from_str(&row.spec)?,
        bench_config: serde_json::from_str(&row.bench_config)?,
        device_profiles: serde_json::from_str(&row.device_profiles)?,
        software_version: row.software_version,
        notes: row.operator_note,
        tags: Vec::new(),
        models: serde_json::from_str(&row.models)?,
        period_s: row.period_s,
        timing: TimingStats {
            period_error_p50_us: row.period_error_p50_us,
            period_error_p99_us: row.period_error_p99_us,
            period_error_max_us: row.period_error_max_us,
            overruns: row.overruns as u64,
            period_error_p999_us: row.period_error_p999_us,
            tick_work_p50_us: row.tick_work_p50_us,
        },
        dropped_batches: row.dropped_batches as u64,
        dropped_samples: row.dropped_samples as u64,
        sample_count: row.sample_count as u64,
        interruption_log: serde_json::from_str::<Vec<LogEntry>>(&row.interruption_log)?,
        run_log: serde_json::from_str::<Vec<LogEntry>>(&row.run_log)?,
        results: results.map(|r| serde_json::from_str(&r)).transpose()?,
        continues: row.continues,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parameter_sets_are_found_by_id_and_by_latest_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let prov = serde_json::json!({"runs": [1]});
        let a = store
            .add_parameter_set("bench", "lugre", &serde_json::json!({"fc": 1.0}), &prov)
            .await
            .unwrap();
        let b = store
            .add_parameter_set("bench", "lugre", &serde_json::json!({"fc": 2.0}), &prov)
            .await
            .unwrap();
        let first = store.parameter_set(a).await.unwrap();
        assert_eq!(
            (first.name.as_str(), first.params["fc"].as_f64()),
            ("bench", Some(1.0))
        );
        assert_eq!(first.provenance, prov);
        // Same name twice: the newest (same timestamp possible: the higher id) wins.
        assert_eq!(store.parameter_set_by_name("bench").await.unwrap().id, b);
        let err = store.parameter_set(b + 1).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("parameter set {} not found", b + 1)
        );
        let err = store.parameter_set_by_name("nope").await.unwrap_err();
        assert_eq!(err.to_string(), "parameter set 'nope' not found");
    }
}
