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

use super::validation_profile::Piece;
use super::{rest, segment, tag};
use crate::caps::{self, Size};
use crate::error::{LimitKind, check};
use crate::plan::{Anchor, DriveMode, Role, Segment, Stop};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use friction::compensation::{CompensatorSpec, VelocitySource};
use friction::registry::ModelSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most compensators in one trial.
const MAX_COMPENSATORS: u32 = 32;
/// Points of each reversal trace in the results.
const TRACE_POINTS: usize = 240;

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

/// Which velocity a static feedforward model is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Velocity {
    /// The reference's velocity (no measurement noise, no feedback through the model).
    Reference,
    /// The measured velocity.
    Measured,
}

impl From<Velocity> for VelocitySource {
    fn from(v: Velocity) -> VelocitySource {
        match v {
            Velocity::Reference => VelocitySource::Reference,
            Velocity::Measured => VelocitySource::Measured,
        }
    }
}

/// One compensator of the trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Compensator {
    /// Name in the results (unique).
    pub name: String,
    /// Friction model id (`bench models`); absent or `"none"`: no compensation (the
    /// baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model's parameters: an object, `"set:NAME"` (a stored parameter set) or
    /// `"latest"` (the newest set of the model); default `"latest"`.
    #[serde(default = "latest")]
    pub params: serde_json::Value,
    /// Velocity a static model is evaluated on: `reference` (default) or `measured`; dynamic
    /// models are always fed the measured velocity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<Velocity>,
    /// Observer gain `k` \[1/s\]: given, the compensator is the LuGre observer of Canudas de
    /// Wit et al. 1995 (model `lugre` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer_gain: Option<f64>,
}

fn latest() -> serde_json::Value {
    "latest".into()
}

impl Compensator {
    /// The baseline: no compensation.
    pub fn none() -> Compensator {
        Compensator {
            name: "none".into(),
            model: None,
            params: latest(),
            velocity: None,
            observer_gain: None,
        }
    }

    fn model_named(name: &str, model: &str) -> Compensator {
        Compensator {
            name: name.into(),
            model: Some(model.into()),
            ..Compensator::none()
        }
    }

    /// The model it uses, if any.
    pub fn model_id(&self) -> Option<&str> {
        self.model.as_deref().filter(|m| *m != "none")
    }

    /// The law with resolved parameters `params` (ignored by the baseline).
    pub fn spec(&self, params: serde_json::Value) -> CompensatorSpec {
        match (self.model_id(), self.observer_gain) {
            (None, _) => CompensatorSpec::None,
            (Some(_), Some(gain)) => CompensatorSpec::LugreObserver { params, gain },
            (Some(model), None) => CompensatorSpec::Feedforward {
                model: ModelSpec {
                    model: model.into(),
                    params,
                },
                velocity: self.velocity.map_or(VelocitySource::Reference, Into::into),
            },
        }
    }

    fn check(&self, field: &str) -> Result<(), Error> {
        if self.name.trim().is_empty() {
            return Err(Error::invalid(
                format!("{field}.name"),
                "\"\"",
                "must not be empty",
            ));
        }
        let Some(model) = self.model_id() else {
            return Ok(());
        };
        let entry = friction::registry::entry(model)
            .map_err(|e| Error::invalid(format!("{field}.model"), model, e.to_string()))?;
        if let Some(k) = self.observer_gain {
            if model != "lugre" {
                return Err(Error::invalid(
                    format!("{field}.observer_gain"),
                    k,
                    format!("applies to model lugre only (the LuGre observer), not {model}"),
                ));
            }
            check::non_negative(&format!("{field}.observer_gain"), k)?;
        }
        let dynamic = entry
            .build(entry.defaults())
            .map(|m| !m.state_names().is_empty())
            .unwrap_or(false);
        if dynamic && self.velocity == Some(Velocity::Reference) {
            return Err(Error::invalid(
                format!("{field}.velocity"),
                "reference",
                format!(
                    "applies to static models; {model} is dynamic and is fed the measured velocity"
                ),
            ));
        }
        match &self.params {
            serde_json::Value::String(s) if s == "latest" || s.starts_with("set:") => Ok(()),
            serde_json::Value::Object(_) => {
                let spec = self.spec(self.params.clone());
                friction::compensation::Compensator::build(&spec)
                    .map(|_| ())
                    .map_err(|e| {
                        Error::invalid(format!("{field}.params"), "the object", e.to_string())
                    })
            }
            other => Err(Error::invalid(
                format!("{field}.params"),
                other,
                "must be an object of parameters, \"set:NAME\" or \"latest\"",
            )),
        }
    }
}

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
    fn setpoint(&self, field: &str, limits: &BenchLimits) -> Result<(Setpoint, f64), Error> {
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
                    super::within(
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

/// One compensator's results (ranked; errors in rad, effort in N m).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// 1 = best (lowest RMS error); unstable compensators rank last.
    pub rank: usize,
    /// The compensator's name.
    pub name: String,
    /// Its law: `none`, `feedforward MODEL` or `lugre observer`.
    pub law: String,
    /// RMS tracking error over all its trials \[rad\].
    pub rms_error: f64,
    /// Largest |tracking error| \[rad\].
    pub max_error: f64,
    /// Peak |error| within the glitch window of a reversal, averaged over reversals \[rad\]
    /// (null without reversals).
    pub reversal_glitch: Option<f64>,
    /// RMS of the torque command \[N m\].
    pub effort_rms: f64,
    /// Reduction of the RMS error against the baseline \[%\] (negative: worse; null without a
    /// baseline).
    pub improvement_pct: Option<f64>,
    /// A trial exceeded the error bound and was stopped.
    pub unstable: bool,
    /// Trials run.
    pub trials: usize,
    /// Per reference: RMS error, max error and glitch \[rad\].
    pub per_reference: Vec<PerReference>,
}

/// One compensator on one reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerReference {
    /// The reference's label.
    pub reference: String,
    /// RMS tracking error \[rad\].
    pub rms_error: f64,
    /// Largest |error| \[rad\].
    pub max_error: f64,
    /// Mean reversal glitch \[rad\].
    pub reversal_glitch: Option<f64>,
}

/// The tracking error around one reversal, for plotting every compensator on one axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The compensator.
    pub name: String,
    /// Time from the reversal \[s\].
    pub t_s: Vec<f64>,
    /// Tracking error \[rad\].
    pub error_rad: Vec<f64>,
}

/// Compensation-trial results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Output {
    /// The baseline compensator's name, if the trial had one.
    pub baseline: Option<String>,
    /// Every compensator, best first.
    pub ranking: Vec<Ranked>,
    /// The error around the first reversal of the first reference, per compensator.
    pub reversal_traces: Vec<Trace>,
    /// The reference those traces come from.
    pub trace_reference: Option<String>,
}

/// Sums over the samples of some trials.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    sse: f64,
    n: usize,
    max: f64,
    glitch_sum: f64,
    reversals: usize,
    effort_ss: f64,
    unstable: bool,
    trials: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.sse += o.sse;
        self.n += o.n;
        self.max = self.max.max(o.max);
        self.glitch_sum += o.glitch_sum;
        self.reversals += o.reversals;
        self.effort_ss += o.effort_ss;
        self.unstable |= o.unstable;
        self.trials += o.trials;
    }
    fn rms(&self) -> f64 {
        (self.sse / self.n.max(1) as f64).sqrt()
    }
    fn glitch(&self) -> Option<f64> {
        (self.reversals > 0).then(|| self.glitch_sum / self.reversals as f64)
    }
}

/// The tracking error of a trial's samples and the times of the reference's reversals.
struct Tracked {
    t: Vec<f64>,
    error: Vec<f64>,
    reversals: Vec<f64>,
}

fn tracked(seg: &Segment, xs: &[Sample], anchor: f64) -> Tracked {
    let t0 = xs[0].t;
    let mut reversals = Vec::new();
    let mut last_sign = 0.0;
    let mut last_t = t0;
    let (mut t, mut error) = (Vec::with_capacity(xs.len()), Vec::with_capacity(xs.len()));
    for s in xs {
        let ts = s.t - t0;
        t.push(ts);
        error.push(s.x - (seg.setpoint.value(ts) + anchor));
        let v_ref = seg.setpoint.rate(ts);
        let sign = if v_ref.abs() > 1e-12 {
            v_ref.signum()
        } else {
            0.0
        };
        if sign != 0.0 {
            if last_sign != 0.0 && sign != last_sign {
                reversals.push(0.5 * (last_t + ts));
            }
            last_sign = sign;
            last_t = ts;
        }
    }
    Tracked {
        t,
        error,
        reversals,
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

    /// A trial's tally and its tracked error. `cut_short`: the trial ended before its
    /// duration while the run went on, which only its tracking-error stop does.
    fn tally(
        &self,
        seg: &Segment,
        xs: &[Sample],
        anchor: f64,
        cut_short: bool,
    ) -> (Tally, Tracked) {
        let tr = tracked(seg, xs, anchor);
        let w = self.glitch_window_s;
        let glitches: Vec<f64> = tr
            .reversals
            .iter()
            .map(|&tc| {
                tr.t.iter()
                    .zip(&tr.error)
                    .filter(|(t, _)| (**t - tc).abs() <= w)
                    .fold(0.0_f64, |m, (_, e)| m.max(e.abs()))
            })
            .collect();
        let max = tr.error.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
        let tally = Tally {
            sse: tr.error.iter().map(|e| e * e).sum(),
            n: tr.error.len(),
            max,
            glitch_sum: glitches.iter().sum(),
            reversals: glitches.len(),
            effort_ss: xs.iter().map(|s| s.u_cmd * s.u_cmd).sum(),
            unstable: cut_short || max > self.error_bound_rad,
            trials: 1,
        };
        (tally, tr)
    }

    pub(crate) fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Output, Error> {
        let parts = crate::analysis::by_segment(plan, samples)?;
        let (nc, nr) = (self.compensators.len(), self.references.len());
        let mut cells = vec![Tally::default(); nc * nr];
        let mut traces: Vec<Option<Trace>> = vec![None; nc];
        for (i, seg, xs) in crate::analysis::with_role(plan, &parts, Role::Track) {
            let (Some(c), j) = (seg.compensator, seg.tag.value as usize) else {
                continue;
            };
            if c >= nc || j >= nr {
                return Err(Error::Analysis(format!(
                    "segment '{}' names compensator {c} / reference {j}, beyond the spec's",
                    seg.label
                )));
            }
            // The sequencer anchors the reference on the last measurement before the segment.
            let anchor = parts[..i]
                .iter()
                .rev()
                .find_map(|p| p.last())
                .map_or(xs[0].x, |s| s.x);
            let period = plan.limits.period_s;
            let lasted = xs[xs.len() - 1].t - xs[0].t + period;
            let run_went_on = parts[i + 1..].iter().any(|p| !p.is_empty());
            let cut_short = run_went_on && lasted < seg.max_s() - 1.5 * period;
            let (tally, tr) = self.tally(seg, xs, anchor, cut_short);
            cells[c * nr + j].add(&tally);
            if j == 0 && traces[c].is_none() {
                traces[c] =
                    reversal_trace(&self.compensators[c].name, &tr, 3.0 * self.glitch_window_s);
            }
        }
        let baseline = self
            .compensators
            .iter()
            .position(|c| c.model_id().is_none());
        let whole: Vec<Tally> = (0..nc)
            .map(|c| {
                let mut t = Tally::default();
                cells[c * nr..(c + 1) * nr].iter().for_each(|x| t.add(x));
                t
            })
            .collect();
        let base_rms = baseline.map(|b| whole[b].rms()).filter(|r| *r > 0.0);
        let mut ranking: Vec<Ranked> = (0..nc)
            .filter(|&c| whole[c].n > 0)
            .map(|c| {
                let t = &whole[c];
                let comp = &self.compensators[c];
                Ranked {
                    rank: 0,
                    name: comp.name.clone(),
                    law: match (comp.model_id(), comp.observer_gain) {
                        (None, _) => "none".into(),
                        (Some(_), Some(_)) => "lugre observer".into(),
                        (Some(m), None) => format!("feedforward {m}"),
                    },
                    rms_error: t.rms(),
                    max_error: t.max,
                    reversal_glitch: t.glitch(),
                    effort_rms: (t.effort_ss / t.n.max(1) as f64).sqrt(),
                    improvement_pct: base_rms.map(|b| 100.0 * (1.0 - t.rms() / b)),
                    unstable: t.unstable,
                    trials: t.trials,
                    per_reference: (0..nr)
                        .filter(|&j| cells[c * nr + j].n > 0)
                        .map(|j| {
                            let x = &cells[c * nr + j];
                            PerReference {
                                reference: self.references[j].label(),
                                rms_error: x.rms(),
                                max_error: x.max,
                                reversal_glitch: x.glitch(),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        ranking.sort_by(|a, b| {
            a.unstable
                .cmp(&b.unstable)
                .then(a.rms_error.total_cmp(&b.rms_error))
        });
        for (k, r) in ranking.iter_mut().enumerate() {
            r.rank = k + 1;
        }
        let reversal_traces: Vec<Trace> = traces.into_iter().flatten().collect();
        Ok(Output {
            baseline: baseline.map(|b| self.compensators[b].name.clone()),
            ranking,
            trace_reference: (!reversal_traces.is_empty()).then(|| self.references[0].label()),
            reversal_traces,
        })
    }
}

/// The error within `half` of the first reversal, at most [`TRACE_POINTS`] points.
fn reversal_trace(name: &str, tr: &Tracked, half: f64) -> Option<Trace> {
    let tc = *tr.reversals.first()?;
    let idx: Vec<usize> = (0..tr.t.len())
        .filter(|&i| (tr.t[i] - tc).abs() <= half)
        .collect();
    let every = idx.len().div_ceil(TRACE_POINTS).max(1);
    let picked: Vec<usize> = idx.into_iter().step_by(every).collect();
    Some(Trace {
        name: name.to_string(),
        t_s: picked.iter().map(|&i| tr.t[i] - tc).collect(),
        error_rad: picked.iter().map(|&i| tr.error[i]).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn quick() -> Params {
        Params {
            references: vec![Reference::Sine {
                amplitude_rad: 0.25,
                frequency_hz: 1.0,
                cycles: 2,
            }],
            compensators: vec![
                Compensator::none(),
                Compensator {
                    params: json!({"fc": 1.0, "fv": 0.05}),
                    ..Compensator::model_named("cv", "coulomb_viscous")
                },
            ],
            repeats: 3,
            ..Params::default()
        }
    }

    #[test]
    fn every_pair_runs_once_per_repeat_in_a_seeded_order() {
        let p = Params::default();
        let order = p.order();
        assert_eq!(order.len(), 5 * 3 * 2);
        for r in 0..2 {
            let mut round: Vec<(usize, usize)> = order
                .iter()
                .filter(|o| o.2 == r)
                .map(|o| (o.0, o.1))
                .collect();
            round.sort_unstable();
            let all: Vec<(usize, usize)> =
                (0..5).flat_map(|c| (0..3).map(move |j| (c, j))).collect();
            assert_eq!(round, all);
        }
        assert_eq!(order, p.order(), "the same seed gives the same order");
        let other = Params {
            seed: 2,
            ..Params::default()
        };
        assert_ne!(order, other.order(), "another seed, another order");
    }

    #[test]
    fn a_trial_tracks_from_where_it_starts_and_stops_on_a_runaway_error() {
        let plan = crate::Spec::from_json(
            &json!({"kind": "compensation_trial", "params": serde_json::to_value(quick()).unwrap()})
                .to_string(),
        )
        .unwrap()
        .plan(&BenchLimits::sim_default())
        .unwrap();
        assert_eq!(plan.segments.len(), 2 * 2 * 3);
        let track = &plan.segments[0];
        assert_eq!(
            (track.mode, track.anchor),
            (DriveMode::Position, Anchor::SegmentStart)
        );
        assert!(track.compensator.is_some());
        assert!(
            track
                .stops
                .contains(&Stop::TrackingError { bound_rad: 0.5 })
        );
        // A sine from rest: 0 at the start and the end, 2A at the middle.
        assert!(track.setpoint.value(0.0).abs() < 1e-12);
        assert!((track.setpoint.value(0.5) - 0.5).abs() < 1e-12);
        assert!(track.setpoint.rate(0.0).abs() < 1e-12);
        assert_eq!(plan.segments[1].tag.role, Role::Rest);
    }

    #[test]
    fn bad_compensators_are_refused_naming_the_field() {
        let bad = |c: Compensator| {
            let p = Params {
                compensators: vec![Compensator::none(), c],
                ..quick()
            };
            p.segments(&BenchLimits::sim_default())
                .unwrap_err()
                .to_string()
        };
        let e = bad(Compensator::model_named("x", "no_such_model"));
        assert!(e.starts_with("params.compensators[1].model"), "{e}");
        let e = bad(Compensator {
            observer_gain: Some(10.0),
            ..Compensator::model_named("x", "gms")
        });
        assert!(
            e.contains("observer_gain") && e.contains("lugre only"),
            "{e}"
        );
        let e = bad(Compensator {
            velocity: Some(Velocity::Reference),
            ..Compensator::model_named("x", "gms")
        });
        assert!(e.contains("velocity") && e.contains("dynamic"), "{e}");
        let e = bad(Compensator {
            params: json!({"fc": -1}),
            ..Compensator::model_named("x", "coulomb_viscous")
        });
        assert!(e.starts_with("params.compensators[1].params"), "{e}");
        let e = bad(Compensator::none());
        assert!(e.contains("used twice"), "{e}");
        let e = bad(Compensator {
            params: json!("mine"),
            ..Compensator::model_named("x", "gms")
        });
        assert!(e.contains("set:NAME"), "{e}");
    }

    /// A synthetic run: the baseline lags by a glitch after each reversal, the compensator
    /// tracks with a tenth of the error.
    #[test]
    fn the_analysis_ranks_by_rms_error_and_measures_the_glitch_at_reversals() {
        let p = quick();
        let plan = Kind::CompensationTrial(p.clone())
            .plan("t", &BenchLimits::sim_default())
            .unwrap();
        let mut samples = Vec::new();
        let mut t = 0.0;
        for (k, seg) in plan.segments.iter().enumerate() {
            let n = (seg.expected_s / 1e-3).round() as usize;
            let scale = match seg.compensator {
                Some(0) => 1.0,
                Some(_) => 0.1,
                None => 0.0,
            };
            for i in 0..n {
                let ts = i as f64 * 1e-3;
                // 0.02 rad of error decaying after each reversal (0.5, 1 and 1.5 s).
                let since = [0.5, 1.0, 1.5]
                    .iter()
                    .filter(|&&r| ts >= r)
                    .map(|r| ts - r)
                    .fold(f64::INFINITY, f64::min);
                let e = if since.is_finite() {
                    0.02 * (-since / 0.05).exp()
                } else {
                    0.0
                };
                samples.push(Sample {
                    t,
                    x: seg.setpoint.value(ts) * f64::from(seg.tag.role == Role::Track) + scale * e,
                    u_cmd: scale,
                    segment: k as u32,
                    ..Sample::default()
                });
                t += 1e-3;
            }
        }
        let out = p.analyse(&plan, &samples).unwrap();
        assert_eq!(out.baseline.as_deref(), Some("none"));
        let names: Vec<&str> = out.ranking.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["cv", "none"]);
        let (best, base) = (&out.ranking[0], &out.ranking[1]);
        assert_eq!(best.trials, 3);
        // Three reversals per trial (twice at 2A, once at 0 between the cycles).
        assert!(
            (base.reversal_glitch.unwrap() - 0.02).abs() < 1e-3,
            "{base:?}"
        );
        assert!(
            (best.improvement_pct.unwrap() - 90.0).abs() < 1e-6,
            "{best:?}"
        );
        assert_eq!(base.improvement_pct, Some(0.0));
        assert!(!best.unstable && !base.unstable);
        assert_eq!(out.reversal_traces.len(), 2);
        assert!(out.reversal_traces[0].t_s.len() <= TRACE_POINTS);
    }

    use crate::Kind;
}
