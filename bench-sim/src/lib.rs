//! The simulated friction bench: a rotary plant with a true friction model, stepped in real time
//! at 10 kHz, served as a Modbus drive and torque sensor over TCP and RTU (a pty), using the same
//! device profiles as the clients.
//!
//! # Brief overview
//!
//! ```text
//! SimParams + ModelSpec ──► Sim (plain data: step(dt), apply(Action), feedback())
//!        real time: stepped to the wall clock whenever taken (a request, a reading) and by
//!        a physics thread every 5 ms; virtual time: one tick per request
//!                      ──► Bench { Mutex<Sim + drive image + sensor image> }
//! profiles/*.toml ──► DeviceMap (register image + roles) ──► BusDevices: Service (unit ids)
//!   ──► Faulty<S> (silence, delay, exceptions, stuck values) ──► TCP server
//!   ──► RTU server on pty B ◄─► byte relay (wire timing: replies held for their line time at
//!       the baud rate; CRC corruption, disconnect) ◄─► pty path the client opens
//! ```
//!
//! [`SimBench::start`] builds and starts everything from a [`SimConfig`] and reports its
//! [`Endpoints`]; [`run`] serves until a shutdown future completes.
//!
//! # Example
//!
//! ```
//! use bench_sim::{Clock, SimBench, SimConfig};
//! use tokio_modbus::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let config = SimConfig { clock: Clock::Virtual { per_request_s: 1e-3 }, ..SimConfig::default() };
//! let sim = SimBench::start(config).await.unwrap();
//! let ep = sim.endpoints().clone();
//! let drive = bench_sim::shipped(false).unwrap();
//! let status = drive.role(protocols::Role::Status).unwrap();
//! let mut ctx = tokio_modbus::client::tcp::connect_slave(ep.tcp.unwrap(), Slave(ep.drive_unit))
//!     .await
//!     .unwrap();
//! let sw = ctx.read_holding_registers(status.address, 1).await.unwrap().unwrap();
//! assert_eq!(sw[0] & 0x4F, 0x40); // CiA 402 "switch on disabled" at power-up
//! sim.shutdown().await;
//! # }
//! ```

#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod bench;
pub mod daq;
pub mod device;
pub mod faults;
pub mod image;
pub mod physics;
mod profiles;
mod run;
pub mod server;
pub mod timing;

pub use bench::{Bench, BusDevices, Clock, PhysicsStats};
pub use faults::{FaultCounters, FaultSet, Faults, Faulty};
pub use physics::{
    Action, Command, FaultCause, Feedback, Mode, Sim, SimError, SimParams, Truth, default_truth,
};
pub use profiles::{SIM_DRIVE_TOML, SIM_SENSOR_TOML, shipped};
pub use run::{Endpoints, RtuConfig, SimBench, SimConfig, run};
