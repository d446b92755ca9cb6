//! What a run's loop is given, what it publishes while it runs and what it reports at the end.

use super::request::Control;
use super::sim_io::SimIo;
use super::stop::Outcome;
use crate::config::Loaded;
use experiments::{Plan, Sample};
use friction::compensation::CompensatorSpec;
use friction::registry::ModelSpec;
use run_store::BatchSender;
use serde::Serialize;
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

/// The bench a run's loop drives.
#[derive(Debug, Default)]
pub enum Devices {
    /// The devices of the configuration, over Modbus, in real time.
    #[default]
    Modbus,
    /// The simulated plant in this process, stepped in simulated time as fast as the CPU
    /// goes (analyses, fits, sequencing: no wall clock involved).
    Simulated(Box<SimIo>),
}

impl Devices {
    /// The recorder's tuning for a run on these devices at `period_s` per sample. A run in
    /// simulated time outpaces the wall clock (a 4 s sweep in a few tens of milliseconds), so it
    /// also commits every 100 ms of its own time (a sample count), as a real-time run does by
    /// the clock.
    pub fn recorder_config(&self, period_s: f64) -> run_store::RecorderConfig {
        let default = run_store::RecorderConfig::default();
        match self {
            Devices::Modbus => default,
            Devices::Simulated(_) => run_store::RecorderConfig {
                max_pending_samples: (default.commit_interval.as_secs_f64() / period_s)
                    .round()
                    .max(1.0) as usize,
                ..default
            },
        }
    }
}

/// Everything a run's loop needs.
#[derive(Debug)]
pub struct LoopSetup {
    /// Devices, limits, gains, safety settings.
    pub loaded: Loaded,
    /// Where the devices are.
    pub devices: Devices,
    /// The validated plan.
    pub plan: Plan,
    /// Segments of the plan not to run: measured whole by the run this one continues.
    pub skip: Vec<usize>,
    /// Lockstep models.
    pub models: Vec<ModelSpec>,
    /// Friction compensators of a compensation trial (segments name them by index), their
    /// parameters resolved when the run was created.
    pub compensators: Vec<CompensatorSpec>,
    /// Where samples go (None: nowhere, e.g. a dry timing run).
    pub recorder: Option<BatchSender>,
    /// Requests from outside.
    pub control: Arc<Control>,
    /// Progress and latest values.
    pub status: watch::Sender<Status>,
    /// Decimated live samples with model outputs.
    pub live: Option<(broadcast::Sender<Frame>, u32)>,
}

/// Progress of the running loop, for progress bars and the status endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Status {
    /// Phase: `connecting`, `running`, `suspended` (paused on a `[[suspend]]` condition),
    /// `stopping`, `done`.
    pub phase: &'static str,
    /// Run time \[s\].
    pub t: f64,
    /// Active segment index and count.
    pub segment: usize,
    /// Number of segments.
    pub segments: usize,
    /// Label of the active segment.
    pub label: String,
    /// What the latest sample's `u_cmd` is: `torque` \[N m\], `velocity` \[rad/s\] or
    /// `position` \[rad\] (the drive mode in force).
    pub command: &'static str,
    /// Latest sample.
    pub sample: Sample,
    /// Samples so far.
    pub samples: u64,
    /// Overruns so far.
    pub overruns: u64,
    /// Batches the recorder refused so far.
    pub dropped_batches: u64,
    /// Wake-up lateness so far, coarse (for `/metrics`).
    pub lateness: super::timing::Histogram,
    /// The drive's link counters so far.
    pub drive_link: protocols::LinkStats,
    /// The sensor's link counters so far (the drive's again when they share a line).
    pub sensor_link: protocols::LinkStats,
}

/// One decimated live sample with every lockstep output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Frame {
    /// Sample index in the run.
    pub idx: u64,
    /// The sample.
    pub sample: Sample,
    /// Lockstep outputs, in the run's model order.
    #[serde(serialize_with = "as_slice")]
    pub outputs: LiveOutputs,
}

/// A frame's outputs, inline up to 64 (every model with its plant simulation, 50, fits): the
/// loop copies them without allocating; more spill to the heap.
pub type LiveOutputs = smallvec::SmallVec<[f64; 64]>;

fn as_slice<S: serde::Serializer>(outputs: &LiveOutputs, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&outputs[..], s)
}

/// What the loop reports when it ends.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Period statistics, and the median tick work (all `None` on the simulated bench's
    /// clock).
    pub stats: run_store::TimingStats,
    /// Ticks run.
    pub ticks: u64,
    /// Time from the first deadline to the last tick \[s\] (simulated time on the simulated
    /// bench).
    pub elapsed_s: f64,
    /// Time from the decision to stop to the drive confirming it is disabled \[s\]; `None` if
    /// it could not be confirmed.
    pub safe_state_s: Option<f64>,
    /// Interruption log lines (run time, text), also sent to the recorder.
    pub log: Vec<(Option<f64>, String)>,
    /// Run log lines (checks and read-backs, not interruptions); the session stores them.
    pub notes: Vec<(Option<f64>, String)>,
    /// Batches the recorder refused.
    pub dropped_batches: u64,
    /// The zeros measured before the run moved: (sensor as bench.toml names it, its raw zero).
    pub zeros: Vec<(&'static str, f64)>,
    /// What the DAQ's hardware-timed stream did, on a bench read through a DAQ.
    pub daq_stream: Option<DaqStreamCounts>,
}

/// What a DAQ's hardware-timed stream did over a run (`bench perf loop --json`: `daq_stream`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DaqStreamCounts {
    /// Scans received (each one recorded).
    pub scans: u64,
    /// Scans the device discarded while its buffer was full (auto-recovery).
    pub skipped_scans: u64,
    /// Auto-recovery episodes.
    pub recoveries: u64,
    /// Largest backlog the device reported \[bytes\].
    pub max_backlog_bytes: u16,
}
