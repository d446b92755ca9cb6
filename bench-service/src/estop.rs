//! `POST /api/estop`: stops the bench whatever the request looks like; its reset
//! (`POST /api/estop/reset`) and the operator's drive fault reset (`POST /api/faults/reset`).
//!
//! Nothing about the request may refuse an e-stop: JSON, a form, plain text or no body at all,
//! from any origin and any host name the daemon answers to (the guard lets it through; a
//! cross-site e-stop can only make the bench safer). What the body says becomes the reason;
//! who sent it (remote address, `Origin`, `Host`) is recorded beside it. The reset
//! (`POST /api/estop/reset`) keeps every guard and the token.

use super::error::{ApiError, ApiResult, errors};
use super::guard::ConnAddrs;
use super::scheduler::{Cmd, Latch};
use super::schema::{media, opaque};
use super::state::{AppState, ask};
use aide::axum::ApiRouter;
use aide::axum::routing::post_with;
use aide::openapi::{ReferenceOr, RequestBody};
use aide::transform::TransformOperation;
use axum::Json;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;
use tokio::sync::mpsc;

/// The e-stop's routes. [`estop`] alone is also what the front answers on its own thread.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route("/api/estop", post_with(estop, estop_doc))
        .api_route(
            "/api/estop/reset",
            post_with(estop_reset, |op| {
                op.summary("Clear the e-stop latch (the queue stays paused: resume with PUT /api/queue {\"paused\": false})")
            }),
        )
        .api_route(
            "/api/faults/reset",
            post_with(faults_reset, |op| {
                let op = op.summary("Clear a latched drive fault (an operator's action: no run ever clears one); refused while a run is running");
                errors(op, &[(409, "A run is running"), (502, "The drive could not be reached")])
            }),
        )
}

/// The e-stop's documentation: any body, none needed.
fn estop_doc(mut op: TransformOperation<'_>) -> TransformOperation<'_> {
    op = op.summary("E-stop, latched: needs no token, waits in no queue and is refused for nothing (any content type, body, Origin or host name); aborts the running run (or, with none, opens the drive link itself), answers once the drive reads back disabled (`safe_state.confirmed`), pauses the queue; the reason ({\"reason\"} in JSON, reason= in a form, else the body as text, at most 500 bytes) is persisted with the latch and the sender (`from`) logged");
    let form =
        schemars::json_schema!({"type": "object", "properties": {"reason": {"type": "string"}}});
    let content = [
        ("application/json", schemars::json_schema!({})),
        ("application/x-www-form-urlencoded", form),
        ("text/plain", schemars::json_schema!({"type": "string"})),
    ];
    op.inner_mut().request_body = Some(ReferenceOr::Item(RequestBody {
        description: Some("why (optional; at most 500 bytes are kept)".into()),
        content: content
            .into_iter()
            .map(|(k, s)| (k.to_string(), media(s)))
            .collect(),
        required: false,
        extensions: Default::default(),
    }));
    op
}

/// Longest reason kept \[bytes\]; a longer one is cut at a character boundary.
pub const MAX_REASON_BYTES: usize = 500;

/// Most of the body read for the reason \[bytes\]; the rest is never read.
const MAX_BODY_READ: usize = 4096;

/// Longest the e-stop waits for a body that has not arrived with its headers: a client that
/// trickles its body delays its own e-stop by this much at most.
const BODY_WAIT: Duration = Duration::from_millis(200);

/// The reason recorded when the request gives none.
pub const NO_REASON: &str = "POST /api/estop";

/// Who sent an e-stop, recorded with it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Sender {
    /// The client's address, when the connection has one.
    pub remote: Option<String>,
    /// The `Origin` header, if any (a page on another site may press the e-stop).
    pub origin: Option<String>,
    /// The `Host` header.
    pub host: Option<String>,
}

impl Sender {
    fn of(conn: Option<&ConnAddrs>, headers: &HeaderMap) -> Sender {
        let text = |name| {
            headers
                .get(name)
                .map(|v: &axum::http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into())
        };
        Sender {
            remote: conn.map(|c| c.peer.to_string()),
            origin: text(header::ORIGIN),
            host: text(header::HOST),
        }
    }

    /// One line for the run's log and the daemon's: `e-stop from 127.0.0.1:51234 (Origin ...)`.
    pub fn log_line(&self) -> String {
        let mut line = format!(
            "e-stop requested from {}",
            self.remote.as_deref().unwrap_or("an unknown address")
        );
        let extra: Vec<String> = [("Origin", &self.origin), ("Host", &self.host)]
            .into_iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {}", clean(v, 200))))
            .collect();
        if !extra.is_empty() {
            line.push_str(&format!(" ({})", extra.join(", ")));
        }
        line
    }
}

/// The e-stop's answer.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Stopped {
    /// Latched: always true.
    pub estop: bool,
    /// The queue is paused: always true.
    pub paused: bool,
    /// The run aborted, if one was running.
    pub aborted_run: Option<i64>,
    /// The drive's safe state.
    pub safe_state: SafeState,
    /// Who sent it.
    pub from: Sender,
}

opaque!(
    /// The drive's safe state after an e-stop.
    SafeState,
    {"type": "object", "properties": {
        "aborted_run": {"type": ["integer", "null"]}, "confirmed": {"type": "boolean"},
        "after_us": {"type": "number"}, "detail": {"type": "string"}}}
);

/// E-stop: no token, no queue to wait in, no check of its shape; answers once the drive is
/// confirmed disabled (or says it could not be).
pub async fn estop(State(state): State<AppState>, req: Request) -> Json<Stopped> {
    let (parts, body) = req.into_parts();
    let conn = parts.extensions.get::<ConnectInfo<ConnAddrs>>();
    let headers = parts.headers;
    let sender = Sender::of(conn.map(|c| &c.0), &headers);
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let reason = reason_of(ctype, &read_some(body).await);
    let report = state.interlock.estop(&reason).await;
    tracing::warn!("e-stop ({reason}): {}", sender.log_line());
    if let Some(id) = report.aborted_run
        && let Err(e) = state.store.append_log(id, None, &sender.log_line()).await
    {
        tracing::error!("recording who sent the e-stop of run {id}: {e}");
    }
    let latched = Cmd::EStopLatched { reason };
    if let Err(mpsc::error::TrySendError::Full(cmd)) = state.cmd.try_send(latched) {
        let tx = state.cmd.clone();
        tokio::spawn(async move { tx.send(cmd).await });
    }
    Json(Stopped {
        estop: true,
        paused: true,
        aborted_run: report.aborted_run,
        safe_state: SafeState(serde_json::to_value(&report).unwrap_or(Value::Null)),
        from: sender,
    })
}

/// Clears the e-stop latch (every guard and the token apply; the queue stays paused).
async fn estop_reset(State(state): State<AppState>) -> ApiResult<Json<Latch>> {
    Ok(Json(ask(&state, |reply| Cmd::EStopReset { reply }).await?))
}

opaque!(
    /// A drive fault reset.
    FaultReset,
    {"type": "object", "properties": {
        "was_faulted": {"type": "boolean"}, "fault_code": {"type": ["integer", "null"]},
        "cleared": {"type": "boolean"}, "status": {"type": ["integer", "null"]}}}
);

/// Clears a latched drive fault (token needed; never while a run is running).
async fn faults_reset(State(state): State<AppState>) -> ApiResult<Json<FaultReset>> {
    match state.interlock.fault_reset().await {
        Ok(r) => Ok(Json(FaultReset(
            serde_json::to_value(r).unwrap_or(Value::Null),
        ))),
        Err(e) if state.interlock.running().is_some() => Err(ApiError::conflict(e)),
        Err(e) => Err(ApiError::new(StatusCode::BAD_GATEWAY, None, e)),
    }
}

/// The first [`MAX_BODY_READ`] bytes of the body that arrive within [`BODY_WAIT`]; a broken
/// or slow body gives what came.
async fn read_some(body: Body) -> Vec<u8> {
    let mut got = Vec::new();
    let mut stream = body.into_data_stream();
    let _ = tokio::time::timeout(BODY_WAIT, async {
        while got.len() < MAX_BODY_READ {
            match stream.next().await {
                Some(Ok(chunk)) => got.extend_from_slice(&chunk),
                _ => return,
            }
        }
    })
    .await;
    got.truncate(MAX_BODY_READ);
    got
}

/// The reason an e-stop body gives: `{"reason": "..."}`, a form's `reason=...`, a JSON string,
/// or else the body as text; [`NO_REASON`] for an empty one. Never an error.
pub fn reason_of(content_type: Option<&str>, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return NO_REASON.into();
    }
    let is_form = content_type.is_some_and(|c| {
        c.split(';').next().is_some_and(|m| {
            m.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
    });
    let said = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) if o.is_empty() => return NO_REASON.into(),
        Ok(Value::Object(o)) => o.get("reason").map(|r| match r {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        Ok(Value::String(s)) => Some(s),
        _ if is_form || looks_like_form(text) => form_reason(text),
        _ => None,
    };
    let reason = clean(said.as_deref().unwrap_or(text), MAX_REASON_BYTES);
    if reason.is_empty() {
        NO_REASON.into()
    } else {
        reason
    }
}

/// `reason=...` among `key=value&...` pairs (percent-decoded, `+` as space).
fn form_reason(text: &str) -> Option<String> {
    form_urlencoded::parse(text.as_bytes())
        .find(|(k, _)| k == "reason")
        .map(|(_, v)| v.into_owned())
}

/// `key=value` pairs with a `reason` key: what curl's `-d reason=...` sends.
fn looks_like_form(text: &str) -> bool {
    !text.contains(char::is_whitespace)
        && text
            .split('&')
            .any(|kv| kv.split_once('=').is_some_and(|(k, _)| k == "reason"))
}

/// `s` on one line (control characters as spaces), trimmed, at most `max` bytes.
fn clean(s: &str, max: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let t = one_line.trim();
    if t.len() <= max {
        return t.to_string();
    }
    let mut end = max;
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    t[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_of_body_gives_a_reason() {
        let json = Some("application/json");
        assert_eq!(reason_of(json, br#"{"reason": "operator"}"#), "operator");
        // What curl -d sends: a form, whatever the body looks like.
        let form = Some("application/x-www-form-urlencoded");
        assert_eq!(reason_of(form, br#"{"reason": "operator"}"#), "operator");
        assert_eq!(
            reason_of(form, b"reason=smoke+from+bearing"),
            "smoke from bearing"
        );
        assert_eq!(reason_of(None, b"reason=door%20open&x=1"), "door open");
        assert_eq!(
            reason_of(Some("text/plain"), b"hand in the bench\n"),
            "hand in the bench"
        );
        assert_eq!(reason_of(None, b""), NO_REASON);
        assert_eq!(reason_of(json, b"  \n"), NO_REASON);
        assert_eq!(reason_of(json, br#""quoted""#), "quoted");
        assert_eq!(reason_of(json, br#"{"reason": 42}"#), "42");
        // Not JSON and not a form: the text itself, broken JSON included.
        assert_eq!(reason_of(json, br#"{"reason": "#), r#"{"reason":"#);
        assert_eq!(reason_of(json, br#"{"other": 1}"#), r#"{"other": 1}"#);
    }

    #[test]
    fn reasons_are_one_line_and_bounded() {
        assert_eq!(reason_of(None, b"a\r\nb\tc"), "a  b c");
        let long = "é".repeat(400);
        let r = reason_of(None, long.as_bytes());
        assert!(r.len() <= MAX_REASON_BYTES && r.chars().all(|c| c == 'é'));
        assert_eq!(reason_of(None, &[0xff, 0xfe, b'x']), "\u{fffd}\u{fffd}x");
    }

    #[test]
    fn the_sender_is_named() {
        let mut headers = HeaderMap::new();
        headers.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        let conn = ConnAddrs {
            local: "127.0.0.1:8080".parse().unwrap(),
            peer: "10.0.0.9:51234".parse().unwrap(),
        };
        let s = Sender::of(Some(&conn), &headers);
        assert_eq!(
            s.log_line(),
            "e-stop requested from 10.0.0.9:51234 (Origin http://evil.example)"
        );
    }
}
