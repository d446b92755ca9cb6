//! The live stream's events as one schema ([`LiveEvent`], in the OpenAPI document's components):
//! each SSE message's `event:` name and the JSON its `data:` line carries. The stream sends each
//! data object as its own type serialises it (`sample`: [`SampleFrame`], `run`: [`RunEvent`],
//! ...); this enum only gathers them under their names, so a client generates one union from it.

use super::scheduler::view::{QueueListing, RunEvent};
use super::status::BenchStatus;
use friction::identify::control::Progress;
use run_store::RunStatus;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use std::borrow::Cow;

/// One message of `GET /api/live`: `event` is the SSE event name, `data` the JSON of its data
/// line.
#[derive(Debug, JsonSchema)]
#[serde(tag = "event", content = "data", rename_all = "lowercase")]
#[allow(dead_code)] // Documents the stream; its parts are what the stream serialises.
pub enum LiveEvent {
    /// A decimated sample of the running run (at most 100 a second).
    Sample(SampleFrame<'static>),
    /// The bench's status, as `GET /api/bench` answers it (5 a second).
    Status(BenchStatus),
    /// A run changed state.
    Run(RunEvent),
    /// The queue changed (as `GET /api/queue`, its first waiting runs listed).
    Queue(QueueListing),
    /// A fit's progress (at most 4 a second per fit).
    Fit(FitEvent),
    /// Frames this client lost by reading too slowly.
    Dropped(Dropped),
}

/// The `sample` event: one sample of the running run and the lockstep models' outputs.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SampleFrame<'a> {
    /// Sample index in the run.
    pub idx: u64,
    /// The sample (`NaN` readings as `null`).
    #[schemars(with = "super::schema::Sample")]
    pub sample: &'a experiments::Sample,
    /// Each lockstep model's output, in `models` order (`null`: not finite).
    #[schemars(with = "Vec<Option<f64>>")]
    pub outputs: &'a [f64],
    /// The lockstep model ids (the columns of `outputs`).
    pub models: Vec<String>,
}

/// A fit's progress (the live `fit` event).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FitEvent {
    /// The fit (or comparison) job, as `POST /api/fits` answered it.
    pub fit_id: u64,
    /// Where its iterations stand.
    #[schemars(with = "FitProgress")]
    pub progress: Progress,
}

crate::schema::opaque!(
    /// Where a fit's iterations stand (`friction::identify::control::Progress`).
    FitProgress,
    {"type": "object", "required": ["fit", "iter", "best_mse"], "properties": {
        "fit": {"type": "integer", "minimum": 0, "description": "fits started so far (a comparison runs several)"},
        "iter": {"type": "integer", "minimum": 0, "description": "iterations of the current fit"},
        "best_mse": {"type": ["number", "null"], "description": "its best mean squared residual so far (null: none finite yet)"}}}
);

/// The `dropped` event.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Dropped {
    /// Frames lost since this client's last one.
    pub frames: u64,
}

/// [`RunStatus`] in the document: its stored names.
#[derive(Debug)]
pub struct RunStatusName;

impl JsonSchema for RunStatusName {
    fn schema_name() -> Cow<'static, str> {
        "RunStatus".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        schemars::json_schema!({"type": "string", "enum": names})
    }
}
