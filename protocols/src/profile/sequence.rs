//! Named multi-step procedures (`[[sequence]]`) and their steps.

use std::time::Duration;

/// One step of a [`Sequence`].
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write a value to a signal.
    Write {
        /// Signal name.
        signal: String,
        /// Value, SI.
        value: f64,
        /// The encoded registers.
        registers: Vec<u16>,
    },
    /// Wait.
    Wait(Duration),
    /// Read a signal until `raw & mask == value`, or fail after `timeout`.
    Expect {
        /// Signal name (integer type).
        signal: String,
        /// Bits that matter.
        mask: u64,
        /// Required value of those bits.
        value: u64,
        /// How long to keep reading.
        timeout: Duration,
    },
}

/// The name of the sequence a client runs once at connect ([`Profile::connect_sequence`](super::Profile::connect_sequence)).
pub const CONNECT_SEQUENCE: &str = "connect";

/// A named multi-step procedure (`connect`, `enable`, `disable`, `fault_reset`,
/// `after_command`, `mode_torque`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// Name.
    pub name: String,
    /// Steps, in order.
    pub steps: Vec<Step>,
}
