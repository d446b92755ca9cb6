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

mod error;
pub mod profile;

pub use error::{Error, ExceptionCode, RegisterRef};
pub use profile::{
    Access, DataType, Device, DeviceKind, Mode, Profile, ReadBlock, Role, Sequence, Signal, Step,
    Table, WordOrder,
};
