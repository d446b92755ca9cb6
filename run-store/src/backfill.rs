//! Summary rows for what was stored before summaries existed (or by a process that did not
//! write them), derived when a store opens, a batch of records per transaction.

use crate::Error;
use crate::backend::{AsConn, on};
use crate::store::Store;
use crate::summary::{write_results, write_set};

/// Records derived per back-fill transaction.
const BACKFILL_BATCH: usize = 500;

crate::rows::from_row! {
    /// A `parameter_sets` row not yet summarised.
    struct PendingSet {
        id: i64,
        model_id: String,
        params: String,
        provenance: String,
    }
}

impl Store {
    /// Derives the summary rows of every result and parameter set stored before summaries
    /// existed (or by a process that did not write them), 500 records per
    /// transaction; returns how many records it summarised. Runs when a store opens.
    pub async fn backfill_summaries(&self) -> Result<u64, Error> {
        let mut done = 0;
        loop {
            let n = self.backfill_results().await? + self.backfill_sets().await?;
            if n == 0 {
                return Ok(done);
            }
            done += n;
        }
    }

    async fn backfill_results(&self) -> Result<u64, Error> {
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let pending: Vec<(i64, String)> = sqlx::query_as(
                "SELECT run_id, analysis FROM results WHERE summarised = 0 ORDER BY run_id
                 LIMIT $1",
            )
            .bind(BACKFILL_BATCH as i64)
            .fetch_all(&mut *tx)
            .await?;
            for (run_id, analysis) in &pending {
                write_results(tx.conn(), *run_id, analysis).await?;
            }
            tx.commit().await?;
            Ok::<_, Error>(pending.len() as u64)
        })
    }

    async fn backfill_sets(&self) -> Result<u64, Error> {
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let pending: Vec<PendingSet> = sqlx::query_as(
                "SELECT id, model_id, params, provenance FROM parameter_sets
                 WHERE summarised = 0 ORDER BY id LIMIT $1",
            )
            .bind(BACKFILL_BATCH as i64)
            .fetch_all(&mut *tx)
            .await?;
            for s in &pending {
                write_set(tx.conn(), s.id, &s.model_id, &s.params, &s.provenance).await?;
            }
            tx.commit().await?;
            Ok::<_, Error>(pending.len() as u64)
        })
    }
}
