//! Integration tests of the friction library, by theme.

mod identify;
mod identify_dynamic;
mod papers;
mod robustness;
mod util;
