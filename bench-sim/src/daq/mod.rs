//! A LabJack T7 emulated in front of the simulated bench, over real Modbus TCP: the torque
//! amplifier's ±10 V output on an analog input (with its noise), the encoder on the quadrature
//! counter, DAC0 as the drive's analog torque or speed command when the drive is in analog mode, and the
//! hardware-timed stream sending spontaneous packets on its own port. Every address comes from
//! the DAQ profile (`profiles/labjack-t7.toml`), as the drives' and sensors' come from theirs.
//!
//! ```text
//! DaqProfile ──► DaqImage (stored registers, AIN ← sensor torque, counter ← encoder)
//!   ──► DaqService (FC03/04/06/16, Modbus Feedback 76) ──► serve_tcp
//!   STREAM_ENABLE = 1 ──► stream thread (scan clock, device buffer, auto-recovery) ──► port
//! ```

mod image;
mod service;
mod stream;
mod watchdog;

use crate::bench::Bench;
use crate::faults::Faults;
use crate::physics::Action;
use image::DaqImage;
use protocols::Mode;
use protocols::daq::DaqProfile;
pub use service::DaqService;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use stream::StreamCtl;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// The shipped T7 profile (`profiles/labjack-t7.toml`).
pub const LABJACK_T7_TOML: &str = include_str!("../../../profiles/labjack-t7.toml");

/// The shipped T7 profile, parsed.
pub fn shipped_t7() -> Result<DaqProfile, protocols::Error> {
    DaqProfile::from_toml_str(LABJACK_T7_TOML, "profiles/labjack-t7.toml")
}

/// The drive's analog command input wired to DAC0: in its analog torque mode torque =
/// (volts − `center_v`) × `nm_per_v`, in its analog velocity mode the speed setpoint =
/// (volts − `center_v`) × `rad_s_per_v` (the drive closes its own speed loop on it).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalogCommand {
    /// DAC voltage of zero torque or zero speed \[V\] (DAC0 is unipolar).
    pub center_v: f64,
    /// What the drive's analog input commands: `torque` (default) or `velocity`.
    #[serde(default = "torque")]
    pub mode: Mode,
    /// Torque per volt \[N m/V\] (torque mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nm_per_v: Option<f64>,
    /// Speed per volt \[rad/s per V\] (velocity mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rad_s_per_v: Option<f64>,
    /// The digital line wired to the drive's enable input (high = enabled): its writes
    /// enable and disable the drive. `None`: the enable stays on Modbus.
    #[serde(default)]
    pub enable_dio: Option<u16>,
}

fn torque() -> Mode {
    Mode::Torque
}

impl AnalogCommand {
    /// The drive's analog torque input, `nm_per_v` N m per volt around `center_v`.
    pub fn torque(center_v: f64, nm_per_v: f64, enable_dio: Option<u16>) -> AnalogCommand {
        AnalogCommand {
            center_v,
            mode: Mode::Torque,
            nm_per_v: Some(nm_per_v),
            rad_s_per_v: None,
            enable_dio,
        }
    }

    /// The drive's analog speed input, `rad_s_per_v` rad/s per volt around `center_v`.
    pub fn velocity(center_v: f64, rad_s_per_v: f64, enable_dio: Option<u16>) -> AnalogCommand {
        AnalogCommand {
            center_v,
            mode: Mode::Velocity,
            nm_per_v: None,
            rad_s_per_v: Some(rad_s_per_v),
            enable_dio,
        }
    }

    /// The wiring is whole: the scale of its mode given and finite, the other absent.
    pub fn check(&self) -> Result<(), String> {
        let (scale, other, names) = match self.mode {
            Mode::Torque => (self.nm_per_v, self.rad_s_per_v, ("nm_per_v", "rad_s_per_v")),
            Mode::Velocity => (self.rad_s_per_v, self.nm_per_v, ("rad_s_per_v", "nm_per_v")),
            Mode::Position => {
                return Err("analog_command.mode = \"position\": torque or velocity".into());
            }
        };
        let mode = self.mode.name();
        match (scale, other) {
            (Some(k), None) if k.is_finite() && k != 0.0 && self.center_v.is_finite() => Ok(()),
            (_, Some(_)) => Err(format!(
                "analog_command.{}: not with mode = \"{mode}\" (its scale is {})",
                names.1, names.0
            )),
            (None, None) => Err(format!(
                "analog_command.{}: required with mode = \"{mode}\"",
                names.0
            )),
            _ => Err(format!(
                "analog_command: center_v = {} and {} must be finite, {} not 0",
                self.center_v, names.0, names.0
            )),
        }
    }

    /// What DAC0 at `volts` asks of the drive.
    pub fn action(&self, volts: f64) -> Option<Action> {
        let d = volts - self.center_v;
        match self.mode {
            Mode::Torque => self.nm_per_v.map(|k| Action::Torque(d * k)),
            Mode::Velocity => self.rad_s_per_v.map(|k| Action::Velocity(d * k)),
            Mode::Position => None,
        }
    }
}

/// What is wired to the emulated DAQ.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DaqSimOptions {
    /// The AIN the torque amplifier drives.
    pub torque_ain: u16,
    /// The amplifier's scale \[N m per V\] (±10 V ↔ ±`10 × nm_per_v` N m).
    pub nm_per_v: f64,
    /// The amplifier's output at zero torque \[V\].
    pub offset_v: f64,
    /// The amplifier's noise, standard deviation \[V\] (on top of the sensor's own).
    pub noise_v: f64,
    /// Noise seed.
    pub seed: u64,
    /// DAC0 commands the drive's torque or speed (analog mode); `None`: the drive stays on
    /// Modbus.
    pub analog_command: Option<AnalogCommand>,
}

impl Default for DaqSimOptions {
    fn default() -> Self {
        DaqSimOptions {
            torque_ain: 0,
            nm_per_v: 0.5,
            offset_v: 0.0,
            noise_v: 0.001,
            seed: 1,
            analog_command: None,
        }
    }
}

/// What the service and the stream thread share.
#[derive(Debug)]
pub(crate) struct DaqShared {
    pub(crate) profile: DaqProfile,
    pub(crate) bench: Arc<Bench>,
    pub(crate) options: DaqSimOptions,
    image: Mutex<DaqImage>,
    stream: StreamCtl,
    pub(crate) feed: watchdog::Feed,
}

impl DaqShared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, DaqImage> {
        self.image.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Side effects of a write: the stream starts and stops, DAC0 commands the drive.
    pub(crate) fn after_write(
        self: &Arc<Self>,
        name: &str,
        raw: u32,
    ) -> Result<(), tokio_modbus::ExceptionCode> {
        match name {
            "STREAM_ENABLE" if raw == 1 => stream::start(self),
            "STREAM_ENABLE" => {
                self.stream.stop();
                Ok(())
            }
            "DAC#" => {
                if let Some(a) = self.options.analog_command {
                    let dac0 = self.profile.address("DAC#", 0).ok();
                    let v = f64::from(f32::from_bits(self.lock().stored(&self.profile, "DAC#", 0)));
                    if let (Some(_), Some(action)) = (dac0, a.action(v)) {
                        self.bench.apply(action);
                    }
                }
                Ok(())
            }
            "DIO_STATE" => {
                if let Some(line) = self.options.analog_command.and_then(|a| a.enable_dio) {
                    let on =
                        self.lock().stored(&self.profile, "DIO_DIRECTION", 0) & raw & (1 << line)
                            != 0;
                    self.bench
                        .apply(if on { Action::Enable } else { Action::Disable });
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Where the emulated DAQ listens.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct DaqEndpoints {
    /// Modbus TCP (a real T7: port 502).
    pub modbus: SocketAddr,
    /// Spontaneous stream packets (a real T7: port 702).
    pub stream: SocketAddr,
}

/// A running emulated DAQ.
#[derive(Debug)]
pub struct DaqSim {
    shared: Arc<DaqShared>,
    endpoints: DaqEndpoints,
    stop: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl DaqSim {
    /// Serves `profile`'s device in front of `bench`: Modbus TCP on `modbus`, the stream on
    /// `stream` (port 0 = any free port).
    pub async fn start(
        bench: Arc<Bench>,
        profile: DaqProfile,
        options: DaqSimOptions,
        modbus: SocketAddr,
        stream: SocketAddr,
    ) -> std::io::Result<DaqSim> {
        if let Some(a) = &options.analog_command {
            a.check()
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        }
        let mb = TcpListener::bind(modbus).await?;
        let st = TcpListener::bind(stream).await?;
        let endpoints = DaqEndpoints {
            modbus: mb.local_addr()?,
            stream: st.local_addr()?,
        };
        let image = Mutex::new(DaqImage::new(&profile, options.seed));
        let shared = Arc::new(DaqShared {
            profile,
            bench,
            options,
            image,
            stream: StreamCtl::default(),
            feed: watchdog::Feed::default(),
        });
        let (stop, rx) = watch::channel(false);
        let svc = DaqService {
            shared: Arc::clone(&shared),
        };
        let serve = tokio::spawn(async move {
            let _ = crate::server::serve_tcp(mb, svc, Faults::new(), rx).await;
        });
        let accept = tokio::spawn(stream::accept(st, Arc::clone(&shared), stop.subscribe()));
        let watchdog = tokio::spawn(watchdog::run(Arc::clone(&shared), stop.subscribe()));
        Ok(DaqSim {
            shared,
            endpoints,
            stop,
            tasks: vec![serve, accept, watchdog],
        })
    }

    /// Where it listens.
    pub fn endpoints(&self) -> DaqEndpoints {
        self.endpoints
    }

    /// DAC0's output \[V\] and the digital lines' states (bit n = DIOn), as the device holds
    /// them, read without a Modbus request (which would feed the watchdog).
    pub fn outputs(&self) -> (f64, u32) {
        let image = self.shared.lock();
        let p = &self.shared.profile;
        (
            f64::from(f32::from_bits(image.stored(p, "DAC#", 0))),
            image.stored(p, "DIO_STATE", 0),
        )
    }

    /// Stream counters so far.
    pub fn stream_stats(&self) -> stream::StreamStats {
        self.shared.stream.stats()
    }

    /// Stops the stream and the servers.
    pub async fn shutdown(self) {
        self.shared.stream.stop();
        let _ = self.stop.send(true);
        for t in self.tasks {
            t.abort();
            let _ = t.await;
        }
    }
}

pub use stream::StreamStats;
