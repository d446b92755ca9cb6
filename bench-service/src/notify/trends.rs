//! `trend_out_of_limits`: the trends the `[[notify]]` entries watch (`trends = [...]`), read as
//! `bench trends` reads them (this bench, the entry's baseline and band) every [`CHECK_S`] and
//! after each run's end. A point outside its limits is told once, and only if it came after the
//! service started (its parameter set, or its run for a measured point, is newer than the
//! newest the store held then): a restart does not repeat last month's alarms.

use super::{Notice, TrendNotice, offer};
use crate::hub::Event;
use bench_daemon::config::TrendWatch;
use run_store::{Band, Baseline, DEFAULT_BASELINE_POINTS, Store, Trend, TrendPoint, TrendQuery};
use std::collections::HashSet;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// Seconds between two checks of the watched trends.
pub const CHECK_S: u64 = 5;

/// A watched trend and the entry (its name and queue) that watches it.
pub type Watched = (TrendWatch, String, mpsc::Sender<Notice>);

/// Checks the watched trends and tells each new point outside its limits.
pub struct TrendWatcher {
    /// This bench.
    pub bench_id: String,
    /// Its store.
    pub store: Store,
    /// What is watched, by whom.
    pub watched: Vec<Watched>,
    /// The newest run and parameter set when the service started.
    pub mark: (i64, i64),
    /// Points told: (watch, run, set, curve position).
    pub told: HashSet<(usize, i64, i64, i64)>,
}

impl TrendWatcher {
    /// Runs until the live stream closes.
    pub async fn run(mut self, mut events: broadcast::Receiver<Event>) {
        let mut tick = tokio::time::interval(Duration::from_secs(CHECK_S));
        while super::next_check(&mut tick, &mut events).await {
            self.check().await;
        }
    }

    async fn check(&mut self) {
        for k in 0..self.watched.len() {
            let (watch, target, _) = &self.watched[k];
            let trend = match self.store.trend(&query(&self.bench_id, watch)).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(
                        "notifications: the trend of {} for {target}: {e}",
                        watch.param
                    );
                    continue;
                }
            };
            for p in trend.points.iter().filter(|p| p.outside == Some(true)) {
                let key = (k, p.run_id, p.parameter_set_id.unwrap_or(0), p.idx);
                if self.is_new(p) && self.told.insert(key) {
                    let (_, target, tx) = &self.watched[k];
                    let notice = notice(&self.bench_id, &trend, p);
                    offer(target, tx, notice);
                }
            }
        }
    }

    fn is_new(&self, p: &TrendPoint) -> bool {
        match p.parameter_set_id {
            Some(set) => set > self.mark.1,
            None => p.run_id > self.mark.0,
        }
    }
}

/// `bench trends --param P [--model M] --bench THIS` with the watch's baseline.
fn query(bench_id: &str, w: &TrendWatch) -> TrendQuery {
    TrendQuery {
        param: w.param.clone(),
        model: w.model.clone(),
        bench: Some(bench_id.to_string()),
        since: None,
        until: None,
        baseline: Baseline {
            until: None,
            points: w.baseline_points.unwrap_or(DEFAULT_BASELINE_POINTS),
            band: w
                .band
                .map_or(Band::Sigma3, |fraction| Band::Relative { fraction }),
        },
    }
}

fn notice(bench_id: &str, trend: &Trend, p: &TrendPoint) -> Notice {
    let limits = trend
        .series
        .iter()
        .find(|s| s.bench_id == p.bench_id && s.model == p.model && s.idx == p.idx)
        .map(|s| &s.limits);
    let t = TrendNotice {
        param: trend.param.clone(),
        model: p.model.clone(),
        idx: p.idx,
        value: p.value,
        std_error: p.std_error,
        parameter_set_id: p.parameter_set_id,
        lower: limits.and_then(|l| l.lower),
        upper: limits.and_then(|l| l.upper),
    };
    Notice::trend_out_of_limits(bench_id, p.run_id, t)
}
