//! What the scheduler is asked ([`Cmd`], each with a oneshot [`Reply`]) and answers: typed
//! requests and results; its refusals are [`SchedulerError`]s.

use super::campaign::CurrentCampaign;
use super::error::SchedulerError;
use super::plans::ScheduleBody;
use ::campaign::StepRunner;
use bench_daemon::session::Checked;
use run_store::ScheduleEntry;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::sync::oneshot;

/// A reply to a command.
pub type Reply<T> = oneshot::Sender<Result<T, SchedulerError>>;

/// A run created by [`Cmd::Enqueue`].
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Enqueued {
    /// The run.
    pub id: i64,
    /// `queued` or `running`.
    pub status: EnqueuedStatus,
    /// 0 = running, 1 = next.
    pub position: usize,
    /// Estimated time until it ends \[s\].
    pub eta_s: f64,
}

/// Where a new run went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EnqueuedStatus {
    /// Waiting in the queue.
    Queued,
    /// Started at once.
    Running,
}

/// The e-stop latch and the queue after [`Cmd::EStopReset`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Latch {
    /// Latched.
    pub estop: bool,
    /// The queue is paused.
    pub paused: bool,
}

/// What the queue does when a run fails.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    /// Start the next item anyway.
    #[default]
    Continue,
    /// Pause the queue.
    Stop,
}

impl OnFailure {
    /// Parses `continue` or `stop` (as the store keeps it).
    pub fn parse(text: &str) -> Option<OnFailure> {
        match text {
            "continue" => Some(OnFailure::Continue),
            "stop" => Some(OnFailure::Stop),
            _ => None,
        }
    }

    /// `continue` or `stop`.
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Continue => "continue",
            OnFailure::Stop => "stop",
        }
    }
}

/// How often a schedule entry fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Recurrence {
    /// Every day at the entry's time of day.
    Nightly,
    /// Every seven days.
    Weekly,
}

impl Recurrence {
    /// The rule the store keeps as `nightly` or `weekly`; none for a one-off entry.
    pub fn parse(stored: Option<&str>) -> Option<Recurrence> {
        match stored {
            Some("nightly") => Some(Recurrence::Nightly),
            Some("weekly") => Some(Recurrence::Weekly),
            _ => None,
        }
    }

    /// `nightly` or `weekly` (as the store keeps it).
    pub fn as_str(self) -> &'static str {
        match self {
            Recurrence::Nightly => "nightly",
            Recurrence::Weekly => "weekly",
        }
    }
}

/// Requests to the scheduler.
#[derive(Debug)]
pub enum Cmd {
    /// Create a run of a checked spec; `now`: start it at once (409 if the bench is busy or
    /// the e-stop latched), else enqueue it with `priority`.
    Enqueue {
        /// The spec.
        checked: Box<Checked>,
        /// Queue priority (higher first).
        priority: i64,
        /// Start now.
        now: bool,
        /// The run created.
        reply: Reply<Enqueued>,
    },
    /// Start the continuation of an interrupted, failed or aborted run now (409 if the bench
    /// is busy or the e-stop latched, or the run cannot be resumed).
    Resume {
        /// Its continuation ([`bench_daemon::resume::continuation`], worked out by the caller: it
        /// reads the chain's samples, which this task never waits for).
        checked: Box<Checked>,
        /// Who asked (for both runs' logs).
        by: String,
        /// The continuation, running.
        reply: Reply<Enqueued>,
    },
    /// Finish the current segment, then end (a queued run is removed).
    Stop {
        /// The run.
        run_id: i64,
        /// Done.
        reply: Reply<()>,
    },
    /// Safe state now (a queued run is removed).
    Abort {
        /// The run.
        run_id: i64,
        /// Done.
        reply: Reply<()>,
    },
    /// Remove a waiting run from the queue.
    Remove {
        /// The run.
        run_id: i64,
        /// Done.
        reply: Reply<()>,
    },
    /// The interlock has latched the e-stop (and made the drive safe): persist the latch and
    /// its reason, pause the queue. Fire and forget: the e-stop never waits for the scheduler.
    EStopLatched {
        /// Why (persisted with the latch).
        reason: String,
    },
    /// Clear the e-stop latch (the queue stays paused).
    EStopReset {
        /// The latch and the queue after.
        reply: Reply<Latch>,
    },
    /// Edit the queue: all checked first, then applied together.
    Edit {
        /// New order of the waiting runs (a permutation of them).
        order: Option<Vec<i64>>,
        /// Pause or resume.
        paused: Option<bool>,
        /// The failure policy.
        on_failure: Option<OnFailure>,
        /// Done.
        reply: Reply<()>,
    },
    /// Add a schedule entry (its specs already checked).
    AddSchedule {
        /// What it runs.
        body: ScheduleBody,
        /// First time, RFC 3339 UTC.
        run_at: String,
        /// How often, if again.
        recurrence: Option<Recurrence>,
        /// Priority of its runs.
        priority: i64,
        /// Whether a `run_at` more than 60 s ago is accepted (the entry then fires at once).
        start_if_past: bool,
        /// The entry.
        reply: Reply<ScheduleEntry>,
    },
    /// Delete a schedule entry.
    DeleteSchedule {
        /// Entry id.
        id: i64,
        /// Done.
        reply: Reply<()>,
    },
    /// Take the daemon's one campaign slot for a campaign being started (409 if it is taken).
    CampaignReserve {
        /// Done.
        reply: Reply<()>,
    },
    /// The reserved slot's campaign: its record and who runs its steps.
    CampaignStarted {
        /// Its id.
        id: i64,
        /// Who runs its steps.
        runner: Arc<dyn StepRunner>,
    },
    /// The slot's campaign ended, or its start failed: the slot is free.
    CampaignEnded,
    /// The campaign in the slot, if any.
    CampaignCurrent {
        /// It.
        reply: Reply<Option<CurrentCampaign>>,
    },
}
