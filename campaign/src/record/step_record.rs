//! A step's record as the campaign keeps it (`steps`, and the answer's `trial`): which step,
//! its run and how it ended, the spec it ran and its typed analysis ([`StepResults`]).

use super::results::StepResults;
use crate::step::Step;
use experiments::Results;
use experiments::kinds::compensation_trial::Ranked;
use experiments::kinds::{constant_velocity_sweep, torque_ramp};
use run_store::RunStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A step's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "Stored", into = "Stored")]
pub struct StepRecord {
    /// Which step.
    pub name: Step,
    /// Its run's final status.
    pub status: RunStatus,
    /// Its run.
    pub run_id: i64,
    /// The spec it ran, every parameter written out.
    pub spec: Value,
    /// Its run's analysis (completed runs).
    pub results: Option<StepResults>,
    /// Why there is no analysis.
    pub analysis_error: Option<String>,
    /// Bench time from its start to its end \[s\].
    pub bench_time_s: f64,
}

/// The stored object: the same fields, the analysis as JSON (typed by `name` on reading).
#[derive(Serialize, Deserialize)]
struct Stored {
    name: Step,
    status: RunStatus,
    run_id: i64,
    spec: Value,
    results: Option<Value>,
    analysis_error: Option<String>,
    bench_time_s: f64,
}

impl From<Stored> for StepRecord {
    fn from(s: Stored) -> StepRecord {
        StepRecord {
            name: s.name,
            status: s.status,
            run_id: s.run_id,
            spec: s.spec,
            results: s.results.map(StepResults::read),
            analysis_error: s.analysis_error,
            bench_time_s: s.bench_time_s,
        }
    }
}

impl From<StepRecord> for Stored {
    fn from(r: StepRecord) -> Stored {
        Stored {
            name: r.name,
            status: r.status,
            run_id: r.run_id,
            spec: r.spec,
            results: r.results.as_ref().map(StepResults::to_value),
            analysis_error: r.analysis_error,
            bench_time_s: r.bench_time_s,
        }
    }
}

impl StepRecord {
    /// The record as the run store keeps it (a JSON object of the fields above).
    pub fn stored(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Whether its run completed.
    pub fn completed(&self) -> bool {
        self.status == RunStatus::Completed
    }

    /// The breakaway table of a breakaway step.
    pub fn breakaway(&self) -> Option<&torque_ramp::Output> {
        match self.analysis()? {
            Results::TorqueRamp(o) => Some(o),
            _ => None,
        }
    }

    /// The Stribeck points of the low-speed check or the sweep.
    pub fn stribeck_points(&self) -> Option<&constant_velocity_sweep::Output> {
        match self.analysis()? {
            Results::ConstantVelocitySweep(o) => Some(o),
            _ => None,
        }
    }

    /// The compensators ranked by the compensation trial, best first (empty for other steps).
    pub fn trial_ranking(&self) -> &[Ranked] {
        match self.analysis() {
            Some(Results::CompensationTrial(o)) => &o.ranking,
            _ => &[],
        }
    }

    /// Its run's typed analysis.
    fn analysis(&self) -> Option<&Results> {
        self.results.as_ref()?.analysed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step record as campaigns stored it before records were typed (the keys `bench
    /// characterise --json` and GET /api/campaigns/{id} show): it reads as a [`StepRecord`]
    /// and is stored again byte for byte.
    #[test]
    fn an_old_step_record_reads_and_is_stored_as_it_was() {
        let old = r#"{"analysis_error":null,"bench_time_s":12.5,"name":"low_speed_check","results":{"positive":[]},"run_id":7,"spec":{"kind":"constant_velocity_sweep","name":"characterise 2: low-speed check (velocity loop)","params":{"repeats":1}},"status":"completed"}"#;
        let record: StepRecord = serde_json::from_str(old).unwrap();
        assert_eq!(record.name, Step::LowSpeedCheck);
        assert_eq!(record.status, RunStatus::Completed);
        assert!(matches!(record.results, Some(StepResults::Stored(_))));
        assert_eq!(serde_json::to_string(&record.stored()).unwrap(), old);
    }

    /// An analysis the kind writes today reads as its typed `Output`.
    #[test]
    fn a_sweep_analysis_reads_as_stribeck_points() {
        let point = r#"{"mean_torque_nm":0.5,"n":10,"setpoint_rad_s":0.1,"std_torque_nm":0.01,"stick_slip":false,"velocity_rad_s":0.1,"velocity_std_rad_s":0.001}"#;
        let old = format!(
            r#"{{"analysis_error":null,"bench_time_s":3.0,"name":"sweep","results":{{"kind":"constant_velocity_sweep","negative":[],"positive":[{point}]}},"run_id":8,"spec":{{}},"status":"completed"}}"#
        );
        let record: StepRecord = serde_json::from_str(&old).unwrap();
        let points = record.stribeck_points().unwrap();
        assert_eq!(points.positive[0].mean_torque_nm, 0.5);
        assert_eq!(serde_json::to_string(&record.stored()).unwrap(), old);
    }
}
