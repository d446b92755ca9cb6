//! The loop's mailbox: what the outside (the CLI's signal handler, the scheduler, the e-stop)
//! asks of a running loop, and how the loop answers that its safe state is reached.

use super::safe_state::SafeState;
use super::stop::StopReason;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What the outside asks of a running loop.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Finish the current segment, then end the run (status `aborted`, the reason logged).
    Stop(StopReason),
    /// Safe state now (status `aborted`, the reason logged).
    Abort(StopReason),
}

/// The loop's mailbox for requests; checked once per tick (a short uncontended lock). The
/// loop answers with how its safe-state sequence ended, so an e-stop can wait for it.
#[derive(Debug)]
pub struct Control {
    request: Mutex<Option<Request>>,
    /// Wakes the loop from its sleep between ticks when an abort arrives.
    wake: Condvar,
    safe: watch::Sender<Option<SafeState>>,
}

impl Default for Control {
    fn default() -> Control {
        Control {
            request: Mutex::new(None),
            wake: Condvar::new(),
            safe: watch::channel(None).0,
        }
    }
}

impl Control {
    /// A mailbox with nothing in it.
    pub fn new() -> Control {
        Control::default()
    }

    /// The loop's safe-state sequence has ended.
    pub fn safe_reached(&self, state: SafeState) {
        self.safe.send_replace(Some(state));
    }

    /// Waits (at most `timeout`) for the loop's safe-state sequence to end.
    pub async fn wait_safe(&self, timeout: Duration) -> Option<SafeState> {
        let mut rx = self.safe.subscribe();
        let got = tokio::time::timeout(timeout, rx.wait_for(Option::is_some)).await;
        match got {
            Ok(Ok(state)) => state.clone(),
            _ => None,
        }
    }

    /// Asks for the safe state now. An abort replaces a pending stop.
    pub fn abort(&self, reason: StopReason) {
        *self.lock() = Some(Request::Abort(reason));
        self.wake.notify_all();
    }

    /// Blocks the loop's thread until `deadline` (the OS timer for the bulk, a yield loop for
    /// the last 100 µs), or until an abort arrives: an e-stop does not wait for the next tick.
    pub fn sleep_until(&self, deadline: Instant) {
        let mut request = self.lock();
        loop {
            let now = Instant::now();
            if now >= deadline || matches!(*request, Some(Request::Abort(_))) {
                return;
            }
            let left = deadline - now;
            if left > Duration::from_micros(150) {
                request = self
                    .wake
                    .wait_timeout(request, left - Duration::from_micros(100))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            } else {
                drop(request);
                std::thread::yield_now();
                request = self.lock();
            }
        }
    }

    /// Asks the loop to end after the current segment (ignored if an abort is pending).
    #[allow(dead_code)] // `bench serve`'s stop endpoint
    pub fn stop(&self, reason: StopReason) {
        let mut r = self.lock();
        if !matches!(*r, Some(Request::Abort(_))) {
            *r = Some(Request::Stop(reason));
        }
    }

    /// The pending request, if any.
    pub fn pending(&self) -> Option<Request> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Request>> {
        self.request.lock().unwrap_or_else(|e| e.into_inner())
    }
}
