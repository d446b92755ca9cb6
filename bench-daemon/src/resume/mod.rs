//! Resuming a run from its last completed segment (`bench runs resume`, `POST
//! /api/runs/{id}/resume`, `[queue] auto_resume`): a continuation is a new run of the same spec,
//! linked to the run it continues (`continues`), that runs only the segments no run of the
//! chain measured whole, from the drive's present position, after the same checks as any run.
//! A partly measured segment is measured again from its start, never spliced.
//!
//! - [`crate::chain`]: which segments a run measured whole, and a chain's samples read as one
//!   run (below the session, which reads them too);
//! - [`auto`]: the daemon's own resume, on restart, of a run its death interrupted.

pub mod auto;

pub use crate::chain::{Continuation, chain_samples, whole_segments};

use crate::InputError;
use crate::config::Loaded;
use crate::session::{self, Checked};
use run_store::{RunStatus, Store};
use std::collections::BTreeSet;

/// Why a run cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// Bad request: the message names the run and the rule (exit code 2, HTTP 422/409).
    #[error("{0}")]
    Input(#[from] InputError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] run_store::Error),
}

/// The checked continuation of run `id` on the bench of `loaded`: refused unless the run is
/// `interrupted`, `failed` or `aborted`, has no continuation yet, was recorded on this bench
/// as it is configured now, its spec still passes the limits, and something is left to run.
pub async fn continuation(store: &Store, loaded: &Loaded, id: i64) -> Result<Checked, ResumeError> {
    let run = store.run(id).await?;
    let refuse = |why: String| Err(InputError(format!("run {id}: {why}")).into());
    if !matches!(
        run.status,
        RunStatus::Interrupted | RunStatus::Failed | RunStatus::Aborted
    ) {
        return refuse(format!(
            "it is {}: only an interrupted, failed or aborted run can be resumed",
            run.status
        ));
    }
    if run.kind == run_store::IMPORTED_KIND {
        return refuse("an imported recording has no plan to resume".into());
    }
    if let Some(next) = store.continued_by(id).await? {
        return refuse(format!(
            "it is already continued by run {next}: resume that one"
        ));
    }
    if let Err(why) = session::same_bench(&run.bench_config, loaded) {
        return refuse(why);
    }
    let spec = experiments::Spec::from_value(run.spec.clone())
        .map_err(|e| InputError(format!("run {id}: its spec no longer parses: {e}")))?;
    let mut checked = session::check_spec(spec, loaded).map_err(|e| {
        InputError(format!(
            "run {id}: its spec no longer passes the bench: {e}"
        ))
    })?;
    let mut done = done_in_chain(store, id).await?;
    let n = checked.plan.segments.len();
    // A segment measured again takes the segments that lead into it along.
    for s in (0..n).filter(|s| !done.contains(s)).collect::<Vec<_>>() {
        for lead in checked.plan.trial_start(s)..s {
            done.remove(&lead);
        }
    }
    if (0..n).all(|s| done.contains(&s)) {
        return refuse(format!(
            "all {n} segments were measured whole: nothing is left to resume"
        ));
    }
    checked.resume = Some(Continuation {
        of: id,
        done: done.into_iter().collect(),
    });
    Ok(checked)
}

/// The segments the chain ending at run `id` measured whole.
async fn done_in_chain(store: &Store, id: i64) -> Result<BTreeSet<usize>, run_store::Error> {
    let mut done = BTreeSet::new();
    for run_id in store.chain(id).await? {
        let run = store.run(run_id).await?;
        let set = store
            .samples(run_id, &run_store::SampleQuery::default())
            .await?;
        let whole = whole_segments(&set, run.status == RunStatus::Completed);
        done.extend(whole.keys().map(|&s| s as usize));
        if run_id == id {
            break;
        }
    }
    Ok(done)
}

/// Records in both runs' logs who resumed which run as which: `by` names the user (or the
/// daemon, for an automatic resume).
pub async fn record_resumed(
    store: &Store,
    of: i64,
    continuation: &Checked,
    new_id: i64,
    by: &str,
) -> Result<(), run_store::Error> {
    let done = continuation.resume.as_ref().map_or(0, |c| c.done.len());
    let total = continuation.plan.segments.len();
    store
        .append_note(
            new_id,
            None,
            &format!(
                "continues run {of} (resumed by {by}): {} of {total} segments left to measure, \
                 {done} measured whole before",
                total - done
            ),
        )
        .await?;
    store
        .append_note(of, None, &format!("resumed as run {new_id} by {by}"))
        .await
}

/// Who runs a command on the command line, for the run log.
pub fn cli_user() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "an unknown user".into());
    format!("{user} (command line)")
}
