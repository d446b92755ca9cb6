//! `bench probe --check`: a first-connection checklist of a profile against a connected device,
//! from one reading of every readable signal, without writing anything (so nothing moves).
//!
//! Each item is `pass`, `warn` or `fail` with what to fix: the link and every read block, the
//! values inside the profile's ranges, 32-bit values whose words look swapped, the drive's
//! status (a latched fault, an enabled power stage), its communication watchdog, the settings
//! a run writes at connect (and which are already in place), a write-rate limit (EEPROM), and
//! the signals still to be checked against the manual.

use protocols::profile::RawValue;
use protocols::{DeviceKind, Profile, Role, Step};
use serde::Serialize;
use serde_json::{Map, Value};

/// How an item came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// As it should be.
    Pass,
    /// Works, but look at it.
    Warn,
    /// Must be fixed before a run.
    Fail,
}

/// One line of the checklist.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Item {
    /// Outcome.
    pub outcome: Outcome,
    /// What was checked and what was found.
    pub what: String,
    /// What to do (empty on a pass).
    pub fix: String,
}

fn item(outcome: Outcome, what: String, fix: &str) -> Item {
    Item {
        outcome,
        what,
        fix: fix.to_string(),
    }
}

/// One reading: the decoded signals by name (`{"value", "raw", ...}` as `bench probe` prints
/// them), the raw values, the status patterns and the failed blocks.
#[derive(Debug)]
pub struct Reading<'a> {
    /// Where the device was reached.
    pub endpoint: &'a str,
    /// The signals read, as printed.
    pub signals: &'a Map<String, Value>,
    /// Raw values by signal name.
    pub raw: &'a [(String, RawValue)],
    /// Status patterns by name.
    pub status: &'a Map<String, Value>,
    /// Failed read blocks (`{"registers", "error"}`).
    pub errors: &'a [Value],
}

/// The checklist of `profile` on `reading`.
pub fn checklist(profile: &Profile, r: &Reading<'_>) -> Vec<Item> {
    let mut out = Vec::new();
    link(profile, r, &mut out);
    ranges(profile, r, &mut out);
    word_order(profile, r, &mut out);
    if profile.device.kind == DeviceKind::Drive {
        drive_state(r, &mut out);
        watchdog(profile, r, &mut out);
    }
    connect_settings(profile, r, &mut out);
    if let Some(hz) = profile.max_write_rate_hz() {
        out.push(item(
            Outcome::Warn,
            format!("writes are limited to {hz} Hz (parameters backed by EEPROM)"),
            &format!(
                "choose [limits] period_s >= {} s; a faster plan is refused",
                1.0 / hz
            ),
        ));
    }
    let unverified: Vec<&str> = profile
        .signals
        .iter()
        .filter(|s| s.unverified)
        .map(|s| s.name.as_str())
        .collect();
    out.push(if unverified.is_empty() {
        item(
            Outcome::Pass,
            "every signal is verified against a source".into(),
            "",
        )
    } else {
        item(
            Outcome::Warn,
            format!("signals not verified against the manual: {}", unverified.join(", ")),
            "check each against the vendor's manual (address, type, scale, unit), then drop `unverified`; runs need [safety] allow_unverified = true until then",
        )
    });
    out
}

fn link(profile: &Profile, r: &Reading<'_>, out: &mut Vec<Item>) {
    let readable = profile
        .signals
        .iter()
        .filter(|s| s.access.readable())
        .count();
    out.push(if r.signals.is_empty() {
        item(
            Outcome::Fail,
            format!(
                "no signal of '{}' answered at {}",
                profile.device.name, r.endpoint
            ),
            "check the wiring, the port, the baud rate and parity, and the unit id (--unit)",
        )
    } else {
        item(
            Outcome::Pass,
            format!(
                "'{}' answers at {}: {} of {readable} readable signals read",
                profile.device.name,
                r.endpoint,
                r.signals.len()
            ),
            "",
        )
    });
    for e in r.errors {
        // A refused address is the map's fault; no reply at all is the line's or the timing's.
        let fix = if e["kind"] == "link" {
            "no reply: check the unit id, the line (baud, parity, stop bits) and the silence the device needs between frames ([timing] inter_frame_gap_ms; the Delta's is 10 ms)"
        } else {
            "check these addresses against the manual (is it counted from 1? [encoding] address_base) and the register table"
        };
        out.push(item(
            Outcome::Fail,
            format!(
                "{}: {}",
                e["registers"].as_str().unwrap_or("?"),
                e["error"].as_str().unwrap_or("?")
            ),
            fix,
        ));
    }
}

fn ranges(profile: &Profile, r: &Reading<'_>, out: &mut Vec<Item>) {
    let mut inside = 0;
    for s in &profile.signals {
        let Some(v) = r.signals.get(&s.name).and_then(|e| e["value"].as_f64()) else {
            continue;
        };
        // A watchdog reads 0 while off (until a run arms it); its own item says so.
        if s.role == Some(Role::WatchdogTimeout) && v == 0.0 {
            continue;
        }
        let tol = 1e-9 * v.abs().max(1.0);
        let low = s.min.is_some_and(|m| v < m - tol);
        let high = s.max.is_some_and(|m| v > m + tol);
        if low || high {
            out.push(item(
                Outcome::Fail,
                format!(
                    "{} reads {v} {}, outside the profile's range [{}, {}]",
                    s.name,
                    s.si_unit(),
                    s.min.map_or("-inf".into(), |m| m.to_string()),
                    s.max.map_or("inf".into(), |m| m.to_string())
                ),
                "check its scale, unit, type and word order against the manual",
            ));
        } else if s.min.is_some() || s.max.is_some() {
            inside += 1;
        }
    }
    if inside > 0 {
        out.push(item(
            Outcome::Pass,
            format!("{inside} signals with a range read inside it"),
            "",
        ));
    }
}

/// A two-register integer whose declared word order gives a value of 65536 or more while the
/// other order gives a small one: the words are most likely swapped.
fn word_order(profile: &Profile, r: &Reading<'_>, out: &mut Vec<Item>) {
    for (name, raw) in r.raw {
        let Some(s) = profile.signals.iter().find(|s| s.name == *name) else {
            continue;
        };
        if s.registers() != 2 {
            continue;
        }
        let (declared, swapped) = match *raw {
            RawValue::Unsigned(u) => {
                let w = (u & 0xFFFF_FFFF) as u32;
                (i64::from(w), i64::from(w.rotate_left(16)))
            }
            RawValue::Signed(i) => {
                let w = i as i32 as u32;
                (i64::from(w as i32), i64::from(w.rotate_left(16) as i32))
            }
            _ => continue,
        };
        if declared.abs() >= 0x1_0000 && swapped.abs() < 0x1_0000 {
            out.push(item(
                Outcome::Warn,
                format!(
                    "{name}: raw {declared} with the profile's word order, {swapped} with the other"
                ),
                "if the small value is the true one, set the word order ([encoding] word_order or the signal's)",
            ));
        }
    }
}

fn pattern(r: &Reading<'_>, name: &str) -> Option<bool> {
    r.status.get(name).and_then(Value::as_bool)
}

fn drive_state(r: &Reading<'_>, out: &mut Vec<Item>) {
    match pattern(r, "fault") {
        Some(true) => out.push(item(
            Outcome::Fail,
            "the drive reports a fault".into(),
            "find its cause, then clear it with `bench fault-reset --config bench.toml`",
        )),
        Some(false) => out.push(item(Outcome::Pass, "no fault reported".into(), "")),
        None => out.push(item(
            Outcome::Warn,
            "no fault status read (no `fault` pattern or no `status` signal)".into(),
            "map the status register (role status) and its `fault` pattern: the daemon stops on it",
        )),
    }
    if pattern(r, "enabled") == Some(true) {
        out.push(item(
            Outcome::Warn,
            "the power stage is enabled".into(),
            "disable it: a run enables the drive itself and disables it at the end",
        ));
    }
}

fn watchdog(profile: &Profile, r: &Reading<'_>, out: &mut Vec<Item>) {
    let Some(s) = profile
        .signals
        .iter()
        .find(|s| s.role == Some(Role::WatchdogTimeout))
    else {
        out.push(item(
            Outcome::Warn,
            "the profile maps no communication watchdog (role watchdog_timeout)".into(),
            "map it from the manual: without it the drive keeps its last command if the daemon dies, and runs need [safety] allow_no_drive_watchdog = true",
        ));
        return;
    };
    let value = r.signals.get(&s.name).and_then(|e| e["value"].as_f64());
    out.push(match value {
        Some(v) if v > 0.0 => item(
            Outcome::Pass,
            format!("communication watchdog {} = {v} s", s.name),
            "",
        ),
        Some(_) => item(
            Outcome::Pass,
            format!("communication watchdog {} is off now", s.name),
            "nothing to do: a run writes [safety] watchdog_s at connect and reads it back",
        ),
        None => item(
            Outcome::Fail,
            format!("the watchdog signal {} could not be read", s.name),
            "check its address: a run must read the watchdog back",
        ),
    });
}

fn connect_settings(profile: &Profile, r: &Reading<'_>, out: &mut Vec<Item>) {
    let Some(seq) = profile.sequences.iter().find(|q| q.name == "connect") else {
        return;
    };
    for step in &seq.steps {
        let Step::Write { signal, value, .. } = step else {
            continue;
        };
        let now = r.signals.get(signal).and_then(|e| e["value"].as_f64());
        out.push(match now {
            Some(v) if (v - value).abs() < 1e-9 => item(
                Outcome::Pass,
                format!("{signal} = {v}, as a run sets it at connect"),
                "",
            ),
            Some(v) => item(
                Outcome::Warn,
                format!("{signal} = {v}; a run writes {value} at connect and reads it back"),
                "nothing to do unless the drive must keep its own value",
            ),
            None => item(
                Outcome::Fail,
                format!("{signal} (written at connect) could not be read"),
                "check its address: a run reads it back after writing it",
            ),
        });
    }
}

/// The checklist as text, one item per line, and the number of failures.
pub fn render(items: &[Item]) -> (String, usize) {
    let mut text = String::new();
    for i in items {
        let tag = match i.outcome {
            Outcome::Pass => "PASS",
            Outcome::Warn => "WARN",
            Outcome::Fail => "FAIL",
        };
        text.push_str(&format!("{tag}  {}\n", i.what));
        if !i.fix.is_empty() && i.outcome != Outcome::Pass {
            text.push_str(&format!("      → {}\n", i.fix));
        }
    }
    let fails = items.iter().filter(|i| i.outcome == Outcome::Fail).count();
    text.push_str(&format!(
        "{} passed, {} to look at, {fails} failed\n",
        items.iter().filter(|i| i.outcome == Outcome::Pass).count(),
        items.iter().filter(|i| i.outcome == Outcome::Warn).count()
    ));
    (text, fails)
}
