//! How a run on the bench ended, as the scheduler is told it: the control loop's typed outcome,
//! or the failure the scheduler recorded itself when the session gave none. The scheduler
//! decides on it (stop counts, pausing on a drive fault or under `on_failure = stop`) without
//! reading the run back from the store.

use bench_daemon::control::{Outcome, StopReason};
use run_store::{Reason, ReasonCode, RunStatus};

/// The end of a run: completed, or failed or aborted with its stop reason.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum RunEnd {
    /// Ran to the end of its plan.
    Completed,
    /// Stopped by a fault (or never got going): the reason, as stored.
    Failed(Reason),
    /// Stopped on purpose or by a limit: the reason, as stored.
    Aborted(Reason),
}

impl RunEnd {
    /// The end the control loop reported.
    pub(super) fn of(outcome: &Outcome) -> RunEnd {
        match outcome {
            Outcome::Completed => RunEnd::Completed,
            Outcome::Stopped(reason) => RunEnd::stopped(reason),
        }
    }

    fn stopped(reason: &StopReason) -> RunEnd {
        match reason.status() {
            RunStatus::Aborted => RunEnd::Aborted(reason.stored()),
            _ => RunEnd::Failed(reason.stored()),
        }
    }

    /// The run's final status.
    pub(super) fn status(&self) -> RunStatus {
        match self {
            RunEnd::Completed => RunStatus::Completed,
            RunEnd::Failed(_) => RunStatus::Failed,
            RunEnd::Aborted(_) => RunStatus::Aborted,
        }
    }

    /// The end a run already has in the store, when the session failed after the run was
    /// final (a results write that failed after the loop's end): that end stands, with its
    /// stored reason (the session's error where none was stored). `None`: not final yet.
    pub(super) fn already(
        status: RunStatus,
        stored: Option<Reason>,
        error: Reason,
    ) -> Option<RunEnd> {
        let reason = stored.unwrap_or(error);
        match status {
            RunStatus::Completed => Some(RunEnd::Completed),
            RunStatus::Aborted => Some(RunEnd::Aborted(reason)),
            RunStatus::Failed | RunStatus::Interrupted => Some(RunEnd::Failed(reason)),
            _ => None,
        }
    }

    /// Why it stopped (`None`: completed).
    pub(super) fn code(&self) -> Option<ReasonCode> {
        match self {
            RunEnd::Completed => None,
            RunEnd::Failed(r) | RunEnd::Aborted(r) => Some(r.code),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session error after the run was final keeps the stored end; before, it is a failure.
    #[test]
    fn a_final_stored_end_stands() {
        let error = Reason::new(ReasonCode::Other, "storing the results failed");
        let limit = Reason::new(ReasonCode::Other, "a limit");
        assert_eq!(
            RunEnd::already(RunStatus::Completed, None, error.clone()),
            Some(RunEnd::Completed)
        );
        assert_eq!(
            RunEnd::already(RunStatus::Aborted, Some(limit.clone()), error.clone()),
            Some(RunEnd::Aborted(limit))
        );
        assert_eq!(
            RunEnd::already(RunStatus::Interrupted, None, error.clone()),
            Some(RunEnd::Failed(error.clone()))
        );
        assert_eq!(RunEnd::already(RunStatus::Running, None, error), None);
    }

    #[test]
    fn the_status_and_code_are_the_loops() {
        let fault = RunEnd::of(&Outcome::Stopped(StopReason::DriveFault { code: 0x31 }));
        assert_eq!(fault.status(), RunStatus::Failed);
        assert_eq!(fault.code(), Some(ReasonCode::DriveFault));
        let abort = RunEnd::of(&Outcome::Stopped(StopReason::OperatorAbort("x".into())));
        assert_eq!(abort.status(), RunStatus::Aborted);
        assert_eq!(abort.code(), Some(ReasonCode::OperatorAbort));
        assert_eq!(RunEnd::of(&Outcome::Completed).code(), None);
    }
}
