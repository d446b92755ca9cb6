//! The one loop that runs any fitter (argmin's `Executor`).

use super::fitter::{FitError, FitState, Fitter, Residuals, TerminationReason};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Watches a fit (a progress bar, a live stream); every method has a default.
pub trait Observer {
    /// Before the first iteration.
    fn observe_init(&mut self, _fitter: &str, _state: &FitState) {}
    /// After an iteration selected by the [`ObserverMode`].
    fn observe_iter(&mut self, _state: &FitState) {}
    /// After the last iteration.
    fn observe_final(&mut self, _state: &FitState, _reason: TerminationReason) {}
}

/// When `observe_iter` is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObserverMode {
    /// Every n-th iteration.
    Every(u64),
    /// Whenever the best cost improves.
    NewBest,
}

/// A finished fit.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FitResult {
    /// Best parameters found.
    pub params: Vec<f64>,
    /// Their cost `sum r^2`.
    pub cost: f64,
    /// Mean squared residual `cost / len`.
    pub mse: f64,
    /// Number of residuals.
    pub n_residuals: usize,
    /// Iterations run.
    pub iters: u64,
    /// Residual evaluations.
    pub evals: u64,
    /// Why the fit stopped.
    pub termination: TerminationReason,
    /// The fitter's name.
    pub fitter: &'static str,
    /// Wall time \[s\].
    pub elapsed_s: f64,
}

/// Runs a fitter on a problem until it converges, the cap or the timeout is hit, or it is cancelled.
pub struct Runner<'a, P: Residuals + ?Sized, F: Fitter<P>> {
    problem: &'a P,
    fitter: F,
    max_iters: u64,
    timeout: Option<Duration>,
    target_cost: Option<f64>,
    cancel: Option<&'a AtomicBool>,
    observers: Vec<(Box<dyn Observer + 'a>, ObserverMode)>,
}

impl<P: Residuals + ?Sized, F: Fitter<P>> std::fmt::Debug for Runner<'_, P, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("fitter", &F::NAME)
            .field("max_iters", &self.max_iters)
            .finish()
    }
}

impl<'a, P: Residuals + ?Sized, F: Fitter<P>> Runner<'a, P, F> {
    /// A runner with a cap of 1000 iterations and no timeout.
    pub fn new(problem: &'a P, fitter: F) -> Self {
        Runner {
            problem,
            fitter,
            max_iters: 1000,
            timeout: None,
            target_cost: None,
            cancel: None,
            observers: Vec::new(),
        }
    }

    /// Caps the iterations.
    pub fn max_iters(mut self, n: u64) -> Self {
        self.max_iters = n;
        self
    }

    /// Stops after `t` of wall time.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// Stops as soon as the best cost is at most `c`.
    pub fn target_cost(mut self, c: f64) -> Self {
        self.target_cost = Some(c);
        self
    }

    /// Stops when `flag` becomes true.
    pub fn cancel_on(mut self, flag: &'a AtomicBool) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Adds an observer.
    pub fn observe(mut self, o: impl Observer + 'a, mode: ObserverMode) -> Self {
        self.observers.push((Box::new(o), mode));
        self
    }

    /// Runs from `p0`.
    pub fn run(mut self, p0: Vec<f64>) -> Result<FitResult, FitError> {
        let start = Instant::now();
        let mut state = FitState::new(p0);
        self.fitter.init(self.problem, &mut state)?;
        for (o, _) in &mut self.observers {
            o.observe_init(F::NAME, &state);
        }
        super::control::fit_started();
        let reason = loop {
            if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                break TerminationReason::Cancelled;
            }
            if let Some(r) = super::control::stop_now() {
                break r;
            }
            if self.target_cost.is_some_and(|c| state.best_cost <= c) {
                break TerminationReason::TargetCost;
            }
            if state.iter >= self.max_iters {
                break TerminationReason::MaxIters;
            }
            if self.timeout.is_some_and(|t| start.elapsed() >= t) {
                break TerminationReason::Timeout;
            }
            let best_before = state.best_cost;
            let stop = self.fitter.next_iter(self.problem, &mut state)?;
            state.iter += 1;
            super::control::report(
                state.iter,
                state.best_cost / self.problem.len().max(1) as f64,
            );
            for (o, mode) in &mut self.observers {
                let due = match *mode {
                    ObserverMode::Every(n) => n > 0 && state.iter.is_multiple_of(n),
                    ObserverMode::NewBest => state.best_cost < best_before,
                };
                if due {
                    o.observe_iter(&state);
                }
            }
            if let Some(r) = stop {
                break r;
            }
        };
        for (o, _) in &mut self.observers {
            o.observe_final(&state, reason);
        }
        let n = self.problem.len();
        Ok(FitResult {
            mse: state.best_cost / n.max(1) as f64,
            params: state.best_params,
            cost: state.best_cost,
            n_residuals: n,
            iters: state.iter,
            evals: state.evals,
            termination: reason,
            fitter: F::NAME,
            elapsed_s: start.elapsed().as_secs_f64(),
        })
    }
}
