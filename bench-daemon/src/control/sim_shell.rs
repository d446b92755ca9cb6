//! The simulated-time shell: the loop's [`tick`] called back to back on the simulated plant
//! ([`SimIo`]), the plant stepped one control period between ticks, the recorder waited for
//! rather than dropped (there is no deadline to keep). A run's plan takes the CPU time it needs.

use super::io::BenchIo;
use super::lifecycle::{after_panic, begin, finish, panic_message};
use super::pause::pause;
use super::realtime::loop_runtime as runtime;
use super::setup::{LoopReport, LoopSetup};
use super::sim_io::SimIo;
use super::stop::Outcome;
use super::tick::{LoopState, tick};
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
    let mut run = match SimRun::begin(setup, io).await {
        Ok(run) => run,
        Err(report) => return report,
    };
    let outcome = loop {
        if let Some(end) = run.step(io).await {
            break end;
        }
    };
    run.finish(setup, io, outcome).await
}

/// A run on the simulated plant, one period at a time: the whole loop of [`run`], and what a
/// test steps through to look at single ticks (their allocations, say).
pub(super) struct SimRun<'a> {
    setup: &'a LoopSetup,
    state: LoopState<'a>,
    /// The plant's clock when the first tick ran \[s\].
    start: f64,
    /// Ticks done.
    k: u64,
}

impl<'a> SimRun<'a> {
    /// Connects (as over Modbus: the drive's own loops saturate inside the bench's torque
    /// limit) and prepares the first tick; the report of a run that failed before it.
    pub(super) async fn begin(setup: &'a LoopSetup, io: &mut SimIo) -> Result<Self, LoopReport> {
        setup.status.send_modify(|s| {
            s.phase = "connecting";
            s.segments = setup.plan.segments.len();
        });
        io.apply(Action::SetMaxTorque(setup.loaded.config.limits.torque_nm));
        let mut state = begin(setup, io, true).await?;
        let start = io.clock_s();
        state.t0 = start;
        Ok(SimRun {
            setup,
            state,
            start,
            k: 0,
        })
    }

    /// Steps the plant to the next period and runs its tick: how the run ended, if it did.
    pub(super) async fn step(&mut self, io: &mut SimIo) -> Option<Outcome> {
        let now = self.k as f64 * self.state.period_s();
        io.advance_to(self.start + now);
        self.state.stats.record(0.0);
        let end = tick(&mut self.state, io, now).await;
        if end.is_none() {
            self.k += 1;
        }
        if end.is_none() && self.state.pause_at.is_some() {
            let mut wait = |io: &mut SimIo, s: f64| io.advance_to(io.clock_s() + s);
            if let Err(stop) = pause(self.setup, &mut self.state, io, &mut wait).await {
                return Some(stop.into());
            }
            // The next tick at the first period after the pause.
            let ts = self.state.period_s();
            self.k = ((io.clock_s() - self.start) / ts).ceil() as u64;
        }
        end
    }

    /// Ends the run in the safe state with `outcome`.
    pub(super) async fn finish(
        self,
        setup: &LoopSetup,
        io: &mut SimIo,
        outcome: Outcome,
    ) -> LoopReport {
        let elapsed_s = io.clock_s() - self.start;
        let t_end = self.k as f64 * self.state.period_s();
        finish(setup, self.state, io, outcome, t_end, elapsed_s).await
    }
}
