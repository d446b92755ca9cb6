//! The store: opening (migrations, recovery of interrupted runs), run records and queries.

use crate::Error;
use crate::types::{
    LogEntry, NewRun, ParameterSet, Run, RunFilter, RunPage, RunStatus, RunSummary, Sample,
    SampleQuery, SampleSet, TimingStats,
};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{FromRow, QueryBuilder, Sqlite};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The reason logged into runs found `running` when a store opens.
pub const INTERRUPTED_REASON: &str =
    "the daemon stopped while the run was running; samples up to the last commit are kept";

/// Most rows any page or listing returns.
const MAX_LIMIT: u32 = 10_000;

/// A SQLite run store (WAL, synchronous NORMAL, busy timeout 5 s).
///
/// Reads go through a small pool; every write goes through a second pool of exactly one
/// connection, so writes never contend for SQLite's lock inside the process. Cloning is cheap and
/// shares both pools.
#[derive(Clone, Debug)]
pub struct Store {
    path: PathBuf,
    read: SqlitePool,
    write: SqlitePool,
    interrupted: Vec<i64>,
}

#[derive(FromRow)]
struct RunRow {
    id: i64,
    kind: String,
    name: String,
    spec: String,
    status: String,
    status_reason: Option<String>,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    bench_config: String,
    device_profiles: String,
    software_version: String,
    operator_note: Option<String>,
    models: String,
    period_s: Option<f64>,
    period_error_p50_us: Option<f64>,
    period_error_p99_us: Option<f64>,
    period_error_max_us: Option<f64>,
    overruns: i64,
    dropped_batches: i64,
    dropped_samples: i64,
    sample_count: i64,
    interruption_log: String,
}

#[derive(FromRow)]
struct SummaryRow {
    id: i64,
    kind: String,
    name: String,
    status: String,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    sample_count: i64,
}

#[derive(FromRow)]
struct SampleRow {
    idx: i64,
    t: Option<f64>,
    x: Option<f64>,
    v: Option<f64>,
    u_cmd: Option<f64>,
    torque_motor: Option<f64>,
    torque_sensor: Option<f64>,
    segment: i64,
    flags: i64,
}

#[derive(FromRow)]
struct OutputRow {
    idx: i64,
    model: String,
    force: Option<f64>,
}

#[derive(FromRow)]
struct ParameterSetRow {
    id: i64,
    name: String,
    model_id: String,
    params: String,
    provenance: String,
    created_at: String,
}

fn status_of(text: &str) -> Result<RunStatus, Error> {
    text.parse().map_err(|e: String| {
        Error::Database(sqlx::Error::Decode(
            format!("BUG: runs.status holds {e}").into(),
        ))
    })
}

fn nan(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

impl SampleRow {
    fn sample(&self) -> Sample {
        Sample {
            t: nan(self.t),
            x: nan(self.x),
            v: nan(self.v),
            u_cmd: nan(self.u_cmd),
            torque_motor: nan(self.torque_motor),
            torque_sensor: nan(self.torque_sensor),
            segment: self.segment as u32,
            flags: self.flags as u32,
        }
    }
}

impl Store {
    /// Opens (creating if missing) the store at `path` for the daemon: applies the migrations,
    /// then marks every run left `running` as `interrupted` (their committed samples stay).
    /// [`Store::interrupted_at_open`] lists them.
    pub async fn open(path: impl AsRef<Path>) -> Result<Store, Error> {
        let mut store = Store::connect(path.as_ref(), true).await?;
        store.interrupted = store.mark_interrupted().await?;
        Ok(store)
    }

    /// Opens an existing store to query it (the `bench runs` commands): applies pending
    /// migrations but leaves `running` runs alone, since a daemon may be recording them.
    pub async fn open_existing(path: impl AsRef<Path>) -> Result<Store, Error> {
        let path = path.as_ref();
        if !path.is_file() {
            return Err(Error::NoDatabase {
                path: path.to_path_buf(),
            });
        }
        Store::connect(path, false).await
    }

    async fn connect(path: &Path, create: bool) -> Result<Store, Error> {
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
        sqlx::migrate!("../migrations").run(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        Ok(Store {
            path: path.to_path_buf(),
            read,
            write,
            interrupted: Vec::new(),
        })
    }

    async fn mark_interrupted(&self) -> Result<Vec<i64>, Error> {
        let ids: Vec<i64> = sqlx::query_scalar(
            "UPDATE runs SET status = 'interrupted', status_reason = ?1,
                 finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                 interruption_log = json_insert(interruption_log, '$[#]', json_object(
                     'at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 't', NULL, 'reason', ?1))
             WHERE status = 'running' RETURNING id",
        )
        .bind(INTERRUPTED_REASON)
        .fetch_all(&self.write)
        .await?;
        Ok(ids)
    }

    /// The runs [`Store::open`] found `running` and marked `interrupted`.
    pub fn interrupted_at_open(&self) -> &[i64] {
        &self.interrupted
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The single-connection pool every write goes through (the recorder's).
    pub(crate) fn writer(&self) -> &SqlitePool {
        &self.write
    }

    /// The read pool.
    pub(crate) fn reader(&self) -> &SqlitePool {
        &self.read
    }

    /// Closes both pools (waits for connections to finish; checkpoints the WAL).
    pub async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
    }

    /// Creates a `queued` run; returns its id.
    pub async fn create_run(&self, run: &NewRun) -> Result<i64, Error> {
        let id = sqlx::query_scalar(
            "INSERT INTO runs (kind, name, spec, bench_config, device_profiles, software_version,
                 operator_note, models, period_s)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&run.kind)
        .bind(&run.name)
        .bind(serde_json::to_string(&run.spec)?)
        .bind(serde_json::to_string(&run.bench_config)?)
        .bind(serde_json::to_string(&run.device_profiles)?)
        .bind(&run.software_version)
        .bind(&run.operator_note)
        .bind(serde_json::to_string(&run.models)?)
        .bind(run.period_s)
        .fetch_one(&self.write)
        .await?;
        Ok(id)
    }

    /// Sets a run's final status without a recorder (e.g. a run rejected or failed before it
    /// started recording); `reason` goes into the interruption log too.
    pub async fn finish_run(
        &self,
        id: i64,
        status: RunStatus,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        if !status.is_final() {
            return Err(Error::InvalidInput {
                field: "status",
                value: status.to_string(),
                rule: "must be a final status (completed, aborted, failed, interrupted)".into(),
            });
        }
        let mut conn = self.write.acquire().await?;
        finish(&mut conn, id, status, reason, None).await
    }

    /// Stores (or replaces) the analysis results of a run.
    pub async fn save_results(&self, id: i64, analysis: &serde_json::Value) -> Result<(), Error> {
        self.require_run(id).await?;
        sqlx::query(
            "INSERT INTO results (run_id, analysis) VALUES (?, ?)
             ON CONFLICT (run_id) DO UPDATE SET analysis = excluded.analysis,
                 created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        )
        .bind(id)
        .bind(serde_json::to_string(analysis)?)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn require_run(&self, id: i64) -> Result<(), Error> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.read)
            .await?;
        found.map(|_| ()).ok_or(Error::RunNotFound { id })
    }

    /// One run with its timing, log and results.
    pub async fn run(&self, id: i64) -> Result<Run, Error> {
        let row: RunRow = sqlx::query_as("SELECT * FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.read)
            .await?
            .ok_or(Error::RunNotFound { id })?;
        let results: Option<String> =
            sqlx::query_scalar("SELECT analysis FROM results WHERE run_id = ?")
                .bind(id)
                .fetch_optional(&self.read)
                .await?;
        Ok(Run {
            id: row.id,
            kind: row.kind,
            name: row.name,
            status: status_of(&row.status)?,
            status_reason: row.status_reason,
            created_at: row.created_at,
            started_at: row.started_at,
            finished_at: row.finished_at,
            spec: serde_json::from_str(&row.spec)?,
            bench_config: serde_json::from_str(&row.bench_config)?,
            device_profiles: serde_json::from_str(&row.device_profiles)?,
            software_version: row.software_version,
            operator_note: row.operator_note,
            models: serde_json::from_str(&row.models)?,
            period_s: row.period_s,
            timing: TimingStats {
                period_error_p50_us: row.period_error_p50_us,
                period_error_p99_us: row.period_error_p99_us,
                period_error_max_us: row.period_error_max_us,
                overruns: row.overruns as u64,
            },
            dropped_batches: row.dropped_batches as u64,
            dropped_samples: row.dropped_samples as u64,
            sample_count: row.sample_count as u64,
            interruption_log: serde_json::from_str::<Vec<LogEntry>>(&row.interruption_log)?,
            results: results.map(|r| serde_json::from_str(&r)).transpose()?,
        })
    }

    /// Normalises a caller's date to the stored form; an unparsable date is an input error.
    async fn normalise_time(&self, field: &'static str, text: &str) -> Result<String, Error> {
        let norm: Option<String> = sqlx::query_scalar("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?)")
            .bind(text)
            .fetch_one(&self.read)
            .await?;
        norm.ok_or_else(|| Error::InvalidInput {
            field,
            value: text.to_string(),
            rule: "is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC)".into(),
        })
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
        let since = match &filter.since {
            Some(s) => Some(self.normalise_time("since", s).await?),
            None => None,
        };
        let until = match &filter.until {
            Some(s) => Some(self.normalise_time("until", s).await?),
            None => None,
        };
        let push_where = |qb: &mut QueryBuilder<Sqlite>| {
            qb.push(" WHERE 1 = 1");
            if let Some(kind) = &filter.kind {
                qb.push(" AND kind = ").push_bind(kind.clone());
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
        };
        let mut count = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM runs");
        push_where(&mut count);
        let total: i64 = count.build_query_scalar().fetch_one(&self.read).await?;
        let mut page = QueryBuilder::<Sqlite>::new(
            "SELECT id, kind, name, status, created_at, started_at, finished_at, sample_count
             FROM runs",
        );
        push_where(&mut page);
        page.push(" ORDER BY created_at DESC, id DESC LIMIT ")
            .push_bind(i64::from(filter.limit))
            .push(" OFFSET ")
            .push_bind(i64::try_from(filter.offset).unwrap_or(i64::MAX));
        let rows: Vec<SummaryRow> = page.build_query_as().fetch_all(&self.read).await?;
        let runs = rows
            .into_iter()
            .map(|r| {
                Ok(RunSummary {
                    id: r.id,
                    kind: r.kind,
                    name: r.name,
                    status: status_of(&r.status)?,
                    created_at: r.created_at,
                    started_at: r.started_at,
                    finished_at: r.finished_at,
                    sample_count: r.sample_count as u64,
                })
            })
            .collect::<Result<_, Error>>()?;
        Ok(RunPage {
            total: total as u64,
            runs,
        })
    }

    /// The first stored sample of `run` at or after index `from` whose time is at least `t`
    /// (or above `t` if `strict`); `None` if there is none. Samples are keyed by index and their
    /// time increases with it, so a binary search over the index finds it in O(log² n) without
    /// an index on `t`.
    async fn first_idx_at(&self, run: i64, t: f64, strict: bool) -> Result<Option<i64>, Error> {
        // Probe: the first stored sample at index >= k.
        let probe = async |k: i64| -> Result<Option<(i64, Option<f64>)>, Error> {
            Ok(sqlx::query_as(
                "SELECT idx, t FROM samples WHERE run_id = ? AND idx >= ? ORDER BY idx LIMIT 1",
            )
            .bind(run)
            .bind(k)
            .fetch_optional(&self.read)
            .await?)
        };
        let past = |tk: Option<f64>| match tk {
            Some(tk) if strict => tk > t,
            Some(tk) => tk >= t,
            None => false,
        };
        let Some(last) =
            sqlx::query_scalar::<_, Option<i64>>("SELECT max(idx) FROM samples WHERE run_id = ?")
                .bind(run)
                .fetch_one(&self.read)
                .await?
        else {
            return Ok(None);
        };
        // Invariant: no sample below `lo` qualifies; probe(hi) qualifies or hi = last + 1.
        let (mut lo, mut hi) = (0_i64, last + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match probe(mid).await? {
                Some((k, tk)) if past(tk) => hi = mid.min(k),
                Some((k, _)) => lo = k + 1,
                None => hi = mid,
            }
        }
        Ok(probe(lo).await?.filter(|&(_, tk)| past(tk)).map(|(k, _)| k))
    }

    /// The index range `[lo, hi)` of the samples of `run` inside `[from_t, to_t]`.
    async fn idx_range(&self, run: i64, q: &SampleQuery) -> Result<(i64, i64), Error> {
        let lo = match q.from_t {
            Some(t) => self.first_idx_at(run, t, false).await?.unwrap_or(i64::MAX),
            None => 0,
        };
        let hi = match q.to_t {
            Some(t) => self.first_idx_at(run, t, true).await?.unwrap_or(i64::MAX),
            None => i64::MAX,
        };
        Ok((lo, hi))
    }

    /// Samples of a run by time range and decimation, with its model outputs aligned.
    pub async fn samples(&self, run: i64, q: &SampleQuery) -> Result<SampleSet, Error> {
        let models = self.run_models(run).await?;
        check_query(q)?;
        let (lo, hi) = self.idx_range(run, q).await?;
        self.read_idx_range(run, models, lo, hi, q.every).await
    }

    /// The lockstep model ids of a run (an error if there is no such run).
    pub(crate) async fn run_models(&self, run: i64) -> Result<Vec<String>, Error> {
        let models: String = sqlx::query_scalar("SELECT models FROM runs WHERE id = ?")
            .bind(run)
            .fetch_optional(&self.read)
            .await?
            .ok_or(Error::RunNotFound { id: run })?;
        Ok(serde_json::from_str(&models)?)
    }

    /// Samples with index in `[lo, hi)` and a multiple of `every`, with outputs of `models`.
    pub(crate) async fn read_idx_range(
        &self,
        run: i64,
        mut models: Vec<String>,
        lo: i64,
        hi: i64,
        every: u64,
    ) -> Result<SampleSet, Error> {
        let every = i64::try_from(every.max(1)).unwrap_or(i64::MAX);
        let rows: Vec<SampleRow> = sqlx::query_as(
            "SELECT idx, t, x, v, u_cmd, torque_motor, torque_sensor, segment, flags
             FROM samples WHERE run_id = ? AND idx >= ? AND idx < ? AND idx % ? = 0
             ORDER BY idx",
        )
        .bind(run)
        .bind(lo)
        .bind(hi)
        .bind(every)
        .fetch_all(&self.read)
        .await?;
        let outs: Vec<OutputRow> = sqlx::query_as(
            "SELECT idx, model, force FROM model_outputs
             WHERE run_id = ? AND idx >= ? AND idx < ? AND idx % ? = 0 ORDER BY idx",
        )
        .bind(run)
        .bind(lo)
        .bind(hi)
        .bind(every)
        .fetch_all(&self.read)
        .await?;
        for o in &outs {
            if !models.contains(&o.model) {
                models.push(o.model.clone());
            }
        }
        let m = models.len();
        let idx: Vec<u64> = rows.iter().map(|r| r.idx as u64).collect();
        let mut outputs = vec![f64::NAN; rows.len() * m];
        let mut col = 0;
        for o in &outs {
            // Outputs come in sample order; the model column is usually the next one.
            if models.get(col) != Some(&o.model) {
                col = models.iter().position(|id| id == &o.model).unwrap_or(0);
            }
            if let Ok(i) = idx.binary_search(&(o.idx as u64)) {
                outputs[i * m + col] = nan(o.force);
            }
            col = (col + 1) % m.max(1);
        }
        Ok(SampleSet {
            models,
            idx,
            samples: rows.iter().map(SampleRow::sample).collect(),
            outputs,
        })
    }

    /// Stores a parameter set; returns its id.
    pub async fn add_parameter_set(
        &self,
        name: &str,
        model_id: &str,
        params: &serde_json::Value,
        provenance: &serde_json::Value,
    ) -> Result<i64, Error> {
        let id = sqlx::query_scalar(
            "INSERT INTO parameter_sets (name, model_id, params, provenance)
             VALUES (?, ?, ?, ?) RETURNING id",
        )
        .bind(name)
        .bind(model_id)
        .bind(serde_json::to_string(params)?)
        .bind(serde_json::to_string(provenance)?)
        .fetch_one(&self.write)
        .await?;
        Ok(id)
    }

    /// Parameter sets, newest first, optionally of one model only.
    pub async fn parameter_sets(&self, model_id: Option<&str>) -> Result<Vec<ParameterSet>, Error> {
        let rows: Vec<ParameterSetRow> = sqlx::query_as(
            "SELECT id, name, model_id, params, provenance, created_at FROM parameter_sets
             WHERE ?1 IS NULL OR model_id = ?1 ORDER BY created_at DESC, id DESC",
        )
        .bind(model_id)
        .fetch_all(&self.read)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(ParameterSet {
                    id: r.id,
                    name: r.name,
                    model_id: r.model_id,
                    params: serde_json::from_str(&r.params)?,
                    provenance: serde_json::from_str(&r.provenance)?,
                    created_at: r.created_at,
                })
            })
            .collect()
    }
}

fn check_query(q: &SampleQuery) -> Result<(), Error> {
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
    conn: &mut sqlx::SqliteConnection,
    id: i64,
    status: RunStatus,
    reason: Option<&str>,
    timing: Option<&TimingStats>,
) -> Result<(), Error> {
    let done = sqlx::query(
        "UPDATE runs SET status = ?2, status_reason = ?3,
             finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
             interruption_log = CASE WHEN ?3 IS NULL THEN interruption_log
                 ELSE json_insert(interruption_log, '$[#]', json_object(
                     'at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 't', NULL, 'reason', ?3)) END
         WHERE id = ?1",
    )
    .bind(id)
    .bind(status.as_str())
    .bind(reason)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::RunNotFound { id });
    }
    if let Some(timing) = timing {
        set_timing(conn, id, timing).await?;
    }
    Ok(())
}

/// Stores the timing statistics of a run.
pub(crate) async fn set_timing(
    conn: &mut sqlx::SqliteConnection,
    id: i64,
    timing: &TimingStats,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE runs SET period_error_p50_us = ?, period_error_p99_us = ?,
             period_error_max_us = ?, overruns = ? WHERE id = ?",
    )
    .bind(timing.period_error_p50_us)
    .bind(timing.period_error_p99_us)
    .bind(timing.period_error_max_us)
    .bind(i64::try_from(timing.overruns).unwrap_or(i64::MAX))
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}
