//! The `bench` daemon and command line as a library: the binary (`src/main.rs`) parses the
//! command line and calls [`cli`]; tests drive the scheduler ([`serve::queue`]) in-process.
//!
//! - [`control`]: the real-time loop, its safety judge and the interlock;
//! - [`session`]: one run from a checked spec to its stored record;
//! - [`serve`]: `bench serve` (scheduler, REST, live stream, dashboard);
//! - [`import`]: recordings made elsewhere (CSV, MAT, Parquet) stored as runs;
//! - [`cli`]: every subcommand; [`config`]: bench.toml; [`bench_lock`]: one controller per bench.

pub mod bench_lock;
pub mod cli;
pub mod config;
pub mod control;
pub mod import;
pub mod serve;
pub mod session;
pub mod simulated;
