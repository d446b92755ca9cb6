//! The validation of a profile's TOML ([`raw`]) into a [`Profile`]: one function per table,
//! called in the order the tables depend on each other —
//!
//! ```text
//! [device] [transport] [timing] [encoding]   (device.rs: each on its own)
//!     [[poll_group]] ─► [[signal]]           (signals.rs: encoding, poll groups)
//!         ─► [modes] [status] [[sequence]]   (sequences.rs: the signals)
//!         ─► the device's rules ─► [[test_vector]]   (vectors.rs: the whole profile)
//! ```
//!
//! Strings (types, roles, units, ...) are parsed here rather than by serde, so that every
//! rejection names the file, the entry and the rule.

mod device;
mod raw;
mod sequences;
mod signals;
mod vectors;

use std::time::Duration;

use super::*;
use crate::error::Error;

pub(super) use raw::RawProfile;
pub(super) use vectors::check_vector;

/// What every error names: the profile's file.
struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err<T>(&self, field: impl Into<String>, reason: impl Into<String>) -> Result<T, Error> {
        Err(Error::profile(self.file, field, reason))
    }
}

/// A duration in milliseconds: finite, ≥ 0 (> 0 unless `allow_zero`), at most an hour.
fn ms(ctx: &Ctx<'_>, field: &str, v: f64, allow_zero: bool) -> Result<Duration, Error> {
    if !v.is_finite() || v < 0.0 || (!allow_zero && v == 0.0) {
        let rule = if allow_zero { "≥ 0" } else { "> 0" };
        return ctx.err(field, format!("{v} ms must be finite and {rule}"));
    }
    if v > 3_600_000.0 {
        return ctx.err(field, format!("{v} ms exceeds the limit of 3600000 ms"));
    }
    Ok(Duration::from_secs_f64(v / 1e3))
}

/// The whole profile, table by table.
pub(super) fn validate(raw: RawProfile, file: &str) -> Result<Profile, Error> {
    let ctx = Ctx { file };
    let device = device::device(&ctx, &raw.device)?;
    let transport = device::transport(&ctx, &raw.transport)?;
    let timing = device::timing(&ctx, &raw.timing)?;
    let encoding = device::encoding(&ctx, &raw.encoding)?;
    let poll_groups = signals::poll_groups(&ctx, &raw.poll_groups)?;
    let signals = signals::signals(&ctx, &raw.signals, encoding, &poll_groups)?;
    let modes = sequences::modes(&ctx, &raw.modes, &signals)?;
    let status = sequences::status(&ctx, &raw.status, &signals)?;
    let sequences = sequences::sequences(&ctx, &raw.sequences, &signals)?;
    let mut profile = Profile {
        file: file.to_string(),
        device,
        transport,
        timing,
        signals,
        modes,
        status,
        sequences,
        poll_groups,
        test_vectors: Vec::new(),
    };
    device_rules(&ctx, &profile)?;
    profile.test_vectors = vectors::test_vectors(&ctx, &raw.test_vectors, &profile)?;
    Ok(profile)
}

/// What a device of its kind needs whatever the tables say: a drive a command signal, enable
/// and disable (sequences or an `enable` signal) and, with a status signal, the `enabled` and
/// `fault` patterns; a torque sensor its measured torque.
fn device_rules(ctx: &Ctx<'_>, p: &Profile) -> Result<(), Error> {
    match p.device.kind {
        DeviceKind::Drive => {
            let cmds = [
                Role::TorqueCommand,
                Role::VelocityCommand,
                Role::PositionCommand,
            ];
            if !cmds.iter().any(|r| p.role(*r).is_some()) {
                return ctx.err(
                    "signal",
                    "a drive needs a signal with role torque_command, velocity_command or position_command",
                );
            }
            for seq in ["enable", "disable"] {
                if p.sequence(seq).is_none() && p.role(Role::Enable).is_none() {
                    return ctx.err(
                        "sequence",
                        format!(
                            "a drive needs a '{seq}' sequence or a signal with role = \"enable\""
                        ),
                    );
                }
            }
            if p.role(Role::Status).is_some()
                && (p.status_pattern("enabled").is_none() || p.status_pattern("fault").is_none())
            {
                return ctx.err(
                    "status",
                    "a drive with a status signal needs [status] patterns 'enabled' and 'fault'",
                );
            }
        }
        DeviceKind::TorqueSensor => {
            if p.role(Role::MeasuredTorque).is_none() {
                return ctx.err(
                    "signal",
                    "a torque sensor needs a signal with role = \"measured_torque\"",
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Fixtures for the table tests: TOML text in, the raw table out.

    use super::*;
    use serde::de::DeserializeOwned;

    /// The context of a test profile.
    pub(super) fn ctx() -> Ctx<'static> {
        Ctx { file: "t.toml" }
    }

    /// One table's TOML (its keys, no header).
    pub(super) fn table<T: DeserializeOwned>(text: &str) -> T {
        toml::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// An array of tables `[[name]]` whose first entry's keys are `text` (later entries with
    /// their own `[[name]]` headers).
    pub(super) fn list<T: DeserializeOwned>(name: &str, text: &str) -> Vec<T> {
        #[derive(serde::Deserialize)]
        struct Wrap<T> {
            #[serde(default = "Vec::new")]
            items: Vec<T>,
        }
        let text = format!(
            "[[items]]\n{}",
            text.replace(&format!("[[{name}]]"), "[[items]]")
        );
        table::<Wrap<T>>(&text).items
    }

    /// The entry a profile error names.
    pub(super) fn field_of<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
        match r {
            Err(Error::Profile { file, field, .. }) => {
                assert_eq!(file, "t.toml");
                field
            }
            other => panic!("expected a profile error, got {other:?}"),
        }
    }

    /// A CiA 402 drive's signals: control and status words, the i16 mode object, a torque
    /// command in mN m.
    pub(super) fn drive_signals() -> Vec<Signal> {
        let text = "name = \"controlword\"\nrole = \"control_word\"\n\
            reg = { address = 0x6040, type = \"u16\" }\neng = { access = \"rw\" }\n\
            [[signal]]\nname = \"statusword\"\nrole = \"status\"\n\
            reg = { address = 0x6041, type = \"u16\" }\n\
            [[signal]]\nname = \"mode\"\nrole = \"mode\"\n\
            reg = { address = 0x6060, type = \"i16\" }\neng = { access = \"rw\" }\n\
            [[signal]]\nname = \"torque_cmd\"\nrole = \"torque_command\"\n\
            reg = { address = 0x6071, type = \"i16\" }\neng = { unit = \"mN m\", access = \"rw\" }";
        let enc = device::Encoding {
            word_order: WordOrder::Abcd,
            address_base: 0,
        };
        signals::signals(&ctx(), &list("signal", text), enc, &[]).unwrap()
    }

    #[test]
    fn a_drive_needs_a_command_enable_and_its_status_patterns() {
        let profile = |signals: Vec<Signal>, status: Vec<StatusPattern>| Profile {
            file: "t.toml".into(),
            device: device::device(&ctx(), &table("name = \"d\"\nkind = \"drive\"")).unwrap(),
            transport: device::transport(&ctx(), &table("")).unwrap(),
            timing: device::timing(&ctx(), &table("")).unwrap(),
            signals,
            modes: Default::default(),
            status,
            sequences: vec![],
            poll_groups: vec![],
            test_vectors: vec![],
        };
        let patterns =
            |text: &str| sequences::status(&ctx(), &table(text), &drive_signals()).unwrap();
        let both = "enabled = { mask = 0x6F, value = 0x27 }\nfault = { mask = 0x08, value = 0x08 }";
        let no_enable = profile(drive_signals(), patterns(both));
        assert_eq!(field_of(device_rules(&ctx(), &no_enable)), "sequence");
        let mut with_enable = drive_signals();
        with_enable.extend(signals::signals(
            &ctx(),
            &list("signal", "name = \"en\"\nrole = \"enable\"\nreg = { table = \"coil\", address = 0, type = \"bool\" }\neng = { access = \"rw\" }"),
            device::Encoding { word_order: WordOrder::Abcd, address_base: 0 },
            &[],
        ).unwrap());
        assert!(device_rules(&ctx(), &profile(with_enable.clone(), patterns(both))).is_ok());
        let only_enabled = profile(
            with_enable.clone(),
            patterns("enabled = { mask = 0x6F, value = 0x27 }"),
        );
        assert_eq!(field_of(device_rules(&ctx(), &only_enabled)), "status");
        let no_command: Vec<Signal> = with_enable
            .into_iter()
            .filter(|s| s.role != Some(Role::TorqueCommand))
            .collect();
        assert_eq!(
            field_of(device_rules(&ctx(), &profile(no_command, patterns(both)))),
            "signal"
        );
    }
}
