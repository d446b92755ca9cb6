//! The recorder: one writer task per recorded run, fed by a bounded channel of batches.
//!
//! The control loop hands each batch to [`BatchSender::try_send`], which never waits: when the
//! channel is full the batch is dropped and counted, and the count is stored with the run. The
//! writer task commits every `commit_interval` (100 ms) or `max_pending_samples` rows, whichever
//! comes first, in one `BEGIN IMMEDIATE` transaction on the store's single write connection.
//! [`Recorder::close`] drains the channel, commits the last batch and sets the final status.
//! If every sender disappears without `close` (the loop died), the task commits what it has and
//! marks the run `interrupted`; if the process dies, [`Store::open`] does that at the next start.
//!
//! The channel and its two ends live here; what crosses it is in `batch`, the task that
//! writes it in `writer`, and the chunk rows it becomes (shared with `push`) in `rows`.

use crate::backend::{now_text, on};
use crate::{Error, Store};
use crossbeam_queue::ArrayQueue;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

mod batch;
mod rows;
mod writer;

pub use batch::{Batch, Dropped, Event, Finish, RecorderConfig, RecorderSummary};
pub(crate) use rows::{BYTES_PER_STMT, OutputRow, SampleRow, insert_chunks};
use writer::Writer;

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
        let samples = self.well_formed(&batch)?;
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
        let samples = self.well_formed(&batch)?;
        self.tx.send(Msg::Batch(batch)).await.map_err(|_| {
            self.count_drop(samples);
            Dropped::Closed { samples }
        })
    }

    /// The batch's sample count, or the drop of a batch whose outputs do not match its
    /// samples times the run's models (counted like any other drop).
    fn well_formed(&self, batch: &Batch) -> Result<usize, Dropped> {
        let samples = batch.samples.len();
        if batch.outputs.len() != samples * self.models {
            self.count_drop(samples);
            return Err(Dropped::Malformed {
                samples,
                outputs: batch.outputs.len(),
                models: self.models,
            });
        }
        Ok(samples)
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
