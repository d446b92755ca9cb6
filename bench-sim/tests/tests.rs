//! Integration tests of the simulated bench.

mod bus;
mod clients;
mod faults;
mod interop;
mod plant;
mod realtime;
mod util;
