//! The real bench over Modbus: connecting the drive and the torque sensor, preparing the
//! drive's own safety (watchdog read back, torque cap), and the [`BenchIo`] they make.

use super::daq::DaqIo;
use super::io::{BenchIo, Exchanged, one_after_another};
use super::judge::DERIVED_VELOCITY_TAU_S;
use super::sensor_zero::{ZERO_READS, sample_period, zero_sensor};
use super::stop::{Device, StopReason};
use crate::config::PositionSource;
use crate::config::{Loaded, SignalDevice, WatchdogRule};
use protocols::{
    Drive, DriveFeedback, Error, Link, LinkStats, Mode, SharedLink, TorqueReading, TorqueSensor,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The devices of the bench, connected, and the wall clock.
#[derive(Debug)]
pub struct ModbusIo {
    drive: Drive,
    sensor: Option<TorqueSensor>,
    /// The DAQ that reads the torque instead of `sensor`.
    daq: Option<DaqIo>,
    epoch: Instant,
    /// The zeros measured at connect (the run records them).
    pub zeros: Vec<(&'static str, f64)>,
}

impl ModbusIo {
    /// The drive alone (no sensor read): for the safe state on a link of its own.
    pub fn drive_only(drive: Drive) -> ModbusIo {
        ModbusIo {
            drive,
            sensor: None,
            daq: None,
            epoch: Instant::now(),
            zeros: Vec::new(),
        }
    }

    /// What the DAQ's stream did so far, if there is one.
    pub fn daq_counts(&self) -> Option<super::setup::DaqStreamCounts> {
        let t = self.daq.as_ref()?.tracker();
        Some(super::setup::DaqStreamCounts {
            scans: t.scans,
            skipped_scans: t.skipped_scans,
            recoveries: t.recoveries,
            max_backlog_bytes: t.max_backlog_bytes,
        })
    }

    /// Stops the DAQ's stream, if there is one, and says what it reported.
    pub async fn stop_daq(&mut self) -> Option<String> {
        let daq = self.daq.as_mut()?;
        let stopped = daq.stop().await;
        let outputs = daq.outputs_line().await;
        let t = daq.tracker();
        Some(format!(
            "DAQ stream: {} scans, {} skipped, largest backlog {} bytes{}{outputs}",
            t.scans,
            t.skipped_scans,
            t.max_backlog_bytes,
            match stopped {
                Ok(()) => String::new(),
                Err(e) => format!("; stopping it failed: {e}"),
            }
        ))
    }

    /// The DAQ when its DAC carries the drive's command (`[daq.drive_command]`).
    fn analog(&mut self) -> Option<&mut DaqIo> {
        self.daq.as_mut().filter(|d| d.commands_drive())
    }

    /// The drive client.
    pub fn drive(&mut self) -> &mut Drive {
        &mut self.drive
    }

    /// Sets how often the links send a failed request again ([`Link::set_retries`]):
    /// [`PREPARE_RETRIES`] while the devices are prepared, none from the first tick on.
    pub async fn set_retries(&self, n: u32) {
        self.drive.io().link().lock().await.set_retries(n);
        if let Some(s) = &self.sensor {
            s.io().link().lock().await.set_retries(n);
        }
    }
}

/// Times a failed request is sent again while a device is prepared (connect, the profile's
/// sequences, the watchdog read back): one frame lost on a noisy line, or held by a busy PC,
/// should not fail a run before it starts. From the first tick on nothing is retried: the
/// loop's misses count against `[safety] comm_errors`, on time, and the stop path has its
/// own deadlines.
pub const PREPARE_RETRIES: u32 = 1;

/// Opens a link that retries as preparing a device should.
async fn open_link(cfg: protocols::LinkConfig) -> Result<SharedLink, Error> {
    let mut link = Link::open(cfg).await?;
    link.set_retries(PREPARE_RETRIES);
    Ok(link.shared())
}

impl BenchIo for ModbusIo {
    fn clock_s(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64()
    }

    /// A drive commanded through the DAQ's DAC has its analog mode only: in torque mode the
    /// daemon closes the velocity and position loops; in velocity mode the drive closes its
    /// speed loop and nothing else runs.
    fn has_mode(&self, mode: Mode) -> bool {
        if let Some(m) = self.daq.as_ref().and_then(DaqIo::analog_mode) {
            return mode == m;
        }
        let profile = self.drive.profile();
        profile.modes.contains_key(&mode) || profile.sequence(&format!("mode_{mode}")).is_some()
    }

    async fn read_feedback(&mut self) -> Result<DriveFeedback, Error> {
        let mut fb = self.drive.read_feedback().await?;
        let now = self.epoch.elapsed().as_secs_f64();
        if let Some(x) = self.daq.as_ref().and_then(|d| d.position_at(now)) {
            fb.position_rad = Some(x);
        }
        Ok(fb)
    }

    async fn command_in(&mut self, mode: Mode, value: f64) -> Result<(), Error> {
        match self.analog() {
            Some(daq) if daq.analog_mode() == Some(mode) => daq.command(value).await,
            _ => self.drive.command_in(mode, value).await,
        }
    }

    async fn set_mode(&mut self, mode: Mode) -> Result<(), Error> {
        self.drive.set_mode(mode).await
    }

    async fn enable(&mut self) -> Result<(), Error> {
        self.drive.enable().await?;
        match &mut self.daq {
            Some(daq) => daq.raise_enable().await,
            None => Ok(()),
        }
    }

    async fn disable(&mut self) -> Result<(), Error> {
        self.drive.disable().await
    }

    async fn make_outputs_safe(&mut self) -> Result<(), Error> {
        match &mut self.daq {
            Some(daq) => daq.make_outputs_safe().await,
            None => Ok(()),
        }
    }

    async fn command_and_read(&mut self, value: f64) -> Result<DriveFeedback, Error> {
        if let Some(daq) = self.analog() {
            daq.command(value).await?;
            return self.read_feedback().await;
        }
        self.drive.command_and_read(value).await
    }

    fn scan_period_s(&self) -> Option<f64> {
        self.daq.as_ref().map(DaqIo::scan_period_s)
    }

    fn take_scans(&mut self, out: &mut Vec<super::io::AlignedScan>) {
        if let Some(daq) = &mut self.daq {
            daq.take_scans(out);
        }
    }

    async fn read_sensor(&mut self) -> Option<Result<TorqueReading, Error>> {
        if let Some(daq) = &mut self.daq {
            let now = self.epoch.elapsed().as_secs_f64();
            return Some(daq.reading_at(now, now));
        }
        match &mut self.sensor {
            None => None,
            Some(s) => Some(s.read().await),
        }
    }

    /// With the sensor on a link of its own, its request goes out beside the drive's.
    async fn exchange(&mut self, value: f64) -> Exchanged {
        let epoch = self.epoch;
        let clock = || epoch.elapsed().as_secs_f64();
        if let Some(daq) = &mut self.daq {
            // The torque at the drive's stamp, the midpoint of its transaction.
            // The DAQ's watchdog is fed beside the drive's transaction.
            // With the DAC on the drive's analog input the command goes there, and the drive
            // is only read.
            let analog = daq.commands_drive();
            let sent = clock();
            let drive = async {
                let fb = match analog {
                    true => self.drive.read_feedback().await,
                    false => self.drive.command_and_read(value).await,
                };
                (fb, clock())
            };
            let outputs = async {
                if analog {
                    daq.command(value).await?;
                }
                daq.keep_alive().await
            };
            let ((drive, read), fed) = tokio::join!(drive, outputs);
            let mid = 0.5 * (sent + read);
            let sensor = fed.and_then(|()| daq.reading_at(mid, clock()));
            // With the counter as the position source, the loop takes its position at the
            // drive's stamp instead of the drive's.
            let drive = drive.map(|mut fb| {
                if let Some(x) = daq.position_at(mid) {
                    fb.position_rad = Some(x);
                }
                fb
            });
            return Exchanged {
                sent,
                read,
                drive,
                sensor: Some(sensor),
            };
        }
        let Some(sensor) = self
            .sensor
            .as_mut()
            .filter(|s| !Arc::ptr_eq(s.io().link(), self.drive.io().link()))
        else {
            return one_after_another(self, value).await;
        };
        let sent = clock();
        let drive = async {
            let fb = self.drive.command_and_read(value).await;
            (fb, clock())
        };
        let ((drive, read), sensor) = tokio::join!(drive, sensor.read());
        Exchanged {
            sent,
            read,
            drive,
            sensor: Some(sensor),
        }
    }

    /// The loop is the links' only user, so the locks are free.
    async fn read_signal(&mut self, device: SignalDevice, name: &str) -> Result<f64, Error> {
        let io = match (device, &self.sensor) {
            (SignalDevice::Drive, _) => self.drive.io(),
            (SignalDevice::Sensor, Some(sensor)) => sensor.io(),
            (SignalDevice::Sensor, None) => {
                return Err(Error::Protocol {
                    context: format!("read signal 'sensor.{name}'"),
                    reason: "no torque sensor on this link".into(),
                });
            }
        };
        Ok(io.read_signal(name).await?.value)
    }

    async fn link_stats(&self) -> (LinkStats, LinkStats) {
        let drive = self.drive.io().link().lock().await.stats();
        let sensor = match &self.sensor {
            Some(s) => s.io().link().lock().await.stats(),
            None => drive,
        };
        (drive, sensor)
    }
}

/// Opens the drive's link and client.
pub async fn connect_drive(loaded: &Loaded) -> Result<Drive, StopReason> {
    let (dprof, _) = &loaded.drive;
    let dlink: SharedLink = open_link(Loaded::link_config(&loaded.config.drive, dprof))
        .await
        .map_err(|e| StopReason::NoConnection {
            device: Device::Drive,
            detail: e.to_string(),
        })?;
    let mut drive = Drive::new(dprof.clone(), dlink).map_err(|e| setup(e.to_string()))?;
    if let Some(u) = loaded.config.drive.unit {
        drive = drive.with_unit(u);
    }
    Ok(drive)
}

/// A preparation step that failed on a rule, not on the link.
fn setup(text: String) -> StopReason {
    StopReason::Setup { link: false, text }
}

/// A drive transaction of the preparation that failed: `drive: <what>: <error>`.
fn drive_step(what: &str) -> impl FnOnce(Error) -> StopReason + '_ {
    move |e| StopReason::Setup {
        link: e.is_link_error(),
        text: if what.is_empty() {
            format!("drive: {e}")
        } else {
            format!("drive: {what}: {e}")
        },
    }
}

/// Connects both devices and prepares the drive's own safety (watchdog read back, torque
/// cap); what it checked and read back goes into `notes` (the run log). A latched drive
/// fault is not cleared: that is an operator's decision.
pub async fn connect(
    loaded: &Loaded,
    notes: &mut Vec<(Option<f64>, String)>,
) -> Result<ModbusIo, StopReason> {
    let mut drive = connect_drive(loaded).await?;
    let mut sensor = connect_sensor(loaded, &drive).await?;
    let fb = drive.read_feedback().await.map_err(drive_step(""))?;
    if fb.fault == Some(true) {
        return Err(StopReason::LatchedDriveFault {
            code: fb.fault_code.unwrap_or(0),
        });
    }
    if drive.profile().connect_sequence().is_some() {
        drive
            .io()
            .run_sequence("connect")
            .await
            .map_err(drive_step("connect settings"))?;
        notes.push((None, "drive connect settings written and read back".into()));
    }
    if let Ok(checked) = loaded.check_profile() {
        notes.extend(checked.into_iter().map(|n| (None, n)));
    }
    watchdog(&mut drive, loaded, notes).await?;
    // The drive's own loops saturate inside the bench's torque limit: a velocity or position
    // loop asking for more is clamped by the drive, not aborted as a breach.
    if drive.profile().role(protocols::Role::MaxTorque).is_some() {
        drive
            .set_max_torque(loaded.config.limits.torque_nm)
            .await
            .map_err(drive_step("setting the maximum torque"))?;
    }
    if drive
        .profile()
        .role(protocols::Role::VelocityFeedback)
        .is_none()
    {
        notes.push((
            None,
            format!(
                "the drive profile has no velocity feedback: velocity derived from position \
                 (backward difference, first-order low-pass τ = {} ms)",
                DERIVED_VELOCITY_TAU_S * 1e3
            ),
        ));
    }
    let velocity_limit = loaded.config.limits.velocity_rad_s;
    let fb = match (&sensor, &loaded.config.daq) {
        (None, None) => fb,
        _ => settled(&mut drive, fb, velocity_limit).await?,
    };
    let (daq, daq_zero) = connect_daq(loaded, &fb, notes).await?;
    let mut zeros: Vec<_> = daq_zero
        .map(|z| (crate::calibration::DAQ_SENSOR, z))
        .into_iter()
        .collect();
    if let Some(s) = &mut sensor {
        super::daq::check_at_rest(&fb, velocity_limit, "torque sensor zero")
            .map_err(|text| StopReason::Setup { link: false, text })?;
        let reads = loaded.config.sensor.as_ref().and_then(|c| c.zero_reads);
        let period = sample_period(s.profile(), loaded.config.limits.period_s);
        let force = loaded.config.geometry.force();
        let (zero, said) = zero_sensor(s, force, reads.unwrap_or(ZERO_READS), period).await?;
        notes.push((None, said));
        zeros.push((crate::calibration::MODBUS_SENSOR, zero));
    }
    Ok(ModbusIo {
        drive,
        sensor,
        daq,
        epoch: Instant::now(),
        zeros,
    })
}

/// How long a zero waits for the shaft to come to rest, and how often it reads the drive
/// meanwhile.
const SETTLE: Duration = Duration::from_secs(2);
const SETTLE_POLL: Duration = Duration::from_millis(20);

/// The drive's feedback for a zero, read again while the shaft still turns, for up to
/// [`SETTLE`]: after a stop the shaft settles for a moment (its presliding spring relaxes by
/// a count or so, and the drive's filtered speed reads a few hundredths of a rad/s for
/// milliseconds after each count), which is no reason to refuse the next run. A shaft that
/// still turns then, or an enabled drive, is refused by the zero's own check with what it read.
async fn settled(
    drive: &mut Drive,
    mut fb: DriveFeedback,
    velocity_limit: f64,
) -> Result<DriveFeedback, StopReason> {
    let deadline = Instant::now() + SETTLE;
    let settling = |fb: &DriveFeedback| {
        fb.enabled != Some(true) && super::daq::turning(fb, velocity_limit).is_some()
    };
    while settling(&fb) && Instant::now() < deadline {
        tokio::time::sleep(SETTLE_POLL).await;
        fb = drive
            .read_feedback()
            .await
            .map_err(drive_step("reading the shaft at rest"))?;
    }
    Ok(fb)
}

/// Connects the DAQ and starts its stream, then zeroes the torque input with the drive
/// disabled and the shaft at rest (`fb`, read just before); both go into the run's log, and
/// the zero measured \[V\] is returned for the run's record.
async fn connect_daq(
    loaded: &Loaded,
    fb: &DriveFeedback,
    notes: &mut Vec<(Option<f64>, String)>,
) -> Result<(Option<DaqIo>, Option<f64>), StopReason> {
    let (Some(cfg), Some((profile, _))) = (&loaded.config.daq, &loaded.daq) else {
        return Ok((None, None));
    };
    let daq_step = |what: &'static str| {
        move |e: Error| StopReason::Setup {
            link: e.is_link_error(),
            text: format!("DAQ: {what}: {e}"),
        }
    };
    let (mut daq, said) = DaqIo::connect(cfg, profile.clone())
        .await
        .map_err(daq_step("connecting and starting the stream"))?;
    notes.extend(said.into_iter().map(|n| (None, n)));
    if let (PositionSource::Counter { .. }, Some(x)) = (&cfg.position, fb.position_rad) {
        let count = daq
            .read_counter()
            .await
            .map_err(daq_step("reading the counter"))?;
        notes.extend(daq.align_counter(x, count).map(|n| (None, n)));
    }
    if cfg.zero_scans == 0 {
        notes.push((
            None,
            format!(
                "DAQ torque zero not measured (zero_scans = 0): the certificate's {} V",
                cfg.measured_torque.offset_v
            ),
        ));
        return Ok((Some(daq), None));
    }
    super::daq::check_at_rest(fb, loaded.config.limits.velocity_rad_s, "DAQ zero")
        .map_err(|text| StopReason::Setup { link: false, text })?;
    let (zero, sd) = daq
        .zero(cfg.zero_scans)
        .await
        .map_err(daq_step("measuring the zero"))?;
    notes.push((
        None,
        format!(
            "DAQ torque zero {zero:.6} V (mean of {} scans, standard deviation {sd:.6} V; drive \
             disabled, at rest; the certificate's offset {} V)",
            cfg.zero_scans, cfg.measured_torque.offset_v
        ),
    ));
    Ok((Some(daq), Some(zero)))
}

/// The torque sensor's client: on the drive's link when it has no endpoint of its own or the
/// drive's.
async fn connect_sensor(
    loaded: &Loaded,
    drive: &Drive,
) -> Result<Option<TorqueSensor>, StopReason> {
    let cfg = &loaded.config;
    let (Some(sc), Some((sprof, _))) = (&cfg.sensor, &loaded.sensor) else {
        return Ok(None);
    };
    let dlink_cfg = Loaded::link_config(&cfg.drive, &loaded.drive.0);
    // A second connection to the drive's endpoint only over TCP: a serial line has one master.
    let own = sc.own_connection && matches!(dlink_cfg.endpoint, protocols::Endpoint::Tcp(_));
    let same_endpoint = Loaded::link_config(sc, sprof).endpoint == dlink_cfg.endpoint;
    let link = if sc.tcp.is_none() && sc.serial.is_none() || (same_endpoint && !own) {
        drive.io().link().clone()
    } else {
        open_link(Loaded::link_config(sc, sprof))
            .await
            .map_err(|e| StopReason::NoConnection {
                device: Device::TorqueSensor,
                detail: e.to_string(),
            })?
    };
    let mut s = TorqueSensor::new(sprof.clone(), link).map_err(|e| setup(e.to_string()))?;
    if let Some(u) = sc.unit {
        s = s.with_unit(u);
    }
    Ok(Some(s))
}

/// Sets the drive's communication watchdog and reads it back, or notes why it is waived.
async fn watchdog(
    drive: &mut Drive,
    loaded: &Loaded,
    notes: &mut Vec<(Option<f64>, String)>,
) -> Result<(), StopReason> {
    match loaded.watchdog_rule() {
        WatchdogRule::Set(timeout_s) => {
            drive
                .set_watchdog(Duration::from_secs_f64(timeout_s))
                .await
                .map_err(drive_step("setting the watchdog"))?;
            let read = drive
                .read_watchdog()
                .await
                .map_err(drive_step("reading the watchdog back"))?;
            if (read - timeout_s).abs() > 1e-3 * timeout_s.max(1.0) {
                return Err(setup(format!(
                    "drive: the communication watchdog reads back {read} s after writing \
                     {timeout_s} s: refusing to run without a working backstop"
                )));
            }
            notes.push((
                None,
                format!("drive communication watchdog {read} s (read back)"),
            ));
        }
        WatchdogRule::Waived(why) => notes.push((None, why)),
    }
    Ok(())
}
