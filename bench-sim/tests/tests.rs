//! Integration tests of the simulated bench.

mod plant;
