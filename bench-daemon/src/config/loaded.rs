//! A loaded bench: its configuration with the device profiles it names, where it came from,
//! the checks a run needs of it (watchdog, profile trust and pace) and what the lockstep bank
//! and the run's provenance take from it.

use super::*;

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

    /// The configuration a command names: `config` (`--config bench.toml`), the shipped
    /// simulated bench at `sim_tcp` (`--sim`), or that file's limits, gains and models on the
    /// simulated devices (both).
    pub fn for_command(config: Option<&Path>, sim_tcp: Option<&str>) -> anyhow::Result<Loaded> {
        match (config, sim_tcp) {
            (Some(path), None) => Loaded::from_file(path),
            (Some(path), Some(tcp)) => {
                let loaded = Loaded::from_file(path)?.retarget(tcp);
                // The simulated devices' profiles must have the `[[suspend]]` signals too.
                loaded.check_suspend()?;
                Ok(loaded)
            }
            (None, Some(tcp)) => Ok(Loaded::sim(tcp)),
            (None, None) => Err(InputError("give --sim or --config bench.toml".into()).into()),
        }
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
        if let Some(a) = &mut config.archive {
            a.resolve(dir);
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
        // A bench whose torque comes from a DAQ reads it from the emulated DAQ
        // ([`Loaded::retarget_daq`]), not from the simulated torque sensor.
        let sensor = if config.daq.is_some() {
            None
        } else {
            config.sensor = sim.config.sensor;
            sim.sensor
        };
        Loaded {
            config,
            source: format!("{} (devices: builtin:sim)", self.source),
            drive: sim.drive,
            sensor,
            daq: self.daq,
        }
    }

    fn with_profiles(config: BenchConfig, source: String, dir: &Path) -> anyhow::Result<Loaded> {
        let drive = load_profile(&config.drive.profile, dir, &source, "drive")?;
        let sensor = match &config.sensor {
            Some(s) => Some(load_profile(&s.profile, dir, &source, "sensor")?),
            None => None,
        };
        let daq = match &config.daq {
            Some(d) => {
                let (profile, text) = load_daq_profile(d, dir, &source)?;
                d.check_reach(&profile, &config.limits)
                    .map_err(|e| InputError(format!("{source}: {e}")))?;
                Some((profile, text))
            }
            None => None,
        };
        let loaded = Loaded {
            config,
            source,
            drive,
            sensor,
            daq,
        };
        loaded.check_suspend()?;
        Ok(loaded)
    }

    /// The same configuration with its DAQ at the emulated one's `modbus` and `stream`
    /// addresses (`--sim` with a `[daq]` section).
    pub fn retarget_daq(mut self, modbus: &str, stream: &str) -> Loaded {
        if let Some(d) = &mut self.config.daq {
            d.tcp = modbus.to_string();
            d.stream_tcp = Some(stream.to_string());
        }
        self
    }

    /// Each `[[suspend]]` signal is a readable signal of its device's profile.
    fn check_suspend(&self) -> Result<(), InputError> {
        let sensor = self.sensor.as_ref().map(|s| &*s.0);
        super::suspend::check_signals(&self.config.suspend, &self.drive.0, sensor)
            .map_err(|e| InputError(format!("{}: {e}", self.source)))
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

    /// The profiles as stored with a run (`device_profiles`).
    pub fn profiles(&self) -> DeviceProfiles {
        DeviceProfiles {
            drive: Some(self.drive.1.clone()),
            sensor: self.sensor.as_ref().map(|(_, text)| text.clone()),
            daq: self.daq.as_ref().map(|(_, text)| text.clone()),
        }
    }
}

/// The device profiles a run was recorded with (its `device_profiles`), each as the TOML text
/// of its file then, so that the run keeps saying what it ran with after a file is edited.
/// Absent for a device the bench has not (and every one of an imported recording).
#[derive(
    Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct DeviceProfiles {
    /// The drive's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive: Option<String>,
    /// The torque sensor's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
    /// The DAQ's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daq: Option<String>,
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

/// The `[daq]` profile (`builtin:labjack-t7` or a file), checked against the section.
fn load_daq_profile(
    d: &super::DaqConfig,
    dir: &Path,
    source: &str,
) -> anyhow::Result<(Arc<protocols::DaqProfile>, String)> {
    let (text, file) = match d.profile.strip_prefix(BUILTIN) {
        Some("labjack-t7") => (
            bench_sim::daq::LABJACK_T7_TOML.to_string(),
            "profiles/labjack-t7.toml".to_string(),
        ),
        Some(other) => {
            return Err(InputError(format!(
                "{source}: [daq] profile = \"{}\": unknown built-in profile '{other}' (built-in: labjack-t7)",
                d.profile
            ))
            .into());
        }
        None => {
            let path = dir.join(&d.profile);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                InputError(format!(
                    "{source}: [daq] profile: cannot read {}: {e}",
                    path.display()
                ))
            })?;
            (text, path.display().to_string())
        }
    };
    let profile = protocols::DaqProfile::from_toml_str(&text, &file)
        .map_err(|e| InputError(format!("{source}: [daq] {e}")))?;
    d.check_against(&profile)
        .map_err(|e| InputError(format!("{source}: {e}")))?;
    Ok((Arc::new(profile), text))
}
