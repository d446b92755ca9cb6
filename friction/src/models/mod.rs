//! One module per friction model (MODELS.md section in each module's doc).

pub mod coulomb;
pub mod dahl;
#[cfg(test)]
pub(crate) mod dahl_family;
pub mod elasto_plastic;
pub mod lugre;
pub mod m2;
pub mod modified_dahl;
