//! `[archive]`: the retention `bench serve` applies by itself each night, moving the raw
//! samples of old runs into Parquet files as `bench archive` does (docs/src/archive.md). The
//! pass is the service's (`bench_service::retention`); this is the setting and its checks.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `[archive]` in bench.toml.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveConfig {
    /// The archive's root (relative paths are relative to the config file), as `bench archive
    /// --to`.
    pub to: PathBuf,
    /// Runs that started more than this many days before the pass are archived (0: every
    /// finished run).
    pub after_days: u32,
    /// The time of day of the nightly pass, UTC, `HH:MM` or `HH:MM:SS` (default `03:00`).
    #[serde(default = "default_at")]
    pub at: String,
    /// Keep the lockstep model outputs in the files too, as `bench archive --with-models`.
    #[serde(default)]
    pub with_models: bool,
}

fn default_at() -> String {
    "03:00".into()
}

impl ArchiveConfig {
    /// The pass's time of day as seconds after midnight UTC; the error names `at`.
    pub fn at_s(&self) -> Result<u32, String> {
        parse_time_of_day(&self.at).ok_or_else(|| {
            format!(
                "[archive] at = {:?} is not a UTC time of day HH:MM or HH:MM:SS (00:00 to 23:59:59)",
                self.at
            )
        })
    }

    /// Checks what the types cannot: a readable time of day and a directory named.
    pub fn check(&self) -> Result<(), String> {
        self.at_s()?;
        if self.to.as_os_str().is_empty() {
            return Err("[archive] to is empty: name the archive's directory".into());
        }
        Ok(())
    }

    /// `to` made absolute against the config file's directory.
    pub fn resolve(&mut self, config_dir: &Path) {
        if self.to.is_relative() {
            self.to = config_dir.join(&self.to);
        }
    }
}

/// `HH:MM` or `HH:MM:SS` as seconds after midnight.
fn parse_time_of_day(text: &str) -> Option<u32> {
    let parts: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let field = |i: usize, max: u32| {
        parts
            .get(i)
            .map_or(Some(0), |p| p.parse::<u32>().ok().filter(|v| *v <= max))
    };
    Some(field(0, 23)? * 3600 + field(1, 59)? * 60 + field(2, 59)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Result<u32, String> {
        ArchiveConfig {
            to: "a".into(),
            after_days: 90,
            at: text.into(),
            with_models: false,
        }
        .at_s()
    }

    #[test]
    fn a_time_of_day_is_read_to_the_second_and_a_wrong_one_names_at() {
        assert_eq!(at("03:00"), Ok(3 * 3600));
        assert_eq!(at("00:00:00"), Ok(0));
        assert_eq!(at("23:59:59"), Ok(86_399));
        for bad in [
            "24:00",
            "3:00",
            "03:60",
            "03:00:60",
            "03",
            "03:00:00:00",
            "ab:cd",
            "",
        ] {
            let e = at(bad).unwrap_err();
            assert!(e.contains("[archive] at"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_relative_directory_is_the_config_files() {
        let mut c: ArchiveConfig = toml::from_str("to = \"archive\"\nafter_days = 30").unwrap();
        assert_eq!(c.at, "03:00");
        c.resolve(Path::new("/etc/bench"));
        assert_eq!(c.to, PathBuf::from("/etc/bench/archive"));
        let e = toml::from_str::<ArchiveConfig>("to = \"a\"\nafter_days = -1").unwrap_err();
        assert!(e.to_string().contains("after_days"), "{e}");
    }
}
