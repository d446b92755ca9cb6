//! `[archive]`: each night at `at` (UTC) `bench serve` moves the samples of the runs that
//! started more than `after_days` days before into Parquet files, as `bench archive` does, and
//! appends what it did to the audit log (method `ARCHIVE`). A pass never starts while a run is
//! going: it waits for the bench to be idle, so the deletes never compete with the recorder.

use crate::scheduler::QueueView;
use bench_daemon::config::ArchiveConfig;
use chrono::{DateTime, Duration, Utc};
use run_store::{ArchiveOptions, AuditEntry, Store};
use serde_json::json;
use tokio::sync::watch;

/// Starts the nightly pass (nothing without `[archive]`). `view` is the scheduler's queue (a
/// pass waits while a run is going); a lab server has none.
pub fn start(
    cfg: Option<&ArchiveConfig>,
    bench_id: &str,
    store: Store,
    view: Option<watch::Receiver<QueueView>>,
    mut shutdown: watch::Receiver<bool>,
) {
    let Some(cfg) = cfg.cloned() else { return };
    let Ok(at_s) = cfg.at_s() else {
        unreachable!("BUG: [archive] at was checked when the config was read")
    };
    let pass = Pass {
        cfg,
        bench_id: bench_id.to_string(),
        store,
    };
    tokio::spawn(async move {
        tokio::select! {
            () = pass.nightly(at_s, view) => {}
            _ = shutdown.wait_for(|stop| *stop) => {}
        }
    });
}

/// The next time of day `at_s` (seconds after midnight UTC) strictly after `now`.
pub fn next_pass(now: DateTime<Utc>, at_s: u32) -> DateTime<Utc> {
    let midnight = now
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .expect("midnight exists")
        .and_utc();
    let today = midnight + Duration::seconds(at_s.into());
    if today > now {
        today
    } else {
        today + Duration::days(1)
    }
}

/// Runs that started before this time are archived by a pass at `now`.
pub fn cutoff(now: DateTime<Utc>, after_days: u32) -> DateTime<Utc> {
    now - Duration::days(after_days.into())
}

struct Pass {
    cfg: ArchiveConfig,
    bench_id: String,
    store: Store,
}

impl Pass {
    async fn nightly(self, at_s: u32, mut view: Option<watch::Receiver<QueueView>>) {
        loop {
            let now = Utc::now();
            let wait = (next_pass(now, at_s) - now).to_std().unwrap_or_default();
            tokio::time::sleep(wait).await;
            if let Some(v) = &mut view
                && v.wait_for(|q| q.running.is_none()).await.is_err()
            {
                return;
            }
            self.once(Utc::now()).await;
        }
    }

    /// One pass at `now`: archives, logs and audits the outcome.
    async fn once(&self, now: DateTime<Utc>) {
        let before = cutoff(now, self.cfg.after_days)
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        let opts = ArchiveOptions {
            before: before.clone(),
            to: self.cfg.to.clone(),
            with_models: self.cfg.with_models,
        };
        let (status, detail) = match self.store.archive(&opts).await {
            Ok(r) => {
                tracing::info!(
                    "[archive]: {} runs started before {before} archived to {} ({} rows, {} bytes)",
                    r.runs,
                    self.cfg.to.display(),
                    r.rows,
                    r.bytes
                );
                let runs: Vec<i64> = r.files.iter().map(|f| f.run_id).collect();
                (
                    200,
                    json!({"before": before, "runs": runs, "rows": r.rows, "bytes": r.bytes,
                             "bytes_per_value": r.bytes_per_value}),
                )
            }
            Err(e) => {
                tracing::error!(
                    "[archive]: the nightly pass to {} failed: {e}",
                    self.cfg.to.display()
                );
                (500, json!({"before": before, "error": e.to_string()}))
            }
        };
        let entry = AuditEntry {
            bench_id: self.bench_id.clone(),
            method: "ARCHIVE".into(),
            path: self.cfg.to.display().to_string(),
            status,
            allowed: status == 200,
            detail: Some(detail.to_string()),
            ..AuditEntry::default()
        };
        if let Err(e) = self.store.append_audit(&entry).await {
            tracing::error!("appending the archive pass to the audit log: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn the_next_pass_is_todays_if_still_ahead_else_tomorrows() {
        let at = 3 * 3600;
        assert_eq!(
            next_pass(t("2026-11-29T01:00:00Z"), at),
            t("2026-11-29T03:00:00Z")
        );
        assert_eq!(
            next_pass(t("2026-11-29T03:00:00Z"), at),
            t("2026-11-30T03:00:00Z")
        );
        assert_eq!(
            next_pass(t("2026-11-29T23:59:59Z"), at),
            t("2026-11-30T03:00:00Z")
        );
        assert_eq!(
            next_pass(t("2026-12-31T22:00:00Z"), 0),
            t("2027-01-01T00:00:00Z")
        );
    }

    #[test]
    fn the_cutoff_is_whole_days_back() {
        assert_eq!(
            cutoff(t("2026-11-29T03:00:00Z"), 90),
            t("2026-08-31T03:00:00Z")
        );
        assert_eq!(
            cutoff(t("2026-11-29T03:00:00Z"), 0),
            t("2026-11-29T03:00:00Z")
        );
    }
}
