//! Integration tests of the experiments crate: specs, validation, and every kind driven
//! through a simulated plant with a known friction model, then analysed.

mod util;

mod analyses;
mod caps;
mod docs_pages;
mod specs;
mod validation;
