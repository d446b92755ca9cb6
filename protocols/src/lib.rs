//! Device I/O for frictionbench: device profiles (TOML register maps), Modbus RTU/TCP
//! transports, and typed drive and torque-sensor clients that speak roles and SI units.
//!
//! # Brief overview
//!
//! `profiles/*.toml → Profile → Link (TCP | RTU) → Drive / TorqueSensor`
//!
//! - [`Profile`] is pure: it parses and validates a profile (register table, address, type,
//!   word order, scale, unit, roles, sequences, poll groups, timing, limits, test vectors) and
//!   encodes/decodes values.
//! - [`Link`] is one Modbus connection (TCP, or RTU on a serial path or pty) with a timeout
//!   on every request, resynchronisation after failures, inter-frame silence, echo checks and
//!   [`LinkStats`].
//! - [`Drive`] and [`TorqueSensor`] bind a profile to a unit on a [`SharedLink`] and speak
//!   roles and SI units; [`DeviceIo`] is the generic signal access under them.
//!
//! # Example
//!
//! ```
//! use protocols::{Profile, Role};
//!
//! let p = Profile::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles/sim-drive.toml")).unwrap();
//! let torque = p.role(Role::TorqueCommand).unwrap();
//! // 0.5 N m → 5000 counts of 0.1 mN m, low word first.
//! assert_eq!(torque.encode(0.5).unwrap(), [5000, 0]);
//! assert_eq!(torque.decode(&[0xFC18, 0xFFFF]).unwrap(), -0.1);
//! ```

#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]
#![forbid(unsafe_code)]

pub mod daq;
mod device;
mod drive;
mod error;
pub mod profile;
mod sensor;
mod table;
pub mod timing;
mod transport;

pub use daq::{DaqClient, DaqProfile, DaqStream};
pub use device::{DeviceIo, SignalValue};
pub use drive::{Drive, DriveFeedback};
pub use sensor::{TorqueReading, TorqueSensor};
pub use transport::{Endpoint, Link, LinkConfig, LinkStats, SharedLink, usb_latency_timer_ms};

pub use error::{Error, ErrorKind, ExceptionCode, RegisterRef};
pub use profile::{
    Access, DataType, Device, DeviceKind, Mode, Profile, ReadBlock, Role, Sequence, Signal, Step,
    Table, WordOrder,
};
