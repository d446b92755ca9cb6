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
        let into_ms = clock.tv_nsec.rem_euclid(1_000_000) as u64;
        now + Duration::from_nanos(1_000_000 - into_ms) + offset
    }
    #[cfg(not(target_os = "linux"))]
    {
        now + offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grid's start, read back on the same clock, sits `offset` after a whole millisecond.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_grid_starts_its_offset_after_a_whole_millisecond() {
        use rustix::time::{ClockId, clock_gettime};
        for offset_us in [0, 125, 250, 900] {
            let offset = Duration::from_micros(offset_us);
            let start = after_whole_ms(offset);
            let (now, clock) = (Instant::now(), clock_gettime(ClockId::Monotonic));
            let clock_ns = clock.tv_sec as i128 * 1_000_000_000 + clock.tv_nsec as i128;
            let start_ns = clock_ns + (start - now).as_nanos() as i128;
            let phase_ns = (start_ns - offset.as_nanos() as i128).rem_euclid(1_000_000);
            // Two clock reads apart by at most a few microseconds on a busy machine.
            let off_by = phase_ns.min(1_000_000 - phase_ns);
            assert!(
                off_by < 20_000,
                "{offset_us} µs: {phase_ns} ns past a whole ms"
            );
            assert!(start - now <= Duration::from_millis(1) + offset);
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
