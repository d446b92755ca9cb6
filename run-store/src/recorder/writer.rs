//! The writer task: commits pending batches every interval or sample count, one transaction
//! each, and the final status with the last of them.

use super::rows::{OutputRow, SampleRow, insert_chunks};
use super::{Batch, Counters, Event, Finish, Msg, RecorderConfig, RecorderSummary};
use crate::backend::{AsConn, ConnRef, Dialect, now_text, on};
use crate::chunk::{MAX_CHUNK, encode_outputs, encode_samples};
use crate::reason::{Reason, ReasonCode};
use crate::store::{finish, set_timing};
use crate::types::{RunStatus, Sample};
use crate::{Error, Store};
use crossbeam_queue::ArrayQueue;
use sqlx::AssertSqlSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The writer task's state.
pub(super) struct Writer {
    pub(super) store: Store,
    pub(super) run_id: i64,
    pub(super) models: Arc<Vec<String>>,
    pub(super) config: RecorderConfig,
    pub(super) counters: Arc<Counters>,
    /// Where written batches go back to the loop.
    pub(super) spares: Arc<ArrayQueue<Batch>>,
    pub(super) pending: Vec<Batch>,
    pub(super) pending_samples: usize,
    pub(super) summary: RecorderSummary,
    /// The run's liveness lock, released when the writer ends.
    pub(super) _lock: crate::liveness::RunLock,
}

impl Writer {
    pub(super) async fn run(
        mut self,
        mut rx: mpsc::Receiver<Msg>,
    ) -> Result<RecorderSummary, Error> {
        let result = self.serve(&mut rx).await;
        if let Err(err) = &result {
            // Best effort: say why the recording stopped.
            let reason = Reason::new(ReasonCode::RecordingFailed, format!("recorder: {err}"));
            let _ = on!(self.store.writer(), |p, DB| {
                match p.acquire().await {
                    Ok(mut conn) => {
                        finish(
                            conn.conn(),
                            self.run_id,
                            RunStatus::Failed,
                            Some(&reason),
                            None,
                        )
                        .await
                    }
                    Err(e) => Err(e.into()),
                }
            });
        }
        result
    }

    async fn serve(&mut self, rx: &mut mpsc::Receiver<Msg>) -> Result<RecorderSummary, Error> {
        let mut deadline: Option<Instant> = None;
        loop {
            let msg = match deadline {
                Some(at) => tokio::select! {
                    msg = rx.recv() => msg,
                    () = tokio::time::sleep_until(at) => {
                        self.commit(None).await?;
                        deadline = None;
                        continue;
                    }
                },
                None => rx.recv().await,
            };
            match msg {
                Some(Msg::Batch(batch)) => {
                    self.pending_samples += batch.samples.len();
                    self.pending.push(batch);
                    deadline.get_or_insert_with(|| Instant::now() + self.config.commit_interval);
                    if self.pending_samples >= self.config.max_pending_samples {
                        self.commit(None).await?;
                        deadline = None;
                    }
                }
                Some(Msg::Flush(reply)) => {
                    self.commit(None).await?;
                    deadline = None;
                    let _ = reply.send(self.summary.samples);
                }
                Some(Msg::Close(fin)) => {
                    rx.close();
                    // Everything queued before the close is committed with the final status.
                    while let Ok(msg) = rx.try_recv() {
                        if let Msg::Batch(batch) = msg {
                            self.pending.push(batch);
                        }
                    }
                    self.commit(Some(&fin)).await?;
                    return Ok(self.summary);
                }
                None => {
                    let fin = Finish {
                        status: RunStatus::Interrupted,
                        reason: Some(Reason::new(
                            ReasonCode::Interrupted,
                            "the recorder was dropped without a final status",
                        )),
                        timing: None,
                    };
                    self.commit(Some(&fin)).await?;
                    return Ok(self.summary);
                }
            }
        }
    }

    /// Writes the pending batches (and the final status) in one transaction.
    async fn commit(&mut self, fin: Option<&Finish>) -> Result<(), Error> {
        let batches = std::mem::take(&mut self.pending);
        self.pending_samples = 0;
        let dropped_batches = self.counters.dropped_batches.load(Ordering::Relaxed);
        let dropped_samples = self.counters.dropped_samples.load(Ordering::Relaxed);
        let (samples, outputs) = on!(self.store.writer(), |p, DB| {
            let mut tx = p.begin_with(DB::BEGIN_WRITE).await?;
            let written = self.insert(tx.conn(), &batches).await?;
            sqlx::query(
                "UPDATE runs SET sample_count = sample_count + $1, dropped_batches = $2,
                     dropped_samples = $3 WHERE id = $4",
            )
            .bind(written.0 as i64)
            .bind(dropped_batches as i64)
            .bind(dropped_samples as i64)
            .bind(self.run_id)
            .execute(&mut *tx)
            .await?;
            if let Some(fin) = fin {
                finish(
                    tx.conn(),
                    self.run_id,
                    fin.status,
                    fin.reason.as_ref(),
                    fin.timing.as_ref(),
                )
                .await?;
            }
            tx.commit().await?;
            written
        });
        self.summary.samples += samples;
        self.summary.outputs += outputs;
        self.summary.batches += batches.len() as u64;
        // Written: back to the loop for reuse (beyond the spares it needs, freed here).
        for batch in batches {
            let _ = self.spares.push(batch);
        }
        self.summary.commits += 1;
        self.summary.dropped_batches = dropped_batches;
        self.summary.dropped_samples = dropped_samples;
        self.counters
            .committed_samples
            .store(self.summary.samples, Ordering::Relaxed);
        Ok(())
    }

    /// Inserts samples, outputs and events; returns (samples, outputs) written.
    async fn insert(&self, mut conn: ConnRef<'_>, batches: &[Batch]) -> Result<(u64, u64), Error> {
        let run = self.run_id;
        let Chunks {
            samples,
            outputs,
            sample_count,
            output_count,
        } = chunks(batches, &self.models);
        insert_chunks(conn.reborrow(), run, samples, outputs).await?;
        for event in batches.iter().flat_map(|b| &b.events) {
            match event {
                Event::Log { t, reason } => on!(conn.reborrow(), |c, DB| {
                    let sql = format!(
                        "UPDATE runs SET interruption_log = {} WHERE id = $4",
                        DB::log_append("interruption_log", 1, 2, 3)
                    );
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(now_text())
                        .bind(*t)
                        .bind(reason.as_str())
                        .bind(run)
                        .execute(c)
                        .await?;
                }),
                Event::Timing(timing) => set_timing(conn.reborrow(), run, timing).await?,
            }
        }
        Ok((sample_count, output_count))
    }
}

/// The rows to insert for some batches.
struct Chunks {
    samples: Vec<SampleRow>,
    outputs: Vec<OutputRow>,
    sample_count: u64,
    output_count: u64,
}

/// Cuts `batches` into chunks of consecutive sample indices (at most [`MAX_CHUNK`] each) and
/// encodes them.
fn chunks(batches: &[Batch], model_ids: &[String]) -> Chunks {
    let models = model_ids.len();
    let mut out = Chunks {
        samples: Vec::new(),
        outputs: Vec::new(),
        sample_count: 0,
        output_count: 0,
    };
    let mut idx0 = 0_u64;
    let mut cur: Vec<Sample> = Vec::with_capacity(MAX_CHUNK);
    let mut cur_out: Vec<f64> = Vec::with_capacity(MAX_CHUNK * models);
    let mut close = |idx0: u64, cur: &mut Vec<Sample>, cur_out: &mut Vec<f64>| {
        if cur.is_empty() {
            return;
        }
        let n = cur.len();
        let time = |t: f64| (!t.is_nan()).then_some(t);
        let (t0, t1) = (time(cur[0].t), time(cur[n - 1].t));
        out.samples
            .push((idx0 as i64, n as i64, t0, t1, encode_samples(cur)));
        for (slot, model) in model_ids.iter().enumerate() {
            let data = encode_outputs(cur_out, models, slot, 0..n);
            out.outputs
                .push((idx0 as i64, model.clone(), n as i64, data));
        }
        out.sample_count += n as u64;
        out.output_count += (n * models) as u64;
        cur.clear();
        cur_out.clear();
    };
    for b in batches {
        for (i, s) in b.samples.iter().enumerate() {
            let idx = b.first_idx + i as u64;
            if cur.len() == MAX_CHUNK || (!cur.is_empty() && idx != idx0 + cur.len() as u64) {
                close(idx0, &mut cur, &mut cur_out);
            }
            if cur.is_empty() {
                idx0 = idx;
            }
            cur.push(*s);
            cur_out.extend_from_slice(&b.outputs[i * models..(i + 1) * models]);
        }
    }
    close(idx0, &mut cur, &mut cur_out);
    out
}
