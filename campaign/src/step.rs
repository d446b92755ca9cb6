//! The steps of a campaign, by name: the runs in order, then the fits and the
//! compensation trial. A step record's `name` is the step's (snake_case, as stored).

use super::design::{self, Estimates};
use experiments::{BenchLimits, Spec};
use serde::{Deserialize, Serialize};

/// One step of a campaign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// 1: slow torque ramps both ways.
    Breakaway,
    /// 2: the velocity loop across the speed band.
    LowSpeedCheck,
    /// 3: the Stribeck sweep.
    Sweep,
    /// 4: presliding ramps, reversals, sine and step.
    Presliding,
    /// 4b: position steps that break away and slip, for GMS's slip dynamics (run only when a
    /// model's fit plan reads it, [`crate::fit_plan::reads_slips`]).
    Slips,
    /// 5: the validation profile.
    Validation,
    /// 6: the fits and the comparison (no run of its own).
    Fits,
    /// 7: the compensation trial.
    Trial,
}

impl Step {
    /// The run steps, in order (each designed from what the ones before it measured).
    pub const RUNS: [Step; 6] = [
        Step::Breakaway,
        Step::LowSpeedCheck,
        Step::Sweep,
        Step::Presliding,
        Step::Slips,
        Step::Validation,
    ];

    /// The step's name, as its record and its messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Step::Breakaway => "breakaway",
            Step::LowSpeedCheck => "low_speed_check",
            Step::Sweep => "sweep",
            Step::Presliding => "presliding",
            Step::Slips => "slips",
            Step::Validation => "validation",
            Step::Fits => "fits",
            Step::Trial => "trial",
        }
    }

    /// The design of a run step from the bench's limits and what the steps before measured
    /// (`None` for the fits and the trial, designed from the campaign's models).
    pub fn design(self, lim: &BenchLimits, est: &Estimates) -> Option<Spec> {
        Some(match self {
            Step::Breakaway => design::breakaway(lim),
            Step::LowSpeedCheck => design::low_speed_check(lim),
            Step::Sweep => design::sweep(lim, est),
            Step::Presliding => design::presliding(lim, est),
            Step::Slips => design::slips(),
            Step::Validation => design::validation(),
            Step::Fits | Step::Trial => return None,
        })
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_stored_by_its_name() {
        for s in Step::RUNS.into_iter().chain([Step::Fits, Step::Trial]) {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
    }
}
