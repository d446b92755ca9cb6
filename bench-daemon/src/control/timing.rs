//! Period statistics of the control loop: how late each tick woke against its absolute
//! deadline, and how many ticks overran into the next period.

use run_store::TimingStats;

/// Histogram bins of 1 µs up to 100 ms; later wake-ups land in the last bin (the maximum is
/// kept exactly).
const BINS: usize = 100_000;

/// Upper edges \[µs\] of the coarse lateness buckets `/metrics` publishes as a histogram.
pub const BUCKET_EDGES_US: [f64; 10] = [
    10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1_000.0, 2_000.0, 5_000.0, 10_000.0,
];

/// Wake-up lateness histogram and overrun count. Constant memory, O(1) per tick.
#[derive(Clone, Debug)]
pub struct PeriodStats {
    bins: Vec<u32>,
    n: u64,
    max_us: f64,
    sum_us: f64,
    /// Ticks at or below each edge of [`BUCKET_EDGES_US`] (not cumulative), then above them.
    coarse: [u64; BUCKET_EDGES_US.len() + 1],
    /// Ticks whose work ended after the next deadline (that deadline was skipped).
    pub overruns: u64,
}

impl Default for PeriodStats {
    fn default() -> PeriodStats {
        PeriodStats {
            bins: vec![0; BINS],
            n: 0,
            max_us: 0.0,
            sum_us: 0.0,
            coarse: [0; BUCKET_EDGES_US.len() + 1],
            overruns: 0,
        }
    }
}

impl PeriodStats {
    /// Records one tick that woke `error_us` after its deadline.
    pub fn record(&mut self, error_us: f64) {
        let e = error_us.max(0.0);
        self.bins[(e as usize).min(BINS - 1)] += 1;
        self.n += 1;
        self.max_us = self.max_us.max(e);
        self.sum_us += e;
        let k = BUCKET_EDGES_US.partition_point(|&edge| edge < e);
        self.coarse[k] += 1;
    }

    /// The lateness histogram for `/metrics`: cumulative counts at each edge of
    /// [`BUCKET_EDGES_US`] then in all, and the sum \[µs\].
    pub fn histogram(&self) -> Histogram {
        let mut cumulative = [0u64; BUCKET_EDGES_US.len() + 1];
        let mut seen = 0;
        for (c, n) in cumulative.iter_mut().zip(self.coarse) {
            seen += n;
            *c = seen;
        }
        Histogram {
            cumulative,
            sum_us: self.sum_us,
        }
    }

    /// Ticks recorded.
    pub fn ticks(&self) -> u64 {
        self.n
    }

    /// The `q` quantile \[µs\] (upper edge of its 1 µs bin), `None` before any tick.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0u64;
        for (i, &c) in self.bins.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return Some(((i + 1) as f64).min(self.max_us.max(i as f64)));
            }
        }
        Some(self.max_us)
    }

    /// The statistics as the run store keeps them.
    pub fn stats(&self) -> TimingStats {
        TimingStats {
            period_error_p50_us: self.quantile(0.5),
            period_error_p99_us: self.quantile(0.99),
            period_error_max_us: (self.n > 0).then_some(self.max_us),
            overruns: self.overruns,
            period_error_p999_us: self.quantile(0.999),
            tick_work_p50_us: None,
        }
    }
}

/// A snapshot of the coarse lateness histogram.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Histogram {
    /// Ticks at or below each edge of [`BUCKET_EDGES_US`], then all ticks.
    pub cumulative: [u64; BUCKET_EDGES_US.len() + 1],
    /// Sum of the lateness \[µs\].
    pub sum_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_follow_the_recorded_errors() {
        let mut s = PeriodStats::default();
        assert_eq!(s.quantile(0.5), None);
        for k in 0..1000 {
            s.record(f64::from(k % 100) + 0.5);
        }
        s.record(250_000.0);
        assert_eq!(s.quantile(0.5), Some(51.0));
        assert_eq!(s.quantile(0.99), Some(100.0));
        let st = s.stats();
        assert_eq!(st.period_error_max_us, Some(250_000.0));
        assert_eq!(st.overruns, 0);
    }

    #[test]
    fn the_coarse_histogram_counts_each_tick_once_at_or_below_its_edge() {
        let mut p = super::PeriodStats::default();
        for e in [5.0, 10.0, 15.0, 700.0, 50_000.0] {
            p.record(e);
        }
        let h = p.histogram();
        assert_eq!(h.cumulative[0], 2, "5 and 10 µs at or below 10 µs");
        assert_eq!(h.cumulative[1], 3, "15 µs at or below 20 µs");
        assert_eq!(h.cumulative[6], 4, "700 µs at or below 1 ms");
        assert_eq!(h.cumulative[9], 4);
        assert_eq!(h.cumulative[10], 5, "every tick in the last");
        assert!((h.sum_us - 50_730.0).abs() < 1e-9);
    }
}
