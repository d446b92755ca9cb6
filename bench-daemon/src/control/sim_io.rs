//! The simulated plant ([`bench_sim::Sim`], plain data) as a bench in simulated time: the drive
//! and the torque sensor read straight from the plant, no bus in between, its simulated time as
//! the bench's clock. The simulated-time shell (`sim_shell.rs`) calls the loop's tick on it back
//! to back. A run takes as long as the CPU needs, not as long as its plan: analyses, fits on
//! recorded runs, compensation trials and sequencing are exercised this way; what is about the
//! wire, the watchdogs or the wall clock runs over Modbus in real time.

use super::io::BenchIo;
use crate::config::SignalDevice;
use bench_sim::device::statusword as sw;
use bench_sim::{Action, Feedback, Sim, Truth};
use protocols::{DriveFeedback, Error, LinkStats, Mode, TorqueReading};
use std::sync::{Arc, Mutex, PoisonError};

/// Simulated time one transaction takes by default \[s\]: a request and its reply over
/// loopback TCP.
pub const TRANSACTION_S: f64 = 50e-6;

/// The plant's ground truth at each drive transaction of a run, for tests that compare a
/// run's analysis with the physics (shared with whoever keeps a clone).
#[derive(Clone, Debug, Default)]
pub struct TruthLog(Arc<Mutex<Vec<Truth>>>);

impl TruthLog {
    /// What was logged so far, emptied.
    pub fn take(&self) -> Vec<Truth> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn push(&self, t: Truth) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(t);
    }
}

/// The simulated plant as the loop's bench.
#[derive(Debug)]
pub struct SimIo {
    sim: Sim,
    transaction_s: f64,
    truth: Option<TruthLog>,
    trip_at: Option<f64>,
    /// Temperature readings to set at plant times, in time order.
    temperatures: Vec<(f64, f64)>,
}

impl SimIo {
    /// The plant `sim`, each transaction taking [`TRANSACTION_S`] of simulated time.
    pub fn new(sim: Sim) -> SimIo {
        SimIo {
            sim,
            transaction_s: TRANSACTION_S,
            truth: None,
            trip_at: None,
            temperatures: Vec::new(),
        }
    }

    /// Each transaction takes `s` of simulated time (0: none; the plant then moves only
    /// between ticks).
    #[must_use]
    pub fn with_transaction_s(mut self, s: f64) -> SimIo {
        self.transaction_s = s.max(0.0);
        self
    }

    /// Logs the plant's ground truth at each drive transaction into `log`.
    #[must_use]
    pub fn with_truth_log(mut self, log: TruthLog) -> SimIo {
        self.truth = Some(log);
        self
    }

    /// Trips the drive once the plant's time reaches `t` \[s\] (fault injection: what follows
    /// a drive fault, e.g. a run resumed after it).
    #[must_use]
    pub fn with_trip_at(mut self, t: f64) -> SimIo {
        self.trip_at = Some(t);
        self
    }

    /// Sets the drive's temperature reading to `c` °C once the plant's time reaches `t` \[s\],
    /// for each `(t, c)` (what `bench sim` takes on its stdin, here on simulated time).
    #[must_use]
    pub fn with_temperatures(mut self, mut at: Vec<(f64, f64)>) -> SimIo {
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.temperatures = at;
        self
    }

    /// The plant.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// Applies `action` to the plant as if it came over the bus (no transaction time).
    pub fn apply(&mut self, action: Action) -> bool {
        self.sim.apply(action)
    }

    /// Lets the plant run without traffic until its time reads `t` \[s\] (no-op if it is
    /// there already).
    pub fn advance_to(&mut self, t: f64) {
        let dt = t - self.sim.time_s();
        if dt > 1e-12 {
            self.sim.advance(dt);
        }
    }

    /// One transaction's time passes.
    fn transaction(&mut self) {
        if self.transaction_s > 0.0 {
            self.sim.advance(self.transaction_s);
        }
        if self.trip_at.is_some_and(|t| self.sim.time_s() >= t) {
            self.trip_at = None;
            self.sim.apply(Action::Trip);
        }
        while let Some(&(t, c)) = self.temperatures.first()
            && self.sim.time_s() >= t
        {
            self.sim.apply(Action::SetTemperature(c));
            self.temperatures.remove(0);
        }
    }

    fn drive_feedback(&self) -> DriveFeedback {
        let fb = self.sim.feedback();
        DriveFeedback {
            position_rad: Some(fb.position_rad),
            velocity_rad_s: Some(fb.velocity_rad_s),
            torque_nm: Some(fb.motor_torque_nm),
            status: Some(u64::from(status_word(&fb))),
            enabled: Some(fb.enabled),
            fault: Some(fb.fault.is_some()),
            fault_code: Some(fb.fault.map_or(0, |c| u64::from(c.code()))),
            mode: Some(to_protocols(fb.mode)),
            heartbeat: Some(self.heartbeat()),
        }
    }

    /// A new value on every step of the plant: its time in microseconds.
    fn heartbeat(&self) -> u64 {
        (self.sim.time_s() * 1e6).round() as u64
    }

    fn request(&mut self, action: Action) -> Result<(), Error> {
        self.transaction();
        if self.sim.apply(action) {
            Ok(())
        } else {
            Err(Error::Sequence {
                sequence: format!("{action:?}"),
                step: 0,
                reason: "refused by the simulated drive (a fault is latched, or the value is \
                         not finite)"
                    .into(),
            })
        }
    }
}

/// The CiA 402 status word of the simulated drive's state.
fn status_word(fb: &Feedback) -> u16 {
    let base = sw::VOLTAGE_ENABLED | sw::REMOTE;
    if fb.fault.is_some() {
        base | sw::FAULT
    } else if fb.enabled {
        base | sw::READY | sw::SWITCHED_ON | sw::OPERATION_ENABLED | sw::QUICK_STOP
    } else {
        base | sw::READY | sw::QUICK_STOP
    }
}

fn to_protocols(m: bench_sim::Mode) -> Mode {
    match m {
        bench_sim::Mode::Torque => Mode::Torque,
        bench_sim::Mode::Velocity => Mode::Velocity,
        bench_sim::Mode::Position => Mode::Position,
    }
}

fn command(mode: Mode, value: f64) -> Action {
    match mode {
        Mode::Torque => Action::Torque(value),
        Mode::Velocity => Action::Velocity(value),
        Mode::Position => Action::Position(value),
    }
}

impl BenchIo for SimIo {
    fn clock_s(&self) -> f64 {
        self.sim.time_s()
    }

    /// The simulated drive closes velocity and position loops itself.
    fn has_mode(&self, _mode: Mode) -> bool {
        true
    }

    async fn read_feedback(&mut self) -> Result<DriveFeedback, Error> {
        self.transaction();
        Ok(self.drive_feedback())
    }

    async fn command_in(&mut self, mode: Mode, value: f64) -> Result<(), Error> {
        self.request(command(mode, value))
    }

    async fn set_mode(&mut self, mode: Mode) -> Result<(), Error> {
        let m = match mode {
            Mode::Torque => bench_sim::Mode::Torque,
            Mode::Velocity => bench_sim::Mode::Velocity,
            Mode::Position => bench_sim::Mode::Position,
        };
        self.request(Action::SetMode(m))
    }

    async fn enable(&mut self) -> Result<(), Error> {
        self.request(Action::Enable)
    }

    async fn disable(&mut self) -> Result<(), Error> {
        self.request(Action::Disable)
    }

    async fn command_and_read(&mut self, value: f64) -> Result<DriveFeedback, Error> {
        let mode = to_protocols(self.sim.feedback().mode);
        self.request(command(mode, value))?;
        if let Some(log) = &self.truth {
            log.push(self.sim.truth());
        }
        Ok(self.drive_feedback())
    }

    async fn read_sensor(&mut self) -> Option<Result<TorqueReading, Error>> {
        self.transaction();
        Some(Ok(TorqueReading {
            torque_nm: self.sim.feedback().sensor_torque_nm,
            status: Some(0),
            valid: Some(true),
            fault: Some(false),
            heartbeat: Some(self.heartbeat()),
        }))
    }

    /// The simulated drive's `temperature` (what `bench sim` serves at that register); the
    /// plant has no other signal a profile does not already give the loop.
    async fn read_signal(&mut self, device: SignalDevice, name: &str) -> Result<f64, Error> {
        self.transaction();
        match (device, name) {
            (SignalDevice::Drive, "temperature") => Ok(self.sim.feedback().temperature_c),
            _ => Err(Error::Protocol {
                context: format!("read signal '{name}'"),
                reason: "the simulated bench serves only drive.temperature besides the \
                         loop's own signals"
                    .into(),
            }),
        }
    }

    async fn link_stats(&self) -> (LinkStats, LinkStats) {
        (LinkStats::default(), LinkStats::default())
    }
}
