//! Characterisation campaigns (`bench characterise`, migration 0011): a campaign's request, its
//! steps with the runs they recorded, its fits, comparison, compensation trial and answer, and
//! the link from each step's run back to its campaign.

use crate::backend::{now_text, on};
use crate::{Error, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Status of a campaign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CampaignStatus {
    /// Steps are being run.
    Running,
    /// Every step done.
    Completed,
    /// A step was stopped (abort, limit, e-stop): the bench is in its safe state.
    Stopped,
    /// A step failed (fault, analysis, fit).
    Failed,
    /// The process running it stopped (daemon killed or restarted) before it ended; marked so
    /// at the next `bench serve` ([`Store::interrupt_running_campaigns`]): `--resume` continues.
    Interrupted,
}

impl CampaignStatus {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            CampaignStatus::Running => "running",
            CampaignStatus::Completed => "completed",
            CampaignStatus::Stopped => "stopped",
            CampaignStatus::Failed => "failed",
            CampaignStatus::Interrupted => "interrupted",
        }
    }

    fn parse(s: &str) -> Result<CampaignStatus, Error> {
        Ok(match s {
            "running" => CampaignStatus::Running,
            "completed" => CampaignStatus::Completed,
            "stopped" => CampaignStatus::Stopped,
            "failed" => CampaignStatus::Failed,
            "interrupted" => CampaignStatus::Interrupted,
            other => {
                return Err(Error::InvalidInput {
                    field: "status",
                    value: other.into(),
                    rule: "is not a campaign status".into(),
                });
            }
        })
    }
}

impl std::fmt::Display for CampaignStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A campaign as stored. `steps`, `fits` and `answer` are the campaign runner's documents; each
/// step object with a `run_id` and a `name` links that run to the campaign when saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    /// Id (0 before it is created).
    pub id: i64,
    /// UUID.
    pub uuid: String,
    /// Created (UTC, RFC 3339).
    pub created_at: String,
    /// Last saved (UTC, RFC 3339).
    pub updated_at: String,
    /// Status.
    pub status: CampaignStatus,
    /// What was asked (models, budget, truth of a simulated bench, ...).
    pub request: Value,
    /// The bench's configuration at the start.
    pub bench: Value,
    /// Software version that ran it.
    pub software_version: String,
    /// Steps, in order.
    pub steps: Vec<Value>,
    /// Fits, in order.
    pub fits: Vec<Value>,
    /// The stored comparison of the fitted models on the validation run.
    pub comparison_id: Option<i64>,
    /// The compensation trial's run.
    pub trial_run_id: Option<i64>,
    /// The answer (best model, validation RMS, compensation gain, ...).
    pub answer: Value,
    /// Why it stopped or failed.
    pub reason: Option<String>,
}

crate::rows::from_row! {
    struct CampaignRow {
        id: i64,
        uuid: String,
        created_at: String,
        updated_at: String,
        status: String,
        request: String,
        bench: String,
        software_version: String,
        steps: String,
        fits: String,
        comparison_id: Option<i64>,
        trial_run_id: Option<i64>,
        answer: String,
        reason: Option<String>,
    }
}

impl CampaignRow {
    fn decode(self) -> Result<Campaign, Error> {
        Ok(Campaign {
            id: self.id,
            uuid: self.uuid,
            created_at: self.created_at,
            updated_at: self.updated_at,
            status: CampaignStatus::parse(&self.status)?,
            request: serde_json::from_str(&self.request)?,
            bench: serde_json::from_str(&self.bench)?,
            software_version: self.software_version,
            steps: serde_json::from_str(&self.steps)?,
            fits: serde_json::from_str(&self.fits)?,
            comparison_id: self.comparison_id,
            trial_run_id: self.trial_run_id,
            answer: serde_json::from_str(&self.answer)?,
            reason: self.reason,
        })
    }
}

impl Store {
    /// Creates a `running` campaign with `request` on the bench `bench`; returns its id.
    pub async fn create_campaign(
        &self,
        request: &Value,
        bench: &Value,
        software_version: &str,
    ) -> Result<i64, Error> {
        let now = now_text();
        let (request, bench) = (request.to_string(), bench.to_string());
        let uuid = crate::backend::new_uuid();
        let id: i64 = on!(self.writer(), |p, DB| {
            sqlx::query_scalar(
                "INSERT INTO campaigns (uuid, created_at, updated_at, status, request, bench,
                     software_version)
                 VALUES ($1, $2, $2, 'running', $3, $4, $5) RETURNING id",
            )
            .bind(&uuid)
            .bind(&now)
            .bind(&request)
            .bind(&bench)
            .bind(software_version)
            .fetch_one(p)
            .await?
        });
        Ok(id)
    }

    /// Saves what a campaign has done so far (status, steps, fits, comparison, trial, answer,
    /// reason) and links every step's `run_id` to it, in one transaction.
    pub async fn save_campaign(&self, c: &Campaign) -> Result<(), Error> {
        let steps = serde_json::to_string(&c.steps)?;
        let fits = serde_json::to_string(&c.fits)?;
        let answer = c.answer.to_string();
        let now = now_text();
        let links: Vec<(i64, String)> = c
            .steps
            .iter()
            .filter_map(|s| {
                let run = s.get("run_id")?.as_i64()?;
                let name = s.get("name")?.as_str()?.to_string();
                Some((run, name))
            })
            .chain(c.trial_run_id.map(|r| (r, "trial".to_string())))
            .collect();
        on!(self.writer(), |p, DB| {
            let mut tx = p.begin().await?;
            let n = sqlx::query(
                "UPDATE campaigns SET updated_at = $2, status = $3, steps = $4, fits = $5,
                     comparison_id = $6, trial_run_id = $7, answer = $8, reason = $9
                 WHERE id = $1",
            )
            .bind(c.id)
            .bind(&now)
            .bind(c.status.as_str())
            .bind(&steps)
            .bind(&fits)
            .bind(c.comparison_id)
            .bind(c.trial_run_id)
            .bind(&answer)
            .bind(&c.reason)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if n == 0 {
                return Err(Error::NotFound {
                    what: "campaign",
                    key: c.id.to_string(),
                });
            }
            for (run, step) in &links {
                sqlx::query(
                    "INSERT INTO campaign_runs (campaign_id, run_id, step) VALUES ($1, $2, $3)
                     ON CONFLICT DO NOTHING",
                )
                .bind(c.id)
                .bind(run)
                .bind(step)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Replaces a campaign's request (a resumed campaign's new budget).
    pub async fn set_campaign_request(&self, id: i64, request: &Value) -> Result<(), Error> {
        let text = request.to_string();
        let n = on!(self.writer(), |p, DB| {
            sqlx::query("UPDATE campaigns SET request = $2 WHERE id = $1")
                .bind(id)
                .bind(&text)
                .execute(p)
                .await?
                .rows_affected()
        });
        if n == 0 {
            return Err(Error::NotFound {
                what: "campaign",
                key: id.to_string(),
            });
        }
        Ok(())
    }

    /// The campaign with this id.
    pub async fn campaign(&self, id: i64) -> Result<Campaign, Error> {
        let row: Option<CampaignRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, created_at, updated_at, status, request, bench, software_version,
                     steps, fits, comparison_id, trial_run_id, answer, reason FROM campaigns WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(p)
            .await?
        });
        row.ok_or_else(|| Error::NotFound {
            what: "campaign",
            key: id.to_string(),
        })?
        .decode()
    }

    /// The newest `limit` campaigns, newest first.
    pub async fn campaigns(&self, limit: i64) -> Result<Vec<Campaign>, Error> {
        let rows: Vec<CampaignRow> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT id, uuid, created_at, updated_at, status, request, bench, software_version,
                     steps, fits, comparison_id, trial_run_id, answer, reason FROM campaigns ORDER BY id DESC LIMIT $1",
            )
            .bind(limit)
            .fetch_all(p)
            .await?
        });
        rows.into_iter().map(CampaignRow::decode).collect()
    }

    /// Marks `interrupted`, with the reason `reason(id)`, every campaign left `running` on
    /// bench `bench_id` (the `bench_id` of its stored configuration; `""` matches every
    /// campaign): the process that ran it is gone. Returns their ids, oldest first.
    pub async fn interrupt_running_campaigns(
        &self,
        bench_id: &str,
        reason: impl Fn(i64) -> String,
    ) -> Result<Vec<i64>, Error> {
        let rows: Vec<(i64, String)> = on!(self.reader(), |p, DB| {
            sqlx::query_as("SELECT id, bench FROM campaigns WHERE status = 'running' ORDER BY id")
                .fetch_all(p)
                .await?
        });
        let mut marked = Vec::new();
        for (id, bench) in rows {
            let on = serde_json::from_str::<Value>(&bench)?;
            if !bench_id.is_empty() && on["bench_id"].as_str().unwrap_or("") != bench_id {
                continue;
            }
            let n = on!(self.writer(), |p, DB| {
                sqlx::query(
                    "UPDATE campaigns SET status = 'interrupted', reason = $2, updated_at = $3
                     WHERE id = $1 AND status = 'running'",
                )
                .bind(id)
                .bind(reason(id))
                .bind(now_text())
                .execute(p)
                .await?
                .rows_affected()
            });
            if n > 0 {
                marked.push(id);
            }
        }
        Ok(marked)
    }

    /// The campaign (id and step name) run `run` was recorded for, if any.
    pub async fn campaign_of_run(&self, run: i64) -> Result<Option<(i64, String)>, Error> {
        let row: Option<(i64, String)> = on!(self.reader(), |p, DB| {
            sqlx::query_as(
                "SELECT campaign_id, step FROM campaign_runs WHERE run_id = $1
                 ORDER BY campaign_id LIMIT 1",
            )
            .bind(run)
            .fetch_optional(p)
            .await?
        });
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::CampaignStatus;
    use crate::{Error, NewRun, Store};
    use serde_json::json;

    #[tokio::test]
    async fn a_campaign_is_saved_read_back_and_its_runs_link_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let run = store
            .create_run(&NewRun {
                kind: "torque_ramp".into(),
                name: "t".into(),
                software_version: "0.1.0".into(),
                ..NewRun::default()
            })
            .await
            .unwrap();
        let id = store
            .create_campaign(&json!({"models": ["lugre"]}), &json!({}), "0.1.0")
            .await
            .unwrap();
        let mut c = store.campaign(id).await.unwrap();
        assert_eq!(c.status, CampaignStatus::Running);
        c.steps
            .push(json!({"name": "breakaway", "run_id": run, "status": "completed"}));
        c.status = CampaignStatus::Stopped;
        c.reason = Some("operator abort".into());
        store.save_campaign(&c).await.unwrap();
        let back = store.campaign(id).await.unwrap();
        assert_eq!(
            (&back.steps, back.status),
            (&c.steps, CampaignStatus::Stopped)
        );
        assert_eq!(
            store.campaign_of_run(run).await.unwrap(),
            Some((id, "breakaway".to_string()))
        );
        assert_eq!(store.campaigns(10).await.unwrap().len(), 1);
        c.id = 999;
        assert!(matches!(
            store.save_campaign(&c).await,
            Err(Error::NotFound { .. })
        ));
    }
}
