//! The frictionbench run store: every run, its samples and model outputs, results and parameter
//! sets in one SQLite file (WAL) on a bench or one PostgreSQL database for a lab
//! ([`Location`]), written by one recorder task per run that the control loop never waits on.
//!
//! # Brief overview
//!
//! [`Store::open`] creates or migrates the database (`migrations/sqlite` or
//! `migrations/postgres` at the workspace root) and
//! marks runs left `running` by a dead daemon as `interrupted`. A run is created `queued`
//! ([`NewRun`] → id); [`Recorder::start`] marks it `running` and spawns its writer task. The
//! control loop pushes [`Sample`]s and model outputs into a [`Batch`] and hands it to
//! [`BatchSender::try_send`], which drops and counts rather than waits; the writer commits every
//! 100 ms. [`Recorder::close`] commits the rest and sets the final [`RunStatus`]. Queries:
//! [`Store::list_runs`] ([`RunFilter`] → [`RunPage`]), [`Store::run`] → [`Run`],
//! [`Store::samples`] ([`SampleQuery`] → [`SampleSet`]), [`Store::export`] (CSV or JSON).
//! `bench serve`'s queue and schedule: [`Store::queue_rows`] ([`QueueRow`]),
//! [`Store::schedules`] ([`ScheduleEntry`]).
//! Fits and comparisons: [`Store::add_parameter_set`] → [`ParameterSet`] (by id or name),
//! [`Store::add_comparison`] ([`NewComparison`] → [`Comparison`], listed per run).
//! Trends: results and fits leave summary rows (bench, run, time, model, parameter, value,
//! standard error); [`Store::trend`] ([`TrendQuery`] → [`Trend`], with [`Limits`]) and
//! [`Store::drift`] ([`DriftQuery`] → [`DriftPoint`]) read them.
//! The archive: [`Store::archive`] ([`ArchiveOptions`] → [`ArchiveReport`]) moves old runs'
//! samples into Parquet files; every read of their samples then goes to the file
//! ([`Store::archive_of`] → [`Archive`]).
//! A lab: [`Store::push`] copies finished runs, sets and comparisons into another store
//! ([`PushReport`]), verified by [`Store::sample_checksum`]; each bench's [`Heartbeat`]
//! ([`Store::put_heartbeat`]) and its pushes make the lab's fleet ([`Store::fleet`] →
//! [`FleetBench`]); [`Store::for_bench`] scopes the
//! queue, its settings and the schedule to one bench of a shared store.
//!
//! # Example
//!
//! ```
//! use run_store::{Batch, Finish, NewRun, Recorder, RecorderConfig, Sample, SampleQuery, Store};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let store = Store::open(dir.path().join("runs.db")).await.unwrap();
//! let run = NewRun { kind: "torque_ramp".into(), name: "demo".into(), models: vec!["lugre".into()],
//!                    software_version: "0.1.0".into(), ..NewRun::default() };
//! let id = store.create_run(&run).await.unwrap();
//! let recorder = Recorder::start(&store, id, RecorderConfig::default()).await.unwrap();
//! let mut batch = Batch::with_capacity(0, 10, 1);
//! for k in 0..10 {
//!     batch.push(Sample { t: k as f64 * 1e-3, ..Sample::default() }, &[0.5]);
//! }
//! recorder.sender().try_send(batch).unwrap();
//! recorder.close(Finish::completed(None)).await.unwrap();
//! let set = store.samples(id, &SampleQuery { every: 5, ..SampleQuery::default() }).await.unwrap();
//! assert_eq!(set.idx, [0, 5]);
//! assert_eq!(set.outputs_at(1), [0.5]);
//! # });
//! ```

#![deny(missing_docs)]

mod annotations;
mod archive;
mod backend;
mod backfill;
pub mod campaigns;
mod chain;
mod chunk;
mod comparisons;
mod diff;
mod error;
mod export;
mod fleet;
mod liveness;
mod push;
mod queue;
mod reason;
mod recorder;
mod rows;
mod sensors;
mod store;
mod summary;
mod trends;
mod types;

pub use annotations::{
    Annotated, Annotation, AuditEntry, AuditFilter, MAX_NOTES_BYTES, MAX_TAG_CHARS, MAX_TAGS,
    check_tag,
};
pub use archive::{Archive, ArchiveOptions, ArchiveReport, ArchivedRun};
pub use backend::{Location, is_postgres_url};
pub use campaigns::{Campaign, CampaignStatus};
pub use diff::{Difference, ProfileSum, RunDiff, changed_lines, diff_runs};
pub use error::Error;
pub use export::{
    COMMAND_UNIT, Encoder, ExportOptions, Format, SAMPLE_COLUMNS, SAMPLE_UNITS, SamplePages,
    column_units, model_unit,
};
pub use fleet::{BenchState, FleetBench, Heartbeat, STALE_PERIODS, StateName};
pub use liveness::DEAD_RECORDER_REASON;
pub use push::{Copied, PushOptions, PushReport, PushedRun};
pub use queue::{Fired, QueueRow, ScheduleEntry};
pub use reason::{Reason, ReasonCode};
pub use recorder::{
    Batch, BatchSender, Dropped, Event, Finish, Recorder, RecorderConfig, RecorderSummary,
};
pub use sensors::{Calibration, NewCalibration, RunSensor, RunZero, ZeroDrift, zero_drift};
pub use store::{INTERRUPTED_REASON, Store};
pub use trends::{
    Band, Baseline, DEFAULT_BASELINE_POINTS, DriftPoint, DriftQuery, Limits, Series, Trend,
    TrendPoint, TrendQuery,
};
pub use types::{
    Comparison, IMPORTED_KIND, LogEntry, NewComparison, NewRun, ParameterSet, Run, RunFilter,
    RunPage, RunStatus, RunSummary, Sample, SampleQuery, SampleSet, TimingStats,
};
