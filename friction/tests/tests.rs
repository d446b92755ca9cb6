//! Integration tests of the friction library, by theme.

mod coverage;
mod directions;
mod directions_output_error;
mod docs_pages;
mod identify;
mod identify_dynamic;
mod identify_records;
mod known_load;
mod no_alloc;
mod papers;
mod robustness;
mod util;
