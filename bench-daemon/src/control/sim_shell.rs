//! The simulated-time shell: the loop's [`tick`] called back to back on the simulated plant
//! ([`SimIo`]), the plant stepped one control period between ticks, the recorder waited for
//! rather than dropped (there is no deadline to keep). A run's plan takes the CPU time it needs.

use super::io::BenchIo;
use super::lifecycle::{after_panic, begin, finish, panic_message};
use super::realtime::loop_runtime as runtime;
use super::setup::{LoopReport, LoopSetup};
use super::sim_io::SimIo;
use super::tick::tick;
use bench_sim::Action;
use std::panic::AssertUnwindSafe;

/// Runs the loop on `io` in simulated time on the calling thread; a panic fails the run into
/// the safe state on the same plant.
pub fn run(setup: &LoopSetup, mut io: SimIo) -> LoopReport {
    let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
        runtime().block_on(run_on(setup, &mut io))
    }));
    match caught {
        Ok(report) => report,
        Err(panic) => runtime().block_on(after_panic(setup, panic_message(&*panic), Ok(&mut io))),
    }
}

async fn run_on(setup: &LoopSetup, io: &mut SimIo) -> LoopReport {
    setup.status.send_modify(|s| {
        s.phase = "connecting";
        s.segments = setup.plan.segments.len();
    });
    // As over Modbus: the drive's own loops saturate inside the bench's torque limit.
    io.apply(Action::SetMaxTorque(setup.loaded.config.limits.torque_nm));
    let mut state = match begin(setup, io, true).await {
        Ok(state) => state,
        Err(report) => return report,
    };
    let ts = state.period_s();
    let start = io.clock_s();
    state.t0 = start;
    let mut k: u64 = 0;
    let outcome = loop {
        let now = k as f64 * ts;
        io.advance_to(start + now);
        state.stats.record(0.0);
        if let Some(end) = tick(&mut state, io, now).await {
            break end;
        }
        k += 1;
    };
    let elapsed_s = io.clock_s() - start;
    finish(setup, state, io, outcome, k as f64 * ts, elapsed_s).await
}
