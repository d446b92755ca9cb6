//! The papers' identification procedures (MODELS.md §17), one per file, each returning a
//! [`FitReport`] with its [`Provenance`].

pub mod compare;
pub mod nnaji;
pub mod output_error;
mod provenance;
pub mod seven_parameter;

pub use provenance::{DataUsed, FitReport, Provenance};
