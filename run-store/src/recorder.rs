//! The recorder: one writer task per recorded run, fed by a bounded channel of batches.
//!
//! The control loop hands each batch to [`BatchSender::try_send`], which never waits: when the
//! channel is full the batch is dropped and counted, and the count is stored with the run. The
//! writer task commits every `commit_interval` (100 ms) or `max_pending_samples` rows, whichever
//! comes first, in one `BEGIN IMMEDIATE` transaction on the store's single write connection.
//! [`Recorder::close`] drains the channel, commits the last batch and sets the final status.
//! If every sender disappears without `close` (the loop died), the task commits what it has and
//! marks the run `interrupted`; if the process dies, [`Store::open`] does that at the next start.

use crate::backend::{AsConn, ConnRef, Dialect, now_text, on};
use crate::chunk::{MAX_CHUNK, encode_outputs, encode_samples};
use crate::reason::{Reason, ReasonCode};
use crate::store::{finish, set_timing};
use crate::types::{RunStatus, Sample, TimingStats};
use crate::{Error, Store};
use crossbeam_queue::ArrayQueue;
use sqlx::{AssertSqlSafe, QueryBuilder};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

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

/// Something the loop reports besides samples.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A line for the run's interruption log (fault, limit breach, abort request, ...).
    Log {
        /// Run time \[s\], if known.
        t: Option<f64>,
        /// What happened.
        reason: String,
    },
    /// The loop's timing statistics so far (replace the stored ones).
    Timing(TimingStats),
}

/// Consecutive samples with their model outputs, plus events, from the control loop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Batch {
    /// Index in the run of `samples[0]` (the loop's sample counter, so dropped batches leave a
    /// gap rather than shifting later samples).
    pub first_idx: u64,
    /// The samples.
    pub samples: Vec<Sample>,
    /// Model outputs, row-major: one per lockstep model per sample, in the run's model order.
    pub outputs: Vec<f64>,
    /// Events.
    pub events: Vec<Event>,
}

impl Batch {
    /// An empty batch starting at sample index `first_idx`, with room for `capacity` samples of
    /// `models` outputs each.
    pub fn with_capacity(first_idx: u64, capacity: usize, models: usize) -> Batch {
        Batch {
            first_idx,
            samples: Vec::with_capacity(capacity),
            outputs: Vec::with_capacity(capacity * models),
            events: Vec::new(),
        }
    }

    /// Empties it for reuse from sample index `first_idx`, keeping its allocations.
    pub fn reset(&mut self, first_idx: u64) {
        self.first_idx = first_idx;
        self.samples.clear();
        self.outputs.clear();
        self.events.clear();
    }

    /// Appends one sample and its model outputs.
    pub fn push(&mut self, sample: Sample, outputs: &[f64]) {
        self.samples.push(sample);
        self.outputs.extend_from_slice(outputs);
    }
}

/// Tuning of a recorder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecorderConfig {
    /// Batches the channel holds before `try_send` drops (default 256).
    pub channel_capacity: usize,
    /// Longest time a received sample waits for its commit (default 100 ms).
    pub commit_interval: Duration,
    /// Commit as soon as this many samples are pending (default 50 000).
    pub max_pending_samples: usize,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        RecorderConfig {
            channel_capacity: 256,
            commit_interval: Duration::from_millis(100),
            max_pending_samples: 50_000,
        }
    }
}

/// How a recorded run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Finish {
    /// Final status (completed, aborted, failed or interrupted).
    pub status: RunStatus,
    /// Why, for anything but completed; its text is logged into the interruption log.
    pub reason: Option<Reason>,
    /// Final timing statistics.
    pub timing: Option<TimingStats>,
}

impl Finish {
    /// A run that ran to its end.
    pub fn completed(timing: Option<TimingStats>) -> Finish {
        Finish {
            status: RunStatus::Completed,
            reason: None,
            timing,
        }
    }
}

/// What a recorder wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecorderSummary {
    /// Samples committed.
    pub samples: u64,
    /// Model outputs committed.
    pub outputs: u64,
    /// Batches committed.
    pub batches: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Batches refused by `try_send` (channel full or recorder gone).
    pub dropped_batches: u64,
    /// Samples in those batches.
    pub dropped_samples: u64,
}

/// Why [`BatchSender::try_send`] refused a batch (it is counted as dropped).
#[derive(Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Dropped {
    /// The channel was full: the writer is behind.
    #[error("recorder channel full: batch of {samples} samples dropped")]
    Full {
        /// Samples in the dropped batch.
        samples: usize,
    },
    /// The writer task has stopped.
    #[error("recorder stopped: batch of {samples} samples dropped")]
    Closed {
        /// Samples in the dropped batch.
        samples: usize,
    },
    /// The batch's output count is not samples × models (a bug in the sender).
    #[error("BUG: batch has {outputs} model outputs for {samples} samples of {models} models")]
    Malformed {
        /// Samples in the batch.
        samples: usize,
        /// Outputs in the batch.
        outputs: usize,
        /// Models of the run.
        models: usize,
    },
}

enum Msg {
    Batch(Batch),
    Flush(oneshot::Sender<u64>),
    Close(Finish),
}

#[derive(Debug, Default)]
struct Counters {
    dropped_batches: AtomicU64,
    dropped_samples: AtomicU64,
    committed_samples: AtomicU64,
}

/// Written batches the writer keeps for the loop to fill again: the loop takes its next batch
/// from here rather than from the allocator.
const SPARE_BATCHES: usize = 32;

/// The loop's end of the recorder channel. Cheap to clone; never blocks.
#[derive(Clone, Debug)]
pub struct BatchSender {
    tx: mpsc::Sender<Msg>,
    models: usize,
    counters: Arc<Counters>,
    spares: Arc<ArrayQueue<Batch>>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Msg::Batch(b) => write!(f, "Batch({} samples)", b.samples.len()),
            Msg::Flush(_) => f.write_str("Flush"),
            Msg::Close(fin) => write!(f, "Close({:?})", fin.status),
        }
    }
}

impl BatchSender {
    /// An empty batch from sample index `first_idx` with room for `capacity` samples: a
    /// written one handed back by the writer when there is one (no allocation, no lock), else
    /// a new one.
    pub fn batch(&self, first_idx: u64, capacity: usize) -> Batch {
        match self.spares.pop() {
            Some(mut batch) => {
                batch.reset(first_idx);
                batch.samples.reserve(capacity);
                batch.outputs.reserve(capacity * self.models);
                batch
            }
            None => Batch::with_capacity(first_idx, capacity, self.models),
        }
    }

    /// Hands a batch to the writer without waiting. When the channel is full (or the writer is
    /// gone) the batch is dropped and counted; the counts are stored with the run.
    pub fn try_send(&self, batch: Batch) -> Result<(), Dropped> {
        let samples = batch.samples.len();
        if batch.outputs.len() != samples * self.models {
            self.count_drop(samples);
            return Err(Dropped::Malformed {
                samples,
                outputs: batch.outputs.len(),
                models: self.models,
            });
        }
        self.tx.try_send(Msg::Batch(batch)).map_err(|e| {
            self.count_drop(samples);
            match e {
                mpsc::error::TrySendError::Full(_) => Dropped::Full { samples },
                mpsc::error::TrySendError::Closed(_) => Dropped::Closed { samples },
            }
        })
    }

    /// Hands a batch to the writer, waiting for room: for producers that are not real-time
    /// (imports, benchmarks). Never call this from the control loop.
    pub async fn send(&self, batch: Batch) -> Result<(), Dropped> {
        let samples = batch.samples.len();
        if batch.outputs.len() != samples * self.models {
            self.count_drop(samples);
            return Err(Dropped::Malformed {
                samples,
                outputs: batch.outputs.len(),
                models: self.models,
            });
        }
        self.tx.send(Msg::Batch(batch)).await.map_err(|_| {
            self.count_drop(samples);
            Dropped::Closed { samples }
        })
    }

    fn count_drop(&self, samples: usize) {
        self.counters
            .dropped_batches
            .fetch_add(1, Ordering::Relaxed);
        self.counters
            .dropped_samples
            .fetch_add(samples as u64, Ordering::Relaxed);
    }

    /// Batches dropped so far.
    pub fn dropped_batches(&self) -> u64 {
        self.counters.dropped_batches.load(Ordering::Relaxed)
    }

    /// Samples committed so far.
    pub fn committed_samples(&self) -> u64 {
        self.counters.committed_samples.load(Ordering::Relaxed)
    }
}

/// Records one run: owns its writer task.
#[derive(Debug)]
pub struct Recorder {
    run_id: i64,
    sender: BatchSender,
    task: JoinHandle<Result<RecorderSummary, Error>>,
}

impl Recorder {
    /// Marks the `queued` run `run_id` as `running` (with its start time) and spawns its writer
    /// task on the current tokio runtime.
    pub async fn start(
        store: &Store,
        run_id: i64,
        config: RecorderConfig,
    ) -> Result<Recorder, Error> {
        let models = store.run_models(run_id).await?;
        // Held from before `running` is written until after the final status.
        let lock = crate::liveness::acquire(store, run_id).await?;
        let started = on!(store.writer(), |p, DB| {
            sqlx::query(
                "UPDATE runs SET status = 'running', started_at = $1
                 WHERE id = $2 AND status = 'queued'",
            )
            .bind(now_text())
            .bind(run_id)
            .execute(p)
            .await?
            .rows_affected()
        });
        if started == 0 {
            let status = store.run(run_id).await?.status;
            return Err(Error::InvalidInput {
                field: "run",
                value: format!("{run_id} ({status})"),
                rule: "must be queued to start recording".into(),
            });
        }
        let (tx, rx) = mpsc::channel(config.channel_capacity.max(1));
        let counters = Arc::new(Counters::default());
        let spares = Arc::new(ArrayQueue::new(SPARE_BATCHES));
        let writer = Writer {
            store: store.clone(),
            run_id,
            models: Arc::new(models.clone()),
            config,
            counters: counters.clone(),
            spares: spares.clone(),
            pending: Vec::new(),
            pending_samples: 0,
            summary: RecorderSummary::default(),
            _lock: lock,
        };
        let task = tokio::spawn(writer.run(rx));
        Ok(Recorder {
            run_id,
            sender: BatchSender {
                tx,
                models: models.len(),
                counters,
                spares,
            },
            task,
        })
    }

    /// The run being recorded.
    pub fn run_id(&self) -> i64 {
        self.run_id
    }

    /// A sender for the control loop.
    pub fn sender(&self) -> BatchSender {
        self.sender.clone()
    }

    /// Commits everything received so far; returns the samples committed in total.
    pub async fn flush(&self) -> Result<u64, Error> {
        let (reply, done) = oneshot::channel();
        let stopped = Error::RecorderStopped {
            run_id: self.run_id,
        };
        if self.sender.tx.send(Msg::Flush(reply)).await.is_err() {
            return Err(stopped);
        }
        done.await.map_err(|_| stopped)
    }

    /// Graceful end: commits every batch sent before this call, stores the drop counts and the
    /// final status, and returns what was written. Batches sent after `close` are dropped.
    pub async fn close(self, finish: Finish) -> Result<RecorderSummary, Error> {
        let Recorder {
            run_id,
            sender,
            task,
        } = self;
        // A failed send means the task has ended; its result says why.
        let _ = sender.tx.send(Msg::Close(finish)).await;
        drop(sender);
        match task.await {
            Ok(result) => result,
            Err(_) => Err(Error::RecorderStopped { run_id }),
        }
    }
}

/// The writer task's state.
struct Writer {
    store: Store,
    run_id: i64,
    models: Arc<Vec<String>>,
    config: RecorderConfig,
    counters: Arc<Counters>,
    /// Where written batches go back to the loop.
    spares: Arc<ArrayQueue<Batch>>,
    pending: Vec<Batch>,
    pending_samples: usize,
    summary: RecorderSummary,
    /// The run's liveness lock, released when the writer ends.
    _lock: crate::liveness::RunLock,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Msg>) -> Result<RecorderSummary, Error> {
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
