//! `[plant]` of bench.toml: what the axis carries beside its inertia, so that a fit of the
//! bench's runs takes it without being told (docs/src/known-load.md).

use serde::{Deserialize, Serialize};

/// `[plant]`: the known load on the axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlantConfig {
    /// `load = { kind = "pendulum", mass = KG, length = M, bottom = RAD }`, `{ kind = "spring",
    /// stiffness, rest }` or `{ kind = "constant", force }`; none by default. `bench fit` on
    /// a run of this bench uses it as `given.load` where the procedure takes one and `given`
    /// does not say otherwise.
    #[serde(default, skip_serializing_if = "friction::Load::is_none")]
    pub load: friction::Load,
}

impl PlantConfig {
    /// True when nothing is stated (the section is then left out of a run's snapshot).
    pub fn is_empty(&self) -> bool {
        self.load.is_none()
    }

    /// Checks the load; the message names `[plant] load.FIELD`.
    pub fn validate(&self) -> Result<(), String> {
        self.load.validate().map_err(|e| format!("[plant] {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{BenchConfig, SIM_TOML};

    #[test]
    fn a_pendulum_is_read_and_a_bad_one_named() {
        let text = format!(
            "{SIM_TOML}\n[plant]\nload = {{ kind = \"pendulum\", mass = 2.0, length = 0.3, bottom = 0.1 }}\n"
        );
        let c = BenchConfig::parse(&text, "b.toml").unwrap();
        assert_eq!(c.plant.load.force(0.1), 0.0);
        let j = serde_json::to_value(&c).unwrap();
        assert_eq!(j["plant"]["load"]["kind"], "pendulum");
        let bad = text.replace("length = 0.3", "length = -0.3");
        let e = BenchConfig::parse(&bad, "b.toml").unwrap_err().to_string();
        assert_eq!(
            e,
            "b.toml: [plant] load.length (-0.3) must be finite and > 0"
        );
        // The shipped bench has no load and its snapshot no [plant].
        let sim = serde_json::to_value(BenchConfig::sim()).unwrap();
        assert!(sim.get("plant").is_none());
    }
}
