//! A due `{"campaign"}` schedule entry: its campaign started through the daemon's own start
//! (a [`CampaignStarter`] the HTTP layer gives the scheduler, so the scheduler needs nothing of
//! it), or why it could not start (a campaign running, the e-stop latched, the queue paused):
//! nothing moves then, the entry keeps the reason and a recurring one tries again next time.

use campaign::{StartCampaign, StepRunner};
use run_store::{Fired, ScheduleEntry};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The campaign the daemon runs (one at a time), owned by the scheduler's task: a start
/// reserves it ([`super::Cmd::CampaignReserve`]), then names it
/// ([`super::Cmd::CampaignStarted`]); its end frees it.
#[derive(Clone, Debug)]
pub struct CurrentCampaign {
    /// Its id; `None` while its record is being created.
    pub id: Option<i64>,
    /// Who runs its steps (`abort` stops it); `None` until they start.
    pub runner: Option<Arc<dyn StepRunner>>,
}

/// The future [`CampaignStarter::start`] returns: the campaign's id, or why it did not start.
pub type StartFuture<'a> = Pin<Box<dyn Future<Output = Result<i64, String>> + Send + 'a>>;

/// Starts a campaign on the daemon's bench as `POST /api/campaigns` does. Called off the
/// scheduler's task, which goes on answering meanwhile (the campaign's steps are queued through
/// it).
pub trait CampaignStarter: Send + Sync + std::fmt::Debug {
    /// Starts the campaign `body` asks for.
    fn start<'a>(&'a self, body: &'a StartCampaign) -> StartFuture<'a>;
}

/// Starts the campaign of entry `e` through `starter` (none: this daemon runs no campaigns).
pub(super) async fn fire_campaign(
    e: &ScheduleEntry,
    body: &StartCampaign,
    starter: Option<Arc<dyn CampaignStarter>>,
) -> Fired {
    let started = match &starter {
        Some(starter) => starter.start(body).await,
        None => Err("this daemon runs no campaigns".to_string()),
    };
    match started {
        Ok(id) => {
            tracing::info!("schedule {}: campaign {id} started", e.id);
            Fired {
                campaign_id: Some(id),
                ..Fired::default()
            }
        }
        Err(why) => {
            let retry = match e.recurrence.as_deref() {
                Some(rule) => format!(" (tries again at its next {rule} time)"),
                None => String::new(),
            };
            tracing::warn!("schedule {}: campaign not started: {why}{retry}", e.id);
            Fired {
                error: Some(format!("campaign not started: {why}")),
                ..Fired::default()
            }
        }
    }
}
