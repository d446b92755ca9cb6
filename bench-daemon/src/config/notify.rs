//! `[[notify]]`: who `bench serve` tells when a run ends, the queue pauses or the e-stop
//! latches: a webhook (`url`, a JSON body POSTed to it) or a mail relay (`smtp`), each with
//! the events it wants. Delivery is the service's (`bench_service::notify`); this is the
//! configuration and its checks, every rejection naming the entry, its line and the field.

use serde::{Deserialize, Serialize};

/// What a `[[notify]]` entry can be told of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyEvent {
    /// A run ended completed.
    RunCompleted,
    /// A run ended failed (with the stop reason).
    RunFailed,
    /// A run was aborted (with the stop reason: a limit, the e-stop, an operator).
    RunAborted,
    /// The queue paused on its own or by request (not by the e-stop, which is `estop`).
    QueuePaused,
    /// The e-stop latched (with its reason).
    Estop,
    /// A fitted parameter's trend point fell outside its control limits.
    TrendOutOfLimits,
    /// A calibration of the bench is due.
    CalibrationDue,
}

impl NotifyEvent {
    /// Its name in bench.toml and in the notification's JSON (`run_failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyEvent::RunCompleted => "run_completed",
            NotifyEvent::RunFailed => "run_failed",
            NotifyEvent::RunAborted => "run_aborted",
            NotifyEvent::QueuePaused => "queue_paused",
            NotifyEvent::Estop => "estop",
            NotifyEvent::TrendOutOfLimits => "trend_out_of_limits",
            NotifyEvent::CalibrationDue => "calibration_due",
        }
    }
}

/// One `[[notify]]` entry: exactly one of `url` and `smtp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyConfig {
    /// A webhook: `http://host[:port]/path`, POSTed a JSON body per event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A mail relay that accepts plain SMTP from this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smtp: Option<SmtpConfig>,
    /// The events this entry is told of (at least one).
    pub events: Vec<NotifyEvent>,
    /// Attempts per notification before it is given up (1..=20, default 5).
    #[serde(default = "default_attempts")]
    pub attempts: u32,
    /// The wait before the first retry \[s\], doubled after each failed attempt up to 300 s
    /// (default 1).
    #[serde(default = "default_backoff_s")]
    pub backoff_s: f64,
    /// With `trend_out_of_limits`: the trends watched, each a parameter (of a model's fits, or
    /// a measured one) on this bench with its control limits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trends: Vec<TrendWatch>,
    /// With `calibration_due`: told once when a torque sensor's calibration comes within this
    /// many days of its due date (1..=365, default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_due_days: Option<u32>,
    /// The line of its `[[notify]]` header in bench.toml (for errors), once parsed.
    #[serde(skip)]
    pub line: Option<usize>,
}

/// `trends = [{ param, model, baseline_points, band }]`: a trend whose new points are checked
/// against their limits, as `bench trends` draws them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrendWatch {
    /// The parameter (`fs`, `fc`, `fs_nm`, ...).
    pub param: String,
    /// Only fits of this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The baseline: the series' first N points (default 10, at least 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_points: Option<usize>,
    /// Limits at mean ± this fraction of |mean| instead of mean ± 3σ (0 < band <= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<f64>,
}

/// `smtp = { host, port, from, to }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmtpConfig {
    /// The relay's host name or address.
    pub host: String,
    /// Its port (default 25).
    #[serde(default = "default_smtp_port")]
    pub port: u16,
    /// The sender's address.
    pub from: String,
    /// The recipients: one address or a list.
    #[serde(deserialize_with = "one_or_many")]
    pub to: Vec<String>,
}

fn default_attempts() -> u32 {
    5
}

fn default_backoff_s() -> f64 {
    1.0
}

fn default_smtp_port() -> u16 {
    25
}

/// The longest wait between two attempts \[s\].
pub const MAX_BACKOFF_S: f64 = 300.0;

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

impl NotifyConfig {
    /// The wait before attempt `n` (2, 3, ...) \[s\]: `backoff_s` doubled per failed attempt,
    /// at most [`MAX_BACKOFF_S`].
    pub fn backoff_before(&self, n: u32) -> f64 {
        let doublings = n.saturating_sub(2).min(30) as i32;
        (self.backoff_s * 2f64.powi(doublings)).min(MAX_BACKOFF_S)
    }

    /// Where it delivers, for logs and the audit: the URL, or `smtp://host:port`.
    pub fn target(&self) -> String {
        match (&self.url, &self.smtp) {
            (Some(url), _) => url.clone(),
            (None, Some(s)) => format!("smtp://{}:{}", s.host, s.port),
            (None, None) => String::new(),
        }
    }
}

/// Notes on each entry the line of its `[[notify]]` header in `text` (1-based).
pub fn note_lines(entries: &mut [NotifyConfig], text: &str) {
    let mut headers = super::suspend::header_lines(text, "[[notify]]");
    for e in entries {
        e.line = headers.next();
    }
}

/// Each entry on its own: one target, a well-formed URL or relay, events, attempts, back-off.
pub fn check_entries(entries: &[NotifyConfig]) -> Result<(), String> {
    for (k, e) in entries.iter().enumerate() {
        check_entry(e).map_err(|why| {
            let place = match e.line {
                Some(line) => format!("[[notify]] #{} (line {line})", k + 1),
                None => format!("[[notify]] #{}", k + 1),
            };
            format!("{place}: {why}")
        })?;
    }
    Ok(())
}

fn check_entry(e: &NotifyConfig) -> Result<(), String> {
    match (&e.url, &e.smtp) {
        (Some(_), Some(_)) => return Err("url and smtp are both given; give one".into()),
        (None, None) => {
            return Err("needs a target: url = \"http://...\" or smtp = { host, from, to }".into());
        }
        (Some(url), None) => check_url(url)?,
        (None, Some(s)) => check_smtp(s)?,
    }
    if e.events.is_empty() {
        return Err(
            "events = [] names no event: give at least one of run_completed, \
                    run_failed, run_aborted, queue_paused, estop, trend_out_of_limits, \
                    calibration_due"
                .into(),
        );
    }
    check_trends(e)?;
    check_calibration_due(e)?;
    if !(1..=20).contains(&e.attempts) {
        return Err(format!("attempts = {} must be within 1..=20", e.attempts));
    }
    if !(e.backoff_s.is_finite() && e.backoff_s > 0.0 && e.backoff_s <= MAX_BACKOFF_S) {
        return Err(format!(
            "backoff_s = {} must be > 0 and <= {MAX_BACKOFF_S}",
            e.backoff_s
        ));
    }
    Ok(())
}

/// `trends` given exactly when `trend_out_of_limits` is wanted, each with sane limits.
fn check_trends(e: &NotifyConfig) -> Result<(), String> {
    let wanted = e.events.contains(&NotifyEvent::TrendOutOfLimits);
    if wanted && e.trends.is_empty() {
        return Err(
            "trend_out_of_limits needs trends = [{ param = \"fs\", model = \"lugre\" }]: \
                    the trends to watch"
                .into(),
        );
    }
    if !wanted && !e.trends.is_empty() {
        return Err("trends is given but events does not name trend_out_of_limits".into());
    }
    for (k, t) in e.trends.iter().enumerate() {
        if t.param.trim().is_empty() {
            return Err(format!("trends[{k}].param is empty"));
        }
        if t.baseline_points.is_some_and(|n| n < 2) {
            return Err(format!("trends[{k}].baseline_points must be at least 2"));
        }
        if let Some(b) = t.band
            && !(b.is_finite() && b > 0.0 && b <= 1.0)
        {
            return Err(format!("trends[{k}].band = {b} must be > 0 and <= 1"));
        }
    }
    Ok(())
}

/// The days before a due date an entry wants `calibration_due`.
pub const DEFAULT_CALIBRATION_DUE_DAYS: u32 = 30;

impl NotifyConfig {
    /// The days before a calibration's due date this entry is told, if it wants
    /// `calibration_due`.
    pub fn calibration_due(&self) -> Option<u32> {
        self.events.contains(&NotifyEvent::CalibrationDue).then(|| {
            self.calibration_due_days
                .unwrap_or(DEFAULT_CALIBRATION_DUE_DAYS)
        })
    }
}

/// `calibration_due_days` only with `calibration_due`, and within a year.
fn check_calibration_due(e: &NotifyConfig) -> Result<(), String> {
    let Some(days) = e.calibration_due_days else {
        return Ok(());
    };
    if !e.events.contains(&NotifyEvent::CalibrationDue) {
        return Err(
            "calibration_due_days is given but events does not name calibration_due".into(),
        );
    }
    if !(1..=365).contains(&days) {
        return Err(format!(
            "calibration_due_days = {days} must be within 1..=365"
        ));
    }
    Ok(())
}

/// A URL the webhook client can POST to: `http://` with a host (no TLS: a relay on the lab
/// network forwards to an `https://` service).
fn check_url(url: &str) -> Result<(), String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!(
            "url = {url:?} must start with http:// (https is not spoken: point it at a relay \
             on the lab network)"
        ));
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.rsplit_once(':') {
        Some((host, _)) if !authority.ends_with(']') => host,
        _ => authority,
    };
    if host.is_empty() || authority.contains('@') || authority.chars().any(char::is_whitespace) {
        return Err(format!(
            "url = {url:?} must name a host: http://host[:port]/path"
        ));
    }
    if let Some((_, port)) = authority.rsplit_once(':')
        && !authority.ends_with(']')
        && port.parse::<u16>().is_err()
    {
        return Err(format!(
            "url = {url:?}: the port {port:?} is not a number 1..=65535"
        ));
    }
    Ok(())
}

fn check_smtp(s: &SmtpConfig) -> Result<(), String> {
    if s.host.trim().is_empty() {
        return Err("smtp.host is empty".into());
    }
    if s.port == 0 {
        return Err("smtp.port = 0 must be within 1..=65535".into());
    }
    check_address("smtp.from", &s.from)?;
    if s.to.is_empty() {
        return Err("smtp.to names nobody".into());
    }
    for to in &s.to {
        check_address("smtp.to", to)?;
    }
    Ok(())
}

/// A mail address as SMTP carries it: `local@domain`, printable, no brackets.
fn check_address(field: &str, a: &str) -> Result<(), String> {
    let ok = a
        .split_once('@')
        .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty())
        && a.chars()
            .all(|c| c.is_ascii_graphic() && !"<>,".contains(c));
    match ok {
        true => Ok(()),
        false => Err(format!(
            "{field} = {a:?} is not a mail address (local@domain)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(toml_text: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Doc {
            notify: Vec<NotifyConfig>,
        }
        let mut doc: Doc = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        note_lines(&mut doc.notify, toml_text);
        check_entries(&doc.notify)
    }

    #[test]
    fn good_entries_pass() {
        entry("[[notify]]\nurl = \"http://127.0.0.1:9/hook\"\nevents = [\"run_failed\"]\n")
            .unwrap();
        entry(
            "[[notify]]\nsmtp = { host = \"relay\", from = \"b@lab\", to = \"ops@lab\" }\n\
             events = [\"estop\", \"run_aborted\"]\n",
        )
        .unwrap();
    }

    #[test]
    fn errors_name_the_entry_its_line_and_the_field() {
        let cases = [
            (
                "url = \"https://x/h\"\nevents = [\"estop\"]",
                "url = \"https://x/h\" must start",
            ),
            (
                "url = \"http://:80/\"\nevents = [\"estop\"]",
                "must name a host",
            ),
            (
                "url = \"http://x:99999/\"\nevents = [\"estop\"]",
                "the port \"99999\"",
            ),
            (
                "url = \"http://x/\"\nevents = []",
                "events = [] names no event",
            ),
            (
                "url = \"http://x/\"\nevents = [\"estop\"]\nattempts = 0",
                "attempts = 0",
            ),
            (
                "url = \"http://x/\"\nevents = [\"estop\"]\nbackoff_s = -1.0",
                "backoff_s = -1",
            ),
            ("events = [\"estop\"]", "needs a target"),
            (
                "url = \"http://x/\"\nsmtp = { host = \"r\", from = \"a@b\", to = \"c@d\" }\nevents = [\"estop\"]",
                "url and smtp are both given",
            ),
            (
                "smtp = { host = \"r\", from = \"nobody\", to = \"c@d\" }\nevents = [\"estop\"]",
                "smtp.from = \"nobody\"",
            ),
        ];
        for (body, says) in cases {
            let text = format!("# a bench\n\n[[notify]]\n{body}\n");
            let e = entry(&text).unwrap_err();
            assert!(e.starts_with("[[notify]] #1 (line 3): "), "{e}");
            assert!(e.contains(says), "{body:?}: {e}");
        }
    }

    #[test]
    fn an_unknown_event_is_named() {
        let e =
            entry("[[notify]]\nurl = \"http://x/\"\nevents = [\"run_exploded\"]\n").unwrap_err();
        assert!(
            e.contains("run_exploded") && e.contains("run_failed"),
            "{e}"
        );
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let mut e: NotifyConfig =
            toml::from_str("url = \"http://x/\"\nevents = [\"estop\"]\nbackoff_s = 2.0").unwrap();
        assert_eq!([2, 3, 4].map(|n| e.backoff_before(n)), [2.0, 4.0, 8.0]);
        e.backoff_s = 200.0;
        assert_eq!(e.backoff_before(3), MAX_BACKOFF_S);
    }
}
