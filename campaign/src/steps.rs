//! One campaign step as a normal run: the designed spec checked against the bench's limits
//! and the remaining time budget (nothing created or moved if it fails), then run and
//! recorded like `bench run` does, on the bench of the configuration or the simulated plant in
//! simulated time.

use super::step::Step;
use crate::record::{StepRecord, StepResults};
use bench_daemon::config::{Geometry, Loaded};
use bench_daemon::control::{Control, Devices, Outcome, SimIo, Status, StopReason};
use bench_daemon::session::{self, Checked, Watchers};
use experiments::{BenchLimits, Spec};
use friction::registry::ModelSpec;
use run_store::{RunStatus, Store};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;

/// A step that did not complete; `record` is its step record when a run was made.
#[derive(Debug, thiserror::Error)]
#[error("step {step}: {reason}")]
pub struct StepFailed {
    /// The step's name.
    pub step: String,
    /// Why.
    pub reason: String,
    /// Stopped by an abort (operator, signal, limit, e-stop) rather than a failure.
    pub aborted: bool,
    /// The step's record (with its run id), if its run was created.
    pub record: Option<Box<StepRecord>>,
}

impl StepFailed {
    /// A failure without a run.
    pub fn failed(step: &str, e: impl std::fmt::Display) -> StepFailed {
        StepFailed {
            step: step.into(),
            reason: format!("{e:#}"),
            aborted: false,
            record: None,
        }
    }
}

/// The campaign was aborted before this step's run started: nothing was created or moved.
#[derive(Debug, thiserror::Error)]
#[error("aborted before it started")]
pub struct AbortedBeforeStart;

/// How a step's run ended, whoever ran it.
#[derive(Clone, Debug)]
pub struct StepEnd {
    /// The run.
    pub run_id: i64,
    /// Its final status.
    pub status: RunStatus,
    /// Its analysis (completed runs).
    pub results: Option<Value>,
    /// Why there is no analysis.
    pub analysis_error: Option<String>,
    /// Bench time from its start to its end \[s\].
    pub elapsed_s: f64,
    /// Why it stopped, when it did not complete.
    pub reason: Option<String>,
}

/// A step being run.
pub type StepFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<StepEnd>> + Send + 'a>>;

/// Who runs a step's checked spec on the bench: this process's own loop (the command line:
/// [`OwnLoop`]), or the daemon's queue, which owns the bench (`POST /api/campaigns`).
pub trait StepRunner: Send + Sync + std::fmt::Debug {
    /// Runs `checked` to its end and records it in `store`.
    fn execute<'a>(&'a self, store: &'a Store, checked: Checked) -> StepFuture<'a>;

    /// Aborts the step running now (its loop goes to the safe state) and every step after it.
    fn abort(&self, reason: StopReason);
}

/// A runner shared with whoever may abort it (the daemon's `POST /api/campaigns/{id}/stop`).
impl<T: StepRunner + ?Sized> StepRunner for Arc<T> {
    fn execute<'a>(&'a self, store: &'a Store, checked: Checked) -> StepFuture<'a> {
        (**self).execute(store, checked)
    }

    fn abort(&self, reason: StopReason) {
        (**self).abort(reason);
    }
}

/// Steps run by this process's own control loop: on the bench of the configuration over Modbus,
/// or on the simulated plant in simulated time.
#[derive(Debug)]
pub struct OwnLoop {
    loaded: Loaded,
    /// The simulated plant (its parameters and true friction); `None`: the devices.
    sim: Option<(bench_sim::SimParams, ModelSpec)>,
    /// Aborted (no further step starts), and the running step's control.
    current: Mutex<(bool, Option<Arc<Control>>)>,
}

impl OwnLoop {
    /// The loop of `loaded` (with `sim`: the simulated plant in place of its devices).
    pub fn new(loaded: Loaded, sim: Option<(bench_sim::SimParams, ModelSpec)>) -> OwnLoop {
        OwnLoop {
            loaded,
            sim,
            current: Mutex::new((false, None)),
        }
    }

    async fn run(&self, store: &Store, checked: Checked) -> anyhow::Result<StepEnd> {
        let control = Arc::new(Control::new());
        {
            let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            if cur.0 {
                return Err(AbortedBeforeStart.into());
            }
            cur.1 = Some(control.clone());
        }
        let (status, _) = watch::channel(Status::default());
        let watchers = Watchers {
            control,
            status,
            live: None,
            created: None,
        };
        let devices = match &self.sim {
            Some((params, truth)) => {
                let sim = bench_sim::Sim::new(params.clone(), truth)?;
                Devices::Simulated(Box::new(SimIo::new(sim)))
            }
            None => Devices::Modbus,
        };
        let done = session::execute_on(store, &self.loaded, &checked, watchers, devices).await;
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1 = None;
        let f = done?;
        Ok(StepEnd {
            run_id: f.run_id,
            status: f.status,
            results: f.results,
            analysis_error: f.analysis_error,
            elapsed_s: f.report.elapsed_s,
            reason: match f.report.outcome {
                Outcome::Completed => None,
                Outcome::Stopped(r) => Some(r.to_string()),
            },
        })
    }
}

impl StepRunner for OwnLoop {
    fn execute<'a>(&'a self, store: &'a Store, checked: Checked) -> StepFuture<'a> {
        Box::pin(self.run(store, checked))
    }

    fn abort(&self, reason: StopReason) {
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        cur.0 = true;
        if let Some(c) = &cur.1 {
            c.abort(reason);
        }
    }
}

/// The bench a campaign runs on: its configuration, and who runs its steps.
#[derive(Debug)]
pub struct BenchHandle {
    /// The configuration (limits, gains, geometry).
    pub loaded: Loaded,
    runner: Box<dyn StepRunner>,
}

impl BenchHandle {
    /// The bench of `loaded`, its steps run by this process (with `sim`: on the simulated plant
    /// in simulated time).
    pub fn new(loaded: Loaded, sim: Option<(bench_sim::SimParams, ModelSpec)>) -> BenchHandle {
        let runner = Box::new(OwnLoop::new(loaded.clone(), sim));
        BenchHandle { loaded, runner }
    }

    /// The bench of `loaded`, its steps run by `runner`.
    pub fn with_runner(loaded: Loaded, runner: Box<dyn StepRunner>) -> BenchHandle {
        BenchHandle { loaded, runner }
    }

    /// The bench's limits.
    pub fn limits(&self) -> BenchLimits {
        self.loaded.config.limits
    }

    /// The bench's geometry (units).
    pub fn geometry(&self) -> Geometry {
        self.loaded.config.geometry
    }

    /// Aborts the step running now (its loop goes to the safe state) and every step after it.
    pub fn abort(&self, reason: StopReason) {
        self.runner.abort(reason);
    }

    /// Runs step `name` from its designed `spec` within `budget_s` of bench time; returns its
    /// record.
    pub async fn run_step(
        &self,
        store: &Store,
        name: Step,
        spec: Spec,
        budget_s: f64,
    ) -> Result<StepRecord, StepFailed> {
        let fail = |e: &dyn std::fmt::Display| StepFailed::failed(name.name(), e);
        let checked = session::check_spec(spec, &self.loaded).map_err(|e| fail(&e))?;
        let estimate = checked.plan.estimate_duration();
        if estimate > budget_s {
            return Err(fail(&format_args!(
                "its plan takes about {estimate:.0} s of bench time, over the {:.0} s left of --budget-min",
                budget_s.max(0.0)
            )));
        }
        eprintln!(
            "bench: campaign step {name}: {} (about {estimate:.0} s)",
            checked.spec.name
        );
        let document = checked.document.clone();
        let end = match self.runner.execute(store, checked).await {
            Ok(end) => end,
            Err(e) if e.is::<AbortedBeforeStart>() => {
                return Err(StepFailed {
                    aborted: true,
                    ..fail(&e)
                });
            }
            Err(e) => return Err(fail(&format_args!("{e:#}"))),
        };
        outcome(name, document, end)
    }
}

/// A step's record, or why the step did not complete.
fn outcome(name: Step, spec: Value, end: StepEnd) -> Result<StepRecord, StepFailed> {
    let fail = |e: &dyn std::fmt::Display| StepFailed::failed(name.name(), e);
    let record = StepRecord {
        name,
        status: end.status,
        run_id: end.run_id,
        spec,
        results: end.results.clone().map(StepResults::read),
        analysis_error: end.analysis_error.clone(),
        bench_time_s: end.elapsed_s,
    };
    match (end.status, &end.results) {
        (RunStatus::Completed, Some(_)) => Ok(record),
        (RunStatus::Completed, None) => Err(StepFailed {
            record: Some(Box::new(record)),
            ..fail(&format_args!(
                "run {}: no analysis ({})",
                end.run_id,
                end.analysis_error.as_deref().unwrap_or("none")
            ))
        }),
        (status, _) => Err(StepFailed {
            aborted: status == RunStatus::Aborted,
            record: Some(Box::new(record)),
            ..fail(&format_args!(
                "run {} {status}: {}",
                end.run_id,
                end.reason.as_deref().unwrap_or("no reason given")
            ))
        }),
    }
}
