//! Integration tests of the simulated bench.

mod bus;
mod clients;
mod daq;
mod daq_watchdog;
mod faults;
mod interop;
mod plant;
mod realtime;
mod util;
