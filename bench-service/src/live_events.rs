//! The live stream's events as one schema ([`LiveEvent`], in the OpenAPI document's components):
//! each SSE message's `event:` name and the JSON its `data:` line carries. The stream sends each
//! data object as its own type serialises it (`sample`: [`SampleFrame`], `run`: [`RunEvent`],
//! ...); this enum only gathers them under their names, so a client generates one union from it.

use super::hub::SampleFrame;
use super::jobs::FitEvent;
use super::scheduler::view::{QueueListing, RunEvent};
use super::status::BenchStatus;
use schemars::{JsonSchema, Schema};
use serde::Serialize;

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

/// The messages as they are on the wire, from `LiveEvent`'s schema (`live_event`): each event's
/// `data` a string whose JSON its `contentSchema` describes (`contentMediaType`
/// `application/json`, JSON Schema 2020-12 as OpenAPI 3.1 reads it), so a validator that reads
/// the stream (schemathesis) checks each event's payload against its own type.
pub fn wire_schema(live_event: Option<&serde_json::Value>) -> Schema {
    let variants: Vec<serde_json::Value> = live_event
        .and_then(|e| e["oneOf"].as_array())
        .into_iter()
        .flatten()
        .map(|variant| {
            let mut v = variant.clone();
            let data = v["properties"]["data"].take();
            v["properties"]["data"] = serde_json::json!({"type": "string",
                "contentMediaType": "application/json", "contentSchema": data});
            v
        })
        .collect();
    schemars::json_schema!({"oneOf": variants})
}

/// The `dropped` event.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Dropped {
    /// Frames lost since this client's last one.
    pub frames: u64,
}
