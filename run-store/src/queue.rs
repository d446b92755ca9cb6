//! `bench serve`'s persisted queue and schedule (migrations 0003 and 0006): plain rows the
//! scheduler task reads at start and keeps up to date at every change (a row per added or
//! removed run; the whole queue only when it is reordered). The scheduler owns their meaning.
//! Everything here is scoped to the bench of the handle ([`Store::for_bench`]): the queue holds
//! that bench's runs, settings and schedule entries are its own (or, made before benches had
//! them, nobody's: '' applies to every bench until it sets its own).

use crate::Error;
use crate::backend::on;
use serde::Serialize;

use crate::Store;

crate::rows::from_row! {
    /// A queued run, its priority and its place.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct QueueRow {
        /// The run (status `queued`).
        pub run_id: i64,
        /// Higher runs first.
        pub priority: i64,
        /// Sort key: lower runs first (any integers; gaps let a run be added without renumbering).
        pub position: i64,
    }
}

/// A schedule entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScheduleEntry {
    /// Entry id.
    pub id: i64,
    /// The body: `{"spec"}`, `{"batch"}` or `{"sweep"}`.
    pub body: serde_json::Value,
    /// First run time (RFC 3339 UTC).
    pub run_at: Option<String>,
    /// `nightly`, `weekly` or none.
    pub recurrence: Option<String>,
    /// Priority of the runs it enqueues.
    pub priority: i64,
    /// `pending` (waits for `next_run_at`), `done` (a one-off that fired), `failed`.
    pub state: String,
    /// When it next fires.
    pub next_run_at: Option<String>,
    /// The last run it enqueued.
    pub last_run_id: Option<i64>,
    /// Creation time.
    pub created_at: String,
    /// Why it last could not enqueue or start what it runs (none once it did).
    pub last_error: Option<String>,
    /// The last campaign it started (a `{"campaign"}` entry).
    pub last_campaign_id: Option<i64>,
}

/// What a schedule entry started when it fired, or why it could not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fired {
    /// The last run it enqueued.
    pub run_id: Option<i64>,
    /// The campaign it started.
    pub campaign_id: Option<i64>,
    /// Why it could not enqueue or start (all or part of) what it runs.
    pub error: Option<String>,
}

crate::rows::from_row! {
    struct ScheduleRow {
        id: i64,
        spec: String,
        run_at: Option<String>,
        recurrence: Option<String>,
        priority: i64,
        state: String,
        next_run_at: Option<String>,
        last_run_id: Option<i64>,
        created_at: String,
        last_error: Option<String>,
        last_campaign_id: Option<i64>,
    }
}

impl Store {
    /// The queue, in order.
    pub async fn queue_rows(&self) -> Result<Vec<QueueRow>, Error> {
        Ok(on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT q.run_id, q.priority, q.position FROM queue_items q
                 JOIN runs r ON r.id = q.run_id WHERE r.bench_id = $1
                 ORDER BY q.position, q.run_id",
            )
            .bind(self.bench_scope())
            .fetch_all(p)
            .await?
        }))
    }

    /// Replaces the whole queue with `rows`, in one transaction.
    pub async fn set_queue_rows(&self, rows: &[QueueRow]) -> Result<(), Error> {
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            sqlx::query(
                "DELETE FROM queue_items WHERE run_id IN (SELECT id FROM runs WHERE bench_id = $1)",
            )
            .bind(self.bench_scope())
            .execute(&mut *tx)
            .await?;
            for r in rows {
                upsert_queue_row(r).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Adds `rows` to the queue (or moves them), in one transaction.
    pub async fn add_queue_rows(&self, rows: &[QueueRow]) -> Result<(), Error> {
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            for r in rows {
                upsert_queue_row(r).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Takes run `run_id` out of the queue.
    pub async fn remove_queue_row(&self, run_id: i64) -> Result<(), Error> {
        on!(self.writer(), |p, DB| {
            sqlx::query("DELETE FROM queue_items WHERE run_id = $1")
                .bind(run_id)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// A queue setting.
    pub async fn queue_setting(&self, key: &str) -> Result<Option<String>, Error> {
        Ok(on!(self.reader(), |p, DB| {
            sqlx::query_scalar(
                "SELECT value FROM bench_settings WHERE key = $1 AND bench_id IN ($2, '')
                 ORDER BY bench_id DESC LIMIT 1",
            )
            .bind(key)
            .bind(self.bench_scope())
            .fetch_optional(p)
            .await?
        }))
    }

    /// Sets a queue setting.
    pub async fn set_queue_setting(&self, key: &str, value: &str) -> Result<(), Error> {
        on!(self.writer(), |p, DB| {
            sqlx::query(
                "INSERT INTO bench_settings (bench_id, key, value) VALUES ($3, $1, $2)
                 ON CONFLICT (bench_id, key) DO UPDATE SET value = excluded.value",
            )
            .bind(key)
            .bind(value)
            .bind(self.bench_scope())
            .execute(p)
            .await?;
        });
        Ok(())
    }

    /// Adds a schedule entry (state `pending`); returns it.
    pub async fn add_schedule(
        &self,
        body: &serde_json::Value,
        run_at: &str,
        recurrence: Option<&str>,
        priority: i64,
    ) -> Result<ScheduleEntry, Error> {
        let body = serde_json::to_string(body)?;
        let id: i64 = on!(self.writer(), |p, DB| {
            sqlx::query_scalar(
                "INSERT INTO schedules (spec, run_at, recurrence, priority, next_run_at, created_at,
                     bench_id)
                 VALUES ($1, $2, $3, $4, $2, $5, $6) RETURNING id",
            )
            .bind(&body)
            .bind(run_at)
            .bind(recurrence)
            .bind(priority)
            .bind(crate::backend::now_text())
            .bind(self.bench_scope())
            .fetch_one(p)
            .await?
        });
        self.schedule(id).await
    }

    /// One schedule entry.
    pub async fn schedule(&self, id: i64) -> Result<ScheduleEntry, Error> {
        let row: Option<ScheduleRow> = on!(self.writer(), |p, DB| {
            sqlx::query_as("SELECT * FROM schedules WHERE id = $1 AND bench_id IN ($2, '')")
                .bind(id)
                .bind(self.bench_scope())
                .fetch_optional(p)
                .await?
        });
        row.ok_or_else(|| Error::NotFound {
            what: "schedule entry",
            key: id.to_string(),
        })?
        .decode()
    }

    /// Every schedule entry, oldest first.
    pub async fn schedules(&self) -> Result<Vec<ScheduleEntry>, Error> {
        let rows: Vec<ScheduleRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as("SELECT * FROM schedules WHERE bench_id IN ($1, '') ORDER BY id")
                .bind(self.bench_scope())
                .fetch_all(p)
                .await?
        });
        rows.into_iter().map(ScheduleRow::decode).collect()
    }

    /// Records that an entry fired: its new state, next time, what it started and why it
    /// could not (`fired.error`, none when it could: the previous error is cleared).
    pub async fn update_schedule(
        &self,
        id: i64,
        state: &str,
        next_run_at: Option<&str>,
        fired: &Fired,
    ) -> Result<(), Error> {
        on!(self.writer(), |p, DB| {
            sqlx::query(
                "UPDATE schedules SET state = $2, next_run_at = $3,
                     last_run_id = coalesce($4, last_run_id),
                     last_campaign_id = coalesce($5, last_campaign_id), last_error = $6
                 WHERE id = $1",
            )
            .bind(id)
            .bind(state)
            .bind(next_run_at)
            .bind(fired.run_id)
            .bind(fired.campaign_id)
            .bind(fired.error.as_deref())
            .execute(p)
            .await?;
        });
        Ok(())
    }

    /// Deletes a schedule entry; false if there was none.
    pub async fn delete_schedule(&self, id: i64) -> Result<bool, Error> {
        let done = on!(self.writer(), |p, DB| {
            sqlx::query("DELETE FROM schedules WHERE id = $1 AND bench_id IN ($2, '')")
                .bind(id)
                .bind(self.bench_scope())
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(done > 0)
    }
}

impl ScheduleRow {
    fn decode(self) -> Result<ScheduleEntry, Error> {
        Ok(ScheduleEntry {
            id: self.id,
            body: serde_json::from_str(&self.spec)?,
            run_at: self.run_at,
            recurrence: self.recurrence,
            priority: self.priority,
            state: self.state,
            next_run_at: self.next_run_at,
            last_run_id: self.last_run_id,
            created_at: self.created_at,
            last_error: self.last_error,
            last_campaign_id: self.last_campaign_id,
        })
    }
}

/// The statement that puts one row into the queue (or moves it).
fn upsert_queue_row<DB: sqlx::Database>(
    r: &QueueRow,
) -> sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments>
where
    i64: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    sqlx::query(
        "INSERT INTO queue_items (run_id, priority, position) VALUES ($1, $2, $3)
         ON CONFLICT (run_id) DO UPDATE
         SET priority = excluded.priority, position = excluded.position",
    )
    .bind(r.run_id)
    .bind(r.priority)
    .bind(r.position)
}
