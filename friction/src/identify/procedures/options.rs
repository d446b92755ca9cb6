//! Units the options types ([`super::typed`]) declare (`x-unit` in their JSON Schema).

/// The unit of a force or torque, as the bench's geometry has it.
pub const FORCE: &str = "N or N m";
/// The unit of an inertia or a mass.
pub const INERTIA: &str = "kg m² or kg";
/// The unit of a speed.
pub const SPEED: &str = "rad/s or m/s";
