//! Integration tests of the friction library, by theme.

mod coverage;
mod docs_pages;
mod identify;
mod identify_dynamic;
mod identify_records;
mod papers;
mod robustness;
mod util;
