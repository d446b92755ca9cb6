//! Improved static + Armstrong friction, "I(S+A)" (Sánchez-Mazuca & Campa 2013): S4 eq. 20 with
//! the improved kinetic law of eqs. 18/19 and the breakaway level of eq. 14; docs/src/models/improved_static.md.
//!
//! $$F = \begin{cases} \operatorname{clamp}(u,\ \phi_s(\dot u)) & v = 0 \\
//!   f_k(v, \dot u) & v \ne 0 \end{cases},\qquad
//!   f_k(v, \dot u) = \operatorname{sgn}(v)\left[f_c + (f_s - f_c)\,
//!   e^{-(|v/v_s|^{\delta_v} + |\dot u/t_s|^{\delta_t})}\right] + f_v v$$
//!
//! Eq. 19 is eq. 18, the Armstrong curve (S4 eq. 5) with `fs` replaced by `phi_s(du_dt)`; at
//! `du_dt = 0` it is the Armstrong curve, the steady state. S4 is rotary: `u` is the applied torque
//! \[N m\], `v` the velocity \[rad/s\], `du_dt` the torque rate \[N m/s\] (supplied by the caller, see
//! [`super::sanchez_mazuca`]). `fc` \[N m\] Coulomb level, `fv` \[N m s/rad\] viscous coefficient,
//! `fs` \[N m\] breakaway level at a constant torque (convention A), `vs` \[rad/s\] and `delta_v` \[-\]
//! the Stribeck velocity and exponent, `ts` \[N m/s\] and `delta_t` \[-\] the torque-rate coefficient
//! and exponent. The friction resists motion (sign of `v` when sliding). The registry writes the
//! units for a linear bench (N, N s/m, m/s, N/s).
//!
//! Defaults: S4 Table 1, column (+). For asymmetric friction paste column (−) as the negative set:
//! `"negative": {"fc": 10.01, "fv": 5.335, "fs": 23.813, "vs": 0.078, "delta_v": 1.286,
//! "ts": 1.954, "delta_t": 0.287}` (or use [`Params::s4_asymmetric`]).
//!
//! Numerics: in a plant the set-valued stick is solved exactly with the kinetic level frozen at
//! `|v_k|` ([`StepLaw::Stick`], docs/src/models/numerics.md#drift-free-stick): no drift, no chatter, stable at any step. Leaving
//! rest the kinetic level starts at `phi_s(du_dt)`, the limit just exceeded, so the breakaway time
//! under `u = 0.05 t` is `phi_s(0.05)/0.05 = 273.26 s` (docs/src/reproduction.md#check-1). With measured
//! velocities, `|v| <= dv` counts as rest.

use super::sanchez_mazuca::{
    Common, Sided, TABLE1_NEG, TABLE1_POS, Table1, rest_window, stick_law, validate_common,
    validate_negative,
};
use crate::curve::{phi_exp, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// I(S+A) parameters. Defaults: S4 Table 1 (+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Coulomb level \[N m\]; default 8.955.
    pub fc: f64,
    /// Viscous coefficient \[N m s/rad\]; default 5.234.
    pub fv: f64,
    /// Breakaway level at a constant torque, `phi_s(0)` \[N m\]; default 17.617.
    pub fs: f64,
    /// Stribeck velocity \[rad/s\]; default 0.145.
    pub vs: f64,
    /// Stribeck exponent \[-\]; default 1.032.
    pub delta_v: f64,
    /// Torque-rate coefficient of eq. 14 \[N m/s\]; default 0.888.
    pub ts: f64,
    /// Torque-rate exponent of eq. 14 \[-\]; default 0.172.
    pub delta_t: f64,
    /// Velocity window counted as rest for measured velocities \[rad/s\]; default 0 (exact zero).
    pub dv: f64,
    /// Torque rates with `|du_dt|` up to this count as 0 \[N m/s\]; default 0.
    pub taudot_deadband: f64,
    /// Parameters for negative motion, if the friction is asymmetric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative: Option<Box<Params>>,
}

impl Params {
    fn from_table(t: &Table1) -> Params {
        Params {
            fc: t.fc,
            fv: t.fv,
            fs: t.fs,
            vs: t.vs,
            delta_v: t.delta_v,
            ts: t.ts,
            delta_t: t.delta_t,
            dv: 0.0,
            taudot_deadband: 0.0,
            negative: None,
        }
    }

    /// S4 Table 1 for both directions: (+) as the positive set, (−) as the negative one.
    pub fn s4_asymmetric() -> Params {
        Params {
            negative: Some(Box::new(Params::from_table(&TABLE1_NEG))),
            ..Params::default()
        }
    }

    /// The breakaway level `phi_s(du_dt)` for motion of sign `dir` (S4 eq. 14).
    pub fn phi_s(&self, dir: f64, du_dt: f64) -> f64 {
        self.side(dir).common().phi_s(du_dt)
    }

    /// Magnitude of the kinetic level of this set, `fc + (fs - fc) exp(-(|v/vs|^delta_v +
    /// |du_dt/ts|^delta_t))` (the bracket of S4 eq. 19).
    #[inline]
    fn kinetic_level(&self, speed: f64, du_dt: f64) -> f64 {
        let c = self.common();
        c.level(phi_exp(speed, self.vs, self.delta_v) * c.rate_factor(du_dt))
    }

    /// The improved kinetic friction `f_k(v, du_dt)` (S4 eq. 19), for `v != 0`.
    pub fn f_k(&self, v: f64, du_dt: f64) -> f64 {
        let q = self.side(v);
        q.kinetic_level(v.abs(), du_dt) * sgn(v) + q.fv * v
    }
}

impl Default for Params {
    fn default() -> Params {
        Params::from_table(&TABLE1_POS)
    }
}

impl Sided for Params {
    fn negative(&self) -> Option<&Params> {
        self.negative.as_deref()
    }

    fn common(&self) -> Common {
        Common {
            fc: self.fc,
            fv: self.fv,
            fs: self.fs,
            ts: self.ts,
            delta_t: self.delta_t,
            taudot_deadband: self.taudot_deadband,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        validate_common(&self.common())?;
        check::positive("vs", self.vs)?;
        check::positive("delta_v", self.delta_v)?;
        check::non_negative("dv", self.dv)?;
        validate_negative(self)
    }
}

/// I(S+A) has no state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State;

/// Marker type of the I(S+A) model.
#[derive(Clone, Copy, Debug)]
pub struct ImprovedArmstrong;

impl Dynamics for ImprovedArmstrong {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        let v = rest_window(input.v, p.side(input.v).dv);
        Self::law(p, s, &Input { v, ..*input }, dt).force_at(v, input.u)
    }

    /// Set-valued stick at `phi_s(du_dt)`, kinetic level of eq. 19 frozen at `|v_k|` (S4 eq. 20;
    /// docs/src/models/numerics.md#drift-free-stick).
    fn law(p: &Params, _: &State, input: &Input, _: f64) -> StepLaw {
        stick_law(p, input, Params::kinetic_level)
    }

    fn advance(_: &Params, _: &mut State, _: &Input, _: f64, _: f64, _: f64) {}

    /// The Armstrong curve (S4 eq. 5) = eq. 19 at `du_dt = 0`.
    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.f_k(v, 0.0))
    }

    fn state_names(_: &Params) -> Vec<String> {
        Vec::new()
    }

    fn state_values(_: &State, _: &mut Vec<f64>) {}
}

impl ModelDef for ImprovedArmstrong {
    const ID: &'static str = "improved_armstrong";
    const DESCRIPTION: &'static str = "I(S+A), Sánchez-Mazuca & Campa 2013 (rotary): \
        Armstrong-Stribeck curve whose static level phi_s(du/dt) falls from fs to fc";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("fc", "N", "Coulomb level (rotary: N m)"),
        ParamDoc::new("fv", "N s/m", "viscous coefficient (rotary: N m s/rad)"),
        ParamDoc::new(
            "fs",
            "N",
            "breakaway level at constant applied force, phi_s(0) (fs >= fc)",
        ),
        ParamDoc::new("vs", "m/s", "Stribeck velocity (rotary: rad/s)"),
        ParamDoc::new("delta_v", "-", "Stribeck exponent"),
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
    use crate::model::{FrictionModel, Model};

    fn model(p: Params) -> Model<ImprovedArmstrong> {
        Model::new(p).unwrap()
    }

    /// S4 eq. 5, written out.
    fn armstrong(p: &Params, v: f64) -> f64 {
        sgn(v) * (p.fc + (p.fs - p.fc) * (-(v / p.vs).abs().powf(p.delta_v)).exp()) + p.fv * v
    }

    #[test]
    fn steady_state_is_eq_19_at_zero_rate_the_armstrong_curve() {
        let p = Params::default();
        let mut m = model(p.clone());
        for v in [1e-4, 0.01, 0.145, 0.5, 3.0, -0.02, -1.0] {
            let mut f = 0.0;
            for _ in 0..100 {
                f = m.step(&Input::velocity(v), 1e-3);
            }
            assert_eq!(f, m.steady_state(v).unwrap());
            assert!((f - armstrong(&p, v)).abs() < 1e-12, "v={v}: {f}");
        }
    }

    #[test]
    fn eq_18_equals_eq_19() {
        let p = Params::s4_asymmetric();
        for (v, r) in [(0.01, 0.05), (0.2, 1.0), (-0.05, 0.3), (-1.0, -2.0)] {
            let q = p.side(v);
            let eq18 = sgn(v)
                * (q.fc + (p.phi_s(v, r) - q.fc) * (-(v / q.vs).abs().powf(q.delta_v)).exp())
                + q.fv * v;
            assert!((p.f_k(v, r) - eq18).abs() < 1e-12, "{v} {r}");
            let inp = Input {
                v,
                du_dt: r,
                ..Input::default()
            };
            assert_eq!(model(p.clone()).step(&inp, 1e-3), p.f_k(v, r));
        }
    }

    #[test]
    fn sticks_at_phi_s() {
        let p = Params::default();
        let mut m = model(p.clone());
        let at = |u: f64, du_dt: f64| Input {
            u,
            du_dt,
            ..Input::default()
        };
        assert_eq!(m.step(&at(13.0, 0.05), 1e-3), 13.0);
        assert_eq!(m.step(&at(14.0, 0.05), 1e-3), p.phi_s(1.0, 0.05));
        assert_eq!(m.step(&at(-30.0, 0.0), 1e-3), -p.fs);
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
    fn robust_in_every_scenario_and_step() {
        let mut m = model(Params::s4_asymmetric());
        assert_robust(&mut m, 40.0, 5.0);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = Params {
            vs: 0.0,
            ..Params::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "vs");
        let mut bad = Params::s4_asymmetric();
        bad.negative.as_mut().unwrap().delta_t = -1.0;
        assert_eq!(bad.validate().unwrap_err().field, "negative.delta_t");
    }

    #[test]
    fn documented_negative_set_is_s4_table1() {
        let neg: serde_json::Value = serde_json::from_str(r#"{"fc": 10.01, "fv": 5.335, "fs": 23.813, "vs": 0.078, "delta_v": 1.286, "ts": 1.954, "delta_t": 0.287}"#).unwrap();
        let m = crate::registry::entry("improved_armstrong")
            .unwrap()
            .build(serde_json::json!({ "negative": neg }))
            .unwrap();
        assert_eq!(
            m.params_json(),
            serde_json::to_value(Params::s4_asymmetric()).unwrap()
        );
    }
}
