//! The shared bench: the plant, both register images, the clock, and the Modbus device services.
//!
//! One `std::sync::Mutex<Core>` holds the plant and the images; it is taken for microseconds by
//! the physics thread (step, publish) and by each request (decode, apply, encode) and never held
//! across an `.await`. In real time a dedicated thread steps the plant at `params.step_s` against
//! absolute deadlines, catching up in batches; in virtual time each request served advances the
//! plant by a fixed amount first, so a run is deterministic and as fast as the bus allows.

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
        let mut core = Core { sim, drive, sensor };
        core.publish();
        Arc::new(Bench {
            core: Mutex::new(core),
            clock,
            stop: AtomicBool::new(false),
            steps: AtomicU64::new(0),
            overruns: AtomicU64::new(0),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(PoisonError::into_inner)
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
        const WAKE_EVERY: u64 = 5;
        let h = self.lock().sim.params.step_s;
        let max_batch = (0.1 / h).ceil() as u64;
        // Wake-ups on whole and half milliseconds, where a control loop sharing this CPU
        // keeps no deadline (see the loop's grid in the daemon's control shell).
        let start = protocols::timing::after_whole_ms(Duration::ZERO);
        let mut done: u64 = 0;
        while !self.stop.load(Ordering::Relaxed) {
            let due = (start.elapsed().as_secs_f64() / h) as u64;
            let mut n = due.saturating_sub(done);
            if n > max_batch {
                self.overruns.fetch_add(1, Ordering::Relaxed);
                done = due - max_batch;
                n = max_batch;
            }
            if n > 0 {
                let mut core = self.lock();
                for _ in 0..n {
                    core.sim.step(h);
                }
                core.publish();
                drop(core);
                done += n;
                self.steps.fetch_add(n, Ordering::Relaxed);
            }
            let next = start + Duration::from_secs_f64((done + WAKE_EVERY) as f64 * h);
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            }
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
            let Core { sim, drive, sensor } = &mut *core;
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
