//! Reading runs back: one run whole, or a filtered page of summaries, each with the status
//! its recorder's liveness says rather than a stale `running`.

use super::Store;
use crate::Error;
use crate::backend::on;
use crate::liveness;
use crate::reason::ReasonCode;
use crate::types::{LogEntry, Run, RunFilter, RunPage, RunStatus, RunSummary, TimingStats};
use sqlx::QueryBuilder;

/// Most rows any page or listing returns.
const MAX_LIMIT: u32 = 10_000;

crate::rows::from_row! {
    /// A `runs` row as stored.
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
}

crate::rows::from_row! {
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
}

fn status_of(text: &str) -> Result<RunStatus, Error> {
    text.parse().map_err(|e: String| {
        Error::Database(sqlx::Error::Decode(
            format!("BUG: runs.status holds {e}").into(),
        ))
    })
}

impl Store {
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
        let words = search_words(filter.q.as_deref());
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
                for word in &words {
                    push_word(qb, word);
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
}

/// The search's words: each as a `LIKE` pattern (lower case, `%`, `_` and `\\` escaped, wrapped
/// in `%`) and, for `#12` or `12`, the run id it names.
fn search_words(q: Option<&str>) -> Vec<(String, Option<i64>)> {
    q.unwrap_or_default()
        .split_whitespace()
        .map(|w| {
            let escaped = w
                .to_lowercase()
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            let id = w.strip_prefix('#').unwrap_or(w).parse().ok();
            (format!("%{escaped}%"), id)
        })
        .collect()
}

/// One search word: it occurs in the name, kind, notes or a tag, or is the run's id. `lower(..) LIKE` rather than
/// `ILIKE` so that both engines read the same SQL and agree on case.
fn push_word<DB>(qb: &mut QueryBuilder<DB>, (pattern, id): &(String, Option<i64>))
where
    DB: sqlx::Database,
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    qb.push(" AND (");
    if let Some(id) = id {
        qb.push("id = ").push_bind(*id).push(" OR ");
    }
    for (i, column) in ["name", "kind", "coalesce(operator_note, '')"]
        .iter()
        .enumerate()
    {
        if i > 0 {
            qb.push(" OR ");
        }
        qb.push(format!("lower({column}) LIKE "))
            .push_bind(pattern.clone())
            .push(" ESCAPE '\\'");
    }
    qb.push(" OR id IN (SELECT run_id FROM run_tags WHERE lower(tag) LIKE ")
        .push_bind(pattern.clone())
        .push(" ESCAPE '\\'))");
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
