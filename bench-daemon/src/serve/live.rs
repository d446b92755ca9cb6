//! `GET /api/live`: Server-Sent Events. Each client reads the loop's `broadcast<Frame>` (the loop
//! decimates it to ≤ 100 Hz and never waits: `send` on a broadcast channel does not block), the
//! bench status (sampled at 5 Hz) and the scheduler's run and queue events. A client that reads
//! too slowly falls behind the broadcast ring; its next read gets `Lagged(n)` and it is sent a
//! `dropped` event with the count instead of the frames. No task is spawned per client: the
//! stream is polled only when the connection can take more.

use super::api::{AppState, bench_json};
use crate::control::{Frame, Status};
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

/// Frames the ring holds per client before the slowest one starts losing them (2.5 s at 100 Hz).
const FRAME_RING: usize = 256;
/// Live samples per second at most.
pub const MAX_SAMPLE_HZ: f64 = 100.0;
/// Status events per second.
const STATUS_HZ: u64 = 5;

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
    pub fn event(&self, name: &'static str, data: Value) {
        let data = Arc::from(data.to_string());
        let _ = self.events.send(Event { name, data });
    }

    /// The `sample` event's text of `f`, serialised once for every client.
    fn frame_text(&self, f: &Frame, models: impl FnOnce() -> Value) -> Arc<str> {
        let key = Some((f.idx, f.sample.t.to_bits()));
        let mut cache = self.frame_text.lock().unwrap_or_else(|e| e.into_inner());
        if cache.key == key
            && let Some(text) = &cache.text
        {
            return text.clone();
        }
        let text: Arc<str> = Arc::from(
            json!({"idx": f.idx, "sample": f.sample, "outputs": f.outputs, "models": models()})
                .to_string(),
        );
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

struct Client {
    state: AppState,
    frames: broadcast::Receiver<Frame>,
    events: broadcast::Receiver<Event>,
    status: tokio::time::Interval,
    shutdown: watch::Receiver<bool>,
}

/// The SSE handler.
pub async fn live(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let mut status = tokio::time::interval(Duration::from_millis(1000 / STATUS_HZ));
    status.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let client = Client {
        frames: state.hub.frames.subscribe(),
        events: state.hub.events.subscribe(),
        shutdown: state.shutdown.clone(),
        status,
        state,
    };
    let stream = futures_util::stream::unfold(client, |mut c| async move {
        let ev = next_event(&mut c).await?;
        Some((Ok(ev), c))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The client's next event; `None` ends the stream (shutdown).
async fn next_event(c: &mut Client) -> Option<SseEvent> {
    loop {
        if *c.shutdown.borrow() {
            return None;
        }
        tokio::select! {
            biased;
            _ = c.shutdown.changed() => return None,
            frame = c.frames.recv() => match frame {
                Ok(f) => {
                    let view = &c.state.view;
                    let text = c.state.hub.frame_text(&f, || {
                        let running = view.borrow();
                        json!(running.running.as_ref().map(|r| r.models.clone()).unwrap_or_default())
                    });
                    return Some(sse_text("sample", &text));
                }
                Err(RecvError::Lagged(n)) => {
                    return Some(sse_text("dropped", &json!({"frames": n}).to_string()));
                }
                Err(RecvError::Closed) => return None,
            },
            ev = c.events.recv() => match ev {
                Ok(e) => return Some(sse_text(e.name, &e.data)),
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            },
            _ = c.status.tick() => {
                return Some(sse_text("status", &bench_json(&c.state).to_string()));
            }
        }
    }
}

fn sse_text(name: &str, data: &str) -> SseEvent {
    SseEvent::default().event(name).data(data)
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
