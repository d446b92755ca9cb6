//! `[queue] auto_resume = true`: on restart, the daemon resumes the run its own death
//! interrupted ([`bench_daemon::resume::auto`]) once the drive reads healthy and disabled, then lets
//! the queue go on if an operator had not paused it. Without the setting, or when the drive
//! does not read so, the queue stays paused for an operator, as after any unclean stop.

use super::scheduler::resuming::continuation;
use super::scheduler::{Cmd, OnFailure, SchedulerError};
use bench_daemon::config::Loaded;
use bench_daemon::resume::auto::drive_ready;
use run_store::Store;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Resumes the newest of `interrupted` (the runs found `running` at start); `paused_before`:
/// an operator had paused the queue before the daemon died (it then stays paused).
pub async fn resume_interrupted(
    store: Store,
    loaded: Arc<Loaded>,
    cmd: mpsc::Sender<Cmd>,
    interrupted: Vec<i64>,
    paused_before: bool,
) {
    let Some(&id) = interrupted.iter().max() else {
        return;
    };
    let why = match drive_ready(&loaded).await {
        Ok(read) => read,
        Err(why) => {
            let line = format!("not resumed automatically: {why}; the queue stays paused");
            tracing::warn!("run {id}: {line}");
            let _ = store.append_note(id, None, &line).await;
            return;
        }
    };
    let by = format!(
        "the daemon on restart ([queue] auto_resume; run {id} was interrupted by the daemon's death; {why})"
    );
    let store = &store;
    let not_resumed = |e: SchedulerError| async move {
        let line = format!("not resumed automatically: {e}; the queue stays paused");
        tracing::warn!("run {id}: {line}");
        let _ = store.append_note(id, None, &line).await;
    };
    let checked = match continuation(store, &loaded, id).await {
        Ok(checked) => checked,
        Err(e) => return not_resumed(e).await,
    };
    let (tx, rx) = oneshot::channel();
    let sent = cmd.send(Cmd::Resume {
        checked: Box::new(checked),
        by,
        reply: tx,
    });
    match (sent.await, rx.await) {
        (Ok(()), Ok(Ok(answer))) => {
            tracing::info!("run {id} resumed automatically as run {}", answer.id);
        }
        (_, Ok(Err(e))) => return not_resumed(e).await,
        _ => return,
    }
    if !paused_before {
        let (tx, rx) = oneshot::channel();
        let edit = Cmd::Edit {
            order: None,
            paused: Some(false),
            on_failure: None::<OnFailure>,
            reply: tx,
        };
        if cmd.send(edit).await.is_ok() {
            let _ = rx.await;
        }
    }
}
