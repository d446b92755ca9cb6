//! `POST /api/runs/{id}/resume` (operator): the continuation of an interrupted, failed or
//! aborted run started now, as `bench runs resume` does; the audit entry names the run resumed,
//! both runs' logs who resumed it.

use super::super::audit::{Marked, Touched};
use super::super::error::{Answer, ApiResult, Created};
use super::super::extract::RunId;
use super::super::guard::Caller;
use super::super::scheduler::resuming::continuation;
use super::super::scheduler::{Cmd, Enqueued};
use super::super::state::{AppState, ask};
use axum::Extension;
use axum::extract::State;

/// `POST /api/runs/{id}/resume`.
pub(super) async fn resume(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    RunId(id): RunId,
) -> ApiResult<Marked<Created<Enqueued>>> {
    let by = who(&caller);
    let checked = continuation(&state.store, &state.loaded, id).await?;
    let answer = ask(&state, |reply| Cmd::Resume {
        checked: Box::new(checked),
        by,
        reply,
    })
    .await?;
    let touched = Touched {
        run_id: Some(id),
        ..Touched::default()
    };
    Ok(Marked(Answer(answer), touched))
}

/// Who made a request, for a run's log: the user and role, else the client's address.
pub(super) fn who(caller: &Caller) -> String {
    match (&caller.user, caller.role) {
        (Some(user), Some(role)) => format!("{user} ({role})"),
        (Some(user), None) => user.to_string(),
        _ => format!(
            "a client at {}",
            caller.remote.as_deref().unwrap_or("an unknown address")
        ),
    }
}
