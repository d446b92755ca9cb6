//! The control loop: one dedicated thread per run that owns the bench's devices, follows the
//! plan, enforces the limits before any command leaves, steps the lockstep models, and hands
//! samples to the recorder without ever waiting for it (in real time).
//!
//! ```text
//!  session (tokio) ── Control (abort / stop requests) ──►  loop thread (own current-thread
//!        ▲                                                 runtime; the devices live here)
//!        ├── watch<Status> (progress, live values) ◄────── shell: paces the ticks
//!        ├── broadcast<Frame> (decimated live samples) ◄──   tick(state, io, now): requests →
//!        └── LoopReport on join                              sequence → command → exchange →
//!  recorder task ◄── BatchSender (drops, never waits) ◄──    judge → record → publish
//! ```
//!
//! - [`tick`] is one period as a pure step over injected I/O ([`BenchIo`]) and time; the
//!   shells around it differ only in pacing: [`shell`] at absolute deadlines on the wall
//!   clock over Modbus ([`connect`]), `sim_shell` back to back in simulated time on the
//!   simulated plant ([`sim_io`]).
//! - `request`: the [`Control`] mailbox (abort, stop) and the safe-state answer.
//! - [`lifecycle`]: before the first tick (models, drive up) and after the last (the
//!   [`safe_state`], the log, the last batch).
//! - `judge` (the per-tick verdict on the devices' answers) and `safety` (limits) are pure.
//!
//! Any reason to stop (plan done, abort, stop request, limit breach, drive or sensor fault,
//! comms fault) is a typed [`StopReason`] and leads to the same exit: the drive is disabled at
//! once, before the next deadline, and the reason goes into the run's log.

#[cfg(test)]
mod alloc_tests;
pub mod connect;
pub mod cpus;
pub mod daq;
mod daq_outputs;
pub mod daq_provenance;
mod fault_injection;
mod interlock;
pub mod io;
mod judge;
pub mod lifecycle;
mod lockstep;
#[cfg(test)]
mod loop_tests;
mod pause;
mod realtime;
mod request;
pub mod safe_state;
mod safety;
pub mod sensor_zero;
mod setup;
pub mod shell;
pub mod sim_io;
mod sim_shell;
mod stop;
pub mod suspend;
#[cfg(test)]
mod suspend_tests;
pub mod tick;
mod timing;

pub use interlock::Interlock;
pub use io::BenchIo;
pub use lockstep::Lockstep;
pub use realtime::{Locked, NoDeepIdle, realtime, realtime_runtime, spawn_with_runtime};
pub use request::{Control, Request};
pub use safe_state::SafeState;
pub use safety::Breach;
pub use setup::{DaqStreamCounts, Devices, Frame, LoopReport, LoopSetup, Status};
pub use shell::run;
pub use sim_io::{SimIo, TruthLog};
pub use stop::{Device, Outcome, StopReason};
pub use tick::to_store;
pub use timing::{BUCKET_EDGES_US, Histogram};
