//! Output-error fitting of any registry model's chosen parameters to recorded segments
//! (issue 5; the cost of docs/src/identification.md#aep generalised to every model).
//!
//! Two replays of a segment `t, x, v, u, friction` (the columns `bench simulate` writes):
//!
//! - **velocity** (`Replay::Velocity`): the measured motion drives the model in lockstep,
//!   `F_k = model.step(t_k, x_k, v_k, u_k, du_k)`, and the residual is the friction error
//!   `F_k - friction_k` \[N\];
//! - **torque** (`Replay::Torque`): the measured applied force drives [`crate::plant`] with the
//!   model, from the measured initial position and velocity, and the residual is the motion
//!   error `x_sim,k - x_k` \[m\]. The plant mass is given, or fitted as the pseudo-parameter `mass`.
//!
//! Between samples the model is integrated in sub-steps with the signals interpolated
//! (docs/src/identification.md#sub-steps); each interval at its own spacing, so non-uniform time stamps are
//! replayed as recorded. Unless `substeps` is given, the count is chosen from the data: after
//! a fit, the replay is redone with twice the sub-steps and the change it would make to the
//! optimum (one Gauss–Newton step on the difference) is compared with the standard errors;
//! while it exceeds a tenth of one, the sub-steps grow (the extrapolated replay converges in
//! the square of the sub-step) and the fit continues from its optimum, within a work budget
//! and only while the shift shrinks as that order promises (`refining`).
//!
//! A force offset (`Offset::Fit`, the pseudo-parameter `offset`) is subtracted from the
//! measurement: from the friction in a velocity replay, from the applied force in a torque
//! replay. A model that contains a simpler one (docs/src/identification.md#nested-models) starts from the simpler
//! one's output-error optimum on the same data and a multi-start over the parameters it adds.
//!
//! Each segment starts from the model at rest. Parameters are chosen by name, each with bounds
//! and a scale: by default a parameter whose rule makes it positive (probed through the model's
//! own validation) is searched in `log10` within `default / 1e3 .. default * 1e3`, so that
//! `sigma0 ~ 1e5` and `vs ~ 1e-3` are equally well conditioned; any other parameter linearly,
//! unbounded, relative to its default. A parameter set the model's validation refuses (e.g.
//! `fs < fc`) has an infinite cost, which the fitter steps back from. The fit is the bounded
//! [`LevenbergMarquardt`](crate::identify::lm::LevenbergMarquardt) through the [`Runner`](crate::identify::Runner) with a forward-difference Jacobian computed on
//! all cores, or the global [`Aep`](crate::identify::aep::Aep) search (optionally polished by LM); standard errors come
//! from the Jacobian at the optimum, corrected for serially correlated residuals
//! ([`stats::least_squares`](crate::identify::stats::least_squares)) and mapped back through the scaling; `bootstrap` replaces them by
//! a moving-block bootstrap.

use super::Offset;
pub use super::segment::{DataUsed, Segment, excitation_velocity};

mod fitting;
mod given;
mod held_out;
mod options;
mod per_direction;
mod problem;
mod refining;
mod replaying;
mod reporting;
mod residuals;
mod running;
#[cfg(test)]
mod tests;

pub use fitting::fit;
pub use given::{
    Bound, FitNames, MethodKind, OutputErrorGiven, PROCEDURE, ReplayKind, fit_table,
    options_from_given,
};
pub use held_out::predict;
pub use options::{FreeParam, Hold, Method, Options, Replay, Scale, Speed};
pub(crate) use per_direction::{negative_taken, put};
pub(super) use problem::model_err;
pub use problem::{OutputError, Resolved};
pub use refining::{
    MAX_SUBSTEPS, ORDER_SHORTFALL, REFINE_BUDGET, REFINE_ITERS, SUBSTEP_RELATIVE, SUBSTEP_TOLERANCE,
};
pub use replaying::{REPLAY_SETTLED, replay_of, replay_with, residuals_of, residuals_with};
