//! One campaign step as a normal run: the designed spec checked against the bench's limits
//! and the remaining time budget (nothing created or moved if it fails), then run and
//! recorded like `bench run` does, on the bench of the configuration or the simulated plant in
//! simulated time.

use crate::config::{Geometry, Loaded};
use crate::control::{Control, Devices, Outcome, SimIo, Status, StopReason};
use crate::session::{self, Watchers};
use experiments::{BenchLimits, Format, Spec};
use friction::registry::ModelSpec;
use run_store::{RunStatus, Store};
use serde_json::{Value, json};
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
    pub record: Option<Value>,
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

/// The bench a campaign runs on: its configuration, and the simulated plant (its parameters and
/// true friction) when the campaign runs in simulated time.
#[derive(Debug)]
pub struct BenchHandle {
    /// The configuration (limits, gains, geometry).
    pub loaded: Loaded,
    /// The simulated plant, stepped in simulated time; `None`: the devices over Modbus.
    pub sim: Option<(bench_sim::SimParams, ModelSpec)>,
    current: Mutex<(bool, Option<Arc<Control>>)>,
}

impl BenchHandle {
    /// The bench of `loaded` (with `sim`: the simulated plant in place of its devices).
    pub fn new(loaded: Loaded, sim: Option<(bench_sim::SimParams, ModelSpec)>) -> BenchHandle {
        BenchHandle {
            loaded,
            sim,
            current: Mutex::new((false, None)),
        }
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
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        cur.0 = true;
        if let Some(c) = &cur.1 {
            c.abort(reason);
        }
    }

    /// Runs step `name` from its designed `spec` within `budget_s` of bench time; returns its
    /// record (`name`, `status`, `run_id`, `spec`, `results`, `bench_time_s`).
    pub async fn run_step(
        &self,
        store: &Store,
        name: &str,
        spec: Value,
        budget_s: f64,
    ) -> Result<Value, StepFailed> {
        let fail = |e: &dyn std::fmt::Display| StepFailed::failed(name, e);
        let parsed = Spec::parse(&spec.to_string(), Format::Json).map_err(|e| fail(&e))?;
        let checked = session::check_spec(parsed, &self.loaded).map_err(|e| fail(&e))?;
        let estimate = checked.plan.estimate_duration();
        if estimate > budget_s {
            return Err(fail(&format_args!(
                "its plan takes about {estimate:.0} s of bench time, over the {:.0} s left of --budget-min",
                budget_s.max(0.0)
            )));
        }
        let control = Arc::new(Control::new());
        {
            let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            if cur.0 {
                return Err(StepFailed {
                    aborted: true,
                    ..fail(&"aborted before it started")
                });
            }
            cur.1 = Some(control.clone());
        }
        eprintln!(
            "bench: campaign step {name}: {} (about {estimate:.0} s)",
            checked.spec.name
        );
        let (status, _) = watch::channel(Status::default());
        let watchers = Watchers {
            control,
            status,
            live: None,
            created: None,
        };
        let devices = match &self.sim {
            Some((params, truth)) => {
                let sim = bench_sim::Sim::new(params.clone(), truth).map_err(|e| fail(&e))?;
                Devices::Simulated(Box::new(SimIo::new(sim)))
            }
            None => Devices::Modbus,
        };
        let done = session::execute_on(store, &self.loaded, &checked, watchers, devices).await;
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1 = None;
        let f = done.map_err(|e| fail(&format_args!("{e:#}")))?;
        let record = json!({
            "name": name,
            "status": if f.status == RunStatus::Completed { "completed" } else { f.status.as_str() },
            "run_id": f.run_id,
            "spec": checked.document,
            "results": f.results,
            "analysis_error": f.analysis_error,
            "bench_time_s": f.report.elapsed_s,
        });
        match &f.report.outcome {
            Outcome::Completed if f.results.is_some() => Ok(record),
            Outcome::Completed => Err(StepFailed {
                record: Some(record),
                ..fail(&format_args!(
                    "run {}: no analysis ({})",
                    f.run_id,
                    f.analysis_error.as_deref().unwrap_or("none")
                ))
            }),
            Outcome::Stopped(reason) => Err(StepFailed {
                aborted: f.status == RunStatus::Aborted,
                record: Some(record),
                ..fail(&format_args!("run {} {}: {reason}", f.run_id, f.status))
            }),
        }
    }
}
