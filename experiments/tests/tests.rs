//! Integration tests of the experiments crate: specs, validation, and every kind driven
//! through a simulated plant with a known friction model, then analysed.

mod util;

mod analyses;
mod caps;
mod specs;
mod validation;
