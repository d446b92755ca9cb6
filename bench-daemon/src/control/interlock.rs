//! The operator's safety actions on a bench, reachable without waiting in any queue: the
//! latched e-stop and the drive fault reset.
//!
//! The e-stop acts directly: with a loop running it aborts the loop through its [`Control`]
//! and waits for the loop's own safe-state confirmation; with none it opens the drive link and
//! runs the safe-state sequence itself. Either way the caller learns whether the drive was
//! confirmed disabled. Persisting the latch (and pausing the queue) is the scheduler's job,
//! told afterwards; the latch itself is an atomic the scheduler reads before it starts a run.

use super::connect::{ModbusIo, connect_drive};
use super::request::Control;
use super::safe_state::{SafeState, safe_state};
use super::stop::StopReason;
use crate::config::Loaded;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest the e-stop waits for a running loop to confirm its safe state.
const LOOP_CONFIRM_WAIT: Duration = Duration::from_secs(2);

/// What an e-stop did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EStopReport {
    /// The run that was aborted, if one was running.
    pub aborted_run: Option<i64>,
    /// The drive read back disabled.
    pub confirmed: bool,
    /// Time from the request to the confirming read \[µs\] (or to giving up).
    pub after_us: f64,
    /// The run log's line about the safe state.
    pub detail: String,
}

/// What a fault reset found and did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FaultReset {
    /// A fault was latched before.
    pub was_faulted: bool,
    /// The fault code read before the reset.
    pub fault_code: Option<u64>,
    /// The drive reads no fault now.
    pub cleared: bool,
    /// The status word read after the reset.
    pub status: Option<u64>,
}

/// Opens a link of its own to the drive and runs the safe-state sequence on it.
async fn safe_state_on_own_link(loaded: &Loaded) -> SafeState {
    let deadline = loaded.confirm_deadline(loaded.config.limits.period_s);
    match connect_drive(loaded).await {
        Ok(drive) => safe_state(&mut ModbusIo::drive_only(drive), None, deadline).await,
        Err(e) => SafeState::Unconfirmed {
            after_s: 0.0,
            what: e.to_string(),
        },
    }
}

/// A request to the e-stop worker: where to send the safe state it reached.
type SafeStateRequest = tokio::sync::oneshot::Sender<SafeState>;

/// Starts the e-stop worker: a thread and runtime of its own at the control loop's real-time
/// priority, started once and waiting, so that an e-stop with no loop neither waits for the
/// daemon's runtime, however busy its clients keep it, nor for a thread to be created. It ends
/// when the interlock is dropped.
fn start_worker(loaded: Arc<Loaded>) -> std::io::Result<std::sync::mpsc::Sender<SafeStateRequest>> {
    let (tx, rx) = std::sync::mpsc::channel::<SafeStateRequest>();
    let priority = loaded.config.realtime_priority;
    super::spawn_with_runtime("estop", priority, move |runtime| {
        while let Ok(reply) = rx.recv() {
            let _ = reply.send(runtime.block_on(safe_state_on_own_link(&loaded)));
        }
    })?;
    Ok(tx)
}

/// The running loop the interlock can reach.
#[derive(Debug)]
struct Attached {
    run_id: i64,
    control: Arc<Control>,
}

/// The bench's interlock (one per process; shared by the HTTP layer and the scheduler).
#[derive(Debug)]
pub struct Interlock {
    loaded: Arc<Loaded>,
    latched: AtomicBool,
    running: Mutex<Option<Attached>>,
    /// Serialises the interlock's own use of the drive link.
    drive: tokio::sync::Mutex<()>,
    /// The e-stop worker (`None` if its thread could not be started: the next e-stop tries
    /// again).
    worker: Mutex<Option<std::sync::mpsc::Sender<SafeStateRequest>>>,
}

impl Interlock {
    /// The interlock of the bench in `loaded`; `latched` restores a persisted e-stop.
    pub fn new(loaded: Arc<Loaded>, latched: bool) -> Interlock {
        let worker = start_worker(loaded.clone())
            .map_err(|e| tracing::warn!("the e-stop worker thread did not start: {e}"))
            .ok();
        Interlock {
            loaded,
            latched: AtomicBool::new(latched),
            running: Mutex::new(None),
            drive: tokio::sync::Mutex::new(()),
            worker: Mutex::new(worker),
        }
    }

    /// Whether the e-stop is latched (no run may start).
    pub fn is_latched(&self) -> bool {
        self.latched.load(Ordering::SeqCst)
    }

    /// Clears the latch (an operator's decision; the queue stays paused).
    pub fn reset(&self) {
        self.latched.store(false, Ordering::SeqCst);
    }

    /// A run's loop starts: the e-stop reaches it through `control`.
    pub fn attach(&self, run_id: i64, control: Arc<Control>) {
        *self.lock() = Some(Attached { run_id, control });
    }

    /// The run's loop has ended.
    pub fn detach(&self, run_id: i64) {
        let mut r = self.lock();
        if r.as_ref().is_some_and(|a| a.run_id == run_id) {
            *r = None;
        }
    }

    /// The run whose loop is attached.
    pub fn running(&self) -> Option<i64> {
        self.lock().as_ref().map(|a| a.run_id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Attached>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Latches the e-stop and brings the drive to its confirmed safe state.
    pub async fn estop(&self, reason: &str) -> EStopReport {
        let t0 = Instant::now();
        self.latched.store(true, Ordering::SeqCst);
        let attached = self.lock().as_ref().map(|a| (a.run_id, a.control.clone()));
        let (aborted_run, safe) = match attached {
            Some((run_id, control)) => {
                control.abort(StopReason::EStop(reason.to_string()));
                let safe = control.wait_safe(LOOP_CONFIRM_WAIT).await;
                (Some(run_id), safe)
            }
            None => (None, None),
        };
        // No loop, or a loop that never confirmed (it was still connecting, or is stuck):
        // the interlock makes the drive safe itself.
        let safe = match safe {
            Some(s @ SafeState::Confirmed { .. }) => s,
            _ => self.drive_safe_state().await,
        };
        EStopReport {
            aborted_run,
            confirmed: safe.confirmed_s().is_some(),
            after_us: t0.elapsed().as_secs_f64() * 1e6,
            detail: safe.log_line(&self.loaded),
        }
    }

    /// Neutral-free safe state on the interlock's own link: disable, confirm (on the e-stop
    /// worker).
    async fn drive_safe_state(&self) -> SafeState {
        let _one = self.drive.lock().await;
        let (tx, rx) = tokio::sync::oneshot::channel();
        if let Err(what) = self.send_to_worker(tx) {
            return SafeState::Unconfirmed { after_s: 0.0, what };
        }
        rx.await.unwrap_or(SafeState::Unconfirmed {
            after_s: 0.0,
            what: "the e-stop worker ended without an answer".into(),
        })
    }

    /// Hands `reply` to the e-stop worker, starting a new one if it is gone.
    fn send_to_worker(&self, mut reply: SafeStateRequest) -> Result<(), String> {
        let mut worker = self.worker.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = worker.as_ref() {
            match w.send(reply) {
                Ok(()) => return Ok(()),
                Err(std::sync::mpsc::SendError(back)) => reply = back,
            }
        }
        let fresh = start_worker(self.loaded.clone())
            .map_err(|e| format!("cannot start the e-stop thread: {e}"))?;
        fresh
            .send(reply)
            .map_err(|_| "the e-stop thread ended at once".to_string())?;
        *worker = Some(fresh);
        Ok(())
    }

    /// Clears a latched drive fault (the profile's `fault_reset` sequence), never while a run
    /// is running; the drive stays disabled.
    pub async fn fault_reset(&self) -> Result<FaultReset, String> {
        if let Some(id) = self.running() {
            return Err(format!(
                "run {id} is running: a drive fault is reset only with no run on the bench"
            ));
        }
        let _one = self.drive.lock().await;
        let mut drive = connect_drive(&self.loaded)
            .await
            .map_err(|e| e.to_string())?;
        let before = drive
            .read_feedback()
            .await
            .map_err(|e| format!("drive: {e}"))?;
        let was_faulted = before.fault == Some(true);
        if was_faulted {
            drive
                .clear_fault()
                .await
                .map_err(|e| format!("drive: fault reset: {e}"))?;
        }
        let after = drive
            .read_feedback()
            .await
            .map_err(|e| format!("drive: {e}"))?;
        Ok(FaultReset {
            was_faulted,
            fault_code: before.fault_code,
            cleared: after.fault != Some(true),
            status: after.status,
        })
    }
}
