//! The live channels: the loop's decimated frames (`broadcast`, it never waits), the running
//! run's status (`watch`) and the scheduler's run and queue events (`broadcast`), each
//! serialised once by its sender, not once per client.

use bench_daemon::control::{Frame, Status};
use serde::Serialize;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

/// Frames the ring holds per client before the slowest one starts losing them (2.5 s at 100 Hz).
const FRAME_RING: usize = 256;
/// Live samples per second at most.
pub const MAX_SAMPLE_HZ: f64 = 100.0;
/// Status events per second.
pub const STATUS_HZ: u64 = 5;

/// A run or queue change, sent to every live client: serialised once by the sender, not once
/// per client.
#[derive(Clone, Debug)]
pub struct Event {
    /// `run` or `queue`.
    pub name: &'static str,
    /// Its data, as JSON text.
    pub data: Arc<str>,
}

/// The last frame as JSON text, keyed by its sample index and time: the first client to send a
/// frame serialises it, the others reuse the text.
#[derive(Debug, Default)]
struct FrameText {
    key: Option<(u64, u64)>,
    text: Option<Arc<str>>,
}

/// The channels the live stream reads; cloned into the scheduler (senders) and each run.
#[derive(Clone, Debug)]
pub struct Hub {
    /// Decimated samples of the running run (the loop sends, clients subscribe).
    pub frames: broadcast::Sender<Frame>,
    /// Run and queue changes (the scheduler sends).
    pub events: broadcast::Sender<Event>,
    /// Progress of the running run (the loop sends; the status endpoint and clients read).
    pub status: watch::Sender<Status>,
    /// The latest frame's text, shared by the clients.
    frame_text: Arc<Mutex<FrameText>>,
}

impl Default for Hub {
    fn default() -> Hub {
        Hub::new()
    }
}

impl Hub {
    /// Channels with nobody listening yet.
    pub fn new() -> Hub {
        Hub {
            frames: broadcast::channel(FRAME_RING).0,
            events: broadcast::channel(64).0,
            status: watch::channel(Status::default()).0,
            frame_text: Arc::default(),
        }
    }

    /// Sends an event (nobody listening is fine).
    pub fn event(&self, name: &'static str, data: &impl Serialize) {
        let data = match serde_json::to_string(data) {
            Ok(text) => Arc::from(text),
            Err(e) => {
                tracing::error!("BUG: the {name} event does not serialise: {e}");
                return;
            }
        };
        let _ = self.events.send(Event { name, data });
    }

    /// The `sample` event's text of `f`, serialised once for every client.
    pub fn frame_text(&self, f: &Frame, models: impl FnOnce() -> Vec<String>) -> Arc<str> {
        let key = Some((f.idx, f.sample.t.to_bits()));
        let mut cache = self.frame_text.lock().unwrap_or_else(|e| e.into_inner());
        if cache.key == key
            && let Some(text) = &cache.text
        {
            return text.clone();
        }
        let frame = SampleFrame {
            idx: f.idx,
            sample: &f.sample,
            outputs: &f.outputs[..],
            models: models(),
        };
        let text: Arc<str> = Arc::from(serde_json::to_string(&frame).unwrap_or_default());
        *cache = FrameText {
            key,
            text: Some(text.clone()),
        };
        text
    }
}

/// Every n-th sample goes live so that at most [`MAX_SAMPLE_HZ`] frames a second do.
pub fn decimation(period_s: f64) -> u32 {
    ((1.0 / (period_s * MAX_SAMPLE_HZ)).ceil()).clamp(1.0, 1e6) as u32
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimation_keeps_at_most_100_hz() {
        assert_eq!(super::decimation(1e-3), 10);
        assert_eq!(super::decimation(0.01), 1);
        assert_eq!(super::decimation(0.02), 1);
        assert_eq!(super::decimation(2.5e-4), 40);
    }
}

/// The `sample` event: one sample of the running run and the lockstep models' outputs.
#[derive(Debug, Serialize, schemars::JsonSchema)]
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
