//! Parameter identification: building blocks and the papers' procedures (MODELS.md §17).
//!
//! Shaped like argmin: a problem is a small trait ([`Residuals`]), a fitter needs one method
//! ([`Fitter::next_iter`]), and one [`Runner`] owns the loop (iteration cap, timeout,
//! cancellation, evaluation counts, observers) and returns a [`TerminationReason`]. Linear least
//! squares ([`lsq`]) and recursive least squares ([`rls`]) are direct, not iterative.

mod fitter;
pub mod lm;
pub mod lsq;
pub mod procedures;
pub mod rls;
mod runner;

pub use fitter::{Bounds, FitError, FitState, Fitter, Residuals, TerminationReason};
pub use runner::{FitResult, Observer, ObserverMode, Runner};
