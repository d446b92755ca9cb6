//! What the control loop asks of a bench: a handful of drive and sensor transactions and the
//! bench's clock. The loop ([`super::tick`], [`super::safe_state`]) is written once against
//! this trait; the real bench answers over Modbus in real time ([`super::connect::ModbusIo`]),
//! the simulated plant in simulated time ([`super::sim_io::SimIo`]).

use crate::config::SignalDevice;
use protocols::{DriveFeedback, Error, LinkStats, Mode, TorqueReading};

/// What one tick's [`BenchIo::exchange`] brought back.
#[derive(Debug)]
pub struct Exchanged {
    /// The bench's clock when the drive's request left \[s\].
    pub sent: f64,
    /// The bench's clock when the drive's reply was in \[s\].
    pub read: f64,
    /// The drive's feedback.
    pub drive: Result<DriveFeedback, Error>,
    /// The sensor's reading; `None` when the bench has none.
    pub sensor: Option<Result<TorqueReading, Error>>,
}

/// One scan of a DAQ's hardware-timed stream, ready to record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlignedScan {
    /// The DAQ's scan clock mapped onto the bench's \[s\].
    pub t_s: f64,
    /// The DAQ's scan clock \[s\]: scan index × scan period from the stream's start.
    pub t_daq_s: f64,
    /// The torque \[N m\], zeroed and scaled.
    pub torque_nm: f64,
    /// The quadrature counter's position \[rad\] in the drive's frame, when it is the
    /// position source.
    pub position_rad: Option<f64>,
}

/// The drive and torque sensor of one bench, and its clock.
///
/// The loop runs on one thread with a runtime of its own, so the futures need not be `Send`.
#[allow(async_fn_in_trait)]
pub trait BenchIo {
    /// The bench's clock \[s\]: monotonic, from an arbitrary origin (the wall clock over
    /// Modbus, the plant's time on the simulated bench). Samples are stamped with it.
    fn clock_s(&self) -> f64;

    /// Whether the drive closes a loop in `mode` itself (else the daemon closes it in torque
    /// mode).
    fn has_mode(&self, mode: Mode) -> bool;

    /// Reads the drive's feedback.
    async fn read_feedback(&mut self) -> Result<DriveFeedback, Error>;

    /// Writes `value` into the command of `mode` (whatever mode is active).
    async fn command_in(&mut self, mode: Mode, value: f64) -> Result<(), Error>;

    /// Switches the drive to `mode`.
    async fn set_mode(&mut self, mode: Mode) -> Result<(), Error>;

    /// Powers the drive on (operation enabled).
    async fn enable(&mut self) -> Result<(), Error>;

    /// Powers the drive off.
    async fn disable(&mut self) -> Result<(), Error>;

    /// Sets the outputs of a DAQ that command the drive (`[daq.drive_command]`) to zero torque
    /// and the enable line low, read back; a bench without them has nothing to do.
    async fn make_outputs_safe(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Writes `value` as the command of the active mode and reads the feedback, in one
    /// transaction where the device allows. A value the profile refuses is an
    /// [`Error::is_limit`] error: nothing was written.
    async fn command_and_read(&mut self, value: f64) -> Result<DriveFeedback, Error>;

    /// Reads the torque sensor; `None` when the bench has none.
    async fn read_sensor(&mut self) -> Option<Result<TorqueReading, Error>>;

    /// A tick's transactions: [`Self::command_and_read`] with `value`, then the sensor. A bench
    /// whose sensor has a link of its own reads it while the drive answers.
    async fn exchange(&mut self, value: f64) -> Exchanged {
        one_after_another(self, value).await
    }

    /// The scan period of the bench's DAQ stream \[s\]; `None` without one (then each tick is
    /// one recorded sample).
    fn scan_period_s(&self) -> Option<f64> {
        None
    }

    /// Moves the stream's scans received since the last call into `out` (nothing without a
    /// stream).
    fn take_scans(&mut self, _out: &mut Vec<AlignedScan>) {}

    /// Reads the signal `name` of a device's profile in its SI unit (°C for a temperature):
    /// what `[[suspend]]` conditions watch.
    async fn read_signal(&mut self, device: SignalDevice, name: &str) -> Result<f64, Error>;

    /// The drive's and the sensor's link counters (the sensor's are the drive's when they share
    /// one link, or when there is no link at all).
    async fn link_stats(&self) -> (LinkStats, LinkStats);
}

/// [`BenchIo::exchange`] on one link: the drive's transaction, then the sensor's.
pub async fn one_after_another(io: &mut (impl BenchIo + ?Sized), value: f64) -> Exchanged {
    let sent = io.clock_s();
    let drive = io.command_and_read(value).await;
    let read = io.clock_s();
    let sensor = io.read_sensor().await;
    Exchanged {
        sent,
        read,
        drive,
        sensor,
    }
}
