//! What a notification says: the event, the bench, the run and why it stopped, as JSON (the
//! webhook's body) and as one sentence (a mail's subject).

use bench_daemon::config::NotifyEvent;
use run_store::{ReasonCode, RunStatus};
use serde::Serialize;

/// One notification, the JSON body a webhook is POSTed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Notice {
    /// `run_completed`, `run_failed`, `run_aborted`, `queue_paused`, `estop`, ...
    pub event: NotifyEvent,
    /// The bench it happened on.
    pub bench_id: String,
    /// When the service saw it (RFC 3339 UTC).
    pub at: String,
    /// The run, for run events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<i64>,
    /// The run's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_name: Option<String>,
    /// The run's experiment kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Why it stopped: the stable code (`limit_breach`, `estop`, `operator`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// Why it stopped, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The trend point outside its limits, for `trend_out_of_limits`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trend: Option<TrendNotice>,
    /// The calibration coming due, for `calibration_due`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationNotice>,
    /// The whole of it in one sentence.
    pub text: String,
}

/// A trend point outside its control limits (SI units, as the trend stores them).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrendNotice {
    /// The parameter.
    pub param: String,
    /// The fitted model ('' for a measured parameter).
    pub model: String,
    /// Its position on a curve (0 for a single value).
    pub idx: i64,
    /// The value.
    pub value: f64,
    /// Its standard error, if the fit gave one.
    pub std_error: Option<f64>,
    /// The parameter set of a fit.
    pub parameter_set_id: Option<i64>,
    /// The series' lower limit.
    pub lower: Option<f64>,
    /// Its upper limit.
    pub upper: Option<f64>,
}

/// A sensor's calibration coming due (`bench sensors calibrate`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CalibrationNotice {
    /// The sensor, as bench.toml names it.
    pub sensor: String,
    /// The calibration's id.
    pub calibration_id: i64,
    /// Its certificate.
    pub certificate: String,
    /// Its due date (YYYY-MM-DD).
    pub due: String,
    /// Days until then (negative: overdue).
    pub due_in_days: i64,
}

/// A run's end, as the notifier reads it from the store.
#[derive(Clone, Debug, Default)]
pub struct RunEnd {
    /// The run.
    pub run_id: i64,
    /// Its final status.
    pub status: Option<RunStatus>,
    /// Its name.
    pub name: Option<String>,
    /// Its kind.
    pub kind: Option<String>,
    /// Why it stopped (code).
    pub reason_code: Option<ReasonCode>,
    /// Why it stopped (words).
    pub reason: Option<String>,
}

impl Notice {
    fn bare(event: NotifyEvent, bench_id: &str, text: String) -> Notice {
        Notice {
            event,
            bench_id: bench_id.to_string(),
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            run_id: None,
            run_name: None,
            kind: None,
            reason_code: None,
            reason: None,
            trend: None,
            calibration: None,
            text,
        }
    }

    /// A run ended (`None` for a status that is no end).
    pub fn run_end(bench_id: &str, end: RunEnd) -> Option<Notice> {
        let (event, verb) = match end.status? {
            RunStatus::Completed => (NotifyEvent::RunCompleted, "completed"),
            RunStatus::Failed => (NotifyEvent::RunFailed, "failed"),
            RunStatus::Aborted => (NotifyEvent::RunAborted, "was aborted"),
            _ => return None,
        };
        let name = end
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let why = end
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        let text = format!("bench {bench_id}: run {}{name} {verb}{why}", end.run_id);
        Some(Notice {
            run_id: Some(end.run_id),
            run_name: end.name,
            kind: end.kind,
            reason_code: end.reason_code,
            reason: end.reason,
            ..Notice::bare(event, bench_id, text)
        })
    }

    /// The queue paused (not by the e-stop).
    pub fn queue_paused(bench_id: &str) -> Notice {
        let text = format!("bench {bench_id}: the queue is paused; nothing new starts");
        Notice::bare(NotifyEvent::QueuePaused, bench_id, text)
    }

    /// A point of a watched trend fell outside its series' limits.
    pub fn trend_out_of_limits(bench_id: &str, run: i64, t: TrendNotice) -> Notice {
        let of = if t.model.is_empty() {
            String::new()
        } else {
            format!(" ({})", t.model)
        };
        let limit = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6}"));
        let text = format!(
            "bench {bench_id}: {}{of} of run {run} = {:.6} is outside its limits [{}, {}]",
            t.param,
            t.value,
            limit(t.lower),
            limit(t.upper)
        );
        Notice {
            run_id: Some(run),
            trend: Some(t),
            ..Notice::bare(NotifyEvent::TrendOutOfLimits, bench_id, text)
        }
    }

    /// A sensor's calibration comes due within the entry's days (or is past due).
    pub fn calibration_due(bench_id: &str, c: CalibrationNotice) -> Notice {
        let when = match c.due_in_days {
            d if d < 0 => format!("was due {} ({} days ago)", c.due, -d),
            d => format!("is due {} (in {d} days)", c.due),
        };
        let text = format!(
            "bench {bench_id}: the calibration of sensor {} (certificate {}) {when}",
            c.sensor, c.certificate
        );
        Notice {
            calibration: Some(c),
            ..Notice::bare(NotifyEvent::CalibrationDue, bench_id, text)
        }
    }

    /// The e-stop latched, with its reason if the store has it.
    pub fn estop(bench_id: &str, reason: Option<String>) -> Notice {
        let why = reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        let text = format!("bench {bench_id}: e-stop latched{why}");
        Notice {
            reason_code: Some(ReasonCode::Estop),
            reason,
            ..Notice::bare(NotifyEvent::Estop, bench_id, text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aborted_run_says_why_in_its_sentence_and_its_json() {
        let end = RunEnd {
            run_id: 7,
            status: Some(RunStatus::Aborted),
            name: Some("night sweep".into()),
            kind: Some("prbs".into()),
            reason_code: Some(ReasonCode::Estop),
            reason: Some("e-stop: button".into()),
        };
        let n = Notice::run_end("b12", end).unwrap();
        assert_eq!(
            n.text,
            "bench b12: run 7 (night sweep) was aborted: e-stop: button"
        );
        let v = serde_json::to_value(&n).unwrap();
        assert_eq!(v["event"], "run_aborted");
        assert_eq!(v["reason_code"], "estop");
        assert_eq!(v["run_id"], 7);
        let running = RunEnd {
            status: Some(RunStatus::Running),
            ..RunEnd::default()
        };
        assert_eq!(Notice::run_end("b12", running), None);
    }
}
