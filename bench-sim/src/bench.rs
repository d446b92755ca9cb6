//! The shared bench: the plant, both register images, the clock, and the Modbus device services.
//!
//! One `std::sync::Mutex<Core>` holds the plant and the images; it is taken for microseconds by
//! the physics thread (step, publish) and by each request (decode, apply, encode) and never held
//! across an `.await`. In real time the plant is stepped at `params.step_s` to the wall clock
//! whenever the core is taken (`Bench::lock`): a request, a reading of the feedback or the
//! truth, an injected action each sees the plant at its own instant, and a command takes
//! effect from then. A dedicated thread takes it every few milliseconds, so the steps between
//! requests are taken in small batches; it need not wake more often, since nobody can see the
//! plant without taking the core. In virtual time each request served advances the plant by a
//! fixed amount first, so a run is deterministic and as fast as the bus allows.

use crate::device::{DeviceMap, Served};
use crate::faults::Reply;
use crate::physics::{Action, Feedback, Sim, Truth};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio_modbus::server::Service;
use tokio_modbus::{ExceptionCode, Response, SlaveRequest};

/// How simulated time passes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clock {
    /// Wall-clock time: a thread steps the plant.
    RealTime,
    /// Each request addressed to a device advances the plant by this much \[s\] first.
    Virtual {
        /// Simulated time per request \[s\].
        per_request_s: f64,
    },
}

pub(crate) struct Core {
    pub(crate) sim: Sim,
    pub(crate) drive: DeviceMap,
    pub(crate) sensor: DeviceMap,
    /// In real time, once the physics thread has started: the wall clock the plant follows.
    pace: Option<Pace>,
}

/// The plant's wall clock: step `done` was due at `start + done * step_s`.
#[derive(Clone, Copy, Debug)]
struct Pace {
    start: Instant,
    done: u64,
}

impl Core {
    pub(crate) fn publish(&mut self) {
        let fb = self.sim.feedback();
        let w = self.sim.params.watchdog_s;
        self.drive.publish(&fb, w);
        self.sensor.publish(&fb, w);
    }
}

/// Physics-thread statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhysicsStats {
    /// Plant steps taken.
    pub steps: u64,
    /// Wake-ups that found the plant more than 100 ms behind (time was skipped).
    pub overruns: u64,
}

/// The bench shared by the physics thread and the device services.
pub struct Bench {
    core: Mutex<Core>,
    clock: Clock,
    stop: AtomicBool,
    steps: AtomicU64,
    overruns: AtomicU64,
}

impl std::fmt::Debug for Bench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench").field("clock", &self.clock).finish()
    }
}

impl Bench {
    pub(crate) fn new(sim: Sim, drive: DeviceMap, sensor: DeviceMap, clock: Clock) -> Arc<Bench> {
        let mut core = Core {
            sim,
            drive,
            sensor,
            pace: None,
        };
        core.publish();
        Arc::new(Bench {
            core: Mutex::new(core),
            clock,
            stop: AtomicBool::new(false),
            steps: AtomicU64::new(0),
            overruns: AtomicU64::new(0),
        })
    }

    /// The core, its plant stepped to the wall clock first (in real time).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        let mut core = self.core.lock().unwrap_or_else(PoisonError::into_inner);
        self.catch_up(&mut core);
        core
    }

    /// Steps the plant to the wall clock's due step: at most 0.1 s of steps at once; a plant
    /// further behind (its threads kept off the CPU that long) drops the rest and counts an
    /// overrun rather than racing.
    fn catch_up(&self, core: &mut Core) {
        let Some(pace) = core.pace.as_mut() else {
            return;
        };
        let h = core.sim.params.step_s;
        let max_batch = (0.1 / h).ceil() as u64;
        let due = (pace.start.elapsed().as_secs_f64() / h) as u64;
        let mut n = due.saturating_sub(pace.done);
        if n > max_batch {
            self.overruns.fetch_add(1, Ordering::Relaxed);
            pace.done = due - max_batch;
            n = max_batch;
        }
        if n == 0 {
            return;
        }
        pace.done += n;
        for _ in 0..n {
            core.sim.step(h);
        }
        core.publish();
        self.steps.fetch_add(n, Ordering::Relaxed);
    }

    /// The clock in use.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// What the devices report now.
    pub fn feedback(&self) -> Feedback {
        self.lock().sim.feedback()
    }

    /// Ground truth now.
    pub fn truth(&self) -> Truth {
        self.lock().sim.truth()
    }

    /// Applies an action as if it came over the bus (e.g. [`Action::Trip`]).
    pub fn apply(&self, action: Action) -> bool {
        let mut core = self.lock();
        let ok = core.sim.apply(action);
        core.publish();
        ok
    }

    /// Advances simulated time by `dt` \[s\] (virtual clock: tests let time pass without traffic).
    pub fn advance(&self, dt: f64) {
        let mut core = self.lock();
        core.sim.advance(dt);
        core.publish();
    }

    /// Physics-thread statistics.
    pub fn physics_stats(&self) -> PhysicsStats {
        PhysicsStats {
            steps: self.steps.load(Ordering::Relaxed),
            overruns: self.overruns.load(Ordering::Relaxed),
        }
    }

    /// Starts the real-time physics thread (no-op on a virtual clock); it stops with [`Bench::stop`].
    pub(crate) fn spawn_physics(self: &Arc<Self>) -> Option<std::thread::JoinHandle<()>> {
        if self.clock != Clock::RealTime {
            return None;
        }
        let bench = self.clone();
        std::thread::Builder::new()
            .name("bench-sim-physics".into())
            .spawn(move || bench.physics_loop())
            .ok()
    }

    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn physics_loop(&self) {
        // Every 5 ms: 50 steps at a time at the default 10 kHz, where waking every 0.5 ms took
        // 6 % of a core on an idle bench (the wake-ups, not the steps). On whole milliseconds,
        // where a control loop sharing this CPU keeps no deadline (see the loop's grid in the
        // daemon's control shell).
        const WAKE_EVERY: Duration = Duration::from_millis(5);
        let start = protocols::timing::after_whole_ms(Duration::ZERO);
        self.core
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pace = Some(Pace { start, done: 0 });
        while !self.stop.load(Ordering::Relaxed) {
            drop(self.lock());
            // The next 5 ms mark after now (a late wake-up skips the marks it missed).
            let now = Instant::now();
            let every = WAKE_EVERY.as_nanos() as u64;
            let marks = now.saturating_duration_since(start).as_nanos() as u64 / every;
            let next = start + Duration::from_nanos((marks + 1) * every);
            std::thread::sleep(next - now);
        }
    }
}

/// Both devices on one bus: dispatches by unit id, stays silent for other ids (as an RS-485
/// line does).
#[derive(Clone, Debug)]
pub struct BusDevices {
    bench: Arc<Bench>,
    drive_unit: u8,
    sensor_unit: u8,
}

impl BusDevices {
    /// The devices of `bench` at their unit ids.
    pub fn new(bench: Arc<Bench>, drive_unit: u8, sensor_unit: u8) -> BusDevices {
        BusDevices {
            bench,
            drive_unit,
            sensor_unit,
        }
    }
}

impl Service for BusDevices {
    type Request = SlaveRequest<'static>;
    type Response = Option<Response>;
    type Exception = ExceptionCode;
    type Future = Reply;

    fn call(&self, req: SlaveRequest<'static>) -> Reply {
        let which = if req.slave == self.drive_unit {
            Served::Drive
        } else if req.slave == self.sensor_unit {
            Served::Sensor
        } else {
            return Box::pin(async { Ok(None) });
        };
        let out = {
            let mut core = self.bench.lock();
            if let Clock::Virtual { per_request_s } = self.bench.clock {
                core.sim.advance(per_request_s);
                core.publish();
            }
            let Core {
                sim, drive, sensor, ..
            } = &mut *core;
            let out = match which {
                Served::Drive => drive.serve(&req.request, sim),
                Served::Sensor => sensor.serve(&req.request, sim),
            };
            core.publish();
            out
        };
        Box::pin(async move { out.map(Some) })
    }
}
