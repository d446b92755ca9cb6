//! Fault injection, switchable at run time: a [`Faulty`] wrapper around any device service, so
//! the devices themselves carry no fault flags.
//!
//! Wire faults (silence, delay, exception replies, a stuck value) act in the wrapper; disconnect
//! and corrupted CRCs act below the Modbus framing (the TCP stream wrapper and the RTU byte relay
//! in [`crate::server`]) and read the same switch. A drive fault is a device event and goes
//! through [`crate::Bench::apply`] with `Action::Trip`.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_modbus::server::Service;
use tokio_modbus::{ExceptionCode, Request, Response, SlaveRequest};

/// The future every service of this crate returns.
pub type Reply = Pin<Box<dyn Future<Output = Result<Option<Response>, ExceptionCode>> + Send>>;

/// Which faults are on. Every field defaults to off.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultSet {
    /// Unit id the silence, delay and exception faults hit; `None` = every unit.
    pub unit: Option<u8>,
    /// Send no reply at all.
    pub silence: bool,
    /// Hold every reply back by this much \[ms\] (on top of any wire timing).
    pub delay_ms: f64,
    /// Answer every request with this exception code (e.g. 4 = server device failure).
    pub exception: Option<u8>,
    /// Drop connections (TCP: close them and refuse new ones; RTU: the line goes dead).
    pub disconnect: bool,
    /// Corrupt the CRC of every reply (RTU only: done by the byte relay on the pty).
    pub corrupt_crc: bool,
    /// Corrupt the CRC of one reply in this many (RTU only; e.g. 100 = 1 % of replies), a
    /// noisy line rather than a dead one.
    pub corrupt_every: Option<u64>,
    /// Reads of this unit keep returning the last answer given before the fault was switched on.
    pub stuck_unit: Option<u8>,
}

/// Counters of injected faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounters {
    /// Requests left unanswered.
    pub silenced: u64,
    /// Replies delayed.
    pub delayed: u64,
    /// Exception replies injected.
    pub exceptions: u64,
    /// Replies whose CRC was corrupted.
    pub corrupted: u64,
    /// Connections cut or refused, and RTU chunks dropped, while disconnected.
    pub disconnects: u64,
    /// Stale replies served while stuck.
    pub stuck: u64,
}

/// The run-time switch shared by the wrapper, the stream cutter and the relay (cheap to clone).
#[derive(Clone, Debug, Default)]
pub struct Faults(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    set: Mutex<FaultSet>,
    /// Last answer per (unit, function, address, count), kept for the stuck fault.
    last: Mutex<HashMap<(u8, u8, u16, u16), Response>>,
    silenced: AtomicU64,
    delayed: AtomicU64,
    exceptions: AtomicU64,
    corrupted: AtomicU64,
    disconnects: AtomicU64,
    stuck: AtomicU64,
    /// RTU replies relayed so far (for `corrupt_every`).
    replies: AtomicU64,
}

impl Faults {
    /// No faults.
    pub fn new() -> Faults {
        Faults::default()
    }

    /// Replaces the fault set.
    pub fn set(&self, set: FaultSet) {
        *lock(&self.0.set) = set;
    }

    /// Changes the fault set in place.
    pub fn update(&self, f: impl FnOnce(&mut FaultSet)) {
        f(&mut lock(&self.0.set));
    }

    /// Switches every fault off.
    pub fn clear(&self) {
        self.set(FaultSet::default());
    }

    /// The fault set in force.
    pub fn get(&self) -> FaultSet {
        lock(&self.0.set).clone()
    }

    /// Whether the line is cut.
    pub fn disconnected(&self) -> bool {
        lock(&self.0.set).disconnect
    }

    /// Whether the next reply gets a bad CRC (every reply, or one in `corrupt_every`).
    pub fn corrupting(&self) -> bool {
        let set = lock(&self.0.set);
        if set.corrupt_crc {
            return true;
        }
        match set.corrupt_every {
            Some(n) if n > 0 => self
                .0
                .replies
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_add(1)
                .is_multiple_of(n),
            _ => false,
        }
    }

    pub(crate) fn count_corrupted(&self) {
        self.0.corrupted.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_disconnect(&self) {
        self.0.disconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// How many faults were injected so far.
    pub fn counters(&self) -> FaultCounters {
        let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
        FaultCounters {
            silenced: c(&self.0.silenced),
            delayed: c(&self.0.delayed),
            exceptions: c(&self.0.exceptions),
            corrupted: c(&self.0.corrupted),
            disconnects: c(&self.0.disconnects),
            stuck: c(&self.0.stuck),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn read_key(unit: u8, req: &Request<'_>) -> Option<(u8, u8, u16, u16)> {
    match *req {
        Request::ReadHoldingRegisters(a, n) => Some((unit, 3, a, n)),
        Request::ReadInputRegisters(a, n) => Some((unit, 4, a, n)),
        Request::ReadCoils(a, n) => Some((unit, 1, a, n)),
        Request::ReadDiscreteInputs(a, n) => Some((unit, 2, a, n)),
        _ => None,
    }
}

/// A device service with faults injected in front of it.
#[derive(Clone, Debug)]
pub struct Faulty<S> {
    inner: S,
    faults: Faults,
}

impl<S> Faulty<S> {
    /// Wraps `inner`; `faults` switches the faults at run time.
    pub fn new(inner: S, faults: Faults) -> Faulty<S> {
        Faulty { inner, faults }
    }
}

impl<S> Service for Faulty<S>
where
    S: Service<
            Request = SlaveRequest<'static>,
            Response = Option<Response>,
            Exception = ExceptionCode,
        >,
    S::Future: 'static,
{
    type Request = SlaveRequest<'static>;
    type Response = Option<Response>;
    type Exception = ExceptionCode;
    type Future = Reply;

    fn call(&self, req: SlaveRequest<'static>) -> Reply {
        let set = self.faults.get();
        let inner = &self.faults.0;
        let unit = req.slave;
        let hits = set.unit.is_none_or(|u| u == unit);
        if set.disconnect || (hits && set.silence) {
            inner.silenced.fetch_add(1, Ordering::Relaxed);
            return Box::pin(async { Ok(None) });
        }
        let key = read_key(unit, &req.request);
        if set.stuck_unit == Some(unit)
            && let Some(k) = key
            && let Some(r) = lock(&inner.last).get(&k).cloned()
        {
            inner.stuck.fetch_add(1, Ordering::Relaxed);
            return Box::pin(async move { Ok(Some(r)) });
        }
        let delay = if hits && set.delay_ms > 0.0 {
            inner.delayed.fetch_add(1, Ordering::Relaxed);
            Some(Duration::from_secs_f64(set.delay_ms * 1e-3))
        } else {
            None
        };
        let exception = if hits { set.exception } else { None };
        let fut = self.inner.call(req);
        let faults = self.faults.clone();
        Box::pin(async move {
            let out = match exception {
                Some(code) => {
                    faults.0.exceptions.fetch_add(1, Ordering::Relaxed);
                    // Still let the device see the request (it may feed its watchdog).
                    let _ = fut.await;
                    Err(ExceptionCode::new(code))
                }
                None => fut.await,
            };
            if let (Some(k), Ok(Some(r))) = (key, &out) {
                lock(&faults.0.last).insert(k, r.clone());
            }
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            out
        })
    }
}
