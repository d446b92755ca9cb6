//! Integration tests of the friction library, by theme.

mod papers;
mod robustness;
mod util;
