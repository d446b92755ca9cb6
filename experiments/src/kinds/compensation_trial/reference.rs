//! The reference trajectories a trial tracks, and their checks against the bench's limits.

use crate::caps;
use crate::error::{LimitKind, check};
use crate::kinds::validation_profile::Piece;
use crate::kinds::within;
use crate::{BenchLimits, Error, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One reference trajectory (positions relative to where the segment starts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Reference {
    /// `x = A (1 − cos 2πft)`: starts and ends at rest, reverses at `2A` and (between
    /// cycles) at 0.
    Sine {
        /// Amplitude `A` \[rad\] (the motion spans `2A`).
        amplitude_rad: f64,
        /// Frequency \[Hz\].
        frequency_hz: f64,
        /// Whole cycles, 1 to 10000.
        #[schemars(range(min = 1, max = caps::MAX_CYCLES))]
        cycles: u32,
    },
    /// `0 → A → −A → 0` at constant speed, `cycles` times: reversals as velocity steps.
    Triangle {
        /// Amplitude \[rad\].
        amplitude_rad: f64,
        /// Speed \[rad/s\].
        velocity_rad_s: f64,
        /// Whole cycles, 1 to 10000.
        #[schemars(range(min = 1, max = caps::MAX_CYCLES))]
        cycles: u32,
    },
    /// Ramps, holds and steps of position from 0, as the `validation_profile` kind's pieces.
    Validation {
        /// The pieces, at most 10000.
        #[schemars(length(min = 1, max = caps::MAX_LIST))]
        pieces: Vec<Piece>,
    },
}

impl Reference {
    /// A short label.
    pub fn label(&self) -> String {
        match self {
            Reference::Sine {
                amplitude_rad,
                frequency_hz,
                cycles,
            } => format!("sine {amplitude_rad} rad {frequency_hz} Hz ×{cycles}"),
            Reference::Triangle {
                amplitude_rad,
                velocity_rad_s,
                cycles,
            } => format!("triangle {amplitude_rad} rad {velocity_rad_s} rad/s ×{cycles}"),
            Reference::Validation { pieces } => {
                format!("validation profile ({} pieces)", pieces.len())
            }
        }
    }

    /// The position setpoint and its length \[s\], checked against the limits.
    pub(super) fn setpoint(
        &self,
        field: &str,
        limits: &BenchLimits,
    ) -> Result<(Setpoint, f64), Error> {
        match *self {
            Reference::Sine {
                amplitude_rad: a,
                frequency_hz: f,
                cycles,
            } => {
                check::positive(&format!("{field}.sine.amplitude_rad"), a)?;
                check::positive(&format!("{field}.sine.frequency_hz"), f)?;
                caps::count(
                    &format!("{field}.sine.cycles"),
                    cycles.into(),
                    caps::MAX_CYCLES,
                )?;
                check::at_least(&format!("{field}.sine.cycles"), cycles, 1)?;
                let w = 2.0 * std::f64::consts::PI * f;
                speed(&format!("{field}.sine"), a * w, limits)?;
                let d = f64::from(cycles) / f;
                caps::segment_s(&format!("{field}.sine.frequency_hz"), f, "a trial", d)?;
                caps::window_of(
                    &format!("{field}.sine.frequency_hz"),
                    f,
                    "a cycle",
                    1.0 / f,
                    limits,
                )?;
                let sp = Setpoint::Sine {
                    offset: a,
                    amplitude: -a,
                    omega_rad_s: w,
                    phase_rad: std::f64::consts::FRAC_PI_2,
                };
                Ok((sp, d))
            }
            Reference::Triangle {
                amplitude_rad: a,
                velocity_rad_s: v,
                cycles,
            } => {
                check::positive(&format!("{field}.triangle.amplitude_rad"), a)?;
                check::positive(&format!("{field}.triangle.velocity_rad_s"), v)?;
                caps::count(
                    &format!("{field}.triangle.cycles"),
                    cycles.into(),
                    caps::MAX_CYCLES,
                )?;
                check::at_least(&format!("{field}.triangle.cycles"), cycles, 1)?;
                speed(&format!("{field}.triangle"), v, limits)?;
                let q = a / v;
                caps::window_of(
                    &format!("{field}.triangle.velocity_rad_s"),
                    v,
                    "a quarter cycle",
                    q,
                    limits,
                )?;
                let d = 4.0 * q * f64::from(cycles);
                caps::segment_s(&format!("{field}.triangle.velocity_rad_s"), v, "a trial", d)?;
                let mut t_s = vec![0.0];
                let mut value = vec![0.0];
                for k in 0..cycles {
                    let t0 = 4.0 * q * f64::from(k);
                    t_s.extend([t0 + q, t0 + 3.0 * q, t0 + 4.0 * q]);
                    value.extend([a, -a, 0.0]);
                }
                Ok((Setpoint::Samples { t_s, value }, d))
            }
            Reference::Validation { ref pieces } => {
                let f = format!("{field}.validation.pieces");
                check::non_empty(&f, pieces)?;
                caps::list(&f, pieces, caps::MAX_LIST)?;
                let (mut t, mut at) = (0.0, 0.0);
                let (mut t_s, mut value) = (vec![0.0], vec![0.0]);
                for (i, p) in pieces.iter().enumerate() {
                    let (d, to, jump) = match *p {
                        Piece::Hold { duration_s } => (duration_s, at, false),
                        Piece::Ramp { to_rad, duration_s } => (duration_s, to_rad, false),
                        Piece::Step { to_rad, duration_s } => (duration_s, to_rad, true),
                    };
                    let pf = format!("{f}[{i}]");
                    check::positive(&format!("{pf}.duration_s"), d)?;
                    caps::seconds(&format!("{pf}.duration_s"), d, caps::MAX_SEGMENT_S)?;
                    within(
                        &format!("{pf}.to_rad"),
                        to,
                        LimitKind::Position,
                        limits.position_window_rad,
                    )?;
                    if !jump {
                        speed(&pf, (to - at).abs() / d, limits)?;
                    } else {
                        t_s.push(t);
                        value.push(to);
                    }
                    t += d;
                    at = to;
                    t_s.push(t);
                    value.push(at);
                }
                caps::segment_s(&f, t, "a trial", t)?;
                Ok((Setpoint::Samples { t_s, value }, t))
            }
        }
    }
}

/// A reference's speed must stay within the bench's velocity limit.
fn speed(field: &str, v: f64, limits: &BenchLimits) -> Result<(), Error> {
    if v > limits.velocity_rad_s {
        return Err(Error::limit(
            format!("{field}: peak speed"),
            v,
            LimitKind::Velocity,
            limits.velocity_rad_s,
        ));
    }
    Ok(())
}
