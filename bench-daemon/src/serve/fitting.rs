//! The fitting service of `POST /api/fits` and `POST /api/comparisons`: the same code as
//! `bench fit --run` and `bench compare`, run in this process on blocking threads (no child
//! processes). At most two at a time, and one while a run is on the bench, whose loop needs
//! the CPU (that one's Jacobians then use one thread); another is told to come back (503).
//! Each has a time limit (`timeout_s`, default 10 minutes), is listed by `GET /api/fits` with
//! its progress (also `fit` events on the live stream) and is cancelled by
//! `DELETE /api/fits/{id}`: a cancelled fit stores nothing.

use super::api::{ApiError, AppState};
use crate::fitting::FitError;
use axum::http::StatusCode;
use friction::identify::control::{Control, Progress};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Fits and comparisons at a time with no run on the bench.
pub const WORKERS: usize = 2;

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// A worker slot, given back on drop.
struct Slot;

impl Drop for Slot {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

fn slot(limit: usize) -> Option<Slot> {
    IN_FLIGHT
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < limit).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot)
}

/// Longest a fit or comparison may take unless its body says (`timeout_s`) \[s\].
pub const DEFAULT_TIMEOUT_S: f64 = 600.0;
/// The longest `timeout_s` accepted \[s\].
pub const MAX_TIMEOUT_S: f64 = 86_400.0;
/// Progress events per second per fit on the live stream.
const PROGRESS_HZ: f64 = 4.0;

/// One fit or comparison in progress (`GET /api/fits`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Running {
    /// Its id (`DELETE /api/fits/{id}` cancels it).
    pub id: u64,
    /// `fit` or `compare`, with the arguments that matter.
    pub what: String,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// Seconds since then.
    pub elapsed_s: f64,
    /// Its time limit \[s\].
    pub timeout_s: f64,
    /// Worker threads per Jacobian (capped to 1 when it started while a run was on the bench).
    pub max_threads: Option<usize>,
    /// Where its iterations stand.
    pub progress: Progress,
    /// Cancel requested.
    pub cancelling: bool,
}

#[derive(Debug)]
struct Entry {
    running: Running,
    since: std::time::Instant,
    control: Control,
}

/// The fits and comparisons in progress: one owner (this map), shared by the handlers.
#[derive(Debug, Default)]
pub struct Registry {
    next: AtomicU64,
    running: Mutex<BTreeMap<u64, Entry>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Entry>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every fit or comparison in progress, oldest first.
    pub fn list(&self) -> Vec<Running> {
        self.lock()
            .values()
            .map(|e| Running {
                elapsed_s: e.since.elapsed().as_secs_f64(),
                ..e.running.clone()
            })
            .collect()
    }

    /// Asks fit `id` to stop at its next iteration; false if there is none.
    pub fn cancel(&self, id: u64) -> bool {
        let mut map = self.lock();
        let Some(e) = map.get_mut(&id) else {
            return false;
        };
        e.control.cancel.store(true, Ordering::SeqCst);
        e.running.cancelling = true;
        true
    }

    fn progress(&self, id: u64, p: Progress) {
        if let Some(e) = self.lock().get_mut(&id) {
            e.running.progress = p;
        }
    }
}

/// Removes a finished fit from the registry.
struct Registered<'a>(&'a Registry, u64);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
    }
}

/// The control of fit `id`: its time limit, thread cap and progress (into the registry and,
/// at most [`PROGRESS_HZ`] a second, onto the live stream as `fit` events).
fn control_of(state: &AppState, id: u64, timeout_s: f64, busy: bool) -> Control {
    let (registry, hub) = (state.fits.clone(), state.hub.clone());
    let last = Mutex::new(None::<std::time::Instant>);
    let progress = move |p: Progress| {
        registry.progress(id, p);
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|t| t.elapsed().as_secs_f64() >= 1.0 / PROGRESS_HZ) {
            *last = Some(std::time::Instant::now());
            hub.event("fit", serde_json::json!({"fit_id": id, "progress": p}));
        }
    };
    Control {
        cancel: Default::default(),
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs_f64(timeout_s)),
        max_threads: busy.then_some(1),
        progress: Some(std::sync::Arc::new(progress)),
    }
}

/// Runs `job` (a fit or comparison on the daemon's database, described by `what`) on a
/// blocking thread within `timeout_s`. Returns its JSON and the fit's id.
pub async fn run(
    state: &AppState,
    what: String,
    timeout_s: f64,
    job: impl FnOnce() -> Result<Value, FitError> + Send + 'static,
) -> Result<(Value, u64), ApiError> {
    let busy = state.view.borrow().running.is_some();
    let limit = if busy { 1 } else { WORKERS };
    let slot = slot(limit).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            format!(
                "{limit} fit(s) or comparison(s) already going{}: try again when it ends",
                if busy {
                    " while a run is on the bench"
                } else {
                    ""
                }
            ),
        )
    })?;
    let id = state.fits.next.fetch_add(1, Ordering::SeqCst) + 1;
    let control = control_of(state, id, timeout_s, busy);
    state.fits.lock().insert(
        id,
        Entry {
            running: Running {
                id,
                what,
                started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                elapsed_s: 0.0,
                timeout_s,
                max_threads: control.max_threads,
                progress: Progress::default(),
                cancelling: false,
            },
            since: std::time::Instant::now(),
            control: control.clone(),
        },
    );
    let fits = state.fits.clone();
    let done = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let _registered = Registered(&fits, id);
        friction::identify::control::with(&control, job)
    })
    .await
    .map_err(|e| ApiError::from_anyhow(e.into()))?;
    done.map(|v| (v, id)).map_err(|e| fit_error(e, id))
}

/// A fit's error as the API answers it: 409 when cancelled, else 422 naming the body key
/// (`body` when no one field is to blame).
fn fit_error(e: FitError, id: u64) -> ApiError {
    match e {
        FitError::Cancelled => ApiError::new(
            StatusCode::CONFLICT,
            None,
            format!("fit {id} was cancelled (DELETE /api/fits/{id}): nothing was stored"),
        ),
        FitError::Field { field, detail } => {
            ApiError::unprocessable(field.key(), format!("{}{detail}", field.key()))
        }
        FitError::Input(e) => ApiError::unprocessable("body", e.0),
        FitError::Failed(e) => ApiError::unprocessable("body", format!("{e:#}")),
    }
}
