//! Improved static + Coulomb + viscous friction, "I(S+C+V)" (Sánchez-Mazuca & Campa 2013):
//! S4 eqs. 4 and 6 with the rate-dependent breakaway level of eq. 14; docs/src/models/improved_static.md.
//!
//! $$F = \begin{cases} \operatorname{clamp}(u,\ \phi_s(\dot u)) & v = 0 \\
//!   f_c \operatorname{sgn}(v) + f_v v & v \ne 0 \end{cases},\qquad
//!   \phi_s(\dot u) = f_c + (f_s - f_c)\,e^{-|\dot u/t_s|^{\delta_t}}$$
//!
//! S4 is rotary: `u` is the applied torque \[N m\], `v` the velocity \[rad/s\], `du_dt` the torque
//! rate \[N m/s\] (supplied by the caller, see [`super::sanchez_mazuca`]). `fc` \[N m\] is the Coulomb
//! level, `fv` \[N m s/rad\] the viscous coefficient, `fs` \[N m\] the breakaway level at a constant
//! torque (convention A), `ts` \[N m/s\] and `delta_t` \[-\] set how fast `phi_s` falls from `fs` to
//! `fc` as the torque rises faster. The friction resists motion (sign of `v` when sliding). The
//! registry writes the units for a linear bench (N, N s/m, N/s).
//!
//! Defaults: S4 Table 1, column (+). For asymmetric friction paste column (−) as the negative set:
//! `"negative": {"fc": 10.01, "fv": 5.335, "fs": 23.813, "vs": 0.078, "delta_v": 1.286, "ts": 1.954,
//! "delta_t": 0.287}`
//! (or use [`Params::s4_asymmetric`]).
//!
//! Numerics: in a plant the set-valued stick is solved exactly ([`StepLaw::Stick`],
//! docs/src/models/numerics.md#drift-free-stick): no drift, no chatter, stable at any step. Under the ramp `u = 0.05 t` the body breaks
//! away at `phi_s(0.05)/0.05 = 273.26 s` (experiment: 273.7 s, docs/src/reproduction.md#check-1). With measured
//! velocities, `|v| <= dv` counts as rest.

use super::sanchez_mazuca::{Sided, rest_window, stick_law};
use crate::curve::sgn;
use crate::model::{Dynamics, ModelDef, ParamDoc};
use crate::{Input, StepLaw};
use serde::{Deserialize, Serialize};

/// I(S+C+V) takes the same S4 Table 1 parameter set as I(S+A) (`vs` and `delta_v` are checked
/// but unused: its kinetic law is Coulomb + viscous), so one set configures all three improved
/// models.
pub use super::improved_armstrong::Params;

/// I(S+C+V) has no state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State;

/// Marker type of the I(S+C+V) model.
#[derive(Clone, Copy, Debug)]
pub struct ImprovedStatic;

impl Dynamics for ImprovedStatic {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        let v = rest_window(input.v, p.side(input.v).dv);
        Self::law(p, s, &Input { v, ..*input }, dt).force_at(v, input.u)
    }

    /// Set-valued stick at `phi_s(du_dt)`, kinetic level `fc` (S4 eqs. 4, 6, 14; docs/src/models/numerics.md#drift-free-stick).
    fn law(p: &Params, _: &State, input: &Input, _: f64) -> StepLaw {
        stick_law(p, input, |q, _, _| q.fc)
    }

    fn advance(_: &Params, _: &mut State, _: &Input, _: f64, _: f64, _: f64) {}

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        let q = p.side(v);
        Some(q.fc * sgn(v) + q.fv * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        Vec::new()
    }

    fn state_values(_: &State, _: &mut Vec<f64>) {}
}

impl ModelDef for ImprovedStatic {
    const ID: &'static str = "improved_static";
    const DESCRIPTION: &'static str = "I(S+C+V), Sánchez-Mazuca & Campa 2013 (rotary): \
        Coulomb + viscous with a breakaway level phi_s(du/dt) falling from fs to fc";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("fc", "N", "Coulomb level (rotary: N m)"),
        ParamDoc::new("fv", "N s/m", "viscous coefficient (rotary: N m s/rad)"),
        ParamDoc::new(
            "fs",
            "N",
            "breakaway level at constant applied force, phi_s(0) (fs >= fc)",
        ),
        ParamDoc::new(
            "vs",
            "m/s",
            "Stribeck velocity (unused by I(S+C+V); rotary: rad/s)",
        ),
        ParamDoc::new("delta_v", "-", "Stribeck exponent (unused by I(S+C+V))"),
        ParamDoc::new(
            "ts",
            "N/s",
            "force-rate coefficient of phi_s (rotary: N m/s)",
        ),
        ParamDoc::new("delta_t", "-", "force-rate exponent of phi_s"),
        ParamDoc::new(
            "dv",
            "m/s",
            "velocity window counted as rest (measured velocities)",
        ),
        ParamDoc::new(
            "taudot_deadband",
            "N/s",
            "force rates |du/dt| up to this count as 0 (supply a filtered du/dt)",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::super::sanchez_mazuca::test_util::{assert_robust, breakaway_time};
    use super::*;
    use crate::model::{FrictionModel, Model, Validate};

    fn model(p: Params) -> Model<ImprovedStatic> {
        Model::new(p).unwrap()
    }

    #[test]
    fn sticks_at_phi_s_and_slides_on_coulomb_viscous() {
        let p = Params::default();
        let mut m = model(p.clone());
        let phi = p.phi_s(1.0, 0.05);
        let at = |u: f64, v: f64| Input {
            v,
            u,
            du_dt: 0.05,
            ..Input::default()
        };
        assert_eq!(m.step(&at(13.0, 0.0), 1e-3), 13.0);
        assert_eq!(m.step(&at(14.0, 0.0), 1e-3), phi);
        assert_eq!(m.step(&at(-20.0, 0.0), 1e-3), -phi);
        assert_eq!(m.step(&at(0.0, 0.2), 1e-3), p.fc + p.fv * 0.2);
        assert_eq!(m.step(&at(0.0, 0.2), 1e-3), m.steady_state(0.2).unwrap());
        // A constant torque: the limit is fs (eq. 15).
        let hold = Input {
            du_dt: 0.0,
            ..at(30.0, 0.0)
        };
        assert_eq!(m.step(&hold, 1e-3), p.fs);
    }

    #[test]
    fn s4_ramp_breakaway_times() {
        // docs/src/reproduction.md#check-1: 273.26 s (experiment 273.7 s), docs/src/reproduction.md#check-2: 12.08 s, and 394.9 s with (−).
        let mut m = model(Params::s4_asymmetric());
        let t = breakaway_time(&mut m, 0.05, 1e-3, 280.0, 0.0).unwrap();
        assert!((t - 273.26).abs() < 0.1, "{t}");
        assert!((t - 273.7).abs() / 273.7 < 2e-3, "{t}");
        let t = breakaway_time(&mut m, 1.0, 1e-3, 15.0, 0.0).unwrap();
        assert!((t - 12.08).abs() < 0.01, "{t}");
        let t = breakaway_time(&mut m, -0.05, 1e-3, 400.0, 0.0).unwrap();
        assert!((t - 394.9).abs() < 0.1, "{t}");
    }

    #[test]
    fn stick_does_not_drift_under_a_constant_torque() {
        let mut m = model(Params::default());
        let sc = crate::Scenario::Force {
            load: crate::Load::None,
            mass: 0.167,
            force: crate::Profile::Constant { value: 17.0 },
        };
        crate::scenario::simulate(&mut m, &sc, 1e-2, 10.0, 1, |r| {
            assert_eq!((r.x, r.v, r.friction), (0.0, 0.0, 17.0));
        });
    }

    #[test]
    fn robust_in_every_scenario_and_step() {
        let mut m = model(Params::s4_asymmetric());
        assert_robust(&mut m, 40.0, 5.0);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = Params {
            fs: 8.0,
            ..Params::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "fs");
        let mut bad = Params::s4_asymmetric();
        bad.negative.as_mut().unwrap().ts = 0.0;
        assert_eq!(bad.validate().unwrap_err().field, "negative.ts");
    }

    #[test]
    fn documented_negative_set_is_s4_table1() {
        let neg: serde_json::Value = serde_json::from_str(
            r#"{"fc": 10.01, "fv": 5.335, "fs": 23.813, "vs": 0.078, "delta_v": 1.286, "ts": 1.954, "delta_t": 0.287}"#,
        )
        .unwrap();
        let m = crate::registry::entry("improved_static")
            .unwrap()
            .build(serde_json::json!({ "negative": neg }))
            .unwrap();
        assert_eq!(
            m.params_json(),
            serde_json::to_value(Params::s4_asymmetric()).unwrap()
        );
    }
}
