//! The signals a friction model sees at one sample.

use serde::{Deserialize, Serialize};

/// Signals at sample k, in SI units (linear: m, m/s, N; rotary: rad, rad/s, N m).
///
/// `u` is the applied (driving) force or torque acting on the body, excluding friction;
/// the plant is `m dv/dt = u - F` (docs/src/models/conventions.md). Models take what they need: pure maps read
/// `v`, switched models also `u`, Sánchez-Mazuca models also `du_dt`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Time \[s\].
    pub t: f64,
    /// Relative position \[m or rad\].
    pub x: f64,
    /// Relative velocity \[m/s or rad/s\].
    pub v: f64,
    /// Applied force or torque, excluding friction \[N or N m\].
    pub u: f64,
    /// Rate of the applied force or torque \[N/s or N m/s\].
    pub du_dt: f64,
}

impl Input {
    /// An input with only a velocity (velocity-driven use of a model).
    pub fn velocity(v: f64) -> Input {
        Input {
            v,
            ..Input::default()
        }
    }
}
