//! `presliding`: the four presliding experiments of Nnaji §4.2 (S3 §5.1.2) and
//! Sánchez-Mazuca §4.5 (S4 eqs. 23–25); docs/src/identification.md#nnaji, docs/src/identification.md#presliding_sine, docs/src/identification.md#step_damping.
//!
//! - (a) `ramp`: a slow displacement ramp (position mode) through gross sliding, repeated with
//!   alternating direction → breakaway displacement and torque per ramp, the torque-versus-
//!   displacement curve for the `Z_b` fit, and the initial presliding stiffness per direction
//!   of loading: one rule for both, the slope from every reversal of the motion (or start from
//!   rest) over the first 15 % of the torque swing.
//! - (b) `reversals`: a position signal through nested reversal points kept below stiction →
//!   hysteresis loops with their reversal points.
//! - (c) `sine`: a sinusoidal torque `A sin(2 pi f t)` with `A` below `f_c/2` → the steady
//!   microdisplacement amplitude `theta0` and the stiffness `sigma0 = A/theta0` (S4 eq. 25),
//!   `theta0` from a least-squares sinusoid fit over the cycles after the second.
//! - (d) `step`: a small torque step → the micro-motion's final displacement, overshoot, damping
//!   ratio and natural frequency, hence stiffness, inertia `J = k/w_n^2` and damping
//!   `sigma1 + f_v = 2 zeta k / w_n` (S4 §4.5).
//!
//! Position parts are relative to the position where their segment starts. Torque parts are
//! preceded by a rest at torque 0.
//!
//! Defaults: 10 ramps at 2 mrad/s over 30 mrad (S3: 10 repetitions; its `Z_b` is 6 mrad);
//! reversals at 1 mrad/s through 4, −4, 2, −1, 2, −4, 4 mrad; sine 0.3 N m at 1 Hz for 10
//! cycles; step 0.2 N m held 0.5 s.

mod analysis;
mod plan;

pub use analysis::{Output, RampResult, ReversalsResult, SineResult, StepResult};

use crate::caps;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The parts of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// (a) displacement ramps into gross sliding.
    Ramp,
    /// (b) nested reversals below stiction.
    Reversals,
    /// (c) sinusoidal torque below the Coulomb level.
    Sine,
    /// (d) small torque step.
    Step,
}

/// Parameters of `presliding`: four presliding experiments, (a) slow displacement ramps
/// through gross sliding, (b) nested reversals below stiction, (c) a sinusoidal torque below
/// f_c/2, (d) a small torque step → breakaway displacement, hysteresis loops, stiffness sigma0
/// and micro-motion damping (Nnaji §4.2, Sánchez-Mazuca §4.5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Parts to run, in this order, at most 16; default all four.
    #[schemars(length(min = 1, max = caps::MAX_PARTS))]
    pub parts: Vec<Part>,
    /// (a) ramp speed \[rad/s\]: a ramp lasts one control period to a day; default 0.002.
    pub ramp_rate_rad_s: f64,
    /// (a) ramp length \[rad\]; default 0.03.
    pub ramp_distance_rad: f64,
    /// (a) number of ramps (alternating direction), at most 10000; default 10 (S3).
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub ramp_repeats: u32,
    /// (b) reversal points relative to the start \[rad\], at most 10000; default [0.004, -0.004,
    /// 0.002, -0.001, 0.002, -0.004, 0.004].
    #[schemars(length(min = 1, max = caps::MAX_LIST))]
    pub reversals_rad: Vec<f64>,
    /// (b) speed between reversal points \[rad/s\]: the path lasts one control period to a
    /// day; default 0.001.
    pub reversals_rate_rad_s: f64,
    /// (c) torque amplitude `A` \[N m\], below `f_c/2`; default 0.3.
    pub sine_amplitude_nm: f64,
    /// (c) frequency \[Hz\], well below `sqrt(sigma0/J)/(2 pi)`; default 1.
    pub sine_frequency_hz: f64,
    /// (c) cycles, 3 to 10000 (and the sine at most a day); default 10.
    #[schemars(range(min = 3, max = caps::MAX_CYCLES))]
    pub sine_cycles: u32,
    /// (d) torque step \[N m\], below `f_c`; default 0.2.
    pub step_torque_nm: f64,
    /// (d) hold time of the step, and of the release \[s\], one control period to a day;
    /// default 0.5.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub step_hold_s: f64,
    /// Rest at torque 0 before each torque part \[s\], at most a day; default 0.5.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub rest_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            parts: vec![Part::Ramp, Part::Reversals, Part::Sine, Part::Step],
            ramp_rate_rad_s: 0.002,
            ramp_distance_rad: 0.03,
            ramp_repeats: 10,
            reversals_rad: vec![0.004, -0.004, 0.002, -0.001, 0.002, -0.004, 0.004],
            reversals_rate_rad_s: 0.001,
            sine_amplitude_nm: 0.3,
            sine_frequency_hz: 1.0,
            sine_cycles: 10,
            step_torque_nm: 0.2,
            step_hold_s: 0.5,
            rest_s: 0.5,
        }
    }
}
