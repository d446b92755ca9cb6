//! What every handler sees ([`AppState`]: cheap to clone, nothing in it mutated by handlers)
//! and the one way a handler changes anything: a [`Cmd`] sent to the scheduler with a
//! oneshot reply ([`ask`]).

use super::error::ApiError;
use super::guard::Guard;
use super::hub::Hub;
use super::jobs::Registry;
use super::pool::Pool;
use super::scheduler::{Cmd, QueueView, Reply};
use axum::http::StatusCode;
use bench_daemon::config::Loaded;
use bench_daemon::control::Interlock;
use run_store::Store;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, watch};

/// What every handler sees.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The run store (reads; fits and comparisons write through [`bench_daemon::fitting`]).
    pub store: Store,
    /// The bench configuration.
    pub loaded: Arc<Loaded>,
    /// Requests to the scheduler.
    pub cmd: mpsc::Sender<Cmd>,
    /// The e-stop and fault reset, which never wait for the scheduler.
    pub interlock: Arc<Interlock>,
    /// The scheduler's published queue.
    pub view: watch::Receiver<QueueView>,
    /// Live channels.
    pub hub: Hub,
    /// Host, Origin, token and Content-Type checks (`guard.rs`).
    pub guard: Arc<Guard>,
    /// Turns true at shutdown (ends live streams).
    pub shutdown: watch::Receiver<bool>,
    /// The database file (fits and comparisons open their own connection to it).
    pub db_path: PathBuf,
    /// Where plan checks and sweep expansion run (never on the request threads).
    pub pool: Pool,
    /// Fits and comparisons in progress.
    pub fits: Arc<Registry>,
    /// A lab view (`bench serve --lab`): read-only, no bench attached.
    pub lab: bool,
}

/// Sends the scheduler a command and waits for its reply (503 if it is shutting down).
pub async fn ask<T>(state: &AppState, make: impl FnOnce(Reply<T>) -> Cmd) -> Result<T, ApiError> {
    let (tx, rx) = oneshot::channel();
    let gone = || {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            "the scheduler is shutting down".into(),
        )
    };
    state.cmd.send(make(tx)).await.map_err(|_| gone())?;
    Ok(rx.await.map_err(|_| gone())??)
}
