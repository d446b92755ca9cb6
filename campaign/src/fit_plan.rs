//! Which fits each model gets, in the documented order (docs/src/identification.md#order):
//! the Stribeck curve on the sweep, the presliding part on the presliding run, the damping on
//! the sine, output error where the model's dynamics need it.

use super::Step;
use super::design::Estimates;
use super::given::{Given, Held, HeldNegative};
use super::record::FitRecord;
use super::sliding::Fall;
use friction::identify::procedures::quality::REL_STD_ERROR_LIMIT;
use serde::Serialize;
use serde_json::Value;

/// One fit of a model's documented order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitPlan {
    /// The procedure (`bench fit --procedure`).
    pub procedure: &'static str,
    /// The step whose run it fits.
    pub from: Step,
    /// What it is given: held values or the procedure's options (`bench fit --given`).
    pub given: Option<Given>,
}

impl FitPlan {
    fn new(procedure: &'static str, from: Step, given: Option<Given>) -> FitPlan {
        FitPlan {
            procedure,
            from,
            given,
        }
    }
}

/// The documented order of one model: (procedure, step whose run it fits, given). The
/// Stribeck curve from the sweep's held points, then the presliding part from the presliding
/// run. When the velocity loop did not hold the Stribeck region (the held points
/// show no fall from the breakaway level), the held points cannot tell `fs` and `vs`: the static fit then takes `fs`
/// per direction from the breakaway ramps (S4 §4.4 fixes `fs` before fitting the shape), and `vs` (with the
/// dynamic models' damping, as the documented optional step) is fitted by output error on the
/// low-speed check, whose stick-slip crosses the falling part of the curve.
///
/// With `fall` (the Stribeck velocity and shape the sliding phases of the stick-slip placed,
/// [`sliding`](super::sliding)) the static fit holds those in place of the estimate from the held points.
pub fn order(model: &str, est: &Estimates, fall: Option<&Fall>) -> Vec<FitPlan> {
    let unheld = !est.stribeck_held;
    let stribeck = model != "coulomb_viscous";
    let static_given = match (unheld && stribeck, fall) {
        (false, _) => None,
        (true, Some(f)) => breakaway_given(est, Some(f.vs)).map(|mut g| {
            g.delta = f.delta;
            g.negative.delta = Some(f.delta);
            g
        }),
        (true, None) => breakaway_given(est, Some(est.vs.unwrap_or(0.1))),
    }
    .map(Given::StaticCurve);
    let mut out = vec![FitPlan::new("static_curve", Step::Sweep, static_given)];
    if let Some(p) = presliding_procedure(model) {
        out.push(FitPlan::new(p, Step::Presliding, None));
    }
    if unheld && let Some(dynamic) = output_error_step(model) {
        out.push(dynamic);
    } else if !unheld && let Some(damping) = damping_step(model) {
        out.push(damping);
        out.extend(slips_step(model));
    }
    out
}

/// Whether any of `models`' fit plans reads the slips step's run (else the campaign does not
/// run it).
pub fn reads_slips(models: &[String], est: &Estimates) -> bool {
    models
        .iter()
        .any(|m| order(m, est, None).iter().any(|p| p.from == Step::Slips))
}

/// GMS's refinement on the slips run: [`GMS_PRESLIDING_FIT`] again by output error, from the
/// presliding run's set (the campaign gives it as the start). The presliding run's motions are
/// a few encoder counts and hardly tell `c` and `sigma1` (fitted 39 / 33 and 0.12 against the
/// default truth's 50 and 1); the slips run's breakaways and slips of 20 to 80 mrad do (50 / 46
/// and 0.85, relative standard errors under 10 %), docs/src/characterise.md#slips.
fn slips_step(model: &str) -> Option<FitPlan> {
    (model == "gms").then(|| {
        let given = Given::OutputError {
            fit: GMS_PRESLIDING_FIT.to_vec(),
            max_iters: GMS_SLIPS_ITERS,
            params: None,
        };
        FitPlan::new("output_error", Step::Slips, Some(given))
    })
}

/// Where the loops held the Stribeck region (no stick-slip to fit `vs` on), the dynamic
/// parameters the earlier fits leave are fitted by output error on the presliding run (its
/// reversals, sine and step are where they show), everything else held at the set before it:
/// LuGre's damping `sigma1` when the sine could not tell it (`sine_told_sigma1`); GMS's
/// [`GMS_PRESLIDING_FIT`].
fn damping_step(model: &str) -> Option<FitPlan> {
    let (fit, max_iters) = match model {
        "lugre" => (vec!["sigma1"], OUTPUT_ERROR_ITERS),
        "gms" => (GMS_PRESLIDING_FIT.to_vec(), GMS_PRESLIDING_ITERS),
        _ => return None,
    };
    let given = Given::OutputError {
        fit,
        max_iters,
        params: None,
    };
    Some(FitPlan::new("output_error", Step::Presliding, Some(given)))
}

/// What GMS's output-error fit on the presliding run frees. `maxwell_slip` gives the elements
/// but neither the micro-damping `sigma1` nor the attraction rate `c` of the slip phase (it
/// leaves `c` at the model's default, 1e4 N m/s, under which the replay chatters at every
/// slip: validation MSE 1.0 N² m² on the default simulated bench against the truth's 4.8e-4),
/// and the breakaway step's `fs` is the slowest ramp's breakaway, 7.7 % under the default
/// truth's `fs⁺`; the presliding run's ramps break away and slip both ways, so it tells both,
/// per direction (docs/src/characterise.md#adequate).
pub const GMS_PRESLIDING_FIT: [&str; 5] = ["sigma1", "c", "negative.c", "fs", "negative.fs"];

/// Whether the newest `presliding_sine` fit of `model` told `sigma1` (from the loss angle of
/// its bristle loop, docs/src/identification.md#presliding_sine): the damping step by output
/// error is then not needed (on the low-speed bench it found 43 against the sine's 59.6 and the
/// truth's 60).
pub(crate) fn sine_told_sigma1(fits: &[FitRecord], model: &str) -> bool {
    fits.iter()
        .rev()
        .find(|f| f.procedure == "presliding_sine" && f.model == model)
        .is_some_and(|f| {
            f.error.is_none()
                && f.params().is_some_and(|p| p.contains_key("sigma1"))
                && !f.undetermined(&["sigma1"], REL_STD_ERROR_LIMIT)
        })
}

/// The static curve's swing `fs⁺ + fs⁻` from the newest static fit of `model` in `fits`:
/// `maxwell_slip` judges its reversal curves' plateau against it (Masing's rule).
pub(crate) fn static_swing(fits: &[FitRecord], model: &str) -> Option<Given> {
    let f = fits
        .iter()
        .rev()
        .find(|f| f.procedure == "static_curve" && f.model == model)?;
    let fs = f.param("fs")?;
    let negative = f.params()?.get("negative").and_then(|n| n.get("fs"));
    let swing = fs + negative.and_then(Value::as_f64).unwrap_or(fs);
    (swing > 0.0).then_some(Given::MaxwellSlip {
        static_swing: swing,
    })
}

/// The presliding part of a dynamic model's order.
fn presliding_procedure(model: &str) -> Option<&'static str> {
    match model {
        "lugre" => Some("presliding_sine"),
        "gms" => Some("maxwell_slip"),
        _ => None,
    }
}

/// The documented optional step of a dynamic model: `vs` and the damping by output error on
/// the low-speed check, whose stick-slip crosses the falling part of the curve.
pub(crate) fn output_error_step(model: &str) -> Option<FitPlan> {
    let fit = match model {
        "lugre" => vec!["vs", "sigma1"],
        "gms" => vec!["vs", "sigma1", "c"],
        _ => return None,
    };
    let given = Given::OutputError {
        fit,
        max_iters: OUTPUT_ERROR_ITERS,
        params: None,
    };
    Some(FitPlan::new(
        "output_error",
        Step::LowSpeedCheck,
        Some(given),
    ))
}

/// The static fit's known values from the breakaway: `fs` per direction (the slowest ramp's
/// breakaway), the Gaussian shape (`delta` 2) and, when given, `vs`. `None` without a breakaway.
pub fn breakaway_given(est: &Estimates, vs: Option<f64>) -> Option<Held> {
    let (pos, neg) = match (est.fs_pos, est.fs_neg) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) | (None, Some(a)) => (a, a),
        (None, None) => return None,
    };
    Some(Held {
        fs: pos,
        delta: 2.0,
        vs,
        negative: HeldNegative {
            fs: neg,
            delta: None,
        },
    })
}

/// The output-error fits' iteration cap.
const OUTPUT_ERROR_ITERS: u32 = 30;
/// The iteration cap of GMS's fit on the presliding run: on the default simulated bench 6, 10
/// and 30 iterations give the same set (validation MSE 8.680e-4, 8.678e-4, 8.677e-4 N² m²) for
/// 4.0, 5.6 and 12.4 s of CPU.
const GMS_PRESLIDING_ITERS: u32 = 10;
/// The iteration cap of GMS's refinement on the slips run: on the default simulated bench 3, 6
/// and 10 iterations leave 1.24, 1.23 and 1.22 × the truth's validation MSE.
const GMS_SLIPS_ITERS: u32 = 5;

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the loops held the Stribeck region, GMS's order ends with the output-error fit of
    /// its slip dynamics and breakaway on the presliding run, after `maxwell_slip`, and its
    /// refinement on the slips run.
    #[test]
    fn gms_fits_its_slip_dynamics_and_breakaway_by_output_error_on_the_presliding_run() {
        let held = Estimates {
            stribeck_held: true,
            ..Estimates::default()
        };
        let plan = order("gms", &held, None);
        let names: Vec<_> = plan.iter().map(|p| (p.procedure, p.from)).collect();
        assert_eq!(
            names,
            [
                ("static_curve", Step::Sweep),
                ("maxwell_slip", Step::Presliding),
                ("output_error", Step::Presliding),
                ("output_error", Step::Slips),
            ]
        );
        let Some(Given::OutputError { fit, .. }) = &plan[2].given else {
            panic!("{:?}", plan[2]);
        };
        assert_eq!(fit, &GMS_PRESLIDING_FIT);
        // The static models get no dynamic step, and read no slips run.
        assert_eq!(order("stribeck_exp", &held, None).len(), 1);
        assert!(reads_slips(&["gms".into()], &held));
        assert!(!reads_slips(
            &["lugre".into(), "stribeck_exp".into()],
            &held
        ));
        // Where the loops did not hold the Stribeck region GMS's dynamics are fitted on the
        // low-speed check, not on the slips run.
        assert!(!reads_slips(&["gms".into()], &Estimates::default()));
    }
}
