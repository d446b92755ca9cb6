//! The simulated friction bench: a rotary plant stepped in real time with a true friction model,
//! served as Modbus RTU and TCP slaves built from the same device profiles as the clients.
//!
//! # Brief overview
//!
//! `SimParams + true ModelSpec → Sim` (plain data, `step(dt)`) → published into each device's
//! register image → served by a Modbus `Service` per device, wrapped in `Faulty` (injected faults)
//! and, on RTU, `WireTiming` (baud-rate timing a pty lacks).
#![deny(missing_docs)]

pub mod physics;

pub use physics::{Action, Command, FaultCause, Feedback, Mode, Sim, SimError, SimParams, Truth};
pub mod faults;
mod profiles;
mod run;
pub mod server;
pub mod timing;

pub use bench::{Bench, BusDevices, Clock};
pub use faults::{FaultCounters, FaultSet, Faults, Faulty};
pub use profiles::{SIM_DRIVE_TOML, SIM_SENSOR_TOML, shipped};
pub use run::{Endpoints, RtuConfig, SimBench, SimConfig, run};
pub mod bench;
pub mod device;
pub mod image;
