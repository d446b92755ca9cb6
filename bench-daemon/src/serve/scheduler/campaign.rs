//! A due `{"campaign"}` schedule entry: its campaign started through the daemon's own start
//! (a [`CampaignStarter`] the HTTP layer gives the scheduler, so the scheduler needs nothing of
//! it), or why it could not start (a campaign running, the e-stop latched, the queue paused):
//! nothing moves then, the entry keeps the reason and a recurring one tries again next time.

use super::Scheduler;
use crate::characterise::StartCampaign;
use run_store::{Fired, ScheduleEntry};
use std::future::Future;
use std::pin::Pin;

/// The future [`CampaignStarter::start`] returns: the campaign's id, or why it did not start.
pub type StartFuture<'a> = Pin<Box<dyn Future<Output = Result<i64, String>> + Send + 'a>>;

/// Starts a campaign on the daemon's bench as `POST /api/campaigns` does. It must not wait
/// for the scheduler (which is waiting for it): the campaign's steps are queued from its own
/// task.
pub trait CampaignStarter: Send + Sync + std::fmt::Debug {
    /// Starts the campaign `body` asks for.
    fn start<'a>(&'a self, body: &'a StartCampaign) -> StartFuture<'a>;
}

impl Scheduler {
    /// Starts the campaign of entry `e`.
    pub(super) async fn fire_campaign(&self, e: &ScheduleEntry, body: &StartCampaign) -> Fired {
        let started = match &self.campaigns {
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
}
