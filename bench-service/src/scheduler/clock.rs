//! The schedule's time: the scheduler's clock and the times entries are stored with.

use super::cmd::Recurrence;
use chrono::{DateTime, SecondsFormat, Utc};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The scheduler's time of day: the wall clock, or the wall clock moved on by an offset
/// that tests advance by days (tokio's paused time cannot stand in: the run store's pool
/// timeouts run on tokio's clock and would expire at the first jump).
#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// `Utc::now()`: schedules follow the bench PC's clock.
    #[default]
    Wall,
    /// `Utc::now()` plus an offset in milliseconds, moved by [`Clock::advance`].
    Shifted(Arc<AtomicI64>),
}

impl Clock {
    /// A clock that starts at the wall clock and moves on when told.
    pub fn shifted() -> Clock {
        Clock::Shifted(Arc::default())
    }

    /// Moves a shifted clock on by `d` (the wall clock cannot be moved).
    pub fn advance(&self, d: std::time::Duration) {
        if let Clock::Shifted(ms) = self {
            let d = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
            ms.fetch_add(d, Ordering::SeqCst);
        }
    }

    /// The time now.
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Clock::Wall => Utc::now(),
            Clock::Shifted(ms) => {
                Utc::now() + chrono::Duration::milliseconds(ms.load(Ordering::SeqCst))
            }
        }
    }
}

/// Parses an RFC 3339 time.
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// RFC 3339 UTC with milliseconds, as the store writes times.
pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The first occurrence of a recurring entry after `now`: whole days (`nightly`) or weeks
/// (`weekly`) after the time it was due, so it keeps its time of day and a daemon that was
/// down for days fires once, not once per missed night.
pub fn next_occurrence(due: DateTime<Utc>, now: DateTime<Utc>, rule: Recurrence) -> DateTime<Utc> {
    let step = chrono::Duration::days(match rule {
        Recurrence::Weekly => 7,
        Recurrence::Nightly => 1,
    });
    let mut t = due;
    while t <= now {
        t += step;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recurring_entry_keeps_its_time_of_day_and_fires_once_after_downtime() {
        let t = |s: &str| parse_time(s).unwrap();
        let due = t("2026-11-20T22:00:00Z");
        // (now, rule, next): fired on time → the next night or week; the daemon was down three
        // nights → one run now and the next one tonight, not one per missed night.
        let (nightly, weekly) = (Recurrence::Nightly, Recurrence::Weekly);
        let cases = [
            ("2026-11-20T22:00:00.200Z", nightly, "2026-11-21T22:00:00Z"),
            ("2026-11-20T22:00:00.200Z", weekly, "2026-11-27T22:00:00Z"),
            ("2026-11-23T09:30:00Z", nightly, "2026-11-23T22:00:00Z"),
            ("2026-11-23T09:30:00Z", weekly, "2026-11-27T22:00:00Z"),
        ];
        for (now, rule, next) in cases {
            assert_eq!(
                next_occurrence(due, t(now), rule),
                t(next),
                "{now} {rule:?}"
            );
        }
        assert_eq!(format_time(due), "2026-11-20T22:00:00.000Z");
    }
}
