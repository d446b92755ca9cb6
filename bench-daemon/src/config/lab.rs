//! `[lab]`: the lab store this bench pushes its runs to (`bench runs push`), where `bench
//! serve` also writes its heartbeat every `heartbeat_s`, so the lab's Fleet page shows every
//! bench's state. The heartbeat itself is the service's (`bench_service::heartbeat`); this is
//! the configuration and its checks, every rejection naming the field.

use serde::{Deserialize, Serialize};

/// The longest heartbeat period accepted \[s\]: a bench quiet for three of them is stale, and
/// an hour's silence is already more than a lab should wait to notice.
pub const MAX_HEARTBEAT_S: f64 = 3600.0;

/// `[lab]` in bench.toml.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabConfig {
    /// The lab store: a `postgres://` URL (or an absolute path of a SQLite file shared by the
    /// benches).
    pub url: String,
    /// Seconds between two heartbeats (default 5, in (0, 3600]); the lab marks a bench stale
    /// after three missed ones.
    #[serde(default = "default_heartbeat_s")]
    pub heartbeat_s: f64,
}

fn default_heartbeat_s() -> f64 {
    5.0
}

impl LabConfig {
    /// Checks the section; the error names the field and its limit.
    pub fn check(&self) -> Result<(), String> {
        let url = self.url.trim();
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        if !postgres && !std::path::Path::new(url).is_absolute() {
            return Err(format!(
                "[lab] url = {:?} must be a postgres:// URL (or an absolute path of a SQLite file)",
                self.url
            ));
        }
        let h = self.heartbeat_s;
        if !(h.is_finite() && h > 0.0 && h <= MAX_HEARTBEAT_S) {
            return Err(format!(
                "[lab] heartbeat_s = {h} must be finite, > 0 and ≤ {MAX_HEARTBEAT_S}"
            ));
        }
        Ok(())
    }

    /// After how long without a heartbeat the lab calls this bench stale \[s\].
    pub fn stale_after_s(&self) -> f64 {
        3.0 * self.heartbeat_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LabConfig, String> {
        let lab: LabConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        lab.check().map(|()| lab)
    }

    #[test]
    fn the_heartbeat_defaults_to_five_seconds() {
        let lab = parse("url = \"postgres://lab@db/runs\"").unwrap();
        assert_eq!(lab.heartbeat_s, 5.0);
        assert_eq!(lab.stale_after_s(), 15.0);
        assert!(parse("url = \"/srv/lab/runs.db\"\nheartbeat_s = 0.5").is_ok());
    }

    #[test]
    fn errors_name_the_field_and_the_limit() {
        for (text, says) in [
            (
                "url = \"postgres://x/y\"\nheartbeat_s = 0",
                "[lab] heartbeat_s = 0 must be finite, > 0 and ≤ 3600",
            ),
            (
                "url = \"postgres://x/y\"\nheartbeat_s = -1.5",
                "[lab] heartbeat_s = -1.5 must be",
            ),
            (
                "url = \"postgres://x/y\"\nheartbeat_s = 7200",
                "[lab] heartbeat_s = 7200 must be",
            ),
            (
                "url = \"runs.db\"",
                "[lab] url = \"runs.db\" must be a postgres:// URL",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(says), "{text}: {e}");
        }
        // In bench.toml, the file is named first.
        let text = format!(
            "{}\n[lab]\nurl = \"postgres://x/y\"\nheartbeat_s = 0\n",
            super::super::SIM_TOML
        );
        let e = super::super::BenchConfig::parse(&text, "b.toml").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("b.toml: [lab] heartbeat_s = 0 must be"),
            "{e}"
        );
        assert!(
            parse("url = \"postgres://x/y\"\nheartbeat = 5")
                .unwrap_err()
                .contains("unknown field `heartbeat`")
        );
    }
}
