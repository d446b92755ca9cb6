//! Outside control of the fits run on this thread: cancel, a time limit, a cap on worker
//! threads and a progress sink, set for the duration of a call ([`with`]) and obeyed by every
//! [`Runner`](super::Runner) loop and every parallel Jacobian that call starts.
//!
//! A service that runs the same code as the command line (`bench fit`, `bench compare`)
//! wraps it in [`with`] instead of threading these through every procedure's options: the
//! procedures stay plain functions of their data, and a fit run outside [`with`] is unlimited.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Where one fit's iterations stand.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Progress {
    /// Fits started under this control so far (a comparison runs several).
    pub fit: u64,
    /// Iterations of the current fit.
    pub iter: u64,
    /// Its best mean squared residual so far.
    pub best_mse: f64,
}

/// What the caller may ask of the fits it starts.
#[derive(Clone, Default)]
pub struct Control {
    /// Set to stop every fit of the call at its next iteration (termination `cancelled`).
    pub cancel: Arc<AtomicBool>,
    /// No iteration starts after this (termination `timeout`).
    pub deadline: Option<Instant>,
    /// At most this many threads per Jacobian (none: every core).
    pub max_threads: Option<usize>,
    /// Called after every iteration.
    pub progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("cancel", &self.cancel.load(Ordering::Relaxed))
            .field("deadline", &self.deadline)
            .field("max_threads", &self.max_threads)
            .finish_non_exhaustive()
    }
}

thread_local! {
    static CURRENT: RefCell<Option<(Control, u64)>> = const { RefCell::new(None) };
}

/// Runs `f` with `control` over every fit it starts on this thread.
pub fn with<R>(control: &Control, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|c| c.borrow_mut().replace((control.clone(), 0)));
    struct Restore(Option<(Control, u64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let _restore = Restore(before);
    f()
}

/// Runs `f` under the current control (if any) with no iteration starting after `deadline`:
/// a procedure's own time limit over every fit it makes (its starts, the simpler model it
/// starts from, its refinements), not over each alone. The fits it starts count in the
/// caller's progress.
pub(crate) fn within<R>(deadline: Instant, f: impl FnOnce() -> R) -> R {
    let (mut control, fits) = CURRENT.with(|c| c.borrow().clone()).unwrap_or_default();
    control.deadline = Some(control.deadline.map_or(deadline, |d| d.min(deadline)));
    let before = CURRENT.with(|c| c.borrow_mut().replace((control, fits)));
    struct Restore(Option<(Control, u64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let inner = CURRENT.with(|c| c.borrow_mut().take());
            let mut prev = self.0.take();
            if let (Some((_, fits)), Some((_, counted))) = (&mut prev, inner) {
                *fits = counted;
            }
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let _restore = Restore(before);
    f()
}

/// Why the current control stops a fit now, if it does.
pub(crate) fn stop_now() -> Option<super::TerminationReason> {
    CURRENT.with(|c| {
        let c = c.borrow();
        let (control, _) = c.as_ref()?;
        if control.cancel.load(Ordering::Relaxed) {
            Some(super::TerminationReason::Cancelled)
        } else if control.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(super::TerminationReason::Timeout)
        } else {
            None
        }
    })
}

/// Whether the current control has been cancelled (results of a cancelled call are not to
/// be kept).
pub fn cancelled() -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|(ctl, _)| ctl.cancel.load(Ordering::Relaxed))
    })
}

/// A new fit starts: counted for [`Progress::fit`].
pub(crate) fn fit_started() {
    CURRENT.with(|c| {
        if let Some((_, n)) = c.borrow_mut().as_mut() {
            *n += 1;
        }
    });
}

/// Reports an iteration to the progress sink.
pub(crate) fn report(iter: u64, best_mse: f64) {
    let sink = CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|(ctl, n)| ctl.progress.clone().map(|p| (p, *n)))
    });
    if let Some((sink, fit)) = sink {
        sink(Progress {
            fit,
            iter,
            best_mse,
        });
    }
}

/// The thread cap of the current control.
pub(crate) fn max_threads() -> Option<usize> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|(ctl, _)| ctl.max_threads))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::lm::LevenbergMarquardt;
    use crate::identify::{FitError, Residuals, Runner, TerminationReason};
    use std::sync::Mutex;
    use std::time::Duration;

    /// `r_i = p0 exp(-p1 t_i) - y_i`: a few LM iterations from a poor start.
    struct Decay(Vec<f64>);

    impl Residuals for Decay {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
            for (i, o) in out.iter_mut().enumerate() {
                let t = i as f64 * 0.05;
                *o = p[0] * (-p[1] * t).exp() - self.0[i];
            }
            Ok(())
        }
    }

    fn problem() -> Decay {
        Decay(
            (0..100)
                .map(|i| 2.0 * (-0.7 * i as f64 * 0.05).exp())
                .collect(),
        )
    }

    fn fit() -> TerminationReason {
        let p = problem();
        Runner::new(&p, LevenbergMarquardt::new())
            .run(vec![0.5, 3.0])
            .unwrap()
            .termination
    }

    #[test]
    fn a_cancelled_or_late_fit_stops_and_says_why_and_only_inside_the_call() {
        let cancelled = Control::default();
        cancelled.cancel.store(true, Ordering::Relaxed);
        assert_eq!(with(&cancelled, fit), TerminationReason::Cancelled);
        let late = Control {
            deadline: Some(Instant::now() - Duration::from_millis(1)),
            ..Control::default()
        };
        assert_eq!(with(&late, fit), TerminationReason::Timeout);
        // Outside the call, nothing is controlled.
        assert_eq!(fit(), TerminationReason::Converged);
    }

    #[test]
    fn progress_reports_every_iteration_of_every_fit() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let control = Control {
            progress: Some(Arc::new(move |p| sink.lock().unwrap().push(p))),
            max_threads: Some(1),
            ..Control::default()
        };
        with(&control, || {
            assert_eq!(max_threads(), Some(1));
            fit();
            fit();
        });
        assert_eq!(max_threads(), None);
        let seen = seen.lock().unwrap();
        assert!(seen.iter().any(|p| p.fit == 1) && seen.iter().any(|p| p.fit == 2));
        let last = seen.last().unwrap();
        assert!(last.iter >= 1 && last.best_mse < 1e-12, "{last:?}");
    }
}
