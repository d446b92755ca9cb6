//! Why the scheduler refused a command, in its own terms (the HTTP layer gives each its status
//! code).

/// Why the scheduler refused a command.
#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    /// The command conflicts with the bench's or the queue's state.
    #[error("{0}")]
    Conflict(String),
    /// No such run or schedule entry.
    #[error("{message}")]
    NotFound {
        /// The field naming it.
        field: &'static str,
        /// What was not found.
        message: String,
    },
    /// A field of the command breaks a rule.
    #[error("{message}")]
    Invalid {
        /// The field, dotted.
        field: String,
        /// The rule broken, naming the field and the limit.
        message: String,
    },
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] run_store::Error),
    /// Creating or starting a run failed (input errors among them).
    #[error(transparent)]
    Run(#[from] anyhow::Error),
    /// No worker is free for the work now (try again shortly).
    #[error("{0}")]
    Unavailable(String),
}

impl From<crate::pool::PoolError> for SchedulerError {
    fn from(e: crate::pool::PoolError) -> SchedulerError {
        use crate::pool::PoolError;
        match e {
            PoolError::Busy(m) => SchedulerError::Unavailable(m),
            PoolError::Aborted(m) => SchedulerError::Run(anyhow::anyhow!(m)),
        }
    }
}

impl SchedulerError {
    /// A rule broken by `field`.
    pub fn invalid(field: &str, message: String) -> SchedulerError {
        SchedulerError::Invalid {
            field: field.into(),
            message,
        }
    }
}
