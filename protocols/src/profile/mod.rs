//! Device profiles: a TOML file → a validated register map with roles, sequences, poll groups,
//! timing, limits and test vectors. Pure: no I/O beyond reading the file.
//!
//! # The file format
//!
//! ```toml
//! [device]
//! name = "frictionbench simulated drive"
//! kind = "drive"                      # drive | torque_sensor
//! protocols = ["modbus-tcp", "modbus-rtu"]
//!
//! [transport]
//! unit_id = 1
//! fc23 = true                         # read/write multiple (FC23) allowed
//! serial = { baud = 115200, parity = "even", data_bits = 8, stop_bits = 1 }
//!
//! [timing]                            # all optional
//! timeout_ms = 50                     # per request
//! max_response_ms = 50                # longest the device may take (waited out on resync)
//! inter_frame_gap_ms = 1.75           # default: t3.5 from the baud rate (1.75 ms above 19200)
//! turnaround_ms = 0.5
//!
//! [encoding]
//! word_order = "CDAB"                 # default for multi-register signals
//! address_base = 0                    # 1 when addresses are written 1-based
//!
//! [modes]                             # value written to the role = "mode" signal
//! torque = 10
//! velocity = 9
//! position = 8
//!
//! [status]                            # patterns on the role = "status" signal
//! enabled = { mask = 0x006F, value = 0x0027 }
//! fault = { mask = 0x0008, value = 0x0008 }
//!
//! [[signal]]
//! name = "torque_cmd"
//! role = "torque_command"
//! reg = { table = "holding", address = 0x0010, type = "i32" }
//! eng = { scale = 0.1, unit = "mN m", access = "rw", min = -2000, max = 2000 }
//!
//! [[sequence]]
//! name = "enable"
//! steps = [ { write = "controlword", value = 0x06 }, { wait_ms = 1 },
//!           { expect = "statusword", mask = 0x6F, value = 0x21, timeout_ms = 200 } ]
//!
//! [[sequence]]                        # run once at connect; every write must be read
//! name = "connect"                    # back by a later expect of the same signal
//! steps = [ { write = "fault_action", value = 1 },
//!           { expect = "fault_action", mask = 0xFFFF, value = 1, timeout_ms = 100 } ]
//!
//! [[poll_group]]
//! name = "fast"
//! rate_hz = 100
//! merge_gap = 2
//!
//! [[test_vector]]
//! signal = "torque_cmd"
//! registers = [0xFC18, 0xFFFF]        # in the signal's word order
//! value = -100.0                      # in the signal's declared unit (mN m here)
//! frames = ["01 10 00 10 00 02 04 FC 18 FF FF 43 44"]  # optional RTU frames, CRC checked
//! ```
//!
//! A signal's SI value is `(raw × scale × 10^-decimals + offset) × unit factor`, where
//! `decimals` is 0 unless `eng.scale_exp_from` names another signal holding the number of
//! decimal places (weighing transmitters). `min`/`max` are in the declared unit. Commands,
//! feedback and sequence values are SI everywhere above this module: position rad, velocity
//! rad/s, torque N m, times s.
//!
//! Every validation failure is an [`Error::Profile`](crate::Error::Profile) naming the file, the entry (for example
//! `signal 'torque_cmd' (#4).eng.max`) and the rule it broke.

mod codec;
mod kinds;
pub(crate) mod load;
mod map;
mod reads;
mod role;
mod sequence;
mod settings;
mod signal;
mod units;
mod validate;
mod vector;

pub use codec::{BitRange, DataType, RawValue, WordOrder, crc_ok, crc16, decode, encode};
pub use kinds::{Access, DeviceKind, Mode, Protocol, Table};
pub use load::load_dir;
pub use map::Profile;
pub use reads::{PollGroup, ReadBlock};
use role::ROLES;
pub use role::Role;
pub use sequence::{CONNECT_SEQUENCE, Sequence, Step};
pub use settings::{Device, Parity, SerialSettings, Timing, TransportSettings};
pub use signal::{Signal, StatusPattern};
pub use units::Unit;
pub use vector::TestVector;

#[cfg(test)]
mod tests;
