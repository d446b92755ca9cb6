//! The bench's status as `GET /api/bench` answers it and the live stream sends it five times a
//! second ([`status`]), read from the published views without a lock the loop holds.

use super::schema::{Limits, Sample, opaque};
use super::state::AppState;
use serde::Serialize;
use serde_json::Value;

/// `GET /api/bench`, and the live `status` event.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BenchStatus {
    /// A lab view (`bench serve --lab`): read-only, no bench attached, every POST/PUT/DELETE 409.
    pub lab: bool,
    /// Where the configuration came from.
    pub source: String,
    /// The devices answered.
    pub connected: bool,
    /// A run is on the bench.
    pub busy: bool,
    /// The running run.
    pub run_id: Option<i64>,
    /// The e-stop is latched.
    pub estop: bool,
    /// The queue is paused.
    pub paused: bool,
    /// The bench limits.
    pub limits: Limits,
    /// `rotary` or `linear`.
    pub geometry: Geometry,
    /// The units the user sees.
    pub units: Units,
    /// The running (or last) run's progress.
    pub live: Live,
    /// Lockstep model ids (the columns of the live `outputs`).
    pub models: Vec<String>,
}

opaque!(
    /// Whether the bench rotates or translates.
    Geometry,
    {"enum": ["rotary", "linear"]}
);

/// The bench's units.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Units {
    /// `N m` or `N`.
    pub force: &'static str,
    /// `rad` or `m`.
    pub position: &'static str,
}

/// The running (or last) run's progress.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Live {
    /// `connecting`, `running`, `suspended` (paused on a `[[suspend]]` condition, drive off),
    /// `stopping`, `done` (empty before the first run).
    pub phase: &'static str,
    /// Run time \[s\].
    pub t: f64,
    /// Active segment index.
    pub segment: usize,
    /// Number of segments.
    pub segments: usize,
    /// Label of the active segment.
    pub label: String,
    /// What the latest sample's `u_cmd` is: `torque`, `velocity` or `position`.
    pub command: &'static str,
    /// The latest sample.
    pub sample: Sample,
    /// Samples so far.
    pub samples: u64,
    /// Overruns so far.
    pub overruns: u64,
    /// Batches the recorder refused so far.
    pub dropped_batches: u64,
}

/// The bench's status (borrowed views, not cloned: the view holds every waiting run, and every
/// live client asks for this five times a second).
pub fn status(state: &AppState) -> BenchStatus {
    let view = state.view.borrow();
    let s = state.hub.status.borrow();
    let config = &state.loaded.config;
    let models = match &view.running {
        Some(r) => r.models.clone(),
        None => config.lockstep.models.clone(),
    };
    BenchStatus {
        lab: state.lab,
        source: state.loaded.source.clone(),
        connected: view.connected,
        busy: view.running.is_some(),
        run_id: view.running.as_ref().map(|r| r.run_id),
        estop: view.estop || state.interlock.is_latched(),
        paused: view.paused,
        limits: Limits(value(config.limits)),
        geometry: Geometry(value(config.geometry)),
        units: Units {
            force: config.geometry.force(),
            position: config.geometry.position(),
        },
        live: Live {
            phase: s.phase,
            t: s.t,
            segment: s.segment,
            segments: s.segments,
            label: s.label.clone(),
            command: s.command,
            sample: Sample(value(s.sample)),
            samples: s.samples,
            overruns: s.overruns,
            dropped_batches: s.dropped_batches,
        },
        models,
    }
}

/// `v` as JSON.
fn value(v: impl Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}
