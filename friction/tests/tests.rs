//! Integration tests of the friction library, by theme.

mod identify;
mod papers;
mod robustness;
mod util;
