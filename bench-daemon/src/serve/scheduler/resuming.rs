//! A run's continuation ([`crate::resume`]) started on the bench at once, like a run started
//! with `start=now`, and recorded in both runs' logs with who asked.

use super::{Enqueued, Scheduler, SchedulerError};
use crate::resume::{self, ResumeError};

impl Scheduler {
    /// Starts the continuation of run `of`; `by` names who asked.
    pub(super) async fn resume(&mut self, of: i64, by: &str) -> Result<Enqueued, SchedulerError> {
        self.free_now("")?;
        let checked = resume::continuation(&self.store, &self.loaded, of)
            .await
            .map_err(|e| match e {
                ResumeError::Input(e) => SchedulerError::Conflict(e.0),
                ResumeError::Store(run_store::Error::RunNotFound { id }) => {
                    SchedulerError::NotFound {
                        field: "id",
                        message: format!("run {id} not found"),
                    }
                }
                ResumeError::Store(e) => SchedulerError::Store(e),
            })?;
        let answer = self.enqueue(checked.clone(), 0, true).await?;
        resume::record_resumed(&self.store, of, &checked, answer.id, by).await?;
        tracing::info!("run {of} resumed as run {} by {by}", answer.id);
        Ok(answer)
    }
}
