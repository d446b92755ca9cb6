//! `loop_cpu` in bench.toml: the CPU a run's real-time threads share (what `control::cpus`
//! does with it).

use serde::{Deserialize, Serialize};

/// Which CPU `loop_cpu` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LoopCpu {
    /// That CPU, by its number.
    Index(usize),
    /// `"last"`: the highest-numbered CPU the process may use or that `isolcpus` set aside
    /// (where a bench PC usually isolates one).
    Named(LastCpu),
}

/// The word `"last"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LastCpu {
    /// The highest-numbered CPU the process may use or that `isolcpus` set aside.
    Last,
}
