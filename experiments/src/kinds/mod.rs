//! The experiment kinds: one file each, an enum dispatching (mini-redis `Command`).
//!
//! Each kind has `Params` (serde, defaults from the papers, `deny_unknown_fields`), `plan`
//! (validation against the bench limits and segment generation) and `analyse` (pure over the
//! recorded samples and the plan).

pub mod breakaway_staircase;
mod catalogue;
pub mod compensation_trial;
pub mod constant_velocity_sweep;
pub mod dwell_time;
pub mod frictional_lag;
pub mod prbs;
pub mod presliding;
pub mod torque_ramp;
pub mod validation_profile;

pub use catalogue::catalogue;

use crate::error::{LimitKind, check};
use crate::plan::{Anchor, DriveMode, Role, Segment, Stop, Tag};
use crate::{BenchLimits, Error, Plan, Sample, Setpoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! kinds {
    ($( $variant:ident => $module:ident ),* $(,)?) => {
        /// An experiment kind with its parameters.
        #[derive(Clone, Debug, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum Kind {
            $(
                #[doc = concat!("`", stringify!($module), "`: see [`", stringify!($module), "`].")]
                $variant($module::Params),
            )*
        }

        /// The analysis result of a run, tagged by kind (`{"kind": "torque_ramp", ...}`).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        #[allow(clippy::large_enum_variant)]
        pub enum Results {
            $(
                #[doc = concat!("Results of `", stringify!($module), "`.")]
                $variant($module::Output),
            )*
        }

        impl Kind {
            /// Every kind name, in the order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($module)),*];

            /// Builds a kind from its name and a JSON object of parameters (missing ones take
            /// their defaults; unknown ones are an error).
            pub fn from_params(kind: &str, params: serde_json::Value) -> Result<Kind, Error> {
                // serde would read a list as the fields in declaration order: `[]` as defaults.
                if !params.is_object() {
                    return Err(Error::invalid(
                        "params",
                        json_type(&params),
                        "must be a JSON object of named parameters",
                    ));
                }
                let bad = |e| Error::at_path("params", e);
                match kind {
                    $( stringify!($module) => Ok(Kind::$variant(serde_path_to_error::deserialize(params).map_err(bad)?)), )*
                    other => Err(Error::field("kind", format!(
                        "unknown kind '{other}' (known: {})",
                        Kind::NAMES.join(", ")
                    ))),
                }
            }

            /// The kind's name.
            pub fn name(&self) -> &'static str {
                match self { $( Kind::$variant(_) => stringify!($module), )* }
            }

            /// The parameters as JSON, every field written out.
            pub fn params_json(&self) -> serde_json::Value {
                match self {
                    $( Kind::$variant(p) => serde_json::to_value(p).unwrap_or(serde_json::Value::Null), )*
                }
            }

            /// The JSON Schema of the kind's parameters; the doc comments of the fields are their
            /// descriptions.
            pub fn params_schema(&self) -> serde_json::Value {
                match self {
                    $( Kind::$variant(_) => schemars::schema_for!($module::Params).to_value(), )*
                }
            }

            /// The parameter names in declaration order (a JSON object would sort them).
            pub fn param_names(&self) -> Vec<String> {
                let text = match self {
                    $( Kind::$variant(p) => serde_json::to_string(p), )*
                };
                text.map(|t| catalogue::keys_in_order(&t)).unwrap_or_default()
            }

            /// Default parameters of kind `name`.
            pub fn defaults(name: &str) -> Result<Kind, Error> {
                Kind::from_params(name, serde_json::json!({}))
            }

            /// Validates against `limits` and builds the plan.
            pub fn plan(&self, name: &str, limits: &BenchLimits) -> Result<Plan, Error> {
                limits.validate()?;
                let segments = match self { $( Kind::$variant(p) => p.segments(limits)?, )* };
                let plan = Plan {
                    kind: self.name().to_string(),
                    name: name.to_string(),
                    limits: *limits,
                    segments,
                };
                plan.check()?;
                Ok(plan)
            }

            /// The expected run time \[s\] on a bench with `limits`.
            pub fn estimate_duration(&self, limits: &BenchLimits) -> Result<f64, Error> {
                Ok(self.plan("", limits)?.estimate_duration())
            }

            /// The post-run analysis of `samples` recorded while running `plan`.
            pub fn analyse(&self, plan: &Plan, samples: &[Sample]) -> Result<Results, Error> {
                if plan.kind != self.name() {
                    return Err(Error::Analysis(format!(
                        "the plan is a '{}' run, not '{}'",
                        plan.kind,
                        self.name()
                    )));
                }
                Ok(match self { $( Kind::$variant(p) => Results::$variant(p.analyse(plan, samples)?), )* })
            }
        }
    };
}

kinds! {
    ConstantVelocitySweep => constant_velocity_sweep,
    Presliding => presliding,
    FrictionalLag => frictional_lag,
    TorqueRamp => torque_ramp,
    BreakawayStaircase => breakaway_staircase,
    DwellTime => dwell_time,
    Prbs => prbs,
    ValidationProfile => validation_profile,
    CompensationTrial => compensation_trial,
}

/// The JSON type of `v`, for messages.
fn json_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Which directions of motion an experiment covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Directions {
    /// Positive then negative, alternating (keeps the bench near its start).
    #[default]
    Both,
    /// Positive only.
    Positive,
    /// Negative only.
    Negative,
}

impl Directions {
    pub(crate) fn signs(self) -> &'static [i8] {
        match self {
            Directions::Both => &[1, -1],
            Directions::Positive => &[1],
            Directions::Negative => &[-1],
        }
    }
}

pub(crate) fn sign_str(d: i8) -> &'static str {
    if d < 0 { "-" } else { "+" }
}

/// A segment under construction.
pub(crate) fn segment(
    label: String,
    tag: Tag,
    mode: DriveMode,
    setpoint: Setpoint,
    stops: Vec<Stop>,
    expected_s: f64,
) -> Segment {
    Segment {
        label,
        tag,
        mode,
        setpoint,
        anchor: Anchor::Run,
        stops,
        expected_s,
        compensator: None,
    }
}

pub(crate) fn tag(role: Role, value: f64, direction: i8, repeat: u32) -> Tag {
    Tag {
        role,
        value,
        direction,
        repeat,
    }
}

/// Torque 0 until the velocity settles below a few encoder counts per period for 0.1 s, at
/// most `rest_s`; expected to take `rest_s / 2`.
pub(crate) fn rest(limits: &BenchLimits, rest_s: f64, direction: i8, repeat: u32) -> Segment {
    let tol = (3.0 * limits.rad_per_count() / limits.period_s).max(1e-3);
    segment(
        format!("rest #{repeat}"),
        tag(Role::Rest, 0.0, direction, repeat),
        DriveMode::Torque,
        Setpoint::constant(0.0),
        vec![
            Stop::Settled {
                tolerance_rad_s: tol,
                hold_s: (0.1_f64).min(rest_s),
            },
            Stop::Duration { s: rest_s },
        ],
        0.5 * rest_s,
    )
}

/// The motion stop for `counts` encoder counts.
pub(crate) fn motion(limits: &BenchLimits, counts: u32) -> Stop {
    Stop::Motion {
        counts,
        threshold_rad: f64::from(counts) * limits.rad_per_count(),
    }
}

/// The torque cap of a breakaway experiment: `max_torque_nm`, or the bench's torque limit.
pub(crate) fn torque_cap(
    field: &str,
    max: Option<f64>,
    limits: &BenchLimits,
) -> Result<f64, Error> {
    match max {
        None => Ok(limits.torque_nm),
        Some(m) => {
            check::positive(field, m)?;
            if m > limits.torque_nm {
                return Err(Error::limit(field, m, LimitKind::Torque, limits.torque_nm));
            }
            Ok(m)
        }
    }
}

/// `value` must not exceed `limit` in magnitude.
pub(crate) fn within(field: &str, value: f64, which: LimitKind, limit: f64) -> Result<(), Error> {
    check::finite(field, value)?;
    if value.abs() > limit {
        return Err(Error::limit(field, value.abs(), which, limit));
    }
    Ok(())
}

/// Breakaway detection shared by the ramp, staircase and dwell kinds.
///
/// The breakaway is the applied torque when gross motion is detected: the encoder has moved
/// more than the segment's motion threshold (`motion_counts`) from where the segment started.
/// The first encoder counts of motion are not breakaway: a bench with presliding creeps
/// elastically (micro-displacement proportional to the torque, up to the break displacement of
/// its asperities) from the first newton-metre on, so the first visible count comes at a small
/// fraction of the breakaway torque. That creep onset is reported apart.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Breakaway {
    /// Breakaway torque: the applied torque when gross motion was detected \[N m\], signed.
    pub torque_nm: f64,
    /// Time from the segment's start to the detection of gross motion \[s\].
    pub motion_time_s: f64,
    /// Applied torque when the motion threshold was crossed \[N m\], signed (equal to
    /// `torque_nm`).
    pub detected_torque_nm: f64,
    /// Applied torque at the first visible motion (two encoder counts) \[N m\], signed: the
    /// onset of presliding creep, not the breakaway.
    #[serde(default)]
    pub creep_onset_torque_nm: Option<f64>,
}

/// The breakaway of a segment with a motion stop. The tick on which the stop fired belongs
/// to the next segment, so its first sample (`next`) is considered too.
pub(crate) fn breakaway(
    seg: &Segment,
    samples: &[Sample],
    next: Option<&Sample>,
    limits: &BenchLimits,
) -> Option<Breakaway> {
    let threshold = seg.stops.iter().find_map(|s| match s {
        Stop::Motion { threshold_rad, .. } => Some(*threshold_rad),
        _ => None,
    })?;
    let mut all: Vec<Sample> = samples.to_vec();
    all.extend(next.copied());
    let (visible, detected) =
        crate::analysis::motion_onset(&all, limits.rad_per_count(), threshold)?;
    // The torque applied at sample `i`; the stop's tick (in the next segment) already applies
    // the next segment's command, so it reads the segment's last torque.
    let applied = |i: usize| all[i.min(samples.len() - 1)].applied_torque();
    Some(Breakaway {
        torque_nm: applied(detected),
        motion_time_s: all[detected].t - all[0].t,
        detected_torque_nm: applied(detected),
        creep_onset_torque_nm: Some(applied(visible)),
    })
}

/// The first sample after segment `i`, if any.
pub(crate) fn next_first<'a>(parts: &[&'a [Sample]], i: usize) -> Option<&'a Sample> {
    parts.get(i + 1).and_then(|p| p.first())
}
