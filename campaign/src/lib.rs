//! A characterisation campaign (`bench characterise`): from an unknown bench to its friction
//! model, its compensation and a report. Seven steps, each a normal run designed from what the
//! steps before it measured ([`design`]) and checked against the bench's limits before it
//! moves anything: breakaway, low-speed check, sweep, presliding (and slips, when a model's
//! fits read it: [`fit_plan::reads_slips`]), validation, then the fits in
//! the documented order with the comparison on the validation run ([`analyse`]), then the
//! compensation trial. The campaign record (run store, migration 0011) keeps every step's run
//! id and measurement, so `--resume ID` continues from the first step not completed.

pub mod analyse;
mod body;
pub mod design;
pub mod encoder_velocity;
pub mod fit_plan;
pub mod floor;
pub mod given;
pub mod judge;
pub mod record;
pub mod report;
pub mod sliding;
mod step;
mod steps;

pub use body::{CampaignModel, DEFAULT_BUDGET_MIN, StartCampaign};
pub use record::{Record, StepRecord};
pub use step::Step;
pub use steps::{
    AbortedBeforeStart, BenchHandle, OwnLoop, StepEnd, StepFailed, StepFuture, StepRunner,
};

use bench_daemon::InputError;
use run_store::{CampaignStatus, Store};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Models fitted when `--models` is not given.
pub const DEFAULT_MODELS: [&str; 4] = ["coulomb_viscous", "stribeck_exp", "lugre", "gms"];

/// Models a campaign knows how to fit in the documented order.
pub const KNOWN_MODELS: [&str; 4] = DEFAULT_MODELS;

/// What a campaign is asked to do (stored as its `request`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Models to fit and compare.
    pub models: Vec<String>,
    /// Bench time budget \[min\].
    pub budget_min: f64,
    /// The simulated bench's true friction (`--sim`), else null.
    #[serde(default)]
    pub truth: Option<friction::registry::ModelSpec>,
    /// The simulated plant's parameters (`--sim-params`; absent: the simulator's defaults), so
    /// that `--resume` continues on the same plant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_params: Option<bench_sim::SimParams>,
}

impl Request {
    /// The simulated plant of a `--sim` campaign (its parameters and true friction), else
    /// `None` (the bench of the configuration).
    pub fn plant(&self) -> Option<(bench_sim::SimParams, friction::registry::ModelSpec)> {
        let t = self.truth.clone()?;
        Some((self.sim_params.clone().unwrap_or_default(), t))
    }

    /// Checks the models and the budget; the error names the field.
    pub fn check(&self) -> Result<(), RequestError> {
        let models = |problem: String| RequestError {
            field: "models",
            problem,
        };
        if self.models.is_empty() {
            return Err(models("give at least one model".into()));
        }
        for m in &self.models {
            if !KNOWN_MODELS.contains(&m.as_str()) {
                return Err(models(format!(
                    "'{m}' is not a model a campaign fits (known: {})",
                    KNOWN_MODELS.join(", ")
                )));
            }
        }
        if !(self.budget_min.is_finite() && self.budget_min > 0.0 && self.budget_min <= 24.0 * 60.0)
        {
            return Err(RequestError {
                field: "budget_min",
                problem: format!("({}) must be > 0 and at most 1440 (a day)", self.budget_min),
            });
        }
        Ok(())
    }
}

/// A campaign request refused: which field (`models` or `budget_min`, the REST body's names)
/// and why.
#[derive(Debug, thiserror::Error)]
#[error("{field}{}{problem}", sep(problem))]
pub struct RequestError {
    /// The field.
    pub field: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl From<RequestError> for InputError {
    /// The command line's words: `--models`, `--budget-min`.
    fn from(e: RequestError) -> InputError {
        let flag = e.field.replace('_', "-");
        InputError(format!("--{flag}{}{}", sep(&e.problem), e.problem))
    }
}

/// `field (value) must be …`, else `field: problem`.
fn sep(problem: &str) -> &'static str {
    if problem.starts_with('(') { " " } else { ": " }
}

/// Runs (or resumes) campaign `id` on `bench` to its end; returns the campaign as saved. A
/// step that does not complete ends the campaign `stopped` or `failed` (the bench in its safe
/// state, as after any run) and is returned as [`StepFailed`].
pub async fn run(
    store: &Store,
    bench: &BenchHandle,
    id: i64,
    db: PathBuf,
) -> anyhow::Result<Record> {
    let mut c = Record::load(store, id).await?;
    c.status = CampaignStatus::Running;
    c.reason = None;
    // Steps that did not complete are run again, from their design.
    c.steps.retain(StepRecord::completed);
    c.save(store).await?;
    let budget_s = c.request.budget_min * 60.0;
    for name in Step::RUNS {
        if c.step(name).is_some() {
            continue;
        }
        let est = estimates(&c);
        if name == Step::Slips && !fit_plan::reads_slips(&c.request.models, &est) {
            continue;
        }
        let Some(spec) = name.design(&bench.limits(), &est) else {
            continue;
        };
        let spent = c.bench_time();
        let done = bench.run_step(store, name, spec, budget_s - spent).await;
        match done {
            Ok(record) => {
                c.steps.push(record);
                c.save(store).await?;
            }
            Err(e) => return Err(end(store, c, e).await),
        }
    }
    if c.fits.is_empty() || c.comparison_id.is_none() {
        let started = std::time::Instant::now();
        let out = analyse::fit_and_compare(&c, &db, bench.geometry()).await;
        match out {
            Ok((fits, comparison_id, truth)) => {
                c.fits = fits;
                c.comparison_id = Some(comparison_id);
                c.answer.truth_validation_mse = Some(truth);
                c.answer.fits_and_comparison_s = Some(Some(started.elapsed().as_secs_f64()));
                c.save(store).await?;
            }
            Err(e) => return Err(end(store, c, StepFailed::failed(Step::Fits.name(), e)).await),
        }
    }
    if c.trial_run_id.is_none() {
        let spec = design::trial(&c.request.models);
        let spent = c.bench_time();
        match bench
            .run_step(store, Step::Trial, spec, budget_s - spent)
            .await
        {
            Ok(record) => {
                c.trial_run_id = Some(record.run_id);
                c.answer.trial = Some(Some(record));
            }
            Err(e) => return Err(end(store, c, e).await),
        }
    }
    let comparison = store
        .comparison(c.comparison_id.unwrap_or_default())
        .await?;
    let mut judged = analyse::answer(&comparison.table, c.answer.trial());
    judged.bench_time_s = c.bench_time();
    // The answer of a completed campaign writes each of these, null when it has none.
    for slot in [
        &mut c.answer.truth_validation_mse,
        &mut c.answer.fits_and_comparison_s,
    ] {
        slot.get_or_insert(None);
    }
    c.answer.trial.get_or_insert(None);
    let floor = match (c.run_of(Step::Validation), validation_layout(&c)) {
        (Some(run), Some(layout)) => {
            let best = judged.best_model.as_deref().and_then(|m| {
                let rows = comparison.table.get("rows")?.as_array()?;
                let row = rows.iter().find(|r| r["model"] == m)?;
                Some((m, row.get("params")?))
            });
            floor::of_run(store, run, layout, best).await?
        }
        _ => None,
    };
    judge::judge(&c, floor, &mut judged);
    c.answer.judged = Some(judged);
    c.status = CampaignStatus::Completed;
    c.save(store).await?;
    Ok(c)
}

/// Where the passes lie in the campaign's validation run (from its step's spec).
fn validation_layout(c: &Record) -> Option<floor::Layout> {
    let spec = &c.step(Step::Validation)?.spec;
    floor::layout_of(spec).map(|(layout, _)| layout)
}

/// Ends the campaign on a step that did not complete: stored `stopped` (aborted) or `failed`.
async fn end(store: &Store, mut c: Record, e: StepFailed) -> anyhow::Error {
    c.status = if e.aborted {
        CampaignStatus::Stopped
    } else {
        CampaignStatus::Failed
    };
    c.reason = Some(e.to_string());
    if let Some(r) = &e.record {
        c.steps.push((**r).clone());
    }
    match c.save(store).await {
        Ok(()) => e.into(),
        Err(s) => anyhow::anyhow!("{e}; saving the campaign failed too: {s:#}"),
    }
}

/// Bench time of the steps so far \[s\].
pub fn bench_time(c: &Record) -> f64 {
    c.bench_time()
}

/// What the completed steps measured, for the design of the next.
pub fn estimates(c: &Record) -> design::Estimates {
    let mut est = design::Estimates::default();
    if let Some(b) = c.step(Step::Breakaway).and_then(StepRecord::breakaway) {
        est.fs_pos = design::breakaway_of(&b.positive);
        est.fs_neg = design::breakaway_of(&b.negative);
    }
    if let Some(s) = c
        .step(Step::LowSpeedCheck)
        .and_then(StepRecord::stribeck_points)
    {
        est.v_hold = design::slowest_held(s);
        let fs = est.fs_pos.unwrap_or(0.0).max(est.fs_neg.unwrap_or(0.0));
        (est.fc, est.vs, est.stribeck_held) = design::stribeck_estimate(s, fs, est.v_hold);
    }
    est
}

/// The report of campaign `id` as one self-contained HTML page ([`report::html`]).
pub async fn report_html(
    store: &Store,
    id: i64,
    g: bench_daemon::config::Geometry,
) -> anyhow::Result<String> {
    let c = store.campaign(id).await.map_err(|e| match e {
        run_store::Error::NotFound { .. } => {
            InputError(format!("campaign {id} not found in {}", store.location())).into()
        }
        e => anyhow::Error::from(e),
    })?;
    let c = Record::read(c)?;
    let mut extra = report::Extra::default();
    if let Some(cid) = c.comparison_id {
        extra.comparison = store.comparison(cid).await?.table;
    }
    for m in &c.request.models {
        if let Some(p) = analyse::final_params(store, &c, m).await {
            extra.params.push((m.clone(), p));
        }
    }
    if let Some(run) = c.run_of(Step::Presliding) {
        let run = store.run(run).await?;
        let sel = bench_daemon::fitting::run_data::Selection::default();
        let ts = bench_daemon::fitting::run_data::time_series(store, &run, &sel)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let n = ts.cols[0].len();
        let every = n.div_ceil(3000).max(1);
        extra.presliding = (0..n)
            .step_by(every)
            .map(|i| (ts.cols[1][i], ts.cols[4][i]))
            .collect();
    }
    Ok(report::html(&c, &extra, g))
}
