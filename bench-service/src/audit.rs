//! Who did what: every mutating request (POST, PUT, PATCH, DELETE), allowed or refused, is
//! appended to the run store's audit log with the user and role the guard found, the client's
//! address, the method and path, the run or schedule entry it touched and the status answered;
//! `GET /api/audit` (admin) lists the log as `bench audit` does. Nothing edits or deletes an
//! entry.

use super::error::{ApiError, ApiResult};
use super::extract::Query;
use super::guard::{Caller, ConnAddrs, Refused, is_estop, mutating};
use super::schema::Records;
use super::state::AppState;
use aide::OperationOutput;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response as DocResponse, StatusCode as DocStatus};
use axum::Json;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use run_store::{AuditEntry, AuditFilter};
use serde::Deserialize;

/// What a handler adds to its answer for the audit: the run or schedule entry it touched when
/// the path does not name it (a run just created), or that it wrote the entry itself (with
/// what changed, as a tag edit does).
#[derive(Clone, Copy, Debug, Default)]
pub struct Touched {
    /// The run.
    pub run_id: Option<i64>,
    /// The schedule entry.
    pub schedule_id: Option<i64>,
    /// The handler appended the entry itself.
    pub written: bool,
}

/// An answer `T` with what it touched ([`Touched`]), documented as `T`.
#[derive(Debug)]
pub struct Marked<T>(pub T, pub Touched);

impl<T: IntoResponse> IntoResponse for Marked<T> {
    fn into_response(self) -> Response {
        let mut r = self.0.into_response();
        r.extensions_mut().insert(self.1);
        r
    }
}

impl<T: OperationOutput> OperationOutput for Marked<T> {
    type Inner = T::Inner;

    fn operation_response(ctx: &mut GenContext, op: &mut Operation) -> Option<DocResponse> {
        T::operation_response(ctx, op)
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        T::inferred_responses(ctx, op)
    }
}

/// The audit layer, outside the guard so that its refusals are recorded too. An e-stop's
/// entry is written after its answer, which never waits for the store.
pub async fn audit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if state.lab || !mutating(req.method()) {
        return next.run(req).await;
    }
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let estop = is_estop(&method, &path);
    let remote = req
        .extensions()
        .get::<ConnectInfo<ConnAddrs>>()
        .map(|c| c.0.peer.to_string());
    let answer = next.run(req).await;
    let touched = answer.extensions().get::<Touched>().copied();
    if touched.is_some_and(|t| t.written) {
        return answer;
    }
    let touched = touched.unwrap_or_default();
    let caller = answer.extensions().get::<Caller>().cloned();
    let (run_id, schedule_id) = ids_in(&path);
    let entry = AuditEntry {
        bench_id: state.loaded.config.bench_id.clone(),
        user: caller
            .as_ref()
            .and_then(|c| c.user.as_deref().map(str::to_string)),
        role: caller.and_then(|c| c.role).map(|r| r.to_string()),
        remote,
        method: method.to_string(),
        run_id: touched.run_id.or(run_id),
        schedule_id: touched.schedule_id.or(schedule_id),
        status: answer.status().as_u16().into(),
        allowed: answer.extensions().get::<Refused>().is_none(),
        path,
        ..AuditEntry::default()
    };
    let store = state.store.clone();
    let append = async move {
        if let Err(e) = store.append_audit(&entry).await {
            tracing::error!(
                "appending to the audit log ({} {}): {e}",
                entry.method,
                entry.path
            );
        }
    };
    if estop {
        tokio::spawn(append);
    } else {
        append.await;
    }
    answer
}

/// The run (`/api/runs/{id}/...`, `/api/queue/{id}`) or schedule entry (`/api/schedule/{id}`)
/// a path names.
pub fn ids_in(path: &str) -> (Option<i64>, Option<i64>) {
    let mut parts = path.trim_start_matches('/').split('/');
    let (api, kind, id) = (parts.next(), parts.next(), parts.next());
    let id = id.and_then(|t| t.parse::<i64>().ok());
    match (api, kind) {
        (Some("api"), Some("runs" | "queue")) => (id, None),
        (Some("api"), Some("schedule")) => (None, id),
        _ => (None, None),
    }
}

/// The routes.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/api/audit",
        get_with(list, |op| {
            op.summary("The audit log, newest first: every mutating request, allowed or refused, with its user, role, address, run or schedule entry and status (admin)")
        }),
    )
}

/// The filters of `GET /api/audit` (those of `bench audit`).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    /// Entries at or after (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC).
    #[schemars(pattern(super::schema::DATE_PATTERN))]
    since: Option<String>,
    /// Only this user's entries.
    #[schemars(pattern(r"^[A-Za-z0-9._-]{1,64}$"))]
    user: Option<String>,
    /// Most entries (default 1000).
    #[schemars(range(min = 1, max = 10000))]
    limit: Option<u32>,
}

async fn list(
    State(state): State<AppState>,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<Records>> {
    if let Some(n) = q.limit.filter(|n| !(1..=10_000).contains(n)) {
        return Err(ApiError::bad_request(
            Some("limit"),
            format!("limit ({n}) must be from 1 to 10000"),
        ));
    }
    if let Some(user) = &q.user {
        bench_daemon::users::check_name(user)
            .map_err(|e| ApiError::bad_request(Some("user"), format!("user: {e}")))?;
    }
    let filter = AuditFilter {
        since: q.since,
        user: q.user,
        limit: q.limit,
    };
    let entries = state
        .store
        .audit_log(&filter)
        .await
        .map_err(ApiError::store)?;
    let v = serde_json::to_value(entries).map_err(|e| ApiError::from_anyhow(e.into()))?;
    Ok(Json(Records(v)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_name_the_run_or_schedule_entry_they_touch() {
        assert_eq!(super::ids_in("/api/runs/12/stop"), (Some(12), None));
        assert_eq!(super::ids_in("/api/queue/7"), (Some(7), None));
        assert_eq!(super::ids_in("/api/schedule/3"), (None, Some(3)));
        assert_eq!(super::ids_in("/api/runs/import"), (None, None));
        assert_eq!(super::ids_in("/api/estop"), (None, None));
    }
}
