//! Integration tests of the simulated bench.

mod bus;
mod faults;
mod plant;
mod util;
