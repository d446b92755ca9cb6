//! Waiting to within tens of microseconds, for Modbus RTU inter-frame silences.
//!
//! tokio's timer has a 1 ms resolution and rounds up (and fires late on a loaded machine), so
//! `tokio::time::sleep_until` stretches a 1.75 ms t3.5 to up to ~3 ms, which costs an RTU
//! link at 921 600 baud about 10 % of its line rate. [`sleep_until_precise`] lets a
//! blocking-pool thread sleep on the OS timer (high-resolution, ~50 µs slack on Linux) until
//! shortly before the deadline, then yields on the runtime for the last few tens of
//! microseconds, so the task resumes at the deadline rather than after a thread hand-over.
//! The simulated bench (`bench-sim`) uses the same function for its emulated wire timing.

use std::time::{Duration, Instant};

/// Waits longer than this spend their bulk on tokio's timer (no blocking thread held).
const COARSE: Duration = Duration::from_millis(50);
/// The blocking thread returns this long before the deadline: enough for the hand-over back
/// to a runtime worker, which the final yield loop then absorbs.
const HANDOVER: Duration = Duration::from_micros(80);

/// Sleeps until `deadline` to within tens of microseconds (see the module docs); returns at
/// once when it has passed.
pub async fn sleep_until_precise(deadline: Instant) {
    let now = Instant::now();
    if deadline <= now {
        return;
    }
    if deadline - now > COARSE {
        tokio::time::sleep_until((deadline - Duration::from_millis(10)).into()).await;
    }
    let early = deadline.checked_sub(HANDOVER).unwrap_or(deadline);
    if early > Instant::now() {
        let _ = tokio::task::spawn_blocking(move || sleep_until_blocking(early)).await;
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

/// Blocks the calling thread until `deadline`: the OS timer for the bulk, a yield loop for the
/// last 100 µs.
pub fn sleep_until_blocking(deadline: Instant) {
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let left = deadline - now;
        if left > Duration::from_micros(150) {
            std::thread::sleep(left - Duration::from_micros(100));
        } else {
            std::thread::yield_now();
        }
    }
}

/// The first whole millisecond of the monotonic clock after now, plus `offset`: the start of
/// a grid of deadlines that keeps `offset` away from whole milliseconds.
///
/// Linux fires each CPU's periodic scheduler tick at whole multiples of its period (1, 4 or
/// 10 ms at HZ 1000, 250 or 100) of CLOCK_MONOTONIC, the clock `Instant` reads, and the tick
/// holds the CPU for several microseconds (tens on a VM). A loop that spins to its deadlines
/// on a grid started at a random phase may have every n-th deadline just after a tick and
/// wake that late, for the whole run; on a 2-vCPU VM at 4 kHz that was 4 % of the ticks
/// about 10 to 30 µs late in one run of three. Elsewhere (other systems) the grid starts
/// `offset` after now.
pub fn after_whole_ms(offset: Duration) -> Instant {
    let now = Instant::now();
    #[cfg(target_os = "linux")]
    {
        let clock = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        now + to_next_whole_ms(clock.tv_nsec as u64) + offset
    }
    #[cfg(not(target_os = "linux"))]
    {
        now + offset
    }
}

/// From a clock reading's nanoseconds to the next whole millisecond of that clock (a whole
/// millisecond itself counts as the next one, so the grid never starts now).
fn to_next_whole_ms(nanos: u64) -> Duration {
    Duration::from_nanos(1_000_000 - nanos % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step to the next whole millisecond lands on one, whatever the reading's phase. (The
    /// arithmetic is tested on given readings: reading two clocks back to back in a test is
    /// not, on a loaded machine, where a preemption between the reads moves the phase.)
    #[test]
    fn the_step_lands_on_the_next_whole_millisecond() {
        for nanos in [0, 1, 125_000, 999_999, 1_000_000, 7_250_400_001] {
            let landed = nanos + to_next_whole_ms(nanos).as_nanos() as u64;
            assert_eq!(landed % 1_000_000, 0, "{nanos} ns");
            assert!(landed > nanos && landed - nanos <= 1_000_000, "{nanos} ns");
        }
    }

    /// The grid starts within a millisecond plus the offset, never before the offset.
    #[test]
    fn a_grid_starts_within_a_millisecond_of_its_offset() {
        for offset_us in [0, 125, 900] {
            let offset = Duration::from_micros(offset_us);
            let before = Instant::now();
            let start = after_whole_ms(offset);
            assert!(start >= before + offset, "{offset_us} µs");
            assert!(start <= Instant::now() + Duration::from_millis(1) + offset);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn never_returns_before_the_deadline() {
        for us in [0u64, 30, 300, 1_750, 4_000] {
            let deadline = Instant::now() + Duration::from_micros(us);
            sleep_until_precise(deadline).await;
            assert!(Instant::now() >= deadline, "{us} µs");
        }
        // A deadline in the past returns at once.
        sleep_until_precise(Instant::now() - Duration::from_millis(1)).await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn works_on_a_current_thread_runtime() {
        let deadline = Instant::now() + Duration::from_micros(500);
        sleep_until_precise(deadline).await;
        assert!(Instant::now() >= deadline);
    }

    #[test]
    fn blocking_variant_never_returns_early() {
        let deadline = Instant::now() + Duration::from_micros(700);
        sleep_until_blocking(deadline);
        assert!(Instant::now() >= deadline);
    }
}
