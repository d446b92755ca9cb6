//! Integration tests of the experiments crate: specs, validation, and every kind driven
//! through a simulated plant with a known friction model, then analysed.

mod util;

mod analyses;
mod caps;
mod caps_schema;
mod docs_pages;
mod plan_inputs;
mod specs;
mod validation;
