//! Integration tests of the simulated bench.

mod bus;
mod faults;
mod interop;
mod plant;
mod util;
