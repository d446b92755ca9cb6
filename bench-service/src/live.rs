//! `GET /api/live`: Server-Sent Events. Each client reads the loop's `broadcast<Frame>` (the loop
//! decimates it to ≤ 100 Hz and never waits: `send` on a broadcast channel does not block), the
//! bench status (sampled at 5 Hz) and the scheduler's run and queue events. A client that reads
//! too slowly falls behind the broadcast ring; its next read gets `Lagged(n)` and it is sent a
//! `dropped` event with the count instead of the frames. No task is spawned per client: the
//! stream is polled only when the connection can take more.

use super::hub::{Event, STATUS_HZ};
use super::live_events::{Dropped, LiveEvent, wire_schema};
use super::schema::{only, response};
use super::state::AppState;
use aide::OperationOutput;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response as DocResponse, StatusCode as DocStatus};
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use bench_daemon::control::Frame;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

/// The route.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/live",
        get_with(live, |op| {
            op.summary("Server-Sent Events: sample ({idx, sample, outputs, models}, <= 100 Hz), status (as GET /api/bench, 5 Hz), run ({run_id, status}), queue (as GET /api/queue), fit ({fit_id, progress: {fit, iter, best_mse}}, <= 4 Hz per fit), dropped ({frames}: frames this client lost by reading too slowly)")
        }),
    )
}

/// The event stream.
pub struct LiveStream(Response);

impl std::fmt::Debug for LiveStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveStream")
    }
}

impl IntoResponse for LiveStream {
    fn into_response(self) -> Response {
        self.0
    }
}

impl OperationOutput for LiveStream {
    type Inner = ();

    fn operation_response(ctx: &mut GenContext, _: &mut Operation) -> Option<DocResponse> {
        // `LiveEvent` in the components (the events' data as objects, for clients' types); the
        // response the messages as they are on the wire: `data` a string of that JSON.
        ctx.schema.subschema_for::<LiveEvent>();
        let event = ctx.schema.definitions().get("LiveEvent").cloned();
        Some(response(
            "event stream: each message's `event:` name and the JSON of its `data:` line, as LiveEvent",
            vec![("text/event-stream", wire_schema(event.as_ref()))],
        ))
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        only(200, Self::operation_response(ctx, op))
    }
}

struct Client {
    state: AppState,
    frames: broadcast::Receiver<Frame>,
    events: broadcast::Receiver<Event>,
    status: tokio::time::Interval,
    shutdown: watch::Receiver<bool>,
}

/// The SSE handler.
async fn live(State(state): State<AppState>) -> LiveStream {
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
        Some((Ok::<_, Infallible>(ev), c))
    });
    LiveStream(
        Sse::new(stream)
            .keep_alive(KeepAlive::default())
            .into_response(),
    )
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
                        running.running.as_ref().map(|r| r.models.clone()).unwrap_or_default()
                    });
                    return Some(sse_text("sample", &text));
                }
                Err(RecvError::Lagged(n)) => {
                    let dropped = serde_json::to_string(&Dropped { frames: n });
                    return Some(sse_text("dropped", &dropped.unwrap_or_default()));
                }
                Err(RecvError::Closed) => return None,
            },
            ev = c.events.recv() => match ev {
                Ok(e) => return Some(sse_text(e.name, &e.data)),
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            },
            _ = c.status.tick() => {
                let status = serde_json::to_string(&super::status::status(&c.state));
                return Some(sse_text("status", &status.unwrap_or_default()));
            }
        }
    }
}

fn sse_text(name: &str, data: &str) -> SseEvent {
    SseEvent::default().event(name).data(data)
}
