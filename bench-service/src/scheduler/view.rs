//! What the scheduler publishes after every change ([`QueueView`], on a `watch` channel) and
//! the typed answers built from it: the queue with its ETAs ([`QueueListing`], also the live
//! `queue` event) and a run's change of state ([`RunEvent`], the live `run` event).

use super::cmd::OnFailure;
use run_store::{RunStatus, ScheduleEntry};
use serde::Serialize;

/// Waiting runs a `queue` event lists (the rest are counted: `GET /api/queue` lists them all).
pub const EVENT_ITEMS: usize = 100;

/// The running run as the scheduler knows it.
#[derive(Clone, Debug, Serialize)]
pub struct RunningView {
    /// Run id.
    pub run_id: i64,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Its estimated duration \[s\].
    pub estimate_s: f64,
    /// Lockstep model ids (the columns of the live `outputs`).
    pub models: Vec<String>,
}

/// A waiting run.
#[derive(Clone, Debug, Serialize)]
pub struct ItemView {
    /// Run id.
    pub run_id: i64,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Priority.
    pub priority: i64,
    /// Its estimated duration \[s\].
    pub estimate_s: f64,
}

/// What the scheduler publishes after every change.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueView {
    /// Paused: nothing new starts.
    pub paused: bool,
    /// Failure policy.
    pub on_failure: OnFailure,
    /// The e-stop is latched.
    pub estop: bool,
    /// The running run.
    pub running: Option<RunningView>,
    /// Waiting runs, in order.
    pub items: Vec<ItemView>,
    /// The schedule.
    pub schedule: Vec<ScheduleEntry>,
    /// Whether the devices answered (false after a run failed; true with the in-process sim
    /// or after a run that was not failed).
    pub connected: bool,
    /// Runs this scheduler saw end other than completed, by reason code.
    pub stops: std::collections::BTreeMap<run_store::ReasonCode, u64>,
}

/// The queue with its ETAs (`GET /api/queue`, the live `queue` event).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct QueueListing {
    /// Every waiting run, listed or not.
    pub waiting: usize,
    /// Only the first runs are listed (`limit`; the live `queue` event lists 100).
    pub truncated: bool,
    /// Nothing new starts.
    pub paused: bool,
    /// What the queue does when a run fails.
    pub on_failure: OnFailure,
    /// The e-stop is latched.
    pub estop: bool,
    /// The running run.
    pub running: Option<RunningListing>,
    /// The waiting runs listed, in order.
    pub items: Vec<ItemListing>,
    /// Until the last item ends \[s\].
    pub eta_total_s: f64,
}

/// The running run in a [`QueueListing`].
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunningListing {
    /// Run id.
    pub run_id: i64,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Estimated duration \[s\].
    pub estimate_s: f64,
    /// Estimated time left \[s\].
    pub remaining_s: f64,
}

/// A waiting run in a [`QueueListing`].
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ItemListing {
    /// Run id.
    pub run_id: i64,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Priority (higher first).
    pub priority: i64,
    /// 1 = next.
    pub position: usize,
    /// Estimated duration \[s\].
    pub estimate_s: f64,
    /// Estimated wait before it starts \[s\].
    pub starts_in_s: f64,
    /// Estimated time until it ends \[s\].
    pub eta_s: f64,
}

/// A run changed state (the live `run` event).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunEvent {
    /// The run.
    pub run_id: i64,
    /// Its status now.
    #[schemars(with = "RunStatusName")]
    pub status: RunStatus,
}

impl QueueView {
    /// The listing; `t` is the running run's time \[s\]. `starts_in_s` is the estimated wait
    /// before an item starts (the running run's remaining estimate plus the estimates of the
    /// items before it), `eta_s` the estimated time until it ends. `limit` lists only the first
    /// items (`waiting` counts them all, `truncated` says some are left out): a queue of
    /// 100 000 runs is not sent whole to every live client at every change.
    pub fn listing(&self, t: f64, limit: Option<usize>) -> QueueListing {
        let remaining = |r: &RunningView| (r.estimate_s - t).max(0.0);
        let mut at = self.running.as_ref().map_or(0.0, remaining);
        let shown = limit.unwrap_or(usize::MAX).min(self.items.len());
        let items = (self.items[..shown].iter().enumerate())
            .map(|(k, i)| {
                let starts_in_s = at;
                at += i.estimate_s;
                ItemListing {
                    run_id: i.run_id,
                    kind: i.kind.clone(),
                    name: i.name.clone(),
                    priority: i.priority,
                    position: k + 1,
                    estimate_s: i.estimate_s,
                    starts_in_s,
                    eta_s: at,
                }
            })
            .collect();
        at += self.items[shown..]
            .iter()
            .map(|i| i.estimate_s)
            .sum::<f64>();
        QueueListing {
            waiting: self.items.len(),
            truncated: shown < self.items.len(),
            paused: self.paused,
            on_failure: self.on_failure,
            estop: self.estop,
            running: self.running.as_ref().map(|r| RunningListing {
                run_id: r.run_id,
                kind: r.kind.clone(),
                name: r.name.clone(),
                estimate_s: r.estimate_s,
                remaining_s: remaining(r),
            }),
            items,
            eta_total_s: at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(run_id: i64, estimate_s: f64) -> ItemView {
        ItemView {
            run_id,
            kind: "k".into(),
            name: "n".into(),
            priority: 0,
            estimate_s,
        }
    }

    #[test]
    fn queue_eta_adds_the_running_remainder() {
        let view = QueueView {
            running: Some(RunningView {
                run_id: 1,
                kind: "k".into(),
                name: "n".into(),
                estimate_s: 10.0,
                models: vec![],
            }),
            items: vec![item(2, 5.0)],
            ..QueueView::default()
        };
        let l = view.listing(4.0, None);
        assert_eq!((l.items[0].starts_in_s, l.items[0].eta_s), (6.0, 11.0));
        assert_eq!((l.eta_total_s, l.running.unwrap().remaining_s), (11.0, 6.0));
    }

    #[test]
    fn a_limited_listing_counts_every_run() {
        let view = QueueView {
            items: (1..=250).map(|id| item(id, 2.0)).collect(),
            ..QueueView::default()
        };
        let l = view.listing(0.0, Some(EVENT_ITEMS));
        assert_eq!((l.items.len(), l.waiting, l.truncated), (100, 250, true));
        assert_eq!((l.eta_total_s, l.items[99].eta_s), (500.0, 200.0));
    }
}

/// [`run_store::RunStatus`] in the document: its stored names.
#[derive(Debug)]
pub struct RunStatusName;

impl schemars::JsonSchema for RunStatusName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RunStatus".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = run_store::RunStatus::ALL
            .iter()
            .map(|s| s.as_str())
            .collect();
        schemars::json_schema!({"type": "string", "enum": names})
    }
}
