//! A run's samples read back from their chunks: by time range, page and decimation, with
//! every model's outputs aligned to them.

use super::Store;
use crate::Error;
use crate::backend::on;
use crate::chunk::{SampleChunk, output_at};
use crate::types::{SampleQuery, SampleSet};
use sqlx::QueryBuilder;

crate::rows::from_row! {
    struct ChunkRow {
        idx0: i64,
        n: i64,
        data: Vec<u8>,
    }
}

crate::rows::from_row! {
    struct OutputChunkRow {
        idx0: i64,
        model: String,
        n: i64,
        force: Vec<u8>,
    }
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

impl Store {
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
        if let Some(archive) = self.archive_of(run).await? {
            return self.read_archived(archive, models, select, every).await;
        }
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
