//! A step's analysis, typed: the run's kind's `Output`, tagged by its `kind` as the analysis
//! writes it (`experiments::Results`). A stored analysis that does not read back as that
//! exactly as it was written (a record from an older analysis) is kept as it was
//! ([`StepResults::Stored`]), so that an old campaign still reads and is saved unchanged.

use experiments::Results;
use serde_json::Value;

/// The analysis of a step's run.
#[derive(Clone, Debug, PartialEq)]
pub enum StepResults {
    /// The analysis of the run's kind.
    Analysed(Box<Results>),
    /// An analysis that its kind no longer writes this way, kept as stored.
    Stored(Value),
}

impl StepResults {
    /// The analysis `v`, typed when it reads back unchanged.
    pub fn read(v: Value) -> StepResults {
        let typed = serde_json::from_value::<Results>(v.clone())
            .ok()
            .filter(|r| serde_json::to_value(r).is_ok_and(|again| again == v));
        match typed {
            Some(r) => StepResults::Analysed(Box::new(r)),
            None => StepResults::Stored(v),
        }
    }

    /// The analysis as stored.
    pub fn to_value(&self) -> Value {
        match self {
            StepResults::Analysed(r) => serde_json::to_value(r).unwrap_or(Value::Null),
            StepResults::Stored(v) => v.clone(),
        }
    }

    /// The typed analysis, if it is one.
    pub fn analysed(&self) -> Option<&Results> {
        match self {
            StepResults::Analysed(r) => Some(r),
            StepResults::Stored(_) => None,
        }
    }
}
