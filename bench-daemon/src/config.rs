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

use crate::cli::InputError;

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
    /// The servo drive.
    pub drive: DeviceConfig,
    /// The torque sensor, if the bench has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<DeviceConfig>,
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
    /// Gains of the daemon's own velocity PI and position PID.
    #[serde(default)]
    pub controller: LoopGains,
    /// Reactions to faults.
    #[serde(default)]
    pub safety: SafetyConfig,
    /// Models stepped in lockstep with the measurements.
    #[serde(default)]
    pub lockstep: LockstepConfig,
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
}

impl BenchConfig {
    /// Parses and checks a configuration; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> anyhow::Result<BenchConfig> {
        let config: BenchConfig =
            toml::from_str(text).map_err(|e| InputError(format!("{source}: {e}")))?;
        check_bench_id(&config.bench_id).map_err(|rule| {
            InputError(format!("{source}: bench_id = {:?} {rule}", config.bench_id))
        })?;
        config
            .limits
            .validate()
            .map_err(|e| InputError(format!("{source}: [limits] {e}")))?;
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

impl Loaded {
    /// How long the safe-state sequence may take to be confirmed at control period `period_s`.
    pub fn confirm_deadline(&self, period_s: f64) -> std::time::Duration {
        std::time::Duration::from_secs_f64(period_s * f64::from(self.config.safety.confirm_periods))
    }

    /// The drive watchdog the run will set, or why it runs without one.
    pub fn watchdog_rule(&self) -> WatchdogRule {
        match self.watchdog_missing() {
            None => WatchdogRule::Set(self.config.safety.watchdog_s),
            Some(why) => WatchdogRule::Waived(format!(
                "ran WITHOUT a drive communication watchdog ({why}; allow_no_drive_watchdog = true): \
                 if the daemon dies the drive keeps its last command"
            )),
        }
    }

    /// Refuses a bench whose drive has no communication watchdog, unless waived: without it a
    /// dead daemon (SIGKILL, OOM killer, power loss of the PC) leaves the drive commanded.
    pub fn check_watchdog(&self) -> Result<(), InputError> {
        self.check_profile()?;
        match self.watchdog_missing() {
            Some(why) if !self.config.safety.allow_no_drive_watchdog => Err(InputError(format!(
                "{}: {why}: no run starts without the drive's communication watchdog, the \
                 backstop if the daemon dies; map it in the profile, or set [safety] \
                 allow_no_drive_watchdog = true to run without it",
                self.source
            ))),
            _ => Ok(()),
        }
    }

    fn watchdog_missing(&self) -> Option<String> {
        let profile = &self.drive.0;
        let Some(signal) = profile.role(protocols::Role::WatchdogTimeout) else {
            return Some(format!(
                "the drive profile '{}' maps no communication watchdog (role watchdog_timeout)",
                profile.device.name
            ));
        };
        if self.config.safety.watchdog_s <= 0.0 {
            return Some("[safety] watchdog_s = 0 switches the drive's watchdog off".into());
        }
        None.or_else(|| {
            signal
                .check_limits(self.config.safety.watchdog_s)
                .err()
                .map(|e| {
                    format!(
                        "[safety] watchdog_s = {} s does not fit the drive: {e}",
                        self.config.safety.watchdog_s
                    )
                })
        })
    }

    /// Checks the drive profile's trust and pace before a run: unverified command or safety
    /// signals need `allow_unverified`, and the control rate must not exceed the profile's
    /// `max_write_rate_hz`. Returns the notes for the run's log.
    pub fn check_profile(&self) -> Result<Vec<String>, InputError> {
        let profile = &self.drive.0;
        let rate = 1.0 / self.config.limits.period_s;
        profile.check_write_rate(rate).map_err(|e| {
            InputError(format!(
                "{}: [limits] period_s = {} s: {e}",
                self.source, self.config.limits.period_s
            ))
        })?;
        let unverified: Vec<&str> = profile
            .unverified_critical_signals()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        if unverified.is_empty() {
            return Ok(Vec::new());
        }
        let list = unverified.join(", ");
        if !self.config.safety.allow_unverified {
            return Err(InputError(format!(
                "{}: the drive profile '{}' has command or safety signals not verified against \
                 the vendor's manual ({list}); check them on the device (`bench probe --check`) \
                 and set [safety] allow_unverified = true to run",
                self.source, profile.device.name
            )));
        }
        Ok(vec![format!(
            "ran with unverified drive profile signals ({list}; allow_unverified = true)"
        )])
    }

    /// Reads `bench.toml` and its profiles.
    pub fn from_file(path: &Path) -> anyhow::Result<Loaded> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| InputError(format!("--config: cannot read {}: {e}", path.display())))?;
        let source = path.display().to_string();
        let mut config = BenchConfig::parse(&text, &source)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        if let Some(db) = &config.database
            && db.is_relative()
            && run_store::Location::from(db).file().is_some()
        {
            config.database = Some(dir.join(db));
        }
        Loaded::with_profiles(config, source, dir)
    }

    /// The shipped configuration for the simulated bench at `tcp` (bench id `sim`).
    pub fn sim(tcp: &str) -> Loaded {
        let mut config = BenchConfig::sim();
        config.drive.tcp = Some(tcp.to_string());
        if let Some(s) = &mut config.sensor {
            s.tcp = Some(tcp.to_string());
        }
        Loaded::with_profiles(config, "builtin:sim".into(), Path::new("."))
            .expect("BUG: the shipped sim profiles are invalid")
    }

    /// What a lab view (`bench serve --lab`) describes itself with: no bench attached; the
    /// shipped simulated bench's units and limits (for the dashboard's plan previews only).
    pub fn lab() -> Loaded {
        let mut loaded = Loaded::sim("127.0.0.1:0");
        loaded.config.bench_id = "lab".into();
        loaded.source = "lab view (read-only, no bench attached)".into();
        loaded
    }

    /// The same configuration with its devices replaced by the simulated bench at `tcp`
    /// (its built-in profiles).
    pub fn retarget(self, tcp: &str) -> Loaded {
        let sim = Loaded::sim(tcp);
        let mut config = self.config;
        config.bench_id = SIM_BENCH_ID.into();
        config.drive = sim.config.drive;
        config.sensor = sim.config.sensor;
        Loaded {
            config,
            source: format!("{} (devices: builtin:sim)", self.source),
            drive: sim.drive,
            sensor: sim.sensor,
        }
    }

    fn with_profiles(config: BenchConfig, source: String, dir: &Path) -> anyhow::Result<Loaded> {
        let drive = load_profile(&config.drive.profile, dir, &source, "drive")?;
        let sensor = match &config.sensor {
            Some(s) => Some(load_profile(&s.profile, dir, &source, "sensor")?),
            None => None,
        };
        Ok(Loaded {
            config,
            source,
            drive,
            sensor,
        })
    }

    /// Link settings of a device.
    pub fn link_config(dev: &DeviceConfig, profile: &Profile) -> LinkConfig {
        match (&dev.tcp, &dev.serial) {
            (Some(addr), _) => LinkConfig::tcp(addr.clone(), profile),
            (None, Some(path)) => LinkConfig::serial(path.clone(), dev.baud, profile),
            (None, None) => unreachable!("BUG: device without transport passed validation"),
        }
    }

    /// The lockstep model specs of a run: the models and parameters of `choice` (a spec's own
    /// `lockstep` object) over the `[lockstep]` section, parameter sets looked up by `lookup`.
    /// A model's parameters are, in order: its entry in `params` (a table, `"set:NAME"` or
    /// `"latest"`), else its newest parameter set, else its defaults. Returns the specs and,
    /// per model, where its parameters came from (`{"model", "source", "set_id", "set_name"}`).
    pub fn lockstep_specs(
        &self,
        choice: Option<&LockstepConfig>,
        mut lookup: impl FnMut(SetQuery<'_>) -> anyhow::Result<Option<FoundSet>>,
    ) -> anyhow::Result<(Vec<ModelSpec>, Vec<serde_json::Value>)> {
        let lc = &self.config.lockstep;
        let (where_, models, params) = match choice {
            Some(c) => ("spec lockstep".to_string(), &c.models, &c.params),
            None => (
                format!("{}: [lockstep]", self.source),
                &lc.models,
                &lc.params,
            ),
        };
        let ids: Vec<String> = if models.iter().any(|m| m == "all") {
            friction::registry::MODELS
                .iter()
                .map(|e| e.id.to_string())
                .collect()
        } else {
            models.clone()
        };
        if let Some(extra) = params.keys().find(|k| !ids.contains(k)) {
            return Err(InputError(format!(
                "{where_}.params has '{extra}', which is not in its models ({})",
                ids.join(", ")
            ))
            .into());
        }
        let mut specs = Vec::with_capacity(ids.len());
        let mut used = Vec::with_capacity(ids.len());
        for id in ids {
            friction::registry::entry(&id)
                .map_err(|e| InputError(format!("{where_}.models: {e}")))?;
            let (mut params, note) = resolve_params(&where_, &id, params.get(&id), &mut lookup)?;
            // A set's offset goes with the model: the lockstep takes it off the applied torque.
            if let (Some(o), serde_json::Value::Object(p)) = (note.get("offset"), &mut params) {
                p.insert(friction::registry::OFFSET_KEY.into(), o.clone());
            }
            let spec = ModelSpec { model: id, params };
            let (bare, _) = friction::registry::split_offset(&spec)
                .map_err(|e| InputError(format!("{where_}: {}: {e}", spec.model)))?;
            friction::registry::build_model(&bare)
                .map_err(|e| InputError(format!("{where_}: {}: {e}", spec.model)))?;
            specs.push(spec);
            used.push(note);
        }
        Ok((specs, used))
    }

    /// The profiles as stored with a run: file name → TOML text.
    pub fn profiles_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("drive".into(), self.drive.1.clone().into());
        if let Some((_, text)) = &self.sensor {
            m.insert("sensor".into(), text.clone().into());
        }
        serde_json::Value::Object(m)
    }
}

/// The parameters `given` names for model `id` (`where_` prefixes the messages): a table as
/// is, `"set:NAME"` a stored set, `"latest"` the model's newest set; nothing given, the
/// newest set or else the defaults. Returns them and where they came from
/// (`{"model", "source", "set_id", "set_name"}`, and the set's force `offset` when its fit
/// found one).
pub fn resolve_params(
    where_: &str,
    id: &str,
    given: Option<&serde_json::Value>,
    mut lookup: impl FnMut(SetQuery<'_>) -> anyhow::Result<Option<FoundSet>>,
) -> anyhow::Result<(serde_json::Value, serde_json::Value)> {
    let from_set = |set: FoundSet, source: &str| {
        let mut note = serde_json::json!({
            "model": id, "source": source, "set_id": set.id, "set_name": set.name,
        });
        if let Some(o) = set.offset {
            note["offset"] = o.into();
        }
        (set.params, note)
    };
    Ok(match given {
        None => match lookup(SetQuery::Latest(id))? {
            Some(set) => from_set(set, "latest"),
            None => (
                serde_json::json!({}),
                serde_json::json!({"model": id, "source": "defaults"}),
            ),
        },
        Some(serde_json::Value::String(s)) if s == "latest" => {
            match lookup(SetQuery::Latest(id))? {
                Some(set) => from_set(set, "latest"),
                None => {
                    return Err(InputError(format!(
                    "{where_}.params {id} = \"latest\": no parameter set of model '{id}' in the run database (fit one with `bench fit --run`)"
                ))
                .into());
                }
            }
        }
        Some(serde_json::Value::String(s)) => match s.strip_prefix("set:") {
            Some(name) => match lookup(SetQuery::Named(name))? {
                Some(set) => from_set(set, "set"),
                None => {
                    return Err(InputError(format!(
                        "{where_}.params {id} = \"{s}\": no parameter set named '{name}' in the run database"
                    ))
                    .into());
                }
            },
            None => {
                return Err(InputError(format!(
                    "{where_}.params {id} = \"{s}\": a string must be \"set:NAME\" (a parameter set) or \"latest\""
                ))
                .into());
            }
        },
        Some(v) => (
            v.clone(),
            serde_json::json!({"model": id, "source": "table"}),
        ),
    })
}

fn load_profile(
    name: &str,
    dir: &Path,
    source: &str,
    section: &str,
) -> anyhow::Result<(Arc<Profile>, String)> {
    let (text, file) = match name.strip_prefix(BUILTIN) {
        Some("sim-drive") => (
            bench_sim::SIM_DRIVE_TOML.to_string(),
            "profiles/sim-drive.toml".to_string(),
        ),
        Some("sim-torque-sensor") => (
            bench_sim::SIM_SENSOR_TOML.to_string(),
            "profiles/sim-torque-sensor.toml".to_string(),
        ),
        Some(other) => {
            return Err(InputError(format!(
                "{source}: [{section}] profile = \"{name}\": unknown built-in profile '{other}' (built-in: sim-drive, sim-torque-sensor)"
            ))
            .into());
        }
        None => {
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                InputError(format!(
                    "{source}: [{section}] profile: cannot read {}: {e}",
                    path.display()
                ))
            })?;
            (text, path.display().to_string())
        }
    };
    let profile = Profile::from_toml_str(&text, &file)
        .map_err(|e| InputError(format!("{source}: [{section}] {e}")))
        .context("loading the device profile")?;
    Ok((Arc::new(profile), text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_sim_config_loads_with_its_profiles_and_models() {
        let l = Loaded::sim("127.0.0.1:5020");
        assert_eq!(l.config.limits, BenchLimits::sim_default());
        assert!(l.sensor.is_some());
        let (specs, used) = l.lockstep_specs(None, |_| Ok(None)).unwrap();
        assert!(used.iter().all(|u| u["source"] == "defaults"), "{used:?}");
        assert!(specs.len() >= 5, "{specs:?}");
    }

    #[test]
    fn errors_name_the_section_and_field() {
        let base = SIM_TOML.replace("torque_nm = 2.0", "torque_nm = -1.0");
        let e = BenchConfig::parse(&base, "b.toml").unwrap_err().to_string();
        assert!(
            e.contains("b.toml: [limits]") && e.contains("torque_nm (-1)"),
            "{e}"
        );
        let e = BenchConfig::parse(&format!("foo = 1\n{SIM_TOML}"), "b.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `foo`"), "{e}");
    }
}
