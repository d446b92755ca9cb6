//! `GET /metrics`: the daemon in the Prometheus text format (0.0.4), written by hand from the
//! published views — the scheduler's queue view, the running loop's status watch, the live
//! hub and the check pool — so scraping it costs a few string writes and takes no lock the
//! control loop holds.

use super::schema::{only, response};
use super::state::AppState;
use aide::OperationOutput;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response as DocResponse, StatusCode as DocStatus};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use std::fmt::Write;

/// The route.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/metrics",
        get_with(metrics, |op| {
            op.summary("Prometheus text format (0.0.4): gauges frictionbench_queue_length, queue_paused, estop_latched, bench_connected, schedule_entries, live_clients, check_workers_busy, run_active, run_id, run_time_seconds, run_overruns, run_dropped_batches, run_samples (the run ones of the running or last run); counter frictionbench_runs_stopped_total by reason_code")
        }),
    )
}

/// The exposition text.
#[derive(Debug)]
pub struct Exposition(String);

impl IntoResponse for Exposition {
    fn into_response(self) -> Response {
        let ctype = "text/plain; version=0.0.4; charset=utf-8";
        ([(header::CONTENT_TYPE, ctype)], self.0).into_response()
    }
}

impl OperationOutput for Exposition {
    type Inner = String;

    fn operation_response(_: &mut GenContext, _: &mut Operation) -> Option<DocResponse> {
        let text = schemars::json_schema!({"type": "string"});
        Some(response("exposition text", vec![("text/plain", text)]))
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        only(200, Self::operation_response(ctx, op))
    }
}

/// A metric's `# HELP` and `# TYPE` lines (`name` without the `frictionbench_` prefix).
fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP frictionbench_{name} {help}");
    let _ = writeln!(out, "# TYPE frictionbench_{name} {kind}");
}

/// One metric: `# HELP`, `# TYPE` and its value.
fn metric(out: &mut String, name: &str, kind: &str, help: &str, value: f64) {
    head(out, name, kind, help);
    let _ = writeln!(out, "frictionbench_{name} {value}");
}

/// The exposition text.
pub fn text(state: &AppState) -> String {
    // Borrowed: the view lists every waiting run.
    let view = state.view.borrow();
    let status = state.hub.status.borrow().clone();
    let running = view.running.as_ref();
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let mut out = String::new();
    let gauges: [(&str, &str, f64); 12] = [
        (
            "queue_length",
            "Runs waiting in the queue",
            view.items.len() as f64,
        ),
        (
            "queue_paused",
            "1 if the queue is paused",
            flag(view.paused),
        ),
        (
            "estop_latched",
            "1 if the e-stop is latched",
            flag(view.estop),
        ),
        (
            "bench_connected",
            "1 if the devices answered (0 after a failed run)",
            flag(view.connected),
        ),
        (
            "schedule_entries",
            "Schedule entries (any state)",
            view.schedule.len() as f64,
        ),
        (
            "live_clients",
            "Open /api/live streams",
            state.hub.events.receiver_count() as f64,
        ),
        (
            "check_workers_busy",
            "Plan-check workers in use",
            state.pool.busy() as f64,
        ),
        (
            "run_active",
            "1 while a run is running",
            flag(running.is_some()),
        ),
        (
            "run_id",
            "Id of the running run (0 if none)",
            running.map_or(0.0, |r| r.run_id as f64),
        ),
        (
            "run_time_seconds",
            "Run time of the running run",
            if running.is_some() { status.t } else { 0.0 },
        ),
        (
            "run_overruns",
            "Loop periods overrun in the running (or last) run",
            status.overruns as f64,
        ),
        (
            "run_dropped_batches",
            "Sample batches the recorder dropped in the running (or last) run",
            status.dropped_batches as f64,
        ),
    ];
    for (name, help, value) in gauges {
        metric(&mut out, name, "gauge", help, value);
    }
    metric(
        &mut out,
        "run_samples",
        "gauge",
        "Samples taken by the running (or last) run",
        status.samples as f64,
    );
    lateness(&mut out, &status.lateness);
    links(&mut out, &status);
    stops(&mut out, &view.stops);
    out
}

/// Runs that ended other than completed since the daemon started, one series per reason code
/// (every code, so a rate is defined from the first scrape).
fn stops(out: &mut String, seen: &std::collections::BTreeMap<run_store::ReasonCode, u64>) {
    head(
        out,
        "runs_stopped_total",
        "counter",
        "Runs that ended other than completed since the daemon started, by reason code",
    );
    for code in run_store::ReasonCode::ALL {
        let n = seen.get(&code).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "frictionbench_runs_stopped_total{{reason_code=\"{code}\"}} {n}"
        );
    }
}

/// The loop's wake-up lateness as a Prometheus histogram \[s\].
fn lateness(out: &mut String, h: &bench_daemon::control::Histogram) {
    head(
        out,
        "loop_period_error_seconds",
        "histogram",
        "How late the running (or last) run's ticks woke after their deadlines",
    );
    let name = "frictionbench_loop_period_error_seconds";
    for (edge, n) in bench_daemon::control::BUCKET_EDGES_US
        .iter()
        .zip(h.cumulative)
    {
        let _ = writeln!(out, "{name}_bucket{{le=\"{}\"}} {n}", edge * 1e-6);
    }
    let all = h.cumulative[h.cumulative.len() - 1];
    let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {all}");
    let _ = writeln!(out, "{name}_sum {}", h.sum_us * 1e-6);
    let _ = writeln!(out, "{name}_count {all}");
}

/// The devices' link counters of the running (or last) run, by device and counter.
fn links(out: &mut String, status: &bench_daemon::control::Status) {
    head(
        out,
        "link_events_total",
        "counter",
        "Modbus link events of the running (or last) run, by device and kind",
    );
    let name = "frictionbench_link_events_total";
    for (device, l) in [
        ("drive", &status.drive_link),
        ("sensor", &status.sensor_link),
    ] {
        for (event, n) in [
            ("requests", l.requests),
            ("ok", l.ok),
            ("exceptions", l.exceptions),
            ("timeouts", l.timeouts),
            ("crc_errors", l.crc_errors),
            ("framing_errors", l.framing_errors),
            ("transport_errors", l.transport_errors),
            ("resyncs", l.resyncs),
            ("stale_replies", l.stale_replies),
        ] {
            let _ = writeln!(out, "{name}{{device=\"{device}\",event=\"{event}\"}} {n}");
        }
    }
}

/// The handler.
async fn metrics(State(state): State<AppState>) -> Exposition {
    Exposition(text(&state))
}
