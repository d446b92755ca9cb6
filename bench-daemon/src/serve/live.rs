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
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

/// Frames the ring holds per client before the slowest one starts losing them (2.5 s at 100 Hz).
const FRAME_RING: usize = 256;
/// Live samples per second at most.
pub const MAX_SAMPLE_HZ: f64 = 100.0;
/// Status events per second.
const STATUS_HZ: u64 = 5;

/// A run or queue change, sent to every live client.
#[derive(Clone, Debug)]
pub struct Event {
    /// `run` or `queue`.
    pub name: &'static str,
    /// Its data.
    pub data: Value,
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
}

impl Hub {
    /// Channels with nobody listening yet.
    pub fn new() -> Hub {
        Hub {
            frames: broadcast::channel(FRAME_RING).0,
            events: broadcast::channel(64).0,
            status: watch::channel(Status::default()).0,
        }
    }

    /// Sends an event (nobody listening is fine).
    pub fn event(&self, name: &'static str, data: Value) {
        let _ = self.events.send(Event { name, data });
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
                    let models = c
                        .state
                        .view
                        .borrow()
                        .running
                        .as_ref()
                        .map(|r| r.models.clone())
                        .unwrap_or_default();
                    let data = json!({
                        "idx": f.idx, "sample": f.sample, "outputs": f.outputs, "models": models,
                    });
                    return Some(sse("sample", &data));
                }
                Err(RecvError::Lagged(n)) => return Some(sse("dropped", &json!({"frames": n}))),
                Err(RecvError::Closed) => return None,
            },
            ev = c.events.recv() => match ev {
                Ok(e) => return Some(sse(e.name, &e.data)),
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            },
            _ = c.status.tick() => return Some(sse("status", &bench_json(&c.state))),
        }
    }
}

fn sse(name: &str, data: &Value) -> SseEvent {
    SseEvent::default().event(name).data(data.to_string())
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
