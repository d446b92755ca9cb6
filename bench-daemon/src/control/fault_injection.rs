//! Test-only fault injection for the fail-safe tests, read from the environment by builds with
//! debug assertions (the tests' profile); a release build (`cargo install`) reads nothing and
//! injects nothing.
//!
//! The faults strike at a point of the run the test chooses (a run time, a sample count), not
//! at a wall-clock moment, so a test that kills a run gets the same kill on a loaded machine.

/// The model step panics once the run time reaches this many seconds, as a buggy model would.
pub const PANIC_HOOK_ENV: &str = "FRICTIONBENCH_TEST_PANIC_IN_MODEL_STEP_AT_S";
/// The process sends itself SIGKILL when this many samples of the run have been taken: a
/// `kill -9` at an exact point of the run.
pub const SIGKILL_HOOK_ENV: &str = "FRICTIONBENCH_TEST_SIGKILL_AT_SAMPLE";

/// The faults asked for, checked once per sample.
#[derive(Debug, Default)]
pub(super) struct InjectedFaults {
    panic_at_s: Option<f64>,
    sigkill_at_sample: Option<u64>,
    samples: u64,
}

impl InjectedFaults {
    /// The faults the environment asks for (none in a release build).
    pub(super) fn from_env() -> InjectedFaults {
        if !cfg!(debug_assertions) {
            return InjectedFaults::default();
        }
        let read = |name: &str| std::env::var(name).ok();
        InjectedFaults {
            panic_at_s: read(PANIC_HOOK_ENV).and_then(|v| v.parse().ok()),
            sigkill_at_sample: read(SIGKILL_HOOK_ENV).and_then(|v| v.parse().ok()),
            samples: 0,
        }
    }

    /// Called once per sample at run time `t` \[s\]: strikes when a fault's point is reached.
    pub(super) fn on_sample(&mut self, t: f64) {
        self.samples += 1;
        if self.panic_at_s.is_some_and(|at| t >= at) {
            panic!("{PANIC_HOOK_ENV}: injected panic in a model step at t = {t} s");
        }
        if self.sigkill_at_sample == Some(self.samples) {
            use rustix::process::{Signal, getpid, kill_process};
            let _ = kill_process(getpid(), Signal::KILL);
        }
    }
}
