//! The values the store reads and writes.

use crate::reason::ReasonCode;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Where a run stands. Stored as its lowercase name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Created, not started.
    Queued,
    /// The recorder is writing it.
    Running,
    /// Ran to its end.
    Completed,
    /// Stopped on purpose (operator abort, Ctrl-C, limit breach); the reason is logged.
    Aborted,
    /// Stopped by a fault (comms, sensor stall, drive fault); the reason is logged.
    Failed,
    /// The daemon stopped while it was running; samples up to the last commit are kept.
    Interrupted,
}

impl RunStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [RunStatus; 6] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Completed,
        RunStatus::Aborted,
        RunStatus::Failed,
        RunStatus::Interrupted,
    ];

    /// The stored name (`queued`, `running`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Aborted => "aborted",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// True for the statuses a run ends in.
    pub fn is_final(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RunStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<RunStatus, String> {
        RunStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<_> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
                format!("unknown run status '{s}' (known: {})", known.join(", "))
            })
    }
}

/// The kind of a run imported from a recording made elsewhere (`bench runs import`), beside
/// the experiment kinds.
pub const IMPORTED_KIND: &str = "imported";

/// One control period's measurement. Units are SI: rad or m, rad/s or m/s, N m or N.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Run time \[s\], increasing.
    pub t: f64,
    /// Position [rad or m].
    pub x: f64,
    /// Velocity [rad/s or m/s].
    pub v: f64,
    /// Commanded torque or force after the safety clamp [N m or N].
    pub u_cmd: f64,
    /// Torque reported by the drive [N m or N].
    pub torque_motor: f64,
    /// Torque measured by the sensor [N m or N].
    pub torque_sensor: f64,
    /// Index of the plan segment the sample belongs to.
    pub segment: u32,
    /// Per-sample flags (limit, stale reading, ...), defined by the control loop.
    pub flags: u32,
}

/// A run to create: what the experiment is and on which bench.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    /// Experiment kind (e.g. `torque_ramp`).
    pub kind: String,
    /// The spec's name.
    pub name: String,
    /// The experiment spec as given.
    pub spec: serde_json::Value,
    /// Snapshot of the bench configuration.
    pub bench_config: serde_json::Value,
    /// Snapshot of the device profiles.
    pub device_profiles: serde_json::Value,
    /// Version of the software that ran it.
    pub software_version: String,
    /// Free text from the operator (editable later: [`crate::Store::annotate`]).
    #[serde(alias = "operator_note")]
    pub notes: Option<String>,
    /// Lockstep model ids, in the order of each sample's model outputs.
    pub models: Vec<String>,
    /// Nominal control period \[s\].
    pub period_s: Option<f64>,
}

/// Control-loop timing statistics of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingStats {
    /// Median absolute period error \[µs\].
    pub period_error_p50_us: Option<f64>,
    /// 99th percentile absolute period error \[µs\].
    pub period_error_p99_us: Option<f64>,
    /// Largest absolute period error \[µs\].
    pub period_error_max_us: Option<f64>,
    /// Periods whose work overran the deadline.
    pub overruns: u64,
    /// 99.9th percentile absolute period error \[µs\] (runs stored before it: none).
    #[serde(default)]
    pub period_error_p999_us: Option<f64>,
    /// Median time from waking to the end of a tick's work \[µs\]: what is left of the period
    /// is the margin a late wake-up eats before the tick ends past its deadline.
    #[serde(default)]
    pub tick_work_p50_us: Option<f64>,
}

/// One entry of a run's interruption log or run log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Wall-clock time (RFC 3339 UTC).
    pub at: String,
    /// Run time \[s\] when it happened, if known.
    pub t: Option<f64>,
    /// What happened.
    pub reason: String,
}

/// A stored run with everything but its samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Run id (this store's own; a lab store numbers pushed runs anew).
    pub id: i64,
    /// The run's UUID, assigned when it was created and kept by every store it is pushed to.
    #[serde(default)]
    pub uuid: String,
    /// The bench it was recorded on (`bench_id` of its configuration snapshot; '' before
    /// benches had one).
    #[serde(default)]
    pub bench_id: String,
    /// Experiment kind.
    pub kind: String,
    /// The spec's name.
    pub name: String,
    /// Status.
    pub status: RunStatus,
    /// Why it ended so (aborted, failed, interrupted).
    pub status_reason: Option<String>,
    /// The stable code of that reason (what programs decide on).
    #[serde(default)]
    pub reason_code: Option<ReasonCode>,
    /// Creation time (RFC 3339 UTC).
    pub created_at: String,
    /// Start time.
    pub started_at: Option<String>,
    /// End time.
    pub finished_at: Option<String>,
    /// The experiment spec.
    pub spec: serde_json::Value,
    /// Bench configuration snapshot.
    pub bench_config: serde_json::Value,
    /// Device profiles snapshot.
    pub device_profiles: serde_json::Value,
    /// Software version.
    pub software_version: String,
    /// The operator's notes ("bearing re-greased before this run"), editable after the run.
    #[serde(alias = "operator_note")]
    pub notes: Option<String>,
    /// Tags, sorted (`bench runs tag`, `PATCH /api/runs/{id}`).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Lockstep model ids.
    pub models: Vec<String>,
    /// Nominal control period \[s\].
    pub period_s: Option<f64>,
    /// Timing statistics.
    pub timing: TimingStats,
    /// Batches the recorder channel dropped because it was full.
    pub dropped_batches: u64,
    /// Samples in those batches.
    pub dropped_samples: u64,
    /// Committed samples.
    pub sample_count: u64,
    /// Interruption log.
    pub interruption_log: Vec<LogEntry>,
    /// What was checked and read back before and during the run (the drive's watchdog read
    /// back, the profile's unverified signals, the real-time scheduling it got): the run's own
    /// log, not interruptions.
    #[serde(default)]
    pub run_log: Vec<LogEntry>,
    /// Analysis results, once stored.
    pub results: Option<serde_json::Value>,
    /// The run this one continues (`bench runs resume`): it measured only the segments that
    /// run did not finish.
    #[serde(default)]
    pub continues: Option<i64>,
}

/// A run as listed: identity, status and size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Run id.
    pub id: i64,
    /// The bench it was recorded on ('' before benches had one).
    #[serde(default)]
    pub bench_id: String,
    /// Experiment kind.
    pub kind: String,
    /// The spec's name.
    pub name: String,
    /// Status.
    pub status: RunStatus,
    /// Creation time.
    pub created_at: String,
    /// Start time.
    pub started_at: Option<String>,
    /// End time.
    pub finished_at: Option<String>,
    /// Committed samples.
    pub sample_count: u64,
}

/// Filters and paging for [`Store::list_runs`](crate::Store::list_runs). Newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFilter {
    /// Only this experiment kind.
    pub kind: Option<String>,
    /// Only runs of this bench (`bench_id`).
    #[serde(default)]
    pub bench: Option<String>,
    /// Only this status.
    pub status: Option<RunStatus>,
    /// Created at or after this time (any SQLite date, e.g. `2026-11-22` or
    /// `2026-11-22T05:00:00Z`; UTC).
    pub since: Option<String>,
    /// Created before this time.
    pub until: Option<String>,
    /// Only runs with this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Free-text search: every whitespace-separated word must occur, case-insensitively (ASCII),
    /// in the run's name, kind, one of its tags or its notes.
    #[serde(default)]
    pub q: Option<String>,
    /// Page size (at most 10 000).
    pub limit: u32,
    /// Runs to skip.
    pub offset: u64,
}

impl Default for RunFilter {
    fn default() -> Self {
        RunFilter {
            kind: None,
            bench: None,
            status: None,
            since: None,
            until: None,
            tag: None,
            q: None,
            limit: 100,
            offset: 0,
        }
    }
}

/// One page of runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPage {
    /// Runs matching the filter, in all pages.
    pub total: u64,
    /// This page, newest first.
    pub runs: Vec<RunSummary>,
}

/// Which samples of a run to read.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleQuery {
    /// First run time \[s\] (inclusive); `None` = from the start.
    pub from_t: Option<f64>,
    /// Last run time \[s\] (inclusive); `None` = to the end.
    pub to_t: Option<f64>,
    /// Keep the samples whose index in the run is a multiple of `every` (1 = all). Decimation
    /// by run index keeps the same samples whatever the range, so zoomed views line up.
    pub every: u64,
}

impl Default for SampleQuery {
    fn default() -> Self {
        SampleQuery {
            from_t: None,
            to_t: None,
            every: 1,
        }
    }
}

/// Samples with their model outputs aligned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleSet {
    /// Model ids: the columns of `outputs`.
    pub models: Vec<String>,
    /// Index in the run of each sample.
    pub idx: Vec<u64>,
    /// The samples.
    pub samples: Vec<Sample>,
    /// Model outputs, row-major: `outputs[i * models.len() + m]` is model `m` at sample `i`
    /// (NaN where the model produced nothing).
    pub outputs: Vec<f64>,
}

impl SampleSet {
    /// The outputs at sample `i` (one per model).
    pub fn outputs_at(&self, i: usize) -> &[f64] {
        let m = self.models.len();
        &self.outputs[i * m..(i + 1) * m]
    }
}

/// A named set of model parameters with its provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParameterSet {
    /// Id.
    pub id: i64,
    /// UUID, kept by every store the set is pushed to.
    #[serde(default)]
    pub uuid: String,
    /// Name.
    pub name: String,
    /// Model id.
    pub model_id: String,
    /// Parameters (the model's `Params` as JSON).
    pub params: serde_json::Value,
    /// Where they come from: runs, method, residuals, or "user".
    pub provenance: serde_json::Value,
    /// Creation time.
    pub created_at: String,
}

/// A model comparison to store with the runs it used (`bench compare` on run ids).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NewComparison {
    /// Runs the models were fitted on.
    pub estimate_runs: Vec<i64>,
    /// Runs the models were scored on.
    pub validate_runs: Vec<i64>,
    /// The model choices as given (e.g. `lugre=fc+fs`).
    pub models: Vec<String>,
    /// Options of the comparison (replay, regime thresholds, files used besides runs, ...).
    pub options: serde_json::Value,
    /// The comparison table.
    pub table: serde_json::Value,
}

/// A stored model comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Id.
    pub id: i64,
    /// UUID, kept by every store the comparison is pushed to.
    #[serde(default)]
    pub uuid: String,
    /// Creation time.
    pub created_at: String,
    /// Runs the models were fitted on.
    pub estimate_runs: Vec<i64>,
    /// Runs the models were scored on.
    pub validate_runs: Vec<i64>,
    /// The model choices as given.
    pub models: Vec<String>,
    /// Options of the comparison.
    pub options: serde_json::Value,
    /// The comparison table.
    pub table: serde_json::Value,
}
