//! Parameter identification: building blocks and the papers' procedures (docs/src/identification.md).
//!
//! Shaped like argmin: a problem is a small trait ([`Residuals`]), a fitter needs one method
//! ([`Fitter::next_iter`]), and one [`Runner`] owns the loop (iteration cap, timeout,
//! cancellation, evaluation counts, observers) and returns a [`TerminationReason`]. Linear least
//! squares ([`lsq`]) and recursive least squares ([`rls`]) are direct, not iterative. The
//! fitters are bounded Levenberg–Marquardt ([`lm`]) and the global accelerated evolutionary
//! programming search ([`aep`], seeded by [`rng`]); [`procedures`] holds the papers'
//! procedures, output-error fitting of any registry model and the model comparison table;
//! [`signal`] conditions recorded signals (zero-phase filters, differences, decimation) and
//! [`stats`] says how sure a fit is (standard errors for correlated residuals, intervals,
//! R², AIC, BIC, the block bootstrap).

pub mod aep;
pub mod control;
mod fitter;
pub mod lm;
pub mod lsq;
pub mod procedures;
pub mod rls;
pub mod rng;
mod runner;
pub mod signal;
pub mod stats;

pub use fitter::{Bounds, FitError, FitState, Fitter, Residuals, TerminationReason};
pub use runner::{FitResult, Observer, ObserverMode, Runner};
