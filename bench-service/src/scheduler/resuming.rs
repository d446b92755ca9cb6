//! A run's continuation ([`bench_daemon::resume`]) started on the bench at once, like a run started
//! with `start=now`, and recorded in both runs' logs with who asked. The caller works the
//! continuation out (it reads the chain's samples); this task only checks that nothing
//! continued the run meanwhile.

use super::{Enqueued, Scheduler, SchedulerError};
use bench_daemon::config::Loaded;
use bench_daemon::resume::{self, ResumeError};
use bench_daemon::session::Checked;
use run_store::Store;

/// The continuation of run `of` for [`super::Cmd::Resume`], worked out on the caller's task,
/// its refusals in the scheduler's terms.
pub async fn continuation(
    store: &Store,
    loaded: &Loaded,
    of: i64,
) -> Result<Checked, SchedulerError> {
    resume::continuation(store, loaded, of)
        .await
        .map_err(|e| match e {
            ResumeError::Input(e) => SchedulerError::Conflict(e.0),
            ResumeError::Store(run_store::Error::RunNotFound { id }) => SchedulerError::NotFound {
                field: "id",
                message: format!("run {id} not found"),
            },
            ResumeError::Store(e) => SchedulerError::Store(e),
        })
}

impl Scheduler {
    /// Starts `checked`, the continuation of a run; `by` names who asked.
    pub(super) async fn resume(
        &mut self,
        checked: Checked,
        by: &str,
    ) -> Result<Enqueued, SchedulerError> {
        self.free_now("")?;
        let Some(of) = checked.resume.as_ref().map(|c| c.of) else {
            return Err(SchedulerError::Run(anyhow::anyhow!(
                "BUG: a continuation without the run it continues"
            )));
        };
        if let Some(next) = self.store.continued_by(of).await? {
            return Err(SchedulerError::Conflict(format!(
                "run {of}: it is already continued by run {next}: resume that one"
            )));
        }
        let answer = self.enqueue(checked.clone(), 0, true).await?;
        resume::record_resumed(&self.store, of, &checked, answer.id, by).await?;
        tracing::info!("run {of} resumed as run {} by {by}", answer.id);
        Ok(answer)
    }
}
