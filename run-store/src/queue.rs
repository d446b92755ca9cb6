//! `bench serve`'s persisted queue and schedule (migration 0003): plain rows the scheduler task
//! reads at start and keeps up to date at every change (a row per added or removed run; the
//! whole queue only when it is reordered). The scheduler owns their meaning.

use crate::Error;
use serde::Serialize;
use sqlx::FromRow;

use crate::Store;

/// A queued run, its priority and its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromRow)]
pub struct QueueRow {
    /// The run (status `queued`).
    pub run_id: i64,
    /// Higher runs first.
    pub priority: i64,
    /// Sort key: lower runs first (any integers; gaps let a run be added without renumbering).
    pub position: i64,
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
}

#[derive(FromRow)]
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
}

impl Store {
    /// The queue, in order.
    pub async fn queue_rows(&self) -> Result<Vec<QueueRow>, Error> {
        Ok(sqlx::query_as(
            "SELECT run_id, priority, position FROM queue_items ORDER BY position, run_id",
        )
        .fetch_all(self.reader())
        .await?)
    }

    /// Replaces the whole queue with `rows`, in one transaction.
    pub async fn set_queue_rows(&self, rows: &[QueueRow]) -> Result<(), Error> {
        let mut tx = self.writer().begin().await?;
        sqlx::query("DELETE FROM queue_items")
            .execute(&mut *tx)
            .await?;
        insert_queue_rows(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Adds `rows` to the queue (or moves them), in one transaction.
    pub async fn add_queue_rows(&self, rows: &[QueueRow]) -> Result<(), Error> {
        let mut tx = self.writer().begin().await?;
        insert_queue_rows(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Takes run `run_id` out of the queue.
    pub async fn remove_queue_row(&self, run_id: i64) -> Result<(), Error> {
        sqlx::query("DELETE FROM queue_items WHERE run_id = ?")
            .bind(run_id)
            .execute(self.writer())
            .await?;
        Ok(())
    }

    /// A queue setting.
    pub async fn queue_setting(&self, key: &str) -> Result<Option<String>, Error> {
        Ok(
            sqlx::query_scalar("SELECT value FROM queue_settings WHERE key = ?")
                .bind(key)
                .fetch_optional(self.reader())
                .await?,
        )
    }

    /// Sets a queue setting.
    pub async fn set_queue_setting(&self, key: &str, value: &str) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO queue_settings (key, value) VALUES (?, ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(self.writer())
        .await?;
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
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO schedules (spec, run_at, recurrence, priority, next_run_at)
             VALUES (?1, ?2, ?3, ?4, ?2) RETURNING id",
        )
        .bind(serde_json::to_string(body)?)
        .bind(run_at)
        .bind(recurrence)
        .bind(priority)
        .fetch_one(self.writer())
        .await?;
        self.schedule(id).await
    }

    /// One schedule entry.
    pub async fn schedule(&self, id: i64) -> Result<ScheduleEntry, Error> {
        let row: Option<ScheduleRow> = sqlx::query_as("SELECT * FROM schedules WHERE id = ?")
            .bind(id)
            .fetch_optional(self.writer())
            .await?;
        row.ok_or_else(|| Error::NotFound {
            what: "schedule entry",
            key: id.to_string(),
        })?
        .decode()
    }

    /// Every schedule entry, oldest first.
    pub async fn schedules(&self) -> Result<Vec<ScheduleEntry>, Error> {
        let rows: Vec<ScheduleRow> = sqlx::query_as("SELECT * FROM schedules ORDER BY id")
            .fetch_all(self.reader())
            .await?;
        rows.into_iter().map(ScheduleRow::decode).collect()
    }

    /// Records that an entry fired: its new state, next time and last run.
    pub async fn update_schedule(
        &self,
        id: i64,
        state: &str,
        next_run_at: Option<&str>,
        last_run_id: Option<i64>,
    ) -> Result<(), Error> {
        sqlx::query(
            "UPDATE schedules SET state = ?2, next_run_at = ?3,
                 last_run_id = coalesce(?4, last_run_id) WHERE id = ?1",
        )
        .bind(id)
        .bind(state)
        .bind(next_run_at)
        .bind(last_run_id)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    /// Deletes a schedule entry; false if there was none.
    pub async fn delete_schedule(&self, id: i64) -> Result<bool, Error> {
        let done = sqlx::query("DELETE FROM schedules WHERE id = ?")
            .bind(id)
            .execute(self.writer())
            .await?;
        Ok(done.rows_affected() > 0)
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
        })
    }
}

async fn insert_queue_rows(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    rows: &[QueueRow],
) -> Result<(), Error> {
    for r in rows {
        sqlx::query(
            "INSERT INTO queue_items (run_id, priority, position) VALUES (?, ?, ?)
             ON CONFLICT (run_id) DO UPDATE
             SET priority = excluded.priority, position = excluded.position",
        )
        .bind(r.run_id)
        .bind(r.priority)
        .bind(r.position)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
