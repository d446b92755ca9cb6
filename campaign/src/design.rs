//! Each step of a campaign designed from what the steps before it measured: plain data in
//! (the bench's limits, earlier results), a run spec out. Every spec is a normal one, checked
//! against `[limits]` by `Spec::plan` before it runs.

use experiments::kinds::compensation_trial::{self, Compensator, Reference};
use experiments::kinds::constant_velocity_sweep::{self, Velocities};
use experiments::kinds::presliding::{self, Part};
use experiments::kinds::torque_ramp;
use experiments::kinds::validation_profile::{self, Piece};
use experiments::{BenchLimits, Directions, Kind, Spec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the campaign knows about the bench so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimates {
    /// Breakaway torque per direction at the slowest torque rate \[N m\] (magnitudes).
    pub fs_pos: Option<f64>,
    /// Negative direction.
    pub fs_neg: Option<f64>,
    /// Slowest speed the velocity loop held without stick-slip in both directions \[rad/s\].
    pub v_hold: Option<f64>,
    /// Coulomb level estimated from the held points \[N m\].
    pub fc: Option<f64>,
    /// Stribeck velocity estimated from the breakaway and the held points \[rad/s\].
    pub vs: Option<f64>,
    /// The held points crossed the Stribeck region (`vs` interpolated from them, not guessed
    /// from the slowest held speed).
    pub stribeck_held: bool,
}

/// Slowest torque rate of the breakaway ramps as a fraction of the torque limit per second.
const RAMP_RATES: [f64; 3] = [0.1, 0.25, 0.5];

/// A step's spec: its name and its kind's typed parameters (the bench's own lockstep).
fn spec(name: &str, kind: Kind) -> Spec {
    Spec {
        name: name.into(),
        kind,
        lockstep: None,
    }
}

/// Step 1: slow torque ramps both ways, to the torque limit.
pub fn breakaway(lim: &BenchLimits) -> Spec {
    let params = torque_ramp::Params {
        rates_nm_s: RAMP_RATES.iter().map(|r| r * lim.torque_nm).collect(),
        directions: Directions::Both,
        repeats: 1,
        motion_counts: 100,
        rest_s: 0.5,
        ..torque_ramp::Params::default()
    };
    spec("characterise 1: breakaway", Kind::TorqueRamp(params))
}

/// Magnitude of the breakaway at the slowest rate of one direction of a `torque_ramp` result.
pub fn breakaway_of(rows: &[torque_ramp::BreakawayRow]) -> Option<f64> {
    rows.iter()
        .map(|r| (r.rate_nm_s.abs(), r.breakaway_torque_nm.abs()))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, t)| t)
}

/// The speed band of the low-speed check and the sweep: from a few encoder counts per second
/// times 100 up to a quarter of the velocity limit (at most 4 rad/s).
fn band(lim: &BenchLimits) -> (f64, f64) {
    let lo = (200.0 * lim.rad_per_count()).max(1e-3);
    let hi = (0.25 * lim.velocity_rad_s).min(4.0);
    (lo, hi.max(10.0 * lo))
}

/// Step 2: the velocity loop at log-spaced speeds across the band, to find where it holds.
pub fn low_speed_check(lim: &BenchLimits) -> Spec {
    let (lo, hi) = band(lim);
    let params = constant_velocity_sweep::Params {
        velocities: Velocities::List(log_space(lo, hi, 10)),
        directions: Directions::Both,
        settle_s: 0.5,
        measure_s: 0.5,
        repeats: 1,
        ..constant_velocity_sweep::Params::default()
    };
    let name = "characterise 2: low-speed check (velocity loop)";
    spec(name, Kind::ConstantVelocitySweep(params))
}

/// The slowest speed above which every point of both directions held (no stick-slip), from
/// the fastest held point down: points above it that missed their speed (the loop at the
/// torque limit, not stick-slip) do not end the run. `None` if no point held.
pub fn slowest_held(sweep: &constant_velocity_sweep::Output) -> Option<f64> {
    let mut points: Vec<(f64, bool)> = points(sweep)
        .map(|p| (p.setpoint_rad_s.abs(), p.stick_slip))
        .collect();
    points.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut held = None;
    for (v, slipped) in points {
        if slipped && held.is_some() {
            break;
        }
        if slipped {
            continue;
        }
        held = Some(v);
    }
    held
}

/// Coulomb level and Stribeck velocity from the held points and the breakaway: `fc` the
/// smallest mean torque magnitude; `vs` where the level falls to `fc + (fs - fc)/e`
/// (interpolated in log speed), else half the slowest held speed (the velocity loop falls
/// into stick-slip on the falling part of the curve, so the Stribeck velocity lies below).
pub fn stribeck_estimate(
    sweep: &constant_velocity_sweep::Output,
    fs: f64,
    v_hold: Option<f64>,
) -> (Option<f64>, Option<f64>, bool) {
    let mut pts: Vec<(f64, f64)> = points(sweep)
        .filter(|p| !p.stick_slip)
        .map(|p| (p.setpoint_rad_s.abs(), p.mean_torque_nm.abs()))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let fc = pts.iter().map(|p| p.1).reduce(f64::min);
    let fallback = v_hold.map(|v| 0.5 * v);
    let Some(fc) = fc else {
        return (None, fallback, false);
    };
    let target = fc + (fs - fc) / std::f64::consts::E;
    let vs = pts
        .windows(2)
        .find(|w| w[0].1 >= target && w[1].1 < target)
        .map(|w| {
            let f = (w[0].1 - target) / (w[0].1 - w[1].1);
            (w[0].0.ln() + f * (w[1].0.ln() - w[0].0.ln())).exp()
        });
    (Some(fc), vs.or(fallback), vs.is_some())
}

/// The points of both directions, positive first.
fn points(
    sweep: &constant_velocity_sweep::Output,
) -> impl Iterator<Item = &constant_velocity_sweep::StribeckPoint> {
    sweep.positive.iter().chain(&sweep.negative)
}

/// Step 3: the sweep: 6 points log-spaced from a fifth of the estimated Stribeck velocity up
/// to it, then 7 from the slowest speed the velocity loop held (or the Stribeck velocity) to
/// the top of the band. Below the held speed it goes through the position loop on a ramped
/// reference, above it through the velocity loop; whatever no loop of the bench's bandwidth holds there is recorded as it is
/// (stick-slip: flagged, left out of the static fit, used by the dynamic fit of `fs` and
/// `vs`). Settle and measure last long enough for 100 and 50 encoder counts of travel at the
/// slowest speed.
pub fn sweep(lim: &BenchLimits, est: &Estimates) -> Spec {
    let (lo, hi) = band(lim);
    let vs = est.vs.unwrap_or(0.1).clamp(lo * 5.0, hi / 20.0);
    let held = est.v_hold.unwrap_or(vs).clamp(vs, hi / 10.0);
    let mut v = log_space((vs / 5.0).max(lo), vs, 6);
    v.extend(log_space(held, hi, 7).into_iter().filter(|x| *x > vs));
    let slowest = v[0];
    let count = lim.rad_per_count();
    let settle = (100.0 * count / slowest).clamp(0.4, 2.0);
    let measure = (50.0 * count / slowest).clamp(0.5, 2.0);
    let params = constant_velocity_sweep::Params {
        velocities: Velocities::List(v),
        directions: Directions::Both,
        settle_s: round(settle),
        measure_s: round(measure),
        repeats: 1,
        position_below_rad_s: est.v_hold.map_or(0.0, |h| round(0.99 * h)),
    };
    spec(
        "characterise 3: Stribeck sweep",
        Kind::ConstantVelocitySweep(params),
    )
}

/// Step 4: presliding ramps, reversals, sine and step with torques below the smaller
/// measured breakaway (sine 40 %, step 30 %). The reversals are legs as long as the ramps,
/// each ending a different fraction of an encoder count past a whole count (steps of 0.3
/// count): the reversal curves then start at different points of the count grid, which is
/// what lets `maxwell_slip` resolve a stiffness whose first elements slip within a count or
/// two of a reversal (docs/src/identification.md#maxwell_slip).
pub fn presliding(lim: &BenchLimits, est: &Estimates) -> Spec {
    let fs = est.fs_pos.unwrap_or(1.0).min(est.fs_neg.unwrap_or(1.0));
    let params = presliding::Params {
        parts: vec![Part::Ramp, Part::Reversals, Part::Sine, Part::Step],
        ramp_rate_rad_s: RAMP_RATE,
        ramp_distance_rad: RAMP_DISTANCE,
        ramp_repeats: 2,
        reversals_rad: staggered_reversals(lim.rad_per_count()),
        reversals_rate_rad_s: RAMP_RATE,
        sine_amplitude_nm: round(0.4 * fs),
        sine_frequency_hz: 2.0,
        sine_cycles: 6,
        step_torque_nm: round(0.3 * fs),
        step_hold_s: 0.5,
        rest_s: 0.5,
    };
    spec("characterise 4: presliding", Kind::Presliding(params))
}

/// Speed \[rad/s\] and length \[rad\] of the presliding ramps and reversal legs: slow (the
/// quasi-static reversal curves), long enough for the position loop to reach gross sliding.
const RAMP_RATE: f64 = 0.005;
const RAMP_DISTANCE: f64 = 0.02;

/// Reversal points of the staggered legs: up and back by [`RAMP_DISTANCE`], the `i`-th
/// point moved on by `0.3 i` encoder counts (mod 1), so the reversals fall at spread
/// fractions of a count.
fn staggered_reversals(count: f64) -> Vec<f64> {
    (1..=8)
        .map(|i| {
            let base = if i % 2 == 1 { RAMP_DISTANCE } else { 0.0 };
            let frac = (0.3 * f64::from(i)).fract();
            let x = base + frac * count;
            (x * 1e9).round() / 1e9
        })
        .collect()
}

/// Step 4b: position steps of 20 to 80 mrad both ways from holds, 1 s each (the position loop
/// breaks the bench away and it slips to the new position): what GMS's slip-phase attraction
/// rate `c`, its micro-damping `sigma1` and `fs` shape, and what the presliding run's motions of a
/// few encoder counts barely tell (docs/src/characterise.md#slips). Steps like the validation
/// run's 50 mrad ones, of other sizes, from other positions, never that run itself.
pub fn slips() -> Spec {
    let step = |to_rad| Piece::Step {
        to_rad,
        duration_s: 1.0,
    };
    let pieces = std::iter::once(Piece::Hold { duration_s: 0.5 })
        .chain(SLIP_TARGETS.into_iter().map(step))
        .collect();
    let params = validation_profile::Params {
        pieces,
        ..validation_profile::Params::default()
    };
    spec("characterise 4b: slips", Kind::ValidationProfile(params))
}

/// Where the slips step's steps go \[rad\]: up 30, 70, down 40, 80, up 20, down 70, up 20, 50
/// mrad, back to 0.
const SLIP_TARGETS: [f64; 8] = [0.03, 0.1, 0.06, -0.02, 0.0, -0.07, -0.05, 0.0];

/// Step 5: a validation profile of position ramps, steps and holds (not used for fitting),
/// its speeds spanning the Stribeck velocity: a lead-in ([`validation_lead_in`]), then the
/// pass [`REPEATS`] times over in one run. The passes set against each other
/// give the bench's repeatability ([`super::floor`]); the lead-in brings the bench to the
/// state each pass ends in, so that every pass starts from the same state.
pub fn validation() -> Spec {
    let pass = validation_pass();
    let params = validation_profile::Params {
        pieces: validation_lead_in()
            .into_iter()
            .chain((0..REPEATS).flat_map(|_| pass.iter().cloned()))
            .collect(),
        ..validation_profile::Params::default()
    };
    let name = "characterise 5: validation profile";
    spec(name, Kind::ValidationProfile(params))
}

/// One pass of the validation profile; it ends where it starts, so the next pass repeats it.
pub fn validation_pass() -> Vec<Piece> {
    let hold = |duration_s| Piece::Hold { duration_s };
    let ramp = |to_rad, duration_s| Piece::Ramp { to_rad, duration_s };
    let step = |to_rad, duration_s| Piece::Step { to_rad, duration_s };
    vec![
        hold(0.5),
        ramp(1.0, 2.0),
        hold(0.5),
        step(0.95, 1.0),
        ramp(0.0, 4.0),
        hold(0.5),
        ramp(-0.05, 2.0),
        step(0.0, 1.0),
    ]
}

/// The lead-in of the validation run: one pass more, whose end leaves the bench in the state
/// every pass ends in, so that the [`REPEATS`] passes after it start from the
/// same state. A lead-in of the pass's last two pieces alone (a ramp to −0.05 rad and a step
/// back, sliding the bench both ways) did not: the first pass's opening hold still stuck 2.2
/// mrad rms away from the second's and the passes differed by 3.7e-3 N² m², the floor of
/// passes that start from rest (docs/src/characterise.md#floor).
pub fn validation_lead_in() -> Vec<Piece> {
    let pass = validation_pass();
    pass[pass.len() - LEAD_IN_PIECES..].to_vec()
}

/// Pieces of the validation run's lead-in (the whole pass).
pub const LEAD_IN_PIECES: usize = 8;

/// Passes of the validation profile in the validation run (set against each other by
/// [`super::floor`]).
pub const REPEATS: usize = 2;

/// Step 7: the compensation trial of every fitted model (its newest set) against `none`.
pub fn trial(models: &[String]) -> Spec {
    let compensator = |name: &str, model: Option<&String>| Compensator {
        name: name.into(),
        model: model.cloned(),
        params: Value::from("latest"),
        velocity: None,
        observer_gain: None,
    };
    let mut compensators = vec![compensator("none", None)];
    compensators.extend(models.iter().map(|m| compensator(m, Some(m))));
    let params = compensation_trial::Params {
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
        ],
        compensators,
        repeats: 1,
        seed: 1,
        error_bound_rad: 0.5,
        rest_s: 1.0,
        glitch_window_s: 0.25,
    };
    let name = "characterise 7: compensation trial";
    spec(name, Kind::CompensationTrial(params))
}

/// `n` values from `a` to `b`, logarithmically spaced.
fn log_space(a: f64, b: f64, n: usize) -> Vec<f64> {
    let r = (b / a).ln();
    (0..n)
        .map(|i| round(a * (r * i as f64 / (n - 1) as f64).exp()))
        .collect()
}

/// Four significant digits (specs read by people).
fn round(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use constant_velocity_sweep::{Output, StribeckPoint};
    use serde_json::json;

    /// A held (or slipped) point at set point `v` with mean torque `t`.
    fn point(v: f64, t: f64, stick_slip: bool) -> StribeckPoint {
        StribeckPoint {
            setpoint_rad_s: v,
            velocity_rad_s: v,
            mean_torque_nm: t,
            std_torque_nm: 0.0,
            n: 1,
            velocity_std_rad_s: 0.0,
            stick_slip,
        }
    }

    fn output(positive: Vec<StribeckPoint>, negative: Vec<StribeckPoint>) -> Output {
        Output { positive, negative }
    }

    #[test]
    fn the_slowest_held_speed_is_the_bottom_of_the_run_of_held_points() {
        let p = |v: f64, s: bool| point(v, 0.0, s);
        let sweep = output(
            vec![p(0.01, true), p(0.1, false), p(0.03, true), p(1.0, false)],
            vec![p(-0.01, false), p(-0.1, false), p(-1.0, false)],
        );
        assert_eq!(slowest_held(&sweep), Some(0.1));
        // The fastest point missed its speed at the torque limit: the run below it counts.
        let sweep = output(
            vec![p(0.01, true), p(0.3, false), p(1.0, false), p(4.0, true)],
            vec![
                p(-0.01, true),
                p(-0.3, false),
                p(-1.0, false),
                p(-4.0, true),
            ],
        );
        assert_eq!(slowest_held(&sweep), Some(0.3));
    }

    #[test]
    fn the_sweep_puts_six_points_below_the_estimated_stribeck_velocity_and_goes_position_below_the_held_speed()
     {
        let lim = BenchLimits::sim_default();
        let est = Estimates {
            vs: Some(0.05),
            v_hold: Some(0.2),
            ..Estimates::default()
        };
        let spec = sweep(&lim, &est);
        let Kind::ConstantVelocitySweep(p) = &spec.kind else {
            panic!("{spec:?}")
        };
        let Velocities::List(v) = &p.velocities else {
            panic!("{p:?}")
        };
        assert_eq!(v.iter().filter(|x| **x <= 0.05).count(), 6);
        assert_eq!(p.position_below_rad_s, 0.198);
        assert!(v.iter().all(|x| *x <= lim.velocity_rad_s));
        spec.plan(&lim).unwrap();
    }

    #[test]
    fn the_stribeck_velocity_is_where_the_held_points_fall_a_third_of_the_way() {
        let p = |v: f64, t: f64| point(v, t, false);
        let sweep = output(vec![p(0.01, 0.9), p(0.1, 0.6), p(1.0, 0.5)], Vec::new());
        let (fc, vs, held) = stribeck_estimate(&sweep, 1.0, Some(0.01));
        assert!(held);
        assert_eq!(fc, Some(0.5));
        let vs = vs.unwrap();
        assert!(vs > 0.01 && vs < 0.1, "{vs}");
    }

    /// Every step's design as the step record stores it (`spec`: every parameter written
    /// out), for the simulated bench's limits and one set of estimates: the same documents
    /// as the campaign stored before its designs were typed (`BLESS=1` rewrites the file).
    #[test]
    fn the_designs_store_the_documents_they_always_stored() {
        let lim = BenchLimits::sim_default();
        let est = Estimates {
            fs_pos: Some(1.2),
            fs_neg: Some(1.1),
            vs: Some(0.05),
            v_hold: Some(0.2),
            ..Estimates::default()
        };
        let doc = |d: Spec| d.to_value();
        let all = json!({
            "breakaway": doc(breakaway(&lim)),
            "low_speed_check": doc(low_speed_check(&lim)),
            "sweep": doc(sweep(&lim, &est)),
            "sweep_unknown": doc(sweep(&lim, &Estimates::default())),
            "presliding": doc(presliding(&lim, &est)),
            "slips": doc(slips()),
            "validation": doc(validation()),
            "trial": doc(trial(&["lugre".into(), "gms".into()])),
        });
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/designs.json");
        if std::env::var_os("BLESS").is_some() {
            std::fs::write(path, serde_json::to_string_pretty(&all).unwrap()).unwrap();
        }
        let stored: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(all, stored);
    }
}
