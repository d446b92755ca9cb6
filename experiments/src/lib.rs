//! Friction characterisation experiments: what the user asks for (a [`Spec`]), checked against
//! the bench's [`BenchLimits`] into a [`Plan`] the control loop follows, and the pure analyses
//! that turn the recorded [`Sample`]s into results.
//!
//! # Brief overview
//!
//! ```text
//! Spec {kind, name, params}  ──plan(&BenchLimits)──►  Plan { segments: [Segment] }
//!   (JSON or TOML, serde            (validated: every rejection names the field, its value
//!    deny_unknown_fields,            and the limit; units resolved, e.g. counts → rad)
//!    missing params defaulted)
//!
//! daemon control loop, once per period Ts = limits.period_s:
//!   Measurement {t, x, v} ──Sequencer::tick(&plan, &m)──► Tick {segment, mode, value, rate}
//!   drive has the mode?  command `value` in that mode
//!   torque-only drive?   OuterLoop::torque(&tick, &m, Ts, limit) → torque command (PI/PID)
//!   → safety clamp → write → read → Sample {t, x, v, u_cmd, torque_motor, torque_sensor,
//!                                            segment: tick.segment, flags}
//!   Sequencer::tick returns None when the last segment has ended (run completed).
//!
//! after the run:  Kind::analyse(&plan, &[Sample]) → Results (serde, tagged by kind)
//! ```
//!
//! The daemon's side of the interface:
//! - Build [`BenchLimits`] from the bench configuration (torque N m, velocity rad/s, position
//!   window rad around the run's start, period s, encoder counts/rev); `--sim` uses
//!   [`BenchLimits::sim_default`].
//! - `Spec::parse(text, Format::from_path(path))?.plan(&limits)?` before anything moves; the
//!   error's `Display` is the message for the user (exit code 2). [`Plan::estimate_duration`]
//!   is the ETA, [`Plan::max_duration`] the bound with every segment at its timeout.
//! - Plans are bounded ([`caps`]): every count, list and duration of every kind has a cap
//!   (in the kind's JSON Schema as `maximum` / `maxItems`), and a plan's segments and longest
//!   run time are counted from the parameters before anything is built, against
//!   `BenchLimits::max_plan_segments` (default 1e6) and `max_plan_duration_s` (default 7
//!   days). An oversized plan is an [`Error::Invalid`] naming the field and the cap, in
//!   microseconds.
//! - Positions in [`Measurement`], [`Tick::value`] (position mode) and [`Sample`] are relative
//!   to the run's start position: add the absolute start position before commanding a drive
//!   in position mode, and enforce the window `|x| <= position_window_rad` on them.
//! - Per tick, [`Sequencer::tick`]; [`Tick::ended`] reports segment ends and their
//!   [`StopReason`] for the run log; [`Tick::started`] marks a segment's first tick (set
//!   [`Flags::SEGMENT_START`]).
//! - Store the plan (serde) and the samples; the analysis needs both, and is pure.
//!
//! Kinds (the names and parameters are interfaces; see each module): `constant_velocity_sweep`,
//! `presliding`, `frictional_lag`, `torque_ramp`, `breakaway_staircase`, `dwell_time`, `prbs`,
//! `validation_profile`, `compensation_trial`. Example specs for each, a quick one (`KIND.json`,
//! under a minute; the compensation trial's under two) and a
//! paper-faithful one (`KIND-full.json`), are in `experiments/specs/`.
//!
//! # Example
//!
//! ```
//! use experiments::{BenchLimits, Measurement, Sequencer, Spec};
//!
//! let spec = Spec::from_json(r#"{"kind": "torque_ramp", "name": "quick",
//!     "params": {"rates_nm_s": [1.0], "repeats": 1}}"#).unwrap();
//! let plan = spec.plan(&BenchLimits::sim_default()).unwrap();
//! // One ramp per direction, each followed by a rest.
//! assert_eq!(plan.segments.len(), 4);
//! let mut seq = Sequencer::new();
//! let tick = seq.tick(&plan, &Measurement { t: 0.5, x: 0.0, v: 0.0 }).unwrap();
//! assert_eq!(tick.value, 0.0); // the ramp starts at 0 N m on its first tick...
//! let tick = seq.tick(&plan, &Measurement { t: 1.0, x: 0.0, v: 0.0 }).unwrap();
//! assert!((tick.value - 0.5).abs() < 1e-12); // ...and rises at 1 N m/s.
//!
//! let err = Spec::from_json(r#"{"kind": "constant_velocity_sweep",
//!     "params": {"velocities": [1, 2, 5, 25]}}"#).unwrap()
//!     .plan(&BenchLimits::sim_default()).unwrap_err();
//! assert_eq!(err.to_string(),
//!     "params.velocities[3] (25 rad/s) exceeds the velocity limit (20 rad/s)");
//! ```

#![deny(missing_docs)]

mod analysis;
pub mod caps;
mod control;
mod error;
pub mod kinds;
mod limits;
mod plan;
mod sample;
mod sequencer;
mod setpoint;
mod spec;

pub use analysis::Curve;
pub use control::{LoopGains, OuterLoop, PidGains, PidState, pid_step};
pub use error::{Error, LimitKind};
pub use kinds::{Breakaway, Directions, Kind, Results, catalogue};
pub use limits::BenchLimits;
pub use plan::{Anchor, DriveMode, Plan, Role, Segment, Stop, StopReason, Tag};
pub use sample::{Flags, Sample};
pub use sequencer::{Ended, Measurement, Sequencer, Tick};
pub use setpoint::{Setpoint, prbs};
pub use spec::{Format, Spec};
