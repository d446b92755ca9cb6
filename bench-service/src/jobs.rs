//! The fits and comparisons in progress (`POST /api/fits`, `POST /api/comparisons`): at most
//! two at a time, and one while a run is on the bench, whose loop needs the CPU (that one's
//! Jacobians then use one thread). Each has a time limit, is listed with its progress (also
//! `fit` events on the live stream) and can be cancelled: a cancelled fit stores nothing.

use super::hub::Hub;
use friction::identify::control::{Control, Progress};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Fits and comparisons at a time with no run on the bench.
pub const WORKERS: usize = 2;

/// Longest a fit or comparison may take unless its body says (`timeout_s`) \[s\].
pub const DEFAULT_TIMEOUT_S: f64 = 600.0;
/// The longest `timeout_s` accepted \[s\].
pub const MAX_TIMEOUT_S: f64 = 86_400.0;
/// Progress events per second per fit on the live stream.
const PROGRESS_HZ: f64 = 4.0;

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// A worker slot, given back on drop.
#[derive(Debug)]
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

/// One fit or comparison in progress (`GET /api/fits`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Running {
    /// Its id (`DELETE /api/fits/{id}` cancels it).
    pub id: u64,
    /// The command line that does the same (`fit --model ...`, `compare --estimate ...`).
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
    #[schemars(with = "ProgressDoc")]
    pub progress: Progress,
    /// Cancel requested.
    pub cancelling: bool,
}

/// [`Progress`] as the document describes it.
#[derive(schemars::JsonSchema)]
#[schemars(rename = "Progress")]
#[allow(dead_code)]
struct ProgressDoc {
    /// Fits started so far (a comparison runs several).
    fit: u64,
    /// Iterations of the current fit.
    iter: u64,
    /// Its best mean squared residual so far.
    best_mse: f64,
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

    /// Registers a fit or comparison described by `what`, within `timeout_s`; `busy`: a run
    /// is on the bench. Without a free worker, says why.
    pub fn begin(
        self: &Arc<Self>,
        what: String,
        timeout_s: f64,
        busy: bool,
        hub: &Hub,
    ) -> Result<Job, String> {
        let limit = if busy { 1 } else { WORKERS };
        let slot = slot(limit).ok_or_else(|| {
            let when = if busy {
                " while a run is on the bench"
            } else {
                ""
            };
            format!("{limit} fit(s) or comparison(s) already going{when}: try again when it ends")
        })?;
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let control = self.control_of(id, timeout_s, busy, hub);
        let running = Running {
            id,
            what,
            started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            elapsed_s: 0.0,
            timeout_s,
            max_threads: control.max_threads,
            progress: Progress::default(),
            cancelling: false,
        };
        let since = std::time::Instant::now();
        let entry = Entry {
            running,
            since,
            control: control.clone(),
        };
        self.lock().insert(id, entry);
        Ok(Job {
            id,
            control,
            _slot: slot,
            registry: self.clone(),
        })
    }

    /// The control of fit `id`: its time limit, thread cap and progress (into the registry and,
    /// at most [`PROGRESS_HZ`] a second, onto the live stream as `fit` events).
    fn control_of(self: &Arc<Self>, id: u64, timeout_s: f64, busy: bool, hub: &Hub) -> Control {
        let (registry, hub) = (self.clone(), hub.clone());
        let last = Mutex::new(None::<std::time::Instant>);
        let progress = move |p: Progress| {
            registry.progress(id, p);
            let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_none_or(|t| t.elapsed().as_secs_f64() >= 1.0 / PROGRESS_HZ) {
                *last = Some(std::time::Instant::now());
                hub.event(
                    "fit",
                    &FitEvent {
                        fit_id: id,
                        progress: p,
                    },
                );
            }
        };
        Control {
            cancel: Default::default(),
            deadline: Some(
                std::time::Instant::now() + std::time::Duration::from_secs_f64(timeout_s),
            ),
            max_threads: busy.then_some(1),
            progress: Some(Arc::new(progress)),
        }
    }
}

/// A fit's progress (the live `fit` event).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FitEvent {
    /// The fit (or comparison) job, as `POST /api/fits` answered it.
    pub fit_id: u64,
    /// Where its iterations stand.
    #[schemars(with = "FitProgress")]
    pub progress: Progress,
}

crate::schema::opaque!(
    /// Where a fit's iterations stand (`friction::identify::control::Progress`).
    FitProgress,
    {"type": "object", "required": ["fit", "iter", "best_mse"], "properties": {
        "fit": {"type": "integer", "minimum": 0, "description": "fits started so far (a comparison runs several)"},
        "iter": {"type": "integer", "minimum": 0, "description": "iterations of the current fit"},
        "best_mse": {"type": ["number", "null"], "description": "its best mean squared residual so far (null: none finite yet)"}}}
);

/// A registered fit or comparison: holds its worker slot and leaves the registry when dropped.
#[derive(Debug)]
pub struct Job {
    /// Its id.
    pub id: u64,
    control: Control,
    _slot: Slot,
    registry: Arc<Registry>,
}

impl Job {
    /// Runs `work` on a blocking thread under the job's control (time limit, cancel, progress).
    pub async fn run<T: Send + 'static>(
        self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, tokio::task::JoinError> {
        tokio::task::spawn_blocking(move || {
            let control = self.control.clone();
            let _job = self;
            friction::identify::control::with(&control, work)
        })
        .await
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}
