//! `[[suspend]]`: conditions that pause a run instead of ending it (a drive warming up, say).
//! Each names a readable signal of a device profile, a threshold and how long the condition
//! must have been clear before the run goes on; the loop's decision is `control::suspend`.

use protocols::Profile;
use serde::{Deserialize, Serialize};

/// The device a `[[suspend]]` signal belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalDevice {
    /// The servo drive (`drive.NAME`).
    Drive,
    /// The torque sensor (`sensor.NAME`).
    Sensor,
}

/// One `[[suspend]]` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspendRule {
    /// `drive.NAME` or `sensor.NAME`: a readable signal of that device's profile, read in its
    /// SI unit (°C for a temperature).
    pub signal: String,
    /// The condition holds while the reading is above this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<f64>,
    /// The condition holds while the reading is below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below: Option<f64>,
    /// How long the condition must have read clear before a paused run continues \[s\].
    #[serde(default = "default_hold_s")]
    pub hold_s: f64,
    /// The longest pause this condition may cause \[s\]: beyond it the run ends
    /// (`suspended_timeout`), the drive in its confirmed safe state.
    #[serde(default = "default_timeout_s")]
    pub suspended_timeout_s: f64,
    /// The line of its `[[suspend]]` header in bench.toml (for errors), once parsed.
    #[serde(skip)]
    pub line: Option<usize>,
}

fn default_hold_s() -> f64 {
    10.0
}

fn default_timeout_s() -> f64 {
    3600.0
}

impl SuspendRule {
    /// The device and the signal's name (of an entry bench.toml validation accepted).
    pub fn target(&self) -> (SignalDevice, &str) {
        match self.signal.split_once('.') {
            Some(("sensor", name)) => (SignalDevice::Sensor, name),
            Some((_, name)) => (SignalDevice::Drive, name),
            None => (SignalDevice::Drive, &self.signal),
        }
    }

    /// Whether `value` meets the condition.
    pub fn holds(&self, value: f64) -> bool {
        self.above.is_some_and(|a| value > a) || self.below.is_some_and(|b| value < b)
    }

    /// The condition in words: `drive.temperature > 60`.
    pub fn describe(&self) -> String {
        match (self.above, self.below) {
            (Some(a), _) => format!("{} > {a}", self.signal),
            (_, Some(b)) => format!("{} < {b}", self.signal),
            _ => self.signal.clone(),
        }
    }
}

/// Notes on each rule the line of its `[[suspend]]` header in `text` (1-based).
pub fn note_lines(rules: &mut [SuspendRule], text: &str) {
    let mut headers = header_lines(text, "[[suspend]]");
    for r in rules {
        r.line = headers.next();
    }
}

/// The lines (1-based) of `text` that open an array-of-tables entry `header` (`[[suspend]]`).
pub(super) fn header_lines<'a>(text: &'a str, header: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.lines()
        .enumerate()
        .filter(move |(_, l)| l.trim_start().starts_with(header))
        .map(|(i, _)| i + 1)
}

/// Where entry `k` is, for errors: `[[suspend]] #2 (line 31)`.
fn place(rules: &[SuspendRule], k: usize) -> String {
    match rules[k].line {
        Some(line) => format!("[[suspend]] #{} (line {line})", k + 1),
        None => format!("[[suspend]] #{}", k + 1),
    }
}

/// The rules of each entry on its own: the signal's form, one threshold, finite times.
pub fn check_rules(rules: &[SuspendRule]) -> Result<(), String> {
    for (k, r) in rules.iter().enumerate() {
        check_rule(r).map_err(|e| format!("{}: {e}", place(rules, k)))?;
    }
    Ok(())
}

fn check_rule(r: &SuspendRule) -> Result<(), String> {
    match r.signal.split_once('.') {
        Some(("drive" | "sensor", name)) if !name.is_empty() => {}
        _ => {
            return Err(format!(
                "signal = {:?} must be drive.NAME or sensor.NAME (a signal of that device's \
                 profile)",
                r.signal
            ));
        }
    }
    match (r.above, r.below) {
        (Some(_), Some(_)) => return Err("above and below are both given; give one".into()),
        (None, None) => return Err("needs a threshold: above = X or below = X".into()),
        (Some(x), None) | (None, Some(x)) if !x.is_finite() => {
            return Err(format!("the threshold {x} must be finite"));
        }
        _ => {}
    }
    if !(r.hold_s.is_finite() && r.hold_s >= 0.0) {
        return Err(format!("hold_s = {} must be finite and >= 0", r.hold_s));
    }
    if !(r.suspended_timeout_s.is_finite() && r.suspended_timeout_s > 0.0) {
        return Err(format!(
            "suspended_timeout_s = {} must be finite and > 0",
            r.suspended_timeout_s
        ));
    }
    Ok(())
}

/// Each entry's signal against the profiles: the device exists and its profile has the signal,
/// readable.
pub fn check_signals(
    rules: &[SuspendRule],
    drive: &Profile,
    sensor: Option<&Profile>,
) -> Result<(), String> {
    for (k, r) in rules.iter().enumerate() {
        let (device, name) = r.target();
        let profile = match device {
            SignalDevice::Drive => Some(drive),
            SignalDevice::Sensor => sensor,
        };
        let Some(profile) = profile else {
            return Err(format!(
                "{}: signal = {:?}: the bench has no [sensor]",
                place(rules, k),
                r.signal
            ));
        };
        match profile.signal(name) {
            Some(s) if s.access.readable() => {}
            Some(_) => {
                return Err(format!(
                    "{}: signal = {:?} is write-only in {}",
                    place(rules, k),
                    r.signal,
                    profile.file
                ));
            }
            None => {
                return Err(format!(
                    "{}: signal = {:?}: {} has no signal '{name}'",
                    place(rules, k),
                    r.signal,
                    profile.file
                ));
            }
        }
    }
    Ok(())
}
