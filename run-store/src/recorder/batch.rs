//! What crosses the recorder's channel and comes back out of it: batches and events from the
//! loop, the recorder's tuning, how a run ended, what was written, why a batch was dropped.

use crate::reason::Reason;
use crate::types::{RunStatus, Sample, TimingStats};
use std::time::Duration;

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

/// Why [`BatchSender::try_send`](super::BatchSender::try_send) refused a batch (it is counted as dropped).
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
