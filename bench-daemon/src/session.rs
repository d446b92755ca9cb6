//! One experiment run from spec to stored results: validate the spec against the bench
//! limits (nothing is created or moved if it fails), create the run, record it while the
//! control loop runs on its own thread, close it with its final status, analyse it.

use crate::InputError;
use crate::config::{FoundSet, Loaded, LockstepConfig, SetQuery};
use crate::control::{
    self, Control, Devices, Frame, LoopReport, LoopSetup, Outcome, Status, StopReason,
};
use experiments::{Format, Plan, Spec};
use friction::compensation::{Compensator, CompensatorSpec};
use run_store::{Finish, NewRun, Recorder, RunStatus, SampleQuery, Store};
use std::sync::Arc;
use tokio::sync::{broadcast, oneshot, watch};

/// A spec checked against a bench: ready to run.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The spec, parameters defaulted.
    pub spec: Spec,
    /// The spec as stored with the run: `{"kind", "name", "params"}` with every parameter.
    pub document: serde_json::Value,
    /// The plan.
    pub plan: Plan,
    /// Set when the run continues another ([`crate::resume`]): it runs only what that chain
    /// did not finish.
    pub resume: Option<crate::chain::Continuation>,
}

/// Parses a spec document and plans it against the configuration's limits. The error names
/// the field and the limit.
pub fn check(text: &str, format: Format, loaded: &Loaded) -> Result<Checked, InputError> {
    let spec = Spec::parse(text, format).map_err(|e| InputError(e.to_string()))?;
    check_spec(spec, loaded)
}

/// Plans a parsed spec against the configuration's limits.
pub fn check_spec(spec: Spec, loaded: &Loaded) -> Result<Checked, InputError> {
    loaded.check_watchdog()?;
    spec_lockstep(&spec, loaded)?;
    let plan = spec
        .plan(&loaded.config.limits)
        .map_err(|e| InputError(e.to_string()))?;
    let document = spec.to_value();
    Ok(Checked {
        spec,
        document,
        plan,
        resume: None,
    })
}

/// Whether a run created with the bench configuration `snapshot` (as stored with it) may run
/// on `loaded` now: every section but the lockstep models (a run steps the models of its
/// snapshot) must be unchanged, else the reason names the sections that differ.
pub fn same_bench(snapshot: &serde_json::Value, loaded: &Loaded) -> Result<(), String> {
    let now = serde_json::to_value(&loaded.config).map_err(|e| e.to_string())?;
    let (Some(then), Some(now)) = (snapshot.as_object(), now.as_object()) else {
        return Err("the stored bench configuration is not an object".into());
    };
    let ignored = [
        "lockstep",
        "lockstep_resolved",
        "lockstep_sets",
        "source",
        "database",
    ];
    let mut keys: Vec<&String> = then.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    // Where a device is plugged in (a TCP port, a serial path) may change; what it is may not.
    let device = |v: Option<&serde_json::Value>| {
        v.cloned().map(|mut d| {
            if let Some(o) = d.as_object_mut() {
                o.remove("tcp");
                o.remove("serial");
            }
            d
        })
    };
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|k| !ignored.contains(&k.as_str()))
        .filter(|k| match k.as_str() {
            "drive" | "sensor" => device(then.get(*k)) != device(now.get(*k)),
            _ => then.get(*k) != now.get(*k),
        })
        .map(|k| format!("[{k}]"))
        .collect();
    if changed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the bench configuration changed since the run was queued ({} differ): it would not \
             run as it was checked; submit it again",
            changed.join(", ")
        ))
    }
}

/// Channels a caller can watch a run through.
#[derive(Debug)]
pub struct Watchers {
    /// Requests to the loop (abort, stop).
    pub control: Arc<Control>,
    /// Progress.
    pub status: watch::Sender<Status>,
    /// Live frames and the decimation (every n-th sample).
    pub live: Option<(broadcast::Sender<Frame>, u32)>,
    /// Told the run id as soon as the run exists.
    pub created: Option<oneshot::Sender<i64>>,
}

/// A finished run.
#[derive(Debug)]
pub struct Finished {
    /// Run id.
    pub run_id: i64,
    /// The loop's report.
    pub report: LoopReport,
    /// Final status.
    pub status: RunStatus,
    /// The analysis, if it ran.
    pub results: Option<serde_json::Value>,
    /// Why the analysis did not run or failed.
    pub analysis_error: Option<String>,
}

/// Runs a checked spec on the bench of `loaded`, recording into `store`.
pub async fn execute(
    store: &Store,
    loaded: &Loaded,
    checked: &Checked,
    watchers: Watchers,
) -> anyhow::Result<Finished> {
    execute_on(store, loaded, checked, watchers, Devices::Modbus).await
}

/// [`execute`] on `devices` (the simulated plant in simulated time, or Modbus).
pub async fn execute_on(
    store: &Store,
    loaded: &Loaded,
    checked: &Checked,
    watchers: Watchers,
    devices: Devices,
) -> anyhow::Result<Finished> {
    let run_id = create(store, loaded, checked).await?;
    execute_run_on(store, loaded, checked, run_id, watchers, devices).await
}

/// Creates the run of a checked spec (status `queued`) with the bench snapshot; returns its id.
pub async fn create(store: &Store, loaded: &Loaded, checked: &Checked) -> anyhow::Result<i64> {
    let ids = create_all(store, loaded, std::slice::from_ref(checked)).await?;
    ids.first()
        .copied()
        .ok_or_else(|| anyhow::anyhow!("BUG: no run created"))
}

/// Creates a `queued` run of each of `checked` in one store transaction (all or none).
pub async fn create_all(
    store: &Store,
    loaded: &Loaded,
    checked: &[Checked],
) -> anyhow::Result<Vec<i64>> {
    // Refused before anything is queued: a sensor past its calibration's due date.
    crate::calibration::check(store, loaded, crate::calibration::today()).await?;
    let sets = store.parameter_sets(None).await?;
    let plant = loaded.config.lockstep.plant_inertia_kg_m2.is_some();
    let mut config = serde_json::to_value(&loaded.config)?;
    config["source"] = loaded.source.clone().into();
    if let (Some(cfg), Some((p, _))) = (&loaded.config.daq, &loaded.daq) {
        config["daq_stream"] = crate::control::daq_provenance::provenance(cfg, p)?;
    }
    let profiles = serde_json::to_value(loaded.profiles())?;
    let runs = checked
        .iter()
        .map(|checked| {
            let choice = spec_lockstep(&checked.spec, loaded)?;
            let (models, used) =
                loaded.lockstep_specs(choice.as_ref(), |q| Ok(find_set(&sets, q)))?;
            let mut bench_config = config.clone();
            bench_config["lockstep_resolved"] = serde_json::to_value(&models)?;
            bench_config["lockstep_sets"] = serde_json::Value::Array(used);
            let (compensators, sources) = trial_compensators(checked, &sets)?;
            if !compensators.is_empty() {
                bench_config["compensators_resolved"] = serde_json::to_value(&compensators)?;
                bench_config["compensator_sets"] = serde_json::Value::Array(sources);
            }
            Ok(NewRun {
                kind: checked.plan.kind.clone(),
                name: checked.plan.name.clone(),
                spec: checked.document.clone(),
                bench_config,
                device_profiles: profiles.clone(),
                software_version: env!("CARGO_PKG_VERSION").into(),
                notes: None,
                models: control::Lockstep::names(&models, plant),
                period_s: Some(checked.plan.period_s()),
            })
        })
        .collect::<anyhow::Result<Vec<NewRun>>>()?;
    let ids = store.create_runs(&runs).await?;
    for (id, checked) in ids.iter().zip(checked) {
        if let Some(c) = &checked.resume {
            store.set_continues(*id, c.of).await?;
        }
    }
    Ok(ids)
}

/// The compensators of a compensation trial with their parameters resolved now (stored sets
/// looked up at creation, so the run keeps what it was created with), and where each came
/// from; empty for every other kind.
fn trial_compensators(
    checked: &Checked,
    sets: &[run_store::ParameterSet],
) -> anyhow::Result<(Vec<CompensatorSpec>, Vec<serde_json::Value>)> {
    let experiments::Kind::CompensationTrial(trial) = &checked.spec.kind else {
        return Ok((Vec::new(), Vec::new()));
    };
    let mut specs = Vec::with_capacity(trial.compensators.len());
    let mut sources = Vec::with_capacity(trial.compensators.len());
    for (i, c) in trial.compensators.iter().enumerate() {
        let field = format!("params.compensators[{i}]");
        let (spec, mut source) = match c.model_id() {
            None => (
                c.spec(serde_json::json!({})),
                serde_json::json!({"source": "none"}),
            ),
            Some(id) => {
                let (params, source) =
                    crate::config::resolve_params(&field, id, Some(&c.params), |q| {
                        Ok(find_set(sets, q))
                    })?;
                (c.spec(params), source)
            }
        };
        Compensator::build(&spec).map_err(|e| InputError(format!("{field} ({}): {e}", c.name)))?;
        source["compensator"] = c.name.clone().into();
        specs.push(spec);
        sources.push(source);
    }
    Ok((specs, sources))
}

/// Stores the loop's log lines the dead recorder did not (the safe-state line above all).
async fn keep_log(store: &Store, run_id: i64, log: &[(Option<f64>, String)]) -> anyhow::Result<()> {
    let stored = store.run(run_id).await?.interruption_log;
    for (t, line) in log {
        if !stored.iter().any(|e| &e.reason == line) {
            store.append_log(run_id, *t, line).await?;
        }
    }
    Ok(())
}

/// Stores the loop's run log (checks and read-backs) with the run.
async fn keep_notes(
    store: &Store,
    run_id: i64,
    notes: &[(Option<f64>, String)],
) -> anyhow::Result<()> {
    for (t, line) in notes {
        store.append_note(run_id, *t, line).await?;
    }
    Ok(())
}

/// Runs the `queued` run `run_id` (made by [`create`] from `checked`) on the bench.
pub async fn execute_run(
    store: &Store,
    loaded: &Loaded,
    checked: &Checked,
    run_id: i64,
    watchers: Watchers,
) -> anyhow::Result<Finished> {
    execute_run_on(store, loaded, checked, run_id, watchers, Devices::Modbus).await
}

/// [`execute_run`] on `devices`.
pub async fn execute_run_on(
    store: &Store,
    loaded: &Loaded,
    checked: &Checked,
    run_id: i64,
    mut watchers: Watchers,
    devices: Devices,
) -> anyhow::Result<Finished> {
    // The lockstep models the run was created with (its snapshot), not today's section.
    let run = store.run(run_id).await?;
    let models: Vec<friction::registry::ModelSpec> =
        serde_json::from_value(run.bench_config["lockstep_resolved"].clone()).map_err(|e| {
            anyhow::anyhow!("run {run_id}: its stored lockstep models cannot be read: {e}")
        })?;
    let compensators: Vec<CompensatorSpec> = match &run.bench_config["compensators_resolved"] {
        serde_json::Value::Null => Vec::new(),
        v => serde_json::from_value(v.clone()).map_err(|e| {
            anyhow::anyhow!("run {run_id}: its stored compensators cannot be read: {e}")
        })?,
    };
    if let Some(tx) = watchers.created.take() {
        let _ = tx.send(run_id);
    }
    let recorder_config = devices.recorder_config(checked.plan.period_s());
    let recorder = Recorder::start(store, run_id, recorder_config).await?;
    // Checked again as it starts (a queued run may outlive a due date), before anything moves.
    let sensors = crate::calibration::check(store, loaded, crate::calibration::today()).await;
    let report = match sensors {
        Ok(sensors) => {
            for s in &sensors {
                store.put_run_sensor(run_id, s).await?;
            }
            run_loop(
                loaded,
                checked,
                run_id,
                devices,
                models,
                compensators,
                &recorder,
                watchers,
            )
            .await?
        }
        Err(e) => control::lifecycle::failed_early(
            StopReason::Setup {
                link: false,
                text: e.to_string(),
            },
            None,
        ),
    };
    for (sensor, zero) in &report.zeros {
        if let Err(e) = store.set_run_zero(run_id, sensor, *zero).await {
            tracing::warn!(run_id, "the zero of {sensor} could not be stored: {e}");
        }
    }
    finish_run(store, checked, run_id, recorder, report).await
}

/// The control loop on its own thread, recording into `recorder`; its report.
#[allow(clippy::too_many_arguments)]
async fn run_loop(
    loaded: &Loaded,
    checked: &Checked,
    run_id: i64,
    devices: Devices,
    models: Vec<friction::registry::ModelSpec>,
    compensators: Vec<CompensatorSpec>,
    recorder: &Recorder,
    watchers: Watchers,
) -> anyhow::Result<LoopReport> {
    let setup = LoopSetup {
        loaded: loaded.clone(),
        devices,
        plan: checked.plan.clone(),
        skip: checked
            .resume
            .as_ref()
            .map_or(Vec::new(), |c| c.done.clone()),
        models,
        compensators,
        recorder: Some(recorder.sender()),
        control: watchers.control,
        status: watchers.status,
        live: watchers.live,
    };
    let (done_tx, done_rx) = oneshot::channel();
    std::thread::Builder::new()
        .name(format!("control-loop-run-{run_id}"))
        .spawn(move || {
            let _ = done_tx.send(control::run(setup));
        })?;
    // The loop thread ended without a report (a panic the loop did not catch): the run is
    // failed for a panic, and ends as every run does, its outcome typed for the caller.
    Ok(done_rx.await.unwrap_or_else(|_| {
        control::lifecycle::failed_early(
            StopReason::Panic("the control loop thread ended without a report".into()),
            None,
        )
    }))
}

/// Stores the run log, analyses a completed run and closes the run with its final status.
async fn finish_run(
    store: &Store,
    checked: &Checked,
    run_id: i64,
    recorder: Recorder,
    report: LoopReport,
) -> anyhow::Result<Finished> {
    // Before the recorder closes the run: whoever sees it final sees its run log too.
    if let Err(e) = keep_notes(store, run_id, &report.notes).await {
        tracing::warn!(run_id, "the run log could not be stored: {e}");
    }
    let status = report.outcome.status();
    let reason = report.outcome.reason().map(StopReason::stored);
    // A completed run's results are stored before its final status: whoever sees it completed
    // can read its results at once.
    let (results, analysis_error) = if status == RunStatus::Completed {
        analyse_committed(store, &recorder, run_id, checked).await
    } else {
        (None, Some(format!("not analysed: the run is {status}")))
    };
    let closed = recorder
        .close(Finish {
            status,
            reason: reason.clone(),
            timing: Some(report.stats),
        })
        .await;
    if let Err(e) = closed {
        // The writer died (disk full, database locked past its retries): what it committed
        // stays; the run is failed with both reasons once the store takes writes again.
        let why = StopReason::RecordingFailed(format!(
            "recording failed: {e}{}",
            reason
                .as_ref()
                .map_or(String::new(), |r| format!("; the loop ended: {}", r.text))
        ));
        store
            .finish_run(run_id, RunStatus::Failed, Some(&why.stored()))
            .await?;
        if let Err(e) = keep_log(store, run_id, &report.log).await {
            // The run is final with its reason: the caller is told it, log or not.
            tracing::warn!(run_id, "the interruption log could not be stored: {e}");
        }
        let mut report = report;
        report.outcome = Outcome::Stopped(why);
        return Ok(Finished {
            run_id,
            report,
            status: RunStatus::Failed,
            results: None,
            analysis_error: Some("not analysed: the recording failed".into()),
        });
    }
    Ok(Finished {
        run_id,
        report,
        status,
        results,
        analysis_error,
    })
}

/// Every sample committed, then the kind's analysis of them stored: results, or why there are
/// none. A recorder that cannot commit leaves the run unanalysed (its close says why).
async fn analyse_committed(
    store: &Store,
    recorder: &Recorder,
    run_id: i64,
    checked: &Checked,
) -> (Option<serde_json::Value>, Option<String>) {
    if let Err(e) = recorder.flush().await {
        return (
            None,
            Some(format!("not analysed: the recording failed: {e}")),
        );
    }
    match analyse(store, run_id, checked).await {
        Ok(v) => match store.save_results(run_id, &v).await {
            Ok(()) => (Some(v), None),
            Err(e) => (None, Some(format!("the results could not be stored: {e}"))),
        },
        Err(e) => (None, Some(e)),
    }
}

/// Every committed sample of run `id` as the analyses read them: of the whole chain, for a
/// continuation ([`crate::chain::chain_samples`]).
pub async fn experiment_samples(
    store: &Store,
    id: i64,
) -> Result<Vec<experiments::Sample>, run_store::Error> {
    let set = crate::chain::chain_samples(store, id, &SampleQuery::default()).await?;
    Ok(set.samples.iter().map(to_experiment_sample).collect())
}

/// The kind's analysis of the committed samples (of the whole chain, for a continuation: each
/// segment from the run that measured it whole).
async fn analyse(
    store: &Store,
    run_id: i64,
    checked: &Checked,
) -> Result<serde_json::Value, String> {
    let samples = experiment_samples(store, run_id)
        .await
        .map_err(|e| format!("reading the samples: {e}"))?;
    let results = checked
        .spec
        .kind
        .analyse(&checked.plan, &samples)
        .map_err(|e| format!("analysis: {e}"))?;
    serde_json::to_value(&results).map_err(|e| e.to_string())
}

/// The newest parameter set answering `q` (by name, or the newest of a model).
fn find_set(sets: &[run_store::ParameterSet], q: SetQuery<'_>) -> Option<FoundSet> {
    sets.iter()
        .filter(|s| match q {
            SetQuery::Named(name) => s.name == name,
            SetQuery::Latest(model) => s.model_id == model,
        })
        .max_by_key(|s| s.id)
        .map(|s| FoundSet {
            id: s.id,
            name: s.name.clone(),
            params: s.params.clone(),
            offset: s
                .provenance
                .pointer("/offset/value")
                .and_then(serde_json::Value::as_f64),
        })
}

/// The spec's own `lockstep` object as a lockstep section (its `models` default to the
/// bench's); `None` when the spec has none. The plant inertia stays a bench setting.
pub fn spec_lockstep(spec: &Spec, loaded: &Loaded) -> Result<Option<LockstepConfig>, InputError> {
    let Some(serde_json::Value::Object(obj)) = &spec.lockstep else {
        return Ok(None);
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !["models", "params"].contains(&k.as_str()))
    {
        return Err(InputError(format!(
            "spec lockstep.{k}: unknown field (known: models, params; the plant inertia is the bench's [lockstep] plant_inertia_kg_m2)"
        )));
    }
    let models = match obj.get("models") {
        None | Some(serde_json::Value::Null) => loaded.config.lockstep.models.clone(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
            InputError("spec lockstep.models must be a list of model ids (or [\"all\"])".into())
        })?,
    };
    let params = match obj.get("params") {
        None | Some(serde_json::Value::Null) => Default::default(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
            InputError(
                "spec lockstep.params must be an object: model id → parameters, \"set:NAME\" or \"latest\"".into(),
            )
        })?,
    };
    Ok(Some(LockstepConfig {
        models,
        params,
        plant_inertia_kg_m2: loaded.config.lockstep.plant_inertia_kg_m2,
    }))
}

/// A stored sample as the experiments crate's analyses and the control loop see it.
pub fn to_experiment_sample(s: &run_store::Sample) -> experiments::Sample {
    experiments::Sample {
        t: s.t,
        x: s.x,
        v: s.v,
        u_cmd: s.u_cmd,
        torque_motor: s.torque_motor,
        torque_sensor: s.torque_sensor,
        segment: s.segment,
        flags: experiments::Flags(s.flags),
    }
}

#[cfg(test)]
mod tests;
