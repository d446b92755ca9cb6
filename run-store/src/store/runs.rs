//! Run records as the store writes them: a run created `queued`, its final status, its logs,
//! its results, and deleting it whole.

use super::Store;
use crate::Error;
use crate::backend::{AsConn, ConnRef, Dialect, now_text, on};
use crate::reason::Reason;
use crate::types::{NewRun, RunStatus, TimingStats};
use sqlx::AssertSqlSafe;

impl Store {
    /// Creates a `queued` run; returns its id.
    pub async fn create_run(&self, run: &NewRun) -> Result<i64, Error> {
        on!(self.writer(), |p, DB| {
            let mut conn = p.acquire().await?;
            insert_run(conn.conn(), run, &now_text()).await
        })
    }

    /// Creates `queued` runs in one transaction (a sweep's thousand runs are one write, not a
    /// thousand); returns their ids in order.
    pub async fn create_runs(&self, runs: &[NewRun]) -> Result<Vec<i64>, Error> {
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let mut ids = Vec::with_capacity(runs.len());
            let at = now_text();
            for run in runs {
                ids.push(insert_run(tx.conn(), run, &at).await?);
            }
            tx.commit().await?;
            Ok(ids)
        })
    }

    /// Creates `queued` runs in one transaction as [`Store::create_runs`] does, each created at
    /// its given time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC): recordings made earlier, such
    /// as the months of history `bench perf lab` generates. Returns their ids in order.
    pub async fn create_runs_at(&self, runs: &[(NewRun, String)]) -> Result<Vec<i64>, Error> {
        let times = runs
            .iter()
            .map(|(_, at)| super::normalise_time("created_at", at))
            .collect::<Result<Vec<_>, _>>()?;
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let mut ids = Vec::with_capacity(runs.len());
            for ((run, _), at) in runs.iter().zip(&times) {
                ids.push(insert_run(tx.conn(), run, at).await?);
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
        found(id, done)
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

    /// Appends the same note to the log of every run of `ids`, in one transaction (a batch of
    /// a thousand runs is one commit, not a thousand).
    pub async fn append_note_to_all(&self, ids: &[i64], text: &str) -> Result<(), Error> {
        on!(self.writer(), |p, DB| {
            let sql = format!(
                "UPDATE runs SET run_log = {} WHERE id = $4",
                DB::log_append("run_log", 1, 2, 3)
            );
            let mut tx = p.begin().await?;
            let at = now_text();
            for &id in ids {
                let done = sqlx::query(AssertSqlSafe(sql.clone()))
                    .bind(&at)
                    .bind(None::<f64>)
                    .bind(text)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                found(id, done)?;
            }
            tx.commit().await?;
            Ok(())
        })
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
        found(id, done)
    }

    /// Stores (or replaces) the analysis results of a run, with their summary rows.
    pub async fn save_results(&self, id: i64, analysis: &serde_json::Value) -> Result<(), Error> {
        self.require_run(id).await?;
        let analysis = serde_json::to_string(analysis)?;
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            sqlx::query(
                "INSERT INTO results (run_id, analysis, created_at) VALUES ($1, $2, $3)
                 ON CONFLICT (run_id) DO UPDATE SET analysis = excluded.analysis,
                     created_at = excluded.created_at",
            )
            .bind(id)
            .bind(&analysis)
            .bind(now_text())
            .execute(&mut *tx)
            .await?;
            crate::summary::write_results(tx.conn(), id, &analysis).await?;
            tx.commit().await?;
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
    found(id, done)?;
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

async fn insert_run(conn: ConnRef<'_>, run: &NewRun, at: &str) -> Result<i64, Error> {
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
        .bind(at)
        .fetch_one(c)
        .await?
    }))
}

/// `RunNotFound` when a write to run `id` touched no row.
fn found(id: i64, rows_affected: u64) -> Result<(), Error> {
    if rows_affected == 0 {
        return Err(Error::RunNotFound { id });
    }
    Ok(())
}
