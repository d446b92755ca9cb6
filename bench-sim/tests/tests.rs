//! Integration tests of the simulated bench.

mod bus;
mod clients;
mod daq;
mod faults;
mod interop;
mod plant;
mod realtime;
mod util;
