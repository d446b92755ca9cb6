//! Loading profiles: reading a TOML file or a directory of them and validating each.

use serde::Deserialize;
use std::collections::HashSet;
use std::path::Path;

use super::{Profile, validate};
use crate::error::Error;

impl Profile {
    /// Reads and validates a profile file.
    pub fn load(path: impl AsRef<Path>) -> Result<Profile, Error> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::profile(&file, "file", format!("cannot read: {e}")))?;
        Profile::from_toml_str(&text, &file)
    }

    /// Parses and validates profile text; `file` labels errors.
    pub fn from_toml_str(text: &str, file: &str) -> Result<Profile, Error> {
        let raw: validate::RawProfile = toml::from_str(text).map_err(|e| {
            let field = match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}")
                }
                None => "toml".to_string(),
            };
            Error::profile(file, field, e.message().trim().to_string())
        })?;
        validate::validate(raw, file)
    }
}

/// Loads every drive and sensor `*.toml` in `dir` (sorted by name); DAQ profiles
/// (`kind = "daq"`) are skipped, [`crate::DaqProfile::load`] reads them.
pub fn load_dir(dir: impl AsRef<Path>) -> Result<Vec<Profile>, Error> {
    let dir = dir.as_ref();
    let rd = std::fs::read_dir(dir).map_err(|e| {
        Error::profile(
            dir.display().to_string(),
            "directory",
            format!("cannot read: {e}"),
        )
    })?;
    let mut paths: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for p in paths {
        // DAQ profiles have their own loader (crate::daq::DaqProfile).
        if std::fs::read_to_string(&p).is_ok_and(|t| is_daq_text(&t)) {
            continue;
        }
        let prof = Profile::load(&p)?;
        if !seen.insert(prof.device.name.clone()) {
            return Err(Error::profile(
                p.display().to_string(),
                "device.name",
                format!(
                    "'{}' is used by another profile in {}",
                    prof.device.name,
                    dir.display()
                ),
            ));
        }
        out.push(prof);
    }
    Ok(out)
}

/// True when the TOML text declares `[device] kind = "daq"` (the drive/sensor loader skips it).
pub(crate) fn is_daq_text(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Peek {
        device: PeekDevice,
    }
    #[derive(Deserialize)]
    struct PeekDevice {
        kind: String,
    }
    toml::from_str::<Peek>(text).is_ok_and(|p| p.device.kind == "daq")
}
