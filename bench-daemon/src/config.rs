//! The bench configuration (`bench.toml`): which devices on which transports, the bench limits,
//! the outer-loop gains, the safety reactions, the lockstep models and the database.
//!
//! `--sim` uses [`BenchConfig::sim`], the shipped `bench-daemon/config/sim.toml`, whose devices
//! are the simulated bench's built-in profiles; its transport is replaced by the in-process
//! simulated bench's loopback address.

use anyhow::Context;
use experiments::{BenchLimits, LoopGains};
use friction::registry::ModelSpec;
pub use friction::units::Geometry;
use protocols::{LinkConfig, Profile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::InputError;

mod archive;
mod daq;
mod lab;
mod loaded;
mod loop_cpu;
mod notify;
mod plant;
mod suspend;
pub use archive::ArchiveConfig;
pub use daq::{AnalogInput, AnalogOutput, DaqConfig, PositionSource};
pub use lab::{LabConfig, MAX_HEARTBEAT_S};
pub use loaded::{DeviceProfiles, resolve_params};
pub use loop_cpu::{LastCpu, LoopCpu};
pub use notify::{MAX_BACKOFF_S, NotifyConfig, NotifyEvent, SmtpConfig, TrendWatch};
pub use plant::PlantConfig;
pub use suspend::{SignalDevice, SuspendRule};

/// The shipped configuration of the simulated bench.
pub const SIM_TOML: &str = include_str!("../config/sim.toml");

/// Profile value naming a profile built into the binary rather than a file.
const BUILTIN: &str = "builtin:";

/// A whole `bench.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchConfig {
    /// This bench's name in a lab of several, stored with every run (`bench runs list --bench
    /// ID`): letters, digits, `.`, `_`, `-`, at most 64. Default: the host name; `sim` for the
    /// simulated bench (`--sim`).
    #[serde(default = "default_bench_id")]
    pub bench_id: String,
    /// Run database: a SQLite file (relative paths are relative to the config file) or a
    /// `postgres://` URL; `--db` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<PathBuf>,
    /// Bearer token `bench serve` requires of every mutating call (POST/PUT/DELETE) but the
    /// e-stop, on any listener (at least 16 characters). Never written into run records.
    #[serde(default, skip_serializing)]
    pub token: Option<String>,
    /// `rotary` (default: N m, rad, rad/s) or `linear` (N, m, m/s): the units in which
    /// parameters, fits and residuals are shown. Stored values are SI either way.
    #[serde(default, skip_serializing_if = "is_rotary")]
    pub geometry: Geometry,
    /// Host names (optionally `name:port`) `bench serve` answers to besides its address and
    /// `localhost`, e.g. the bench PC's DNS name. Never written into run records.
    #[serde(default, skip_serializing)]
    pub allowed_hosts: Vec<String>,
    /// Who may use `bench serve` and as what (`bench users add`); with users, every request but
    /// the e-stop and `/api/health` needs one's token. Never written into run records.
    #[serde(default, skip_serializing)]
    pub users: Vec<crate::users::UserConfig>,
    /// The servo drive.
    pub drive: DeviceConfig,
    /// The torque sensor, if the bench has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<DeviceConfig>,
    /// A DAQ read by its hardware-timed stream: the torque amplifier's input (instead of a
    /// `[sensor]`) and optionally the encoder's counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daq: Option<DaqConfig>,
    /// Limits and control period every plan is checked against and the loop enforces.
    pub limits: BenchLimits,
    /// Who closes velocity and position loops.
    #[serde(default)]
    pub outer_loop: OuterLoopChoice,
    /// SCHED_FIFO priority of the control-loop thread (1..=98; 0 = normal scheduling). Needs
    /// the privilege (root or CAP_SYS_NICE); without it the loop runs at normal priority and
    /// says so in the run's log.
    #[serde(default = "default_rt_priority")]
    pub realtime_priority: u8,
    /// A CPU for the run's real-time threads (the loop, and the simulated bench when it runs
    /// in process), every other thread of the process kept off it while a run goes on: a
    /// number, or `"last"`. Default: no pinning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_cpu: Option<LoopCpu>,
    /// Gains of the daemon's own velocity PI and position PID.
    #[serde(default)]
    pub controller: LoopGains,
    /// Reactions to faults.
    #[serde(default)]
    pub safety: SafetyConfig,
    /// Models stepped in lockstep with the measurements.
    #[serde(default)]
    pub lockstep: LockstepConfig,
    /// `[plant]`: a known load on the axis beside its inertia.
    #[serde(default, skip_serializing_if = "PlantConfig::is_empty")]
    pub plant: PlantConfig,
    /// What `bench serve` does with its queue on its own. Not part of a run's snapshot.
    #[serde(default, skip_serializing)]
    pub queue: QueueConfig,
    /// `[[suspend]]`: conditions that pause a run between segments (drive safe) until they
    /// have been clear for their hold time, instead of ending it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suspend: Vec<SuspendRule>,
    /// `[[notify]]`: webhooks and mail relays `bench serve` tells of run ends, pauses and the
    /// e-stop. Not part of a run's snapshot.
    #[serde(default, skip_serializing)]
    pub notify: Vec<NotifyConfig>,
    /// `[archive]`: the samples of old runs moved to Parquet each night by `bench serve`. Not
    /// part of a run's snapshot.
    #[serde(default, skip_serializing)]
    pub archive: Option<ArchiveConfig>,
    /// `[lab]`: the lab store this bench pushes to, where `bench serve` writes its heartbeat.
    /// Not part of a run's snapshot (its URL may hold a password).
    #[serde(default, skip_serializing)]
    pub lab: Option<LabConfig>,
}

/// `[queue]`: the daemon's own decisions about its queue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    /// On restart, resume a run the daemon's own death interrupted (not a limit, an e-stop,
    /// a drive or device fault), once the drive reads healthy and disabled. Off: nothing
    /// moves before an operator's action.
    #[serde(default)]
    pub auto_resume: bool,
}

fn is_rotary(g: &Geometry) -> bool {
    *g == Geometry::Rotary
}

/// The geometry of the bench in `config` (a bench.toml), rotary without one: the unit labels of
/// `bench models`, `bench fit` and `bench params show`.
pub fn geometry_of(config: Option<&Path>) -> anyhow::Result<Geometry> {
    let Some(path) = config else {
        return Ok(Geometry::Rotary);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("--config: cannot read {}: {e}", path.display())))?;
    Ok(BenchConfig::parse(&text, &path.display().to_string())?.geometry)
}

fn default_rt_priority() -> u8 {
    49
}

/// One Modbus device: its profile and where it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Profile file (relative to the config file), or `builtin:sim-drive` /
    /// `builtin:sim-torque-sensor`.
    pub profile: String,
    /// Modbus TCP address `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<String>,
    /// Serial port path for Modbus RTU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<PathBuf>,
    /// Baud rate for `serial` (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baud: Option<u32>,
    /// Unit id (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<u8>,
    /// `[sensor]` on the drive's Modbus TCP endpoint: a connection of its own, so that each
    /// tick reads the sensor while the drive answers (default: one connection for both). A
    /// sensor with a link of its own anyway, or on the drive's serial line, is unaffected.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_connection: bool,
    /// `[sensor]`: readings averaged for the torque zero before each run (default 10), one
    /// per sample of the sensor (see `control::sensor_zero`), so that no two readings are
    /// the same sample read twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_reads: Option<u32>,
}

/// Who closes the velocity and position loops of velocity and position segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OuterLoopChoice {
    /// The drive, in its own velocity or position mode when its profile has that mode; the
    /// daemon otherwise.
    #[default]
    Drive,
    /// Always the daemon (torque mode with the `[controller]` gains), so the torque limit
    /// bounds every command.
    Daemon,
}

/// Fault reactions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SafetyConfig {
    /// A measured velocity or motor torque beyond its limit by more than this fraction, or a
    /// position beyond the window by more than this fraction, aborts the run \[-\].
    pub breach_margin: f64,
    /// No new torque-sensor sample for this long is a sensor stall \[s\] (judged on the
    /// sensor's heartbeat, or on an unchanged reading without one); 0 disables.
    pub sensor_stall_s: f64,
    /// Consecutive failed Modbus transactions tolerated before the run fails (0: the first).
    pub comm_errors: u32,
    /// The drive's communication watchdog \[s\]: written at connect and read back; the
    /// backstop that removes torque if the daemon dies. A run needs it (> 0, and the drive
    /// profile must map the role `watchdog_timeout`) unless `allow_no_drive_watchdog`.
    pub watchdog_s: f64,
    /// Run without a drive communication watchdog (the run's log says so). Only for drives
    /// that have none and benches that are safe without one.
    pub allow_no_drive_watchdog: bool,
    /// Run with a drive profile whose command or safety signals (or the registers of its
    /// enable, disable, fault-reset, mode or connect sequences) are marked `unverified` against
    /// the vendor's manual (the run's log lists them).
    pub allow_unverified: bool,
    /// No new drive heartbeat for this long is a drive stall \[s\] (judged only when the
    /// profile maps a heartbeat); 0 disables.
    pub drive_stall_s: f64,
    /// Control periods the safe-state sequence has to be confirmed (the status read back not
    /// enabled) before the run's log says "unconfirmed" \[-\].
    pub confirm_periods: u32,
    /// Run with a torque sensor whose calibration is past its due date (`bench sensors
    /// calibrate`); the run records that it ran overdue.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub allow_overdue_calibration: bool,
}

impl Default for SafetyConfig {
    fn default() -> SafetyConfig {
        SafetyConfig {
            breach_margin: 0.1,
            sensor_stall_s: 0.05,
            comm_errors: 0,
            watchdog_s: 0.1,
            allow_no_drive_watchdog: false,
            allow_unverified: false,
            drive_stall_s: 0.05,
            confirm_periods: 3,
            allow_overdue_calibration: false,
        }
    }
}

/// The lockstep models.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LockstepConfig {
    /// Model ids, or `["all"]` for every registry model.
    pub models: Vec<String>,
    /// Parameters per model id: a table of parameters (missing ones defaulted), the name of a
    /// parameter set in the run database (`"set:NAME"`), or `"latest"` (the newest set of that
    /// model). A model not listed uses its newest set when one exists, else its defaults.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Inertia for simulating each model under the applied torque in torque segments
    /// \[kg m^2\]; unset: friction prediction only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plant_inertia_kg_m2: Option<f64>,
}

/// A parameter set a lockstep model asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetQuery<'a> {
    /// The newest set with this name.
    Named(&'a str),
    /// The newest set of this model.
    Latest(&'a str),
}

/// A parameter set found for a lockstep model.
#[derive(Clone, Debug, PartialEq)]
pub struct FoundSet {
    /// Its id in the run database.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its parameter document.
    pub params: serde_json::Value,
    /// The force offset its fit found in the measurement (`provenance.offset.value`).
    pub offset: Option<f64>,
}

/// Whether a run has the drive's communication watchdog as its backstop.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchdogRule {
    /// Write this timeout \[s\] at connect and read it back.
    Set(f64),
    /// Run without one (`allow_no_drive_watchdog = true`); the text goes into the run's log.
    Waived(String),
}

/// A loaded configuration: the parsed file plus its profiles.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The configuration.
    pub config: BenchConfig,
    /// Where it came from (`builtin:sim` for the shipped one).
    pub source: String,
    /// The drive profile and its TOML text.
    pub drive: (Arc<Profile>, String),
    /// The torque-sensor profile and its TOML text.
    pub sensor: Option<(Arc<Profile>, String)>,
    /// The DAQ profile and its TOML text.
    pub daq: Option<(Arc<protocols::DaqProfile>, String)>,
}

impl BenchConfig {
    /// Parses and checks a configuration; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> anyhow::Result<BenchConfig> {
        let mut config: BenchConfig =
            toml::from_str(text).map_err(|e| InputError(format!("{source}: {e}")))?;
        suspend::note_lines(&mut config.suspend, text);
        suspend::check_rules(&config.suspend).map_err(|e| InputError(format!("{source}: {e}")))?;
        notify::note_lines(&mut config.notify, text);
        notify::check_entries(&config.notify).map_err(|e| InputError(format!("{source}: {e}")))?;
        if let Some(a) = &config.archive {
            a.check()
                .map_err(|e| InputError(format!("{source}: {e}")))?;
        }
        if let Some(lab) = &config.lab {
            lab.check()
                .map_err(|e| InputError(format!("{source}: {e}")))?;
        }
        check_bench_id(&config.bench_id).map_err(|rule| {
            InputError(format!("{source}: bench_id = {:?} {rule}", config.bench_id))
        })?;
        config
            .limits
            .validate()
            .map_err(|e| InputError(format!("{source}: [limits] {e}")))?;
        crate::users::check_users(&config.users)
            .map_err(|e| InputError(format!("{source}: {e}")))?;
        if config.token.is_some() && !config.users.is_empty() {
            return Err(InputError(format!(
                "{source}: token and [[users]] are both given: give each person a token with \
                 bench users add and remove token"
            ))
            .into());
        }
        if let Some(d) = &config.daq {
            d.check()
                .map_err(|e| InputError(format!("{source}: {e}")))?;
            if config.sensor.is_some() {
                return Err(InputError(format!(
                    "{source}: [sensor] and [daq.measured_torque] both give the measured torque; \
                     remove one"
                ))
                .into());
            }
        }
        if config.realtime_priority > 98 {
            return Err(InputError(format!(
                "{source}: realtime_priority = {} must be within 0..=98",
                config.realtime_priority
            ))
            .into());
        }
        let s = &config.safety;
        for (field, value) in [
            ("breach_margin", s.breach_margin),
            ("sensor_stall_s", s.sensor_stall_s),
            ("watchdog_s", s.watchdog_s),
            ("drive_stall_s", s.drive_stall_s),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(InputError(format!(
                    "{source}: [safety] {field} = {value} must be finite and >= 0"
                ))
                .into());
            }
        }
        config
            .plant
            .validate()
            .map_err(|e| InputError(format!("{source}: {e}")))?;
        if let Some(j) = config.lockstep.plant_inertia_kg_m2
            && !(j.is_finite() && j > 0.0)
        {
            return Err(InputError(format!(
                "{source}: [lockstep] plant_inertia_kg_m2 = {j} must be finite and > 0"
            ))
            .into());
        }
        for (name, dev) in config.devices() {
            if dev.tcp.is_some() == dev.serial.is_some() && name == "drive" {
                return Err(InputError(format!(
                    "{source}: [{name}] needs exactly one of tcp = \"host:port\" or serial = \"/dev/...\""
                ))
                .into());
            }
            if dev.tcp.is_some() && dev.serial.is_some() {
                return Err(InputError(format!(
                    "{source}: [{name}] has both tcp and serial; give one"
                ))
                .into());
            }
            if let Some(e) = zero_reads_error(name, dev.zero_reads) {
                return Err(InputError(format!("{source}: {e}")).into());
            }
            if dev.own_connection && name == "drive" {
                return Err(InputError(format!(
                    "{source}: [drive] own_connection = true is for [sensor] (a second connection to the drive's Modbus TCP endpoint); the drive's connection is its own"
                ))
                .into());
            }
        }
        Ok(config)
    }

    /// The devices by section name.
    fn devices(&self) -> Vec<(&'static str, &DeviceConfig)> {
        let mut v = vec![("drive", &self.drive)];
        if let Some(s) = &self.sensor {
            v.push(("sensor", s));
        }
        v
    }

    /// The shipped simulated-bench configuration.
    pub fn sim() -> BenchConfig {
        let mut config = BenchConfig::parse(SIM_TOML, "builtin:sim")
            .expect("BUG: the shipped sim.toml is invalid");
        config.bench_id = SIM_BENCH_ID.into();
        config
    }
}

/// The simulated bench's `bench_id`.
pub const SIM_BENCH_ID: &str = "sim";

/// The host name (`/proc/sys/kernel/hostname`), as a valid bench id; `bench` if it has none.
fn default_bench_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let id: String = host
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    if id.is_empty() { "bench".into() } else { id }
}

/// A bench id's rule, or `Ok`.
pub fn check_bench_id(id: &str) -> Result<(), &'static str> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c));
    if ok {
        Ok(())
    } else {
        Err("must be 1 to 64 letters, digits, '.', '_' or '-'")
    }
}

/// `zero_reads` is the sensor's, and at least 1 (the zero is their mean).
fn zero_reads_error(section: &str, n: Option<u32>) -> Option<String> {
    match (section, n) {
        (_, None) => None,
        ("drive", Some(n)) => Some(format!(
            "[drive] zero_reads = {n} is for [sensor] (the torque zero before each run)"
        )),
        (_, Some(0)) => Some(format!(
            "[{section}] zero_reads = 0: at least 1 (the zero is the mean of the readings)"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
