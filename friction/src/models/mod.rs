//! One module per friction model (its page `docs/src/models/<id>.md` named in each module's doc).

pub mod coulomb;
pub mod coulomb_viscous;
pub mod dahl;
#[cfg(test)]
mod dahl_family;
pub mod elasto_plastic;
pub mod frictional_memory;
pub mod gms;
pub mod hybrid;
pub mod improved_armstrong;
pub mod improved_lugre;
pub mod improved_static;
pub mod karnopp;
pub mod lugre;
pub mod m2;
pub mod modified_dahl;
pub mod nnaji;
pub mod rising_static;
pub mod ruina;
pub mod sanchez_mazuca;
pub mod seven_parameter;
pub mod specker;
pub mod static_armstrong;
pub mod static_coulomb_viscous;
pub mod static_curve;
pub mod stribeck_exp;
pub mod stribeck_lorentz;
pub mod timedep;
pub mod tustin;
pub mod viscous;
