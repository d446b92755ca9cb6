//! Suspenders: the decision to pause a run on a `[[suspend]]` condition and to let it go on,
//! as a pure function of (conditions, readings, time). The loop reads the signals at each
//! segment's start and, while paused, every [`POLL_S`]; what it does with the decision (the
//! safe state, the wait, the restart of the segment) is `control::pause`.

use crate::config::SuspendRule;

/// How often a paused run reads its conditions \[s\].
pub const POLL_S: f64 = 0.5;

/// What to do, given the latest readings.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// No condition holds: go on.
    Run,
    /// Condition `rule` holds (`value`: its reading, `None` when it could not be read): pause
    /// before the next segment.
    Pause {
        /// Index of the rule.
        rule: usize,
        /// Its reading.
        value: Option<f64>,
    },
    /// Paused: keep waiting.
    Wait,
    /// Paused, and every condition has read clear for the hold time: go on.
    Continue {
        /// How long the run was paused \[s\].
        paused_s: f64,
    },
    /// Paused longer than the limit of a condition that held during the pause.
    Timeout {
        /// The condition that set the limit.
        rule: usize,
        /// How long the run was paused \[s\].
        paused_s: f64,
    },
}

/// What the suspenders remember between readings (plain data; one per run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Suspenders {
    /// Bench time the pause began \[s\], while paused.
    paused_since: Option<f64>,
    /// Bench time since which every condition has read clear \[s\], while paused.
    clear_since: Option<f64>,
    /// The rule with the smallest `suspended_timeout_s` among those that held in this pause.
    limit_rule: Option<usize>,
}

/// The rules that hold on `readings` (one per rule; `None` = unreadable, which counts as
/// holding: a value that cannot be read is not clear).
fn holding(rules: &[SuspendRule], readings: &[Option<f64>]) -> Vec<usize> {
    (rules.iter().zip(readings).enumerate())
        .filter(|(_, (r, v))| v.is_none_or(|v| r.holds(v)))
        .map(|(i, _)| i)
        .collect()
}

impl Suspenders {
    /// Whether a pause is in force.
    pub fn paused(&self) -> bool {
        self.paused_since.is_some()
    }

    /// The decision on `readings` (one per rule, in order) at bench time `now` \[s\].
    pub fn decide(
        &mut self,
        rules: &[SuspendRule],
        readings: &[Option<f64>],
        now: f64,
    ) -> Decision {
        let holding = holding(rules, readings);
        let Some(since) = self.paused_since else {
            return match holding.first() {
                None => Decision::Run,
                Some(&rule) => {
                    *self = Suspenders {
                        paused_since: Some(now),
                        clear_since: None,
                        limit_rule: Some(rule),
                    };
                    Decision::Pause {
                        rule,
                        value: readings[rule],
                    }
                }
            };
        };
        for &i in &holding {
            let tighter = self
                .limit_rule
                .is_none_or(|l| rules[i].suspended_timeout_s < rules[l].suspended_timeout_s);
            if tighter {
                self.limit_rule = Some(i);
            }
        }
        let paused_s = now - since;
        if let Some(rule) = self.limit_rule
            && paused_s > rules[rule].suspended_timeout_s
        {
            return Decision::Timeout { rule, paused_s };
        }
        if !holding.is_empty() {
            self.clear_since = None;
            return Decision::Wait;
        }
        let clear = *self.clear_since.get_or_insert(now);
        let hold = rules.iter().map(|r| r.hold_s).fold(0.0, f64::max);
        if now - clear >= hold {
            *self = Suspenders::default();
            Decision::Continue { paused_s }
        } else {
            Decision::Wait
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temperature_above(limit: f64, hold_s: f64, timeout_s: f64) -> SuspendRule {
        SuspendRule {
            signal: "drive.temperature".into(),
            above: Some(limit),
            below: None,
            hold_s,
            suspended_timeout_s: timeout_s,
            line: None,
        }
    }

    #[test]
    fn pauses_while_the_condition_holds_and_goes_on_after_the_hold_time() {
        let rules = [temperature_above(60.0, 2.0, 100.0)];
        let mut s = Suspenders::default();
        assert_eq!(s.decide(&rules, &[Some(59.9)], 0.0), Decision::Run);
        let pause = s.decide(&rules, &[Some(75.0)], 1.0);
        assert_eq!(
            pause,
            Decision::Pause {
                rule: 0,
                value: Some(75.0)
            }
        );
        assert!(s.paused());
        assert_eq!(s.decide(&rules, &[Some(70.0)], 5.0), Decision::Wait);
        // Clear at 6 s, again too warm at 7 s: the hold time starts over at 8 s.
        assert_eq!(s.decide(&rules, &[Some(50.0)], 6.0), Decision::Wait);
        assert_eq!(s.decide(&rules, &[Some(61.0)], 7.0), Decision::Wait);
        assert_eq!(s.decide(&rules, &[Some(50.0)], 8.0), Decision::Wait);
        assert_eq!(s.decide(&rules, &[Some(50.0)], 9.9), Decision::Wait);
        assert_eq!(
            s.decide(&rules, &[Some(50.0)], 10.0),
            Decision::Continue { paused_s: 9.0 }
        );
        assert!(!s.paused());
        assert_eq!(s.decide(&rules, &[Some(50.0)], 10.5), Decision::Run);
    }

    #[test]
    fn an_unreadable_signal_is_not_clear_and_a_long_pause_times_out() {
        let rules = [
            temperature_above(60.0, 1.0, 30.0),
            SuspendRule {
                signal: "sensor.torque".into(),
                above: None,
                below: Some(-1.0),
                ..temperature_above(0.0, 0.0, 10.0)
            },
        ];
        let mut s = Suspenders::default();
        let first = s.decide(&rules, &[None, Some(0.0)], 0.0);
        assert_eq!(
            first,
            Decision::Pause {
                rule: 0,
                value: None
            }
        );
        assert_eq!(
            s.decide(&rules, &[Some(20.0), Some(0.0)], 20.0),
            Decision::Wait
        );
        // The second condition holds too: its 10 s limit is the tighter one.
        assert_eq!(
            s.decide(&rules, &[Some(20.0), Some(-2.0)], 25.0),
            Decision::Timeout {
                rule: 1,
                paused_s: 25.0
            }
        );
        let mut s = Suspenders::default();
        s.decide(&rules, &[Some(80.0), Some(0.0)], 0.0);
        assert_eq!(
            s.decide(&rules, &[Some(80.0), Some(0.0)], 30.5),
            Decision::Timeout {
                rule: 0,
                paused_s: 30.5
            }
        );
    }
}
