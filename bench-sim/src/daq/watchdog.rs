//! The T7's watchdog: with `WATCHDOG_ENABLE_DEFAULT` = 1, `WATCHDOG_TIMEOUT_S_DEFAULT` seconds
//! of wall-clock time without a Modbus request set DAC0 to `WATCHDOG_DAC0_DEFAULT` (when
//! `WATCHDOG_DAC0_ENABLE_DEFAULT`) and the lines of `WATCHDOG_DIO_DIRECTION_DEFAULT` to outputs
//! at `WATCHDOG_DIO_STATE_DEFAULT` (when `WATCHDOG_DIO_ENABLE_DEFAULT`), with the same effect
//! on the drive as a client's write. It fires once per silence; the next request re-arms it.
//! Wall-clock time, as the device's: a client that is gone sends nothing that could advance a
//! virtual clock.

use super::DaqShared;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};

/// When the last request came, and whether the watchdog fired since.
#[derive(Debug)]
pub(crate) struct Feed {
    last: Mutex<(Instant, bool)>,
    fed: Notify,
}

impl Default for Feed {
    fn default() -> Self {
        Feed {
            last: Mutex::new((Instant::now(), false)),
            fed: Notify::new(),
        }
    }
}

impl Feed {
    /// A request arrived.
    pub(crate) fn feed(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = (Instant::now(), false);
        self.fed.notify_one();
    }

    fn last(&self) -> (Instant, bool) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fired(&self) {
        self.last.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
    }
}

/// Times the watchdog out until `stop`.
pub(crate) async fn run(shared: Arc<DaqShared>, mut stop: watch::Receiver<bool>) {
    loop {
        let (last, fired) = shared.feed.last();
        let timeout = armed(&shared).filter(|_| !fired);
        let wake = async {
            match timeout {
                Some(t) => tokio::time::sleep_until((last + t).into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = stop.changed() => return,
            () = shared.feed.fed.notified() => {}
            () = wake => {
                if shared.feed.last().0 == last {
                    shared.feed.fired();
                    fire(&shared);
                }
            }
        }
    }
}

/// The timeout, when the watchdog is enabled.
fn armed(s: &DaqShared) -> Option<Duration> {
    let image = s.lock();
    let reg = |name| image.stored(&s.profile, name, 0);
    (reg("WATCHDOG_ENABLE_DEFAULT") == 1)
        .then(|| Duration::from_secs(u64::from(reg("WATCHDOG_TIMEOUT_S_DEFAULT").max(1))))
}

/// Applies the defaults, as writes with their side effects.
fn fire(s: &Arc<DaqShared>) {
    let mut writes = Vec::new();
    {
        let image = s.lock();
        let reg = |name| image.stored(&s.profile, name, 0);
        if reg("WATCHDOG_DAC0_ENABLE_DEFAULT") == 1 {
            writes.push(("DAC#", reg("WATCHDOG_DAC0_DEFAULT")));
        }
        if reg("WATCHDOG_DIO_ENABLE_DEFAULT") == 1 {
            let lines = reg("WATCHDOG_DIO_DIRECTION_DEFAULT");
            let state = (reg("DIO_STATE") & !lines) | (reg("WATCHDOG_DIO_STATE_DEFAULT") & lines);
            writes.push(("DIO_DIRECTION", reg("DIO_DIRECTION") | lines));
            writes.push(("DIO_STATE", state));
        }
    }
    for (name, raw) in writes {
        if let Ok(at) = s.profile.address(name, 0) {
            let stored = s.lock().write(&s.profile, at, raw);
            if stored.is_ok() {
                let _ = s.after_write(name, raw);
            }
        }
    }
}
