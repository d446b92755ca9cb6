//! The frictionbench core, what every front end stands on: one run on the bench from a checked
//! spec to its stored record, and what is done with stored runs.
//!
//! - [`control`]: the real-time loop, its safety judge and the interlock;
//! - [`session`]: one run from a checked spec to its stored record;
//! - [`fitting`]: fits and comparisons on stored runs, saved with them;
//! - [`resume`]: a killed run's continuation; [`chain`]: a run and its continuations read as one;
//! - [`config`]: bench.toml; [`bench_lock`]: one controller per bench; [`db`]: where the run
//!   database is; [`signals`]: what stops a command; [`users`]: who may use the service;
//!   [`InputError`]: the user's mistakes.
//!
//! Above it (each a crate that imports only downward): `recording-import` (recordings made
//! elsewhere), `campaign` (`bench characterise`), `bench-service` (`bench serve`) and
//! `bench-cli` (the `bench` binary).

pub mod bench_lock;
pub mod calibration;
pub mod chain;
pub mod config;
pub mod control;
pub mod db;
pub mod fitting;
mod input;
pub mod resume;
pub mod session;
pub mod signals;
pub mod simulated;
pub mod users;

pub use input::InputError;
