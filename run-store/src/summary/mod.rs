//! Summary rows (`run_summaries`): the numbers a run's analysis and its fits produced, one row
//! each, keyed by bench, run, time, model and parameter, so trends read small rows instead of
//! every run's JSON. They are written in the transaction that stores the results or the
//! parameter set (here, on a bench, and in a lab's store by `bench runs push`), and derived
//! for older stores when a store opens (`Store::backfill_summaries`, in `backfill`).

use crate::Error;
use crate::backend::{ConnRef, on};
use derive::Row;
use serde::Deserialize;

mod derive;

/// Replaces the measured rows of run `run_id` by those of its `analysis` and marks its results
/// summarised.
pub(crate) async fn write_results(
    mut conn: ConnRef<'_>,
    run_id: i64,
    analysis: &str,
) -> Result<(), Error> {
    let rows = derive::analysis_rows(analysis);
    on!(conn.reborrow(), |c, DB| {
        sqlx::query("DELETE FROM run_summaries WHERE run_id = $1 AND set_id = 0")
            .bind(run_id)
            .execute(&mut *c)
            .await?;
        sqlx::query("UPDATE results SET summarised = 1 WHERE run_id = $1")
            .bind(run_id)
            .execute(&mut *c)
            .await?;
    });
    insert(conn, run_id, 0, &rows).await
}

/// Writes the rows of parameter set `set_id` (of `model`) under the run its provenance names,
/// if this store has it, and marks the set summarised.
pub(crate) async fn write_set(
    mut conn: ConnRef<'_>,
    set_id: i64,
    model: &str,
    params: &str,
    provenance: &str,
) -> Result<(), Error> {
    on!(conn.reborrow(), |c, DB| {
        sqlx::query("DELETE FROM run_summaries WHERE set_id = $1")
            .bind(set_id)
            .execute(&mut *c)
            .await?;
        sqlx::query("UPDATE parameter_sets SET summarised = 1 WHERE id = $1")
            .bind(set_id)
            .execute(&mut *c)
            .await?;
    });
    let Some(run_id) = fitted_run(provenance) else {
        return Ok(());
    };
    insert(
        conn,
        run_id,
        set_id,
        &derive::set_rows(model, params, provenance),
    )
    .await
}

/// The run a set was fitted to: the first of its provenance's `runs`.
fn fitted_run(provenance: &str) -> Option<i64> {
    #[derive(Deserialize)]
    struct Runs {
        runs: Vec<i64>,
    }
    let runs: Runs = serde_json::from_str(provenance).ok()?;
    runs.runs.first().copied()
}

/// Inserts `rows` keyed by run `run_id` (its bench and start time, read from `runs`; nothing
/// if the run is not in this store) and set `set_id`.
async fn insert(
    mut conn: ConnRef<'_>,
    run_id: i64,
    set_id: i64,
    rows: &[Row],
) -> Result<(), Error> {
    for row in rows {
        on!(conn.reborrow(), |c, DB| {
            sqlx::query(
                "INSERT INTO run_summaries
                     (run_id, set_id, bench_id, at, source, model, param, idx, x, value, std_error)
                 SELECT id, $2, bench_id, coalesce(started_at, created_at), $3, $4, $5, $6, $7,
                     $8, $9
                 FROM runs WHERE id = $1
                 ON CONFLICT DO NOTHING",
            )
            .bind(run_id)
            .bind(set_id)
            .bind(row.source.as_str())
            .bind(&row.model)
            .bind(&row.param)
            .bind(row.idx as i32)
            .bind(row.x)
            .bind(row.value)
            .bind(row.std_error)
            .execute(&mut *c)
            .await?;
        });
    }
    Ok(())
}
