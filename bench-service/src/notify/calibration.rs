//! `calibration_due`: each torque sensor's current calibration (`bench sensors calibrate`),
//! checked when the service starts, every [`CHECK_S`] and after each run's end. A calibration
//! that has come within an entry's `calibration_due_days` of its due date (or past it) is told
//! once per entry: the store keeps that it was told, so a restart does not tell it again; a
//! new calibration is told anew when its own time comes.

use super::{CalibrationNotice, Notice, offer};
use crate::hub::Event;
use bench_daemon::calibration;
use run_store::{Calibration, Store};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// Seconds between two checks of the calibrations.
pub const CHECK_S: u64 = 5;

/// An entry that wants `calibration_due`: its days, its name and its queue.
pub type Watched = (u32, String, mpsc::Sender<Notice>);

/// Checks the sensors' calibrations and tells each one coming due.
pub struct DueWatcher {
    /// This bench.
    pub bench_id: String,
    /// Its torque sensors, by name.
    pub sensors: Vec<String>,
    /// Its store.
    pub store: Store,
    /// Who wants to be told.
    pub watched: Vec<Watched>,
}

impl DueWatcher {
    /// Runs until the live stream closes.
    pub async fn run(self, mut events: broadcast::Receiver<Event>) {
        let mut tick = tokio::time::interval(Duration::from_secs(CHECK_S));
        while super::next_check(&mut tick, &mut events).await {
            if let Err(e) = self.check().await {
                tracing::warn!("notifications: the calibrations could not be checked: {e}");
            }
        }
    }

    async fn check(&self) -> Result<(), run_store::Error> {
        let today = calibration::today();
        for sensor in &self.sensors {
            let Some(c) = self
                .store
                .current_calibration(&self.bench_id, sensor)
                .await?
            else {
                continue;
            };
            let Some(due) = c.due_date() else { continue };
            let left = (due - today).num_days();
            for (days, target, tx) in &self.watched {
                if left > i64::from(*days) {
                    continue;
                }
                let key = told_key(target, c.id);
                if self.store.queue_setting(&key).await?.is_some() {
                    continue;
                }
                self.store
                    .set_queue_setting(&key, &today.to_string())
                    .await?;
                offer(target, tx, notice(&self.bench_id, &c, left));
            }
        }
        Ok(())
    }
}

/// Where the store keeps that `target` was told of calibration `id`.
fn told_key(target: &str, id: i64) -> String {
    format!("notify.calibration_due.{id}.{target}")
}

fn notice(bench_id: &str, c: &Calibration, due_in_days: i64) -> Notice {
    Notice::calibration_due(
        bench_id,
        CalibrationNotice {
            sensor: c.sensor.clone(),
            calibration_id: c.id,
            certificate: c.certificate.clone(),
            due: c.due.clone(),
            due_in_days,
        },
    )
}
