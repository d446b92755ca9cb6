//! Sample and model-output chunk rows inserted many to a statement, sized to both engines'
//! bind and message limits (the recorder's commits and `push`'s copies).

use crate::Error;
use crate::backend::{ConnRef, on};
use sqlx::QueryBuilder;

/// Chunk rows per multi-row INSERT: 6 binds each, well under SQLite's 32 766 and PostgreSQL's
/// 65 535 bind limits.
const ROWS_PER_STMT: usize = 1000;

/// Chunk bytes per multi-row INSERT: a statement of about 1 MiB keeps both ends' buffers small
/// (a thousand full chunks would be a 229 MB message; `bench runs push` copied 10 M samples into
/// PostgreSQL at 3.2 M samples/s with 1000-row statements, 4.7 M/s with 1 MiB ones).
pub(crate) const BYTES_PER_STMT: usize = 1 << 20;

/// How many of `rows` (each `bytes(row)` long) go into the next statement: at most
/// [`ROWS_PER_STMT`] and about [`BYTES_PER_STMT`], at least one.
pub(crate) fn next_statement<T>(rows: &[T], bytes: impl Fn(&T) -> usize) -> usize {
    let mut total = 0;
    let fits = rows.iter().take(ROWS_PER_STMT).take_while(|r| {
        total += bytes(r);
        total <= BYTES_PER_STMT
    });
    fits.count().max(1).min(rows.len())
}

/// Inserts sample and model-output chunk rows of run `run`, a few MiB to a statement.
pub(crate) async fn insert_chunks(
    conn: ConnRef<'_>,
    run: i64,
    mut samples: Vec<SampleRow>,
    mut outputs: Vec<OutputRow>,
) -> Result<(), Error> {
    on!(conn, |c, DB| {
        while !samples.is_empty() {
            let n = next_statement(&samples, |r| r.4.len());
            let rows: Vec<_> = samples.drain(..n).collect();
            let mut qb =
                QueryBuilder::<DB>::new("INSERT INTO samples (run_id, idx0, n, t0, t1, data) ");
            qb.push_values(rows, |mut row, (idx0, n, t0, t1, data)| {
                row.push_bind(run)
                    .push_bind(idx0)
                    .push_bind(n)
                    .push_bind(t0)
                    .push_bind(t1)
                    .push_bind(data);
            });
            qb.build().execute(&mut *c).await?;
        }
        while !outputs.is_empty() {
            let n = next_statement(&outputs, |r| r.3.len());
            let rows: Vec<_> = outputs.drain(..n).collect();
            let mut qb = QueryBuilder::<DB>::new(
                "INSERT INTO model_outputs (run_id, idx0, model, n, force) ",
            );
            qb.push_values(rows, |mut row, (idx0, model, n, data)| {
                row.push_bind(run)
                    .push_bind(idx0)
                    .push_bind(model)
                    .push_bind(n)
                    .push_bind(data);
            });
            qb.build().execute(&mut *c).await?;
        }
    });
    Ok(())
}

/// A sample chunk row: idx0, n, t0, t1 (NULL for a NaN time, as SQLite stores it on both
/// engines), data.
pub(crate) type SampleRow = (i64, i64, Option<f64>, Option<f64>, Vec<u8>);
/// A model-output chunk row: idx0, model id, n, data.
pub(crate) type OutputRow = (i64, String, i64, Vec<u8>);
