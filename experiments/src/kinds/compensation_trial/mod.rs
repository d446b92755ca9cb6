//! `compensation_trial`: which friction model, used to compensate friction, helps the bench's
//! position control most? (docs/src/experiments/compensation_trial.md)
//!
//! The papers identify friction to compensate it (Nnaji et al. §5, Specker et al. §6, the survey
//! S1 §8.5 with the LuGre observer of Canudas de Wit et al. 1995). Here every compensator tracks
//! the same position references with velocity reversals, under the daemon's position PID in
//! torque mode, its friction estimate added to the PID output:
//!
//! - references: position sinusoids `x = A (1 − cos 2πft)`, a triangle `0 → A → −A → 0` at
//!   constant speed (velocity reversals as steps), and a validation profile (ramps, holds and
//!   steps of position, as `validation_profile`);
//! - each (compensator, reference) pair is one `track` segment (anchored where the bench is when
//!   it starts), followed by a rest at zero torque; the pairs run in a seeded random order,
//!   `repeats` times, so that drift and warm-up do not favour one compensator;
//! - a segment whose tracking error exceeds `error_bound_rad` ends at once (the compensator made
//!   the loop unstable); the rest that follows takes the torque away, and the trial goes on.
//!
//! Analysis per compensator over all its segments: RMS and peak tracking error, the reversal
//! glitch (the peak |error| within `glitch_window_s` of each reversal of the reference velocity,
//! averaged over the reversals), the RMS of the torque command, the improvement of the RMS
//! error over the baseline (`none`), and whether it went unstable; ranked by RMS error.

mod analysis;
mod compensator;
mod reference;
#[cfg(test)]
mod tests;

pub use analysis::{Output, PerReference, Ranked, Trace};
pub use compensator::{Compensator, Velocity};
pub use reference::Reference;

use super::validation_profile::Piece;
use super::{rest, segment, tag};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{Anchor, DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most compensators in one trial.
const MAX_COMPENSATORS: u32 = 32;

/// Parameters of `compensation_trial`: position tracking with model-based friction
/// compensation, every compensator on the same references in a seeded random order → which
/// model helps control most (RMS error, reversal glitch, effort, improvement over none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Reference trajectories, 1 to 16; default a 0.25 rad sine at 0.5 Hz (2 cycles), a
    /// 0.25 rad triangle at 0.5 rad/s and a short validation profile.
    #[schemars(length(min = 1, max = caps::MAX_PARTS))]
    pub references: Vec<Reference>,
    /// Compensators, 1 to 32; default none (the baseline) and feedforward of the newest
    /// fitted sets of coulomb_viscous, stribeck_exp, lugre and gms.
    #[schemars(length(min = 1, max = 32))]
    pub compensators: Vec<Compensator>,
    /// Repeats of the whole set, 1 to 10000; default 2.
    #[schemars(range(min = 1, max = caps::MAX_REPEATS))]
    pub repeats: u32,
    /// Seed of the order of the trials; default 1.
    pub seed: u64,
    /// Tracking error that ends a trial as unstable \[rad\]; default 0.5.
    pub error_bound_rad: f64,
    /// Longest rest at zero torque after each trial \[s\]; default 1.
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub rest_s: f64,
    /// Half-width of the window around each reversal for the glitch \[s\]; default 0.25 (a
    /// position PID's error peaks a few tenths of a second after the reversal).
    #[schemars(range(max = caps::MAX_SEGMENT_S))]
    pub glitch_window_s: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            references: vec![
                Reference::Sine {
                    amplitude_rad: 0.25,
                    frequency_hz: 0.5,
                    cycles: 2,
                },
                Reference::Triangle {
                    amplitude_rad: 0.25,
                    velocity_rad_s: 0.5,
                    cycles: 1,
                },
                Reference::Validation {
                    pieces: vec![
                        Piece::Ramp {
                            to_rad: 0.5,
                            duration_s: 1.0,
                        },
                        Piece::Hold { duration_s: 0.5 },
                        Piece::Ramp {
                            to_rad: 0.0,
                            duration_s: 2.0,
                        },
                        Piece::Step {
                            to_rad: -0.05,
                            duration_s: 0.5,
                        },
                        Piece::Step {
                            to_rad: 0.0,
                            duration_s: 0.5,
                        },
                    ],
                },
            ],
            compensators: vec![
                Compensator::none(),
                Compensator::model_named("coulomb_viscous", "coulomb_viscous"),
                Compensator::model_named("stribeck_exp", "stribeck_exp"),
                Compensator::model_named("lugre", "lugre"),
                Compensator::model_named("gms", "gms"),
            ],
            repeats: 2,
            seed: 1,
            error_bound_rad: 0.5,
            rest_s: 1.0,
            glitch_window_s: 0.25,
        }
    }
}

impl Params {
    fn check(&self, limits: &BenchLimits) -> Result<(), Error> {
        caps::list("params.references", &self.references, caps::MAX_PARTS)?;
        check::non_empty("params.references", &self.references)?;
        caps::list("params.compensators", &self.compensators, MAX_COMPENSATORS)?;
        check::non_empty("params.compensators", &self.compensators)?;
        caps::count("params.repeats", self.repeats.into(), caps::MAX_REPEATS)?;
        check::at_least("params.repeats", self.repeats, 1)?;
        check::positive("params.error_bound_rad", self.error_bound_rad)?;
        super::within(
            "params.error_bound_rad",
            self.error_bound_rad,
            LimitKind::Position,
            limits.position_window_rad,
        )?;
        check::positive("params.rest_s", self.rest_s)?;
        caps::seconds("params.rest_s", self.rest_s, caps::MAX_SEGMENT_S)?;
        check::positive("params.glitch_window_s", self.glitch_window_s)?;
        caps::seconds(
            "params.glitch_window_s",
            self.glitch_window_s,
            caps::MAX_SEGMENT_S,
        )?;
        caps::window("params.glitch_window_s", self.glitch_window_s, limits)?;
        for (i, c) in self.compensators.iter().enumerate() {
            let field = format!("params.compensators[{i}]");
            c.check(&field)?;
            if self.compensators[..i].iter().any(|o| o.name == c.name) {
                return Err(Error::invalid(
                    format!("{field}.name"),
                    &c.name,
                    "is used twice (names identify the results)",
                ));
            }
        }
        Ok(())
    }

    /// The trials in run order: (compensator, reference, repeat), each repeat shuffled.
    pub fn order(&self) -> Vec<(usize, usize, u32)> {
        let mut rng = friction::identify::rng::Rng::new(self.seed);
        let mut out = Vec::new();
        for r in 0..self.repeats {
            let mut set: Vec<(usize, usize, u32)> = (0..self.compensators.len())
                .flat_map(|c| (0..self.references.len()).map(move |j| (c, j, r)))
                .collect();
            // Fisher–Yates.
            for i in (1..set.len()).rev() {
                let k = (rng.next_u64() % (i as u64 + 1)) as usize;
                set.swap(i, k);
            }
            out.extend(set);
        }
        out
    }

    pub(crate) fn segments(&self, limits: &BenchLimits) -> Result<Vec<Segment>, Error> {
        self.check(limits)?;
        let refs = self
            .references
            .iter()
            .enumerate()
            .map(|(j, r)| r.setpoint(&format!("params.references[{j}]"), limits))
            .collect::<Result<Vec<_>, _>>()?;
        let pairs = (self.compensators.len() * self.references.len()) as f64;
        let one_round: f64 =
            refs.iter().map(|(_, d)| d + self.rest_s).sum::<f64>() * self.compensators.len() as f64;
        Size::new(
            2.0 * pairs * f64::from(self.repeats),
            one_round * f64::from(self.repeats),
        )
        .check("params.repeats", format_args!("{}", self.repeats), limits)?;
        let mut out = Vec::new();
        for (c, j, r) in self.order() {
            let (sp, d) = &refs[j];
            let mut s = segment(
                format!(
                    "track {} with {} #{r}",
                    self.references[j].label(),
                    self.compensators[c].name
                ),
                tag(Role::Track, j as f64, 0, r),
                DriveMode::Position,
                sp.clone(),
                vec![
                    Stop::TrackingError {
                        bound_rad: self.error_bound_rad,
                    },
                    Stop::Duration { s: *d },
                ],
                *d,
            );
            s.anchor = Anchor::SegmentStart;
            s.compensator = Some(c);
            out.push(s);
            out.push(rest(limits, self.rest_s, 0, r));
        }
        Ok(out)
    }
}
