//! One module per friction model (MODELS.md section in each module's doc).

pub mod coulomb;
pub mod frictional_memory;
pub mod lugre;
pub mod rising_static;
pub mod ruina;
pub mod seven_parameter;
pub mod timedep;
