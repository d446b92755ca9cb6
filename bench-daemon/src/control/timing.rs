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

/// How much longer than usual a round trip must be, besides twice as long, to count as late.
const LATE_MARGIN_S: f64 = 1e-3;

/// The drive's usual round trip (request sent to feedback read), to tell a late one: a
/// sample is stamped at the middle of its round trip, and the drive latched it anywhere in
/// it, so a round trip that a busy line or PC stretched leaves its time stamp uncertain by up
/// to half of it.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundTrip {
    typical_s: Option<f64>,
}

impl RoundTrip {
    /// Whether `rtt_s` \[s\] is late: over twice the typical round trip and
    /// [`LATE_MARGIN_S`] over it. Round trips that are not late move the typical one (1/64
    /// weight each); the first one sets it.
    pub fn late(&mut self, rtt_s: f64) -> bool {
        let Some(typical) = self.typical_s else {
            self.typical_s = Some(rtt_s);
            return false;
        };
        let late = rtt_s > 2.0 * typical && rtt_s > typical + LATE_MARGIN_S;
        if !late {
            self.typical_s = Some(typical + (rtt_s - typical) / 64.0);
        }
        late
    }
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

    #[test]
    fn a_stretched_round_trip_is_late_and_does_not_move_the_typical_one() {
        let mut r = RoundTrip::default();
        assert!(!r.late(5e-3));
        assert!(!(0..100).any(|_| r.late(5.5e-3)));
        // A 90 ms round trip on a 5 ms line (a reply the PC held): late, every time.
        assert!(r.late(90e-3) && r.late(90e-3));
        assert!(!r.late(9e-3));
        // On a 0.1 ms TCP link, jitter under the 1 ms margin is not late.
        let mut tcp = RoundTrip::default();
        assert!(!tcp.late(0.1e-3));
        assert!(!tcp.late(0.9e-3));
        assert!(tcp.late(1.5e-3));
    }
}
