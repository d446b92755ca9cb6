//! The `bench` daemon and command line as a library: the binary (`src/main.rs`) parses the
//! command line and calls [`cli`]; tests drive the scheduler ([`serve::scheduler`]) in-process.
//!
//! - [`control`]: the real-time loop, its safety judge and the interlock;
//! - [`session`]: one run from a checked spec to its stored record;
//! - [`fitting`]: fits and comparisons on stored runs, saved with them;
//! - [`serve`]: `bench serve` (scheduler, REST, live stream, dashboard);
//! - [`import`]: recordings made elsewhere (CSV, MAT, Parquet) stored as runs;
//! - [`config`]: bench.toml; [`bench_lock`]: one controller per bench; [`db`]: where the run
//!   database is; [`signals`]: what stops a command; [`InputError`]: the user's mistakes;
//! - [`cli`]: every subcommand.
//!
//! Everything but [`cli`] is the core: the command line uses it, it never uses the command line.

pub mod bench_lock;
pub mod characterise;
pub mod cli;
pub mod config;
pub mod control;
pub mod db;
pub mod fitting;
pub mod import;
mod input;
pub mod resume;
pub mod serve;
pub mod session;
pub mod signals;
pub mod simulated;
pub mod users;

pub use input::InputError;
