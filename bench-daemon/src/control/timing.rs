//! Period statistics of the control loop: how late each tick woke against its absolute
//! deadline, and how many ticks overran into the next period.

use run_store::TimingStats;

/// Histogram bins of 1 µs up to 100 ms; later wake-ups land in the last bin (the maximum is
/// kept exactly).
const BINS: usize = 100_000;

/// Wake-up lateness histogram and overrun count. Constant memory, O(1) per tick.
#[derive(Clone, Debug)]
pub struct PeriodStats {
    bins: Vec<u32>,
    n: u64,
    max_us: f64,
    /// Ticks whose work ended after the next deadline (that deadline was skipped).
    pub overruns: u64,
}

impl Default for PeriodStats {
    fn default() -> PeriodStats {
        PeriodStats {
            bins: vec![0; BINS],
            n: 0,
            max_us: 0.0,
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
        }
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
}
