//! The campaign's record, typed: the request, the steps ([`StepRecord`], each with its kind's
//! analysis), the fits ([`FitRecord`]) and the answer ([`Answer`]). The run store keeps each as
//! a JSON column (`run_store::Campaign`); this crate reads and writes them only through these
//! types ([`Record::load`], [`Record::save`]). Field names are the stored keys, so records
//! stored before the types read as they are.

mod answer;
mod fit;
mod results;
mod step_record;

pub use answer::{Answer, Judged, RankRow};
pub use fit::{FitRecord, FitReport, SlidingFall, Verdict};
pub use results::StepResults;
pub use step_record::StepRecord;

use crate::Request;
use run_store::{Campaign, CampaignStatus, Store};
use serde_json::Value;

/// A campaign as this crate reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Id.
    pub id: i64,
    /// UUID.
    pub uuid: String,
    /// Created (UTC, RFC 3339).
    pub created_at: String,
    /// Last saved (UTC, RFC 3339).
    pub updated_at: String,
    /// Status.
    pub status: CampaignStatus,
    /// What was asked.
    pub request: Request,
    /// The bench's configuration at the start (shown as it is).
    pub bench: Value,
    /// Software version that ran it.
    pub software_version: String,
    /// Steps, in order.
    pub steps: Vec<StepRecord>,
    /// Fits, in order.
    pub fits: Vec<FitRecord>,
    /// The stored comparison of the fitted models on the validation run.
    pub comparison_id: Option<i64>,
    /// The compensation trial's run.
    pub trial_run_id: Option<i64>,
    /// The answer.
    pub answer: Answer,
    /// Why it stopped or failed.
    pub reason: Option<String>,
}

impl Record {
    /// Campaign `id` from `store`.
    pub async fn load(store: &Store, id: i64) -> anyhow::Result<Record> {
        Ok(Record::read(store.campaign(id).await?)?)
    }

    /// Saves what the campaign has done so far (its request is stored at creation).
    pub async fn save(&self, store: &Store) -> anyhow::Result<()> {
        store.save_campaign(&self.stored()?).await?;
        Ok(())
    }

    /// The record of a stored campaign; the error names the column that does not read.
    pub fn read(c: Campaign) -> Result<Record, serde_json::Error> {
        Ok(Record {
            id: c.id,
            uuid: c.uuid,
            created_at: c.created_at,
            updated_at: c.updated_at,
            status: c.status,
            request: serde_json::from_value(c.request)?,
            bench: c.bench,
            software_version: c.software_version,
            steps: serde_json::from_value(Value::Array(c.steps))?,
            fits: serde_json::from_value(Value::Array(c.fits))?,
            comparison_id: c.comparison_id,
            trial_run_id: c.trial_run_id,
            answer: serde_json::from_value(c.answer)?,
            reason: c.reason,
        })
    }

    /// The campaign as the run store keeps it.
    pub fn stored(&self) -> Result<Campaign, serde_json::Error> {
        let each = |v: Value| match v {
            Value::Array(a) => a,
            _ => Vec::new(),
        };
        Ok(Campaign {
            id: self.id,
            uuid: self.uuid.clone(),
            created_at: self.created_at.clone(),
            updated_at: self.updated_at.clone(),
            status: self.status,
            request: serde_json::to_value(&self.request)?,
            bench: self.bench.clone(),
            software_version: self.software_version.clone(),
            steps: each(serde_json::to_value(&self.steps)?),
            fits: each(serde_json::to_value(&self.fits)?),
            comparison_id: self.comparison_id,
            trial_run_id: self.trial_run_id,
            answer: serde_json::to_value(&self.answer)?,
            reason: self.reason.clone(),
        })
    }

    /// The completed step `name`.
    pub fn step(&self, name: crate::Step) -> Option<&StepRecord> {
        self.steps.iter().find(|s| s.name == name && s.completed())
    }

    /// The run of the completed step `name`.
    pub fn run_of(&self, name: crate::Step) -> Option<i64> {
        self.step(name).map(|s| s.run_id)
    }

    /// Bench time of the steps so far, the trial's included \[s\].
    pub fn bench_time(&self) -> f64 {
        self.steps
            .iter()
            .chain(self.answer.trial())
            .map(|s| s.bench_time_s)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A completed campaign as `bench characterise --sim --json` printed it before the record
    /// was typed (every step, the four models' fits, the trial and the answer): it reads as a
    /// [`Record`], each step's analysis as its kind's `Output`, and is stored again as it was.
    #[test]
    fn a_campaign_stored_before_the_types_reads_and_is_stored_as_it_was() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/campaign-record.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let old: Campaign = serde_json::from_str(&text).unwrap();
        let record = Record::read(old.clone()).unwrap();
        for s in record.steps.iter().chain(record.answer.trial()) {
            assert!(
                !matches!(s.results, Some(StepResults::Stored(_)) | None),
                "{}: {:?}",
                s.name,
                s.results.as_ref().map(StepResults::to_value)
            );
        }
        let judged = record.answer.judged.as_ref().unwrap();
        assert_eq!(judged.ranking.len(), 4);
        assert!(
            record
                .fits
                .iter()
                .all(|f| f.report.is_some() || f.error.is_some())
        );
        let again = record.stored().unwrap();
        assert_eq!(again, old);
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::from_str::<Value>(&text).unwrap()
        );
    }
}
