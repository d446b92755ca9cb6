//! The real-time clock: the plant keeps simulated time with wall time (stepped to it whenever
//! it is read or commanded, and by the physics thread between), and the watchdog trips in
//! wall-clock time when commands stop.

use crate::util::*;
use bench_sim::Clock;
use protocols::{Drive, Link, LinkConfig, Mode};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plant_keeps_wall_time_at_10_khz_and_watchdog_trips() {
    // Before the physics thread starts: its simulated time (from 0) is never ahead of this.
    let created = Instant::now();
    let tb = TestBench::start(crate::util::Link::Tcp, Clock::RealTime).await;
    let ep = tb.sim.endpoints().clone();
    let profile = Arc::new(tb.drive.clone());
    // Requests may wait as long as they like: the test is about the plant's clock and the
    // watchdog's, not the link's latency (the profile's 50 ms timed out on a loaded machine).
    let config = LinkConfig {
        timeout: Duration::from_secs(5),
        max_response: Duration::from_secs(5),
        ..LinkConfig::tcp(ep.tcp.unwrap().to_string(), &profile)
    };
    let link = Link::open(config).await.unwrap().shared();
    let mut drive = Drive::new(profile, link).unwrap().with_unit(ep.drive_unit);
    // A watchdog five times the simulated drive's 100 ms: the test is about wall time, and on
    // a loaded machine a command cycle of this test process can take longer than 100 ms.
    let watchdog = Duration::from_millis(500);
    drive.set_watchdog(watchdog).await.unwrap();
    drive.enable().await.unwrap();
    drive.set_mode(Mode::Velocity).await.unwrap();
    let t0 = Instant::now();
    let sim_t0 = tb.sim.bench().feedback().t_s;
    // Command for 300 ms of wall time.
    let mut last_sent = Instant::now();
    let mut fb = drive.command_and_read(2.0).await.unwrap();
    while t0.elapsed() < Duration::from_millis(300) {
        last_sent = Instant::now();
        fb = drive.command_and_read(2.0).await.unwrap();
    }
    assert_eq!(fb.enabled, Some(true), "{fb:?}");
    // The plant's time read before the wall clock's.
    let sim_now = tb.sim.bench().feedback().t_s;
    let (wall, since_created) = (t0.elapsed().as_secs_f64(), created.elapsed().as_secs_f64());
    let sim = sim_now - sim_t0;
    let stats = tb.sim.bench().physics_stats();
    // Internal step 100 µs: the simulated time follows the wall clock (catch-up in batches),
    // never ahead of it, and behind it only by the time of the overruns it counts (a physics
    // thread kept off the CPU for more than 0.1 s drops that time rather than racing). Ahead
    // is judged on the plant's whole time: over the 300 ms alone, a plant that lagged a batch
    // when `sim_t0` was read and had caught up at the end looked up to that lag ahead (1.6 ms
    // once, under the test command's load).
    assert!(
        sim_now <= since_created,
        "simulated {sim_now} s vs wall {since_created} s since the bench was created ({stats:?})"
    );
    if stats.overruns == 0 {
        assert!(
            wall - sim < 0.1,
            "simulated {sim} s vs wall {wall} s ({stats:?})"
        );
    }
    assert!(stats.steps as f64 >= 0.9 * 1e4 * sim, "{stats:?}");
    // Stop commanding; read until the watchdog trips.
    let stopped = Instant::now();
    loop {
        let fb = drive.read_feedback().await.unwrap();
        if fb.fault == Some(true) {
            assert_eq!(fb.fault_code, Some(0x8130));
            assert_eq!(fb.enabled, Some(false));
            break;
        }
        assert!(
            stopped.elapsed() < watchdog + Duration::from_secs(2),
            "watchdog never tripped"
        );
    }
    // The watchdog counts from the last command's arrival, after `last_sent`; the plant's
    // clock may trail the wall clock by up to a catch-up batch when it arrives.
    let after = last_sent.elapsed();
    assert!(
        after >= watchdog / 2,
        "tripped {after:?} after the last command"
    );
}

/// A reading sees the plant at its own instant: between two readings the plant's time advances
/// by the wall time between them (to a step), however long nobody asked in between. Each
/// reading is bracketed by wall-clock readings, so the check holds on a loaded machine too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reading_sees_the_plant_at_its_own_instant() {
    let tb = TestBench::start(crate::util::Link::Tcp, Clock::RealTime).await;
    let bench = tb.sim.bench();
    // The simulated bench's step (SimParams' default): readings fall on whole steps.
    let h = 1e-4;
    let read = || {
        let before = Instant::now();
        let t = bench.feedback().t_s;
        (before, t, Instant::now())
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (before0, t0, after0) = read();
    for i in 0..40u64 {
        // Pauses of 0.3 to 7 ms: most end between the physics thread's wake-ups.
        tokio::time::sleep(Duration::from_micros(300 + i * 170)).await;
        let (before, t, after) = read();
        let shortest = before.duration_since(after0).as_secs_f64();
        let longest = after.duration_since(before0).as_secs_f64();
        let advanced = t - t0;
        assert!(
            advanced > shortest - h - 1e-9 && advanced < longest + h + 1e-9,
            "reading {i}: the plant advanced {advanced:.6} s, the wall clock between \
             {shortest:.6} and {longest:.6} s"
        );
    }
}
