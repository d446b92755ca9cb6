//! The campaign's answer: while it runs, what the fits and the trial left for it (the
//! truth's validation MSE, the fits' wall time, the trial's record); once completed, the
//! ranking, the best model and compensator, the bench's floor and the sentence
//! ([`crate::judge`]). A key the old answer wrote as `null` is written as `null` again.

use super::StepRecord;
use experiments::kinds::compensation_trial::Ranked;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct Answer {
    /// The simulated bench's true model scored on the validation run (MSE; null when it could
    /// not be, absent before the fits).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "kept"
    )]
    pub truth_validation_mse: Option<Option<f64>>,
    /// Wall time of the fits and the comparison \[s\].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "kept"
    )]
    pub fits_and_comparison_s: Option<Option<f64>>,
    /// The compensation trial's record.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "kept"
    )]
    pub trial: Option<Option<StepRecord>>,
    /// The completed campaign's answer.
    #[serde(flatten)]
    pub judged: Option<Judged>,
}

/// A completed campaign's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// The plain-language answer.
    pub text: String,
    /// The model ranked first with a score.
    #[serde(default)]
    pub best_model: Option<String>,
    /// The models ranked on the validation run.
    #[serde(default)]
    pub ranking: Vec<RankRow>,
    /// The compensator the trial ranked first.
    #[serde(default)]
    pub best_compensator: Option<String>,
    /// The compensation trial's ranking.
    #[serde(default)]
    pub compensation: Vec<Ranked>,
    /// The residual's unit.
    #[serde(default)]
    pub unit: String,
    /// Bench time of every step \[s\].
    #[serde(default)]
    pub bench_time_s: f64,
    /// The validation MSE no model can beat: the bench's repeatability plus what its encoder
    /// cannot resolve (the sum of `floor_parts`; [`crate::floor`]).
    #[serde(default)]
    pub floor_mse: Option<f64>,
    /// The floor's parts (absent in campaigns made before they were measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_parts: Option<crate::floor::FloorParts>,
    /// The best model within [`crate::judge::ADEQUATE_RATIO`] of the floor.
    #[serde(default)]
    pub adequate: Option<bool>,
    /// The best model's MSE over the floor.
    #[serde(default)]
    pub best_over_floor: Option<f64>,
    /// The best model's MSE over the true model's.
    #[serde(default)]
    pub best_over_truth: Option<f64>,
    /// The true model's MSE over the floor (written when a model was scored).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "kept"
    )]
    pub truth_over_floor: Option<Option<f64>>,
    /// What the answer cannot claim.
    #[serde(default)]
    pub caveats: Vec<String>,
    /// Parameters not measured, and why.
    #[serde(default)]
    pub not_measured: BTreeMap<String, String>,
}

/// One model's row of the ranking.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    /// Rank by validation MSE (1 = best).
    #[serde(default)]
    pub rank: Option<usize>,
    /// The model.
    pub model: String,
    /// Validation MSE.
    #[serde(default)]
    pub validation_mse: Option<f64>,
    /// Its root.
    #[serde(default)]
    pub validation_rms: Option<f64>,
    /// Why it could not be scored.
    #[serde(default)]
    pub error: Option<String>,
    /// What the comparison did to its parameters.
    #[serde(default)]
    pub note: Option<String>,
    /// The models it shares its rank with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie: Option<String>,
}

impl RankRow {
    /// The rank as the answer's text writes it.
    pub fn rank_text(&self) -> String {
        self.rank.map_or_else(|| "null".into(), |r| r.to_string())
    }
}

/// A key present (even as `null`) is `Some`; an absent one is `None` (by `default`).
fn kept<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// The fields of the running answer, then the completed answer when it has its sentence.
#[derive(Deserialize)]
struct Progress {
    #[serde(default, deserialize_with = "kept")]
    truth_validation_mse: Option<Option<f64>>,
    #[serde(default, deserialize_with = "kept")]
    fits_and_comparison_s: Option<Option<f64>>,
    #[serde(default, deserialize_with = "kept")]
    trial: Option<Option<StepRecord>>,
}

impl TryFrom<Map<String, Value>> for Answer {
    type Error = serde_json::Error;

    fn try_from(m: Map<String, Value>) -> Result<Answer, serde_json::Error> {
        let judged = match m.contains_key("text") {
            true => Some(serde_json::from_value(Value::Object(m.clone()))?),
            false => None,
        };
        let p: Progress = serde_json::from_value(Value::Object(m))?;
        Ok(Answer {
            truth_validation_mse: p.truth_validation_mse,
            fits_and_comparison_s: p.fits_and_comparison_s,
            trial: p.trial,
            judged,
        })
    }
}

impl Answer {
    /// The trial's record, if the trial ran.
    pub fn trial(&self) -> Option<&StepRecord> {
        self.trial.as_ref()?.as_ref()
    }
}
