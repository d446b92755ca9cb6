//! One module per friction model (MODELS.md section in each module's doc).

pub mod coulomb;
pub mod gms;
pub mod lugre;
pub mod nnaji;
