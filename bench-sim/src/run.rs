//! Starting and stopping the simulated bench: plant, physics thread, TCP and RTU endpoints.

use crate::bench::{Bench, BusDevices, Clock};
use crate::faults::{Faults, Faulty};
use crate::physics::{Action, Sim, SimError, SimParams, default_truth};
use crate::profiles::{self, DeviceSetup};
use crate::server::{self, LineStats, RtuPort, Silences};
use crate::timing::LineTiming;
use friction::registry::ModelSpec;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The RTU line.
#[derive(Clone, Debug, PartialEq)]
pub struct RtuConfig {
    /// Baud rate whose timing is emulated.
    pub baud: u32,
    /// Emulate the wire timing (characters, t3.5, turnaround); off = as fast as the pty goes.
    pub wire_timing: bool,
    /// Device turnaround \[s\]; `None` = the drive profile's `turnaround_ms`.
    pub turnaround_s: Option<f64>,
}

impl Default for RtuConfig {
    fn default() -> RtuConfig {
        RtuConfig {
            baud: 115_200,
            wire_timing: true,
            turnaround_s: None,
        }
    }
}

/// Everything `bench sim` can be told.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Plant parameters.
    pub params: SimParams,
    /// The true friction model.
    pub truth: ModelSpec,
    /// Real or virtual time.
    pub clock: Clock,
    /// Serve Modbus TCP on this address (port 0 = any free port).
    pub tcp: Option<SocketAddr>,
    /// Serve Modbus RTU on a pty.
    pub rtu: Option<RtuConfig>,
    /// Drive profile file; `None` = the shipped `profiles/sim-drive.toml`.
    pub drive_profile: Option<PathBuf>,
    /// Torque-sensor profile file; `None` = the shipped `profiles/sim-torque-sensor.toml`.
    pub sensor_profile: Option<PathBuf>,
    /// The drive's unit id; `None` = its profile's.
    pub drive_unit: Option<u8>,
    /// The sensor's unit id; `None` = its profile's (real devices at their factory address 1
    /// need one of the two moved, as on a shared RS-485 line).
    pub sensor_unit: Option<u8>,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            params: SimParams::default(),
            truth: default_truth(),
            clock: Clock::RealTime,
            tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            rtu: None,
            drive_profile: None,
            sensor_profile: None,
            drive_unit: None,
            sensor_unit: None,
        }
    }
}

/// Where the bench can be reached.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Endpoints {
    /// Modbus TCP address.
    pub tcp: Option<SocketAddr>,
    /// Path of the RTU pty (open it like a serial port).
    pub rtu: Option<String>,
    /// Emulated baud rate of the RTU line.
    pub baud: Option<u32>,
    /// The drive's unit id.
    pub drive_unit: u8,
    /// The torque sensor's unit id.
    pub sensor_unit: u8,
}

/// A running simulated bench.
#[derive(Debug)]
pub struct SimBench {
    bench: Arc<Bench>,
    faults: Faults,
    endpoints: Endpoints,
    line: Option<(LineTiming, Arc<LineStats>)>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<std::io::Result<()>>>,
    physics: Option<std::thread::JoinHandle<()>>,
}

impl SimBench {
    /// Builds the plant and the devices from their profiles, binds the endpoints and starts
    /// serving (and, in real time, the physics thread).
    pub async fn start(config: SimConfig) -> Result<SimBench, SimError> {
        let drive: DeviceSetup = profiles::load(config.drive_profile.as_deref(), false)?;
        let sensor: DeviceSetup = profiles::load(config.sensor_profile.as_deref(), true)?;
        // The watchdog's power-on value is `params.watchdog_s` (100 ms, as the simulated drive's
        // profile states), or the emulated drive's own.
        let mut params = config.params.clone();
        if let Some(w) = drive.watchdog_at_power_on_s {
            params.watchdog_s = w;
        }
        let sim = Sim::new(params, &config.truth)?;
        let drive_unit = config.drive_unit.unwrap_or(drive.unit);
        let sensor_unit = config.sensor_unit.unwrap_or(sensor.unit);
        if drive_unit == sensor_unit {
            return Err(SimError::Profile(format!(
                "the drive and the sensor both answer unit {drive_unit}: give one another unit id \
                 (--drive-unit or --sensor-unit)"
            )));
        }
        let turnaround = drive.turnaround_s;
        let (drive_silence, sensor_silence) = (drive.silence, sensor.silence);
        let bench = Bench::new(sim, drive.map, sensor.map, config.clock);
        let faults = Faults::new();
        let devices = BusDevices::new(bench.clone(), drive_unit, sensor_unit);
        let (stop, stop_rx) = watch::channel(false);
        let mut tasks = Vec::new();
        let mut endpoints = Endpoints {
            tcp: None,
            rtu: None,
            baud: None,
            drive_unit,
            sensor_unit,
        };
        if let Some(addr) = config.tcp {
            let listener = TcpListener::bind(addr).await.map_err(|e| SimError::Io {
                what: format!("bind tcp {addr}"),
                source: e,
            })?;
            endpoints.tcp = Some(listener.local_addr().map_err(|e| SimError::Io {
                what: "tcp local address".into(),
                source: e,
            })?);
            let svc = Faulty::new(devices.clone(), faults.clone());
            tasks.push(tokio::spawn(server::serve_tcp(
                listener,
                svc,
                faults.clone(),
                stop_rx.clone(),
            )));
        }
        let mut line = None;
        if let Some(rtu) = &config.rtu {
            let port = RtuPort::open().map_err(|e| SimError::Io {
                what: "open pty".into(),
                source: e,
            })?;
            endpoints.rtu = Some(port.path().to_string());
            endpoints.baud = Some(rtu.baud);
            let timing = LineTiming::new(rtu.baud, rtu.turnaround_s.unwrap_or(turnaround));
            let silences = Silences(
                [(drive_unit, drive_silence), (sensor_unit, sensor_silence)]
                    .into_iter()
                    .filter_map(|(unit, d)| Some((unit, d?)))
                    .collect(),
            );
            let stats = Arc::new(LineStats::default());
            let faulty = Faulty::new(devices.clone(), faults.clone());
            tasks.push(tokio::spawn(server::serve_rtu(
                port,
                faulty,
                faults.clone(),
                rtu.wire_timing.then_some((timing, silences)),
                stats.clone(),
                stop_rx.clone(),
            )));
            line = Some((timing, stats));
        }
        let physics = bench.spawn_physics();
        Ok(SimBench {
            bench,
            faults,
            endpoints,
            line,
            stop,
            tasks,
            physics,
        })
    }

    /// Where to reach it.
    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    /// The plant and devices (feedback, ground truth, actions, virtual time).
    pub fn bench(&self) -> &Arc<Bench> {
        &self.bench
    }

    /// The fault-injection switch.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The RTU line's timing and what it charged so far.
    pub fn line(&self) -> Option<(LineTiming, Arc<LineStats>)> {
        self.line.clone()
    }

    /// Trips the drive (fault injection: a drive fault).
    pub fn trip_drive(&self) {
        self.bench.apply(Action::Trip);
    }

    /// Stops serving and the physics thread; waits for both.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        self.bench.stop();
        for t in self.tasks.drain(..) {
            let _ = t.await;
        }
        if let Some(p) = self.physics.take() {
            let _ = tokio::task::spawn_blocking(move || p.join()).await;
        }
    }
}

/// Runs the simulated bench until `shutdown` completes.
pub async fn run(config: SimConfig, shutdown: impl Future<Output = ()>) -> Result<(), SimError> {
    let sim = SimBench::start(config).await?;
    shutdown.await;
    sim.shutdown().await;
    Ok(())
}
