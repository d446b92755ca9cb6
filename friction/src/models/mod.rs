//! One module per friction model (MODELS.md section in each module's doc).

pub mod coulomb;
pub mod improved_armstrong;
pub mod improved_lugre;
pub mod improved_static;
pub mod lugre;
pub mod sanchez_mazuca;
