//! Nouailletas, Mendes, Koenig: hybrid two-mode dry-friction model (S2 eqs. 1–4 and the Fig. 2
//! state machine; docs/src/models/hybrid.md, docs/src/models/numerics.md#switched-models).
//!
//! Mode 1 (motion) and mode 0 (motionless), S2 eqs. 3–4:
//!
//! $$q = 1:\quad J\dot v = u - f_v v - f_d(v),\qquad
//!   f_d(v) = \left(f_c + (f_s - f_c)\,e^{-(v/v_s)^2}\right)\operatorname{sgn}(v)$$
//!
//! $$q = 0:\quad J\dot v = -p_0 v,\ p_0 \to +\infty,\qquad f = u\ (\text{exactly } u + p_0 v)$$
//!
//! Guards (S2 Fig. 2 text), evaluated once per step at its start with `(u_k, v_k)` and held over
//! the step (docs/src/models/numerics.md#switched-models): `0 → 1` iff `|u| > fs`; `1 → 0` iff `|v| <= sigma_v` and
//! `|u| <= fc`. The hysteresis between the two guards (`fc < |u| <= fs` keeps the current mode)
//! prevents mode chatter.
//!
//! Symbols: `j` = J \[kg or kg m^2\] inertia of S2's plant, `fv` \[N s/m\] viscous coefficient, `fc`
//! \[N\] Coulomb level, `fs` \[N\] breakaway level (convention A), `vs` \[m/s\] Stribeck velocity,
//! `sigma_v` = Σ \[m/s\] speed threshold of the `1 → 0` guard, `p0` \[N s/m\] mode-0 damping. S2
//! also writes `σ = fs - fc` for the Stribeck amplitude: that is [`Params::sigma`], not `sigma_v`.
//! Sign convention: `f` resists motion (plant `m dv/dt = u - f`, docs/src/models/conventions.md); in mode 1 it has
//! the sign of `v`. Defaults: S2 Table I (rotary: N m, rad/s, kg m^2).
//!
//! Numerics, coupled to a plant (`law`/`advance`):
//! - Mode 0 is S2's `p0 → ∞` limit. The exact exponential `v_{k+1} = v_k exp(-p0 h/J)` is 0 in
//!   double precision once `p0 h/J > -ln(ε) ≈ 36` (Table I: `p0/J = 1.4e9` 1/s, so for any
//!   `h > 26 ns`); then the law is a stick with an unbounded limit: `v_{k+1} = 0` exactly and
//!   `f` = the force that stops the body (`u` at rest), no drift at any `h`. For a slower pole
//!   (e.g. S2's tuning rule `p0/J = 3/T_e`) it is an implicit damper `f = u_k + D v_{k+1}`,
//!   `D = J (exp(p0 h/J) - 1)/h`, which reproduces the exact exponential when the plant inertia is
//!   `J` and is stable for any plant mass. `j` is used only here.
//! - Mode 1 keeps `f_d` frozen at `|v_k|` and the viscous term implicit in `v_{k+1}`; the sign is
//!   solved set-valued at zero (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick) with the limit
//!   `fc + (fs - fc) exp(-(v_k/vs)^2)`. On the first step after `0 → 1` (`v_k = 0`) this slides in
//!   the direction of the applied force with `f_d = fs sgn(u)`, as docs/src/models/hybrid.md asks; a body
//!   that would reverse within a step under a force below that level stops at exactly `v = 0`
//!   instead of chattering across zero (which an explicit `sgn(v_k)` does at coarse `h` when
//!   `h fc / J` exceeds `Σ`: 14 rad/s against 0.01 rad/s with Table I at 10 ms). The next step's
//!   guards then decide the mode.
//!
//! Velocity-driven (`step`, lockstep with a bench): the same guards on the measured `v` and `u`;
//! mode 0 outputs `f = u` (the `p0 v` term would amplify sensor noise by `p0`), mode 1
//! `f = fv v + f_d(v)`, and at exactly `v = 0` in mode 1 `clamp(u, fs)` (= `fs sgn(u)` right after
//! breakaway). The model needs `u`: with `u = 0` (prescribed-motion scenarios) it never leaves
//! mode 0 and outputs 0, exactly as S2's state machine says.

use crate::curve::{phi_exp, sgn};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Hybrid-model parameters. Defaults: S2 Table I (docs/src/models/hybrid.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Inertia `J` \[kg m^2\]; default 7e-6. Sets only the mode-0 pole `p0/J` (S2 eq. 4).
    pub j: f64,
    /// Viscous coefficient `f_v` \[N m s/rad\]; default 1.6e-4 (S2 eq. 3).
    pub fv: f64,
    /// Coulomb level `f_c` \[N m\]; default 0.01 (S2 eq. 3); also the `1 → 0` force guard.
    pub fc: f64,
    /// Breakaway level `f_s` \[N m\] (convention A); default 0.05; the `0 → 1` guard (S2 Fig. 2).
    pub fs: f64,
    /// Stribeck velocity `v_s` \[rad/s\]; default 0.01 (S2 eq. 3).
    pub vs: f64,
    /// Speed threshold `Σ` \[rad/s\] of the `1 → 0` guard; default 0.01 (S2 Fig. 2, Table I).
    pub sigma_v: f64,
    /// Mode-0 damping `p0` \[N m s/rad\]; default 1e4 (S2 eq. 4, Table I; pole `p0/J` = 1.4e9 1/s).
    pub p0: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            j: 7e-6,
            fv: 1.6e-4,
            fc: 0.01,
            fs: 0.05,
            vs: 0.01,
            sigma_v: 0.01,
            p0: 1e4,
        }
    }
}

impl Params {
    /// S2's Stribeck amplitude `σ = fs - fc` \[N\] (S2 §II; not the speed threshold `sigma_v`).
    pub fn sigma(&self) -> f64 {
        self.fs - self.fc
    }

    /// The mode-0 pole `p0 / J` \[1/s\] (S2 eq. 4).
    pub fn mode0_pole(&self) -> f64 {
        self.p0 / self.j
    }

    /// Dry-friction level `f_c + (f_s - f_c) exp(-(v/v_s)^2)` \[N\] (S2 eq. 3, without the sign).
    #[inline]
    pub fn level(&self, v: f64) -> f64 {
        self.fc + self.sigma() * phi_exp(v, self.vs, 2.0)
    }

    /// Dry friction `f_d(v)` \[N\] (S2 eq. 3), `sgn(0) = 0`.
    #[inline]
    pub fn f_d(&self, v: f64) -> f64 {
        self.level(v) * sgn(v)
    }

    /// The mode after the guards of S2 Fig. 2 with the step-start signals `u`, `v`.
    #[inline]
    pub fn next_mode(&self, mode: Mode, u: f64, v: f64) -> Mode {
        match mode {
            Mode::Motionless if u.abs() > self.fs => Mode::Motion,
            Mode::Motion if v.abs() <= self.sigma_v && u.abs() <= self.fc => Mode::Motionless,
            m => m,
        }
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("j", self.j)?;
        check::non_negative("fv", self.fv)?;
        check::non_negative("fc", self.fc)?;
        check::finite("fs", self.fs)?;
        check::at_least("fs", self.fs, "fc", self.fc)?;
        check::positive("vs", self.vs)?;
        check::non_negative("sigma_v", self.sigma_v)?;
        check::positive("p0", self.p0)
    }
}

/// Operating mode (S2 Fig. 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Mode 0: motionless, `f = u`.
    #[default]
    Motionless,
    /// Mode 1: motion, `f = fv v + f_d(v)`.
    Motion,
}

/// Hybrid-model state: the mode held over the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Current mode; motionless at rest.
    pub mode: Mode,
}

/// Marker type of the Nouailletas hybrid model.
#[derive(Clone, Copy, Debug)]
pub struct Hybrid;

/// `p0 h / J` above which `exp(-p0 h / J) < ε`: mode 0 stops the body within one step.
fn stops_in_one_step(x: f64) -> bool {
    x > -f64::EPSILON.ln()
}

/// Mode-1 law: set-valued at zero with the Stribeck level frozen at `|v_k|`, viscous implicit.
#[inline]
fn motion_law(p: &Params, v: f64) -> StepLaw {
    let level = p.level(v);
    StepLaw::Stick {
        limit_pos: level,
        limit_neg: level,
        kinetic_pos: level,
        kinetic_neg: level,
        damping: p.fv,
    }
}

/// Mode-0 law: S2 eq. 4 over one step (see the module doc).
#[inline]
fn motionless_law(p: &Params, u: f64, dt: f64) -> StepLaw {
    let x = p.p0 * dt / p.j;
    if stops_in_one_step(x) {
        StepLaw::Stick {
            limit_pos: f64::MAX,
            limit_neg: f64::MAX,
            kinetic_pos: p.fs,
            kinetic_neg: p.fs,
            damping: 0.0,
        }
    } else {
        StepLaw::Smooth {
            offset: u,
            damping: p.j * x.exp_m1() / dt,
        }
    }
}

impl Dynamics for Hybrid {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, _dt: f64) -> f64 {
        s.mode = p.next_mode(s.mode, input.u, input.v);
        match s.mode {
            Mode::Motionless => input.u,
            Mode::Motion => motion_law(p, input.v).force_at(input.v, input.u),
        }
    }

    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        match p.next_mode(s.mode, input.u, input.v) {
            Mode::Motionless => motionless_law(p, input.u, dt),
            Mode::Motion => motion_law(p, input.v),
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, _v_next: f64, _force: f64, _dt: f64) {
        s.mode = p.next_mode(s.mode, input.u, input.v);
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.fv * v + p.f_d(v))
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["mode".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(match s.mode {
            Mode::Motionless => 0.0,
            Mode::Motion => 1.0,
        });
    }
}

impl ModelDef for Hybrid {
    const ID: &'static str = "hybrid";
    const DESCRIPTION: &'static str = "Nouailletas et al. hybrid two-mode model: motionless (f = u) / Stribeck motion, hysteretic guards";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new(
            "j",
            "kg",
            "inertia J of the model's plant; sets only the mode-0 pole p0/J",
        ),
        ParamDoc::new("fv", "N s/m", "viscous coefficient"),
        ParamDoc::new("fc", "N", "Coulomb level; mode 1 -> 0 needs |u| <= fc"),
        ParamDoc::new(
            "fs",
            "N",
            "breakaway level (fs >= fc); mode 0 -> 1 iff |u| > fs",
        ),
        ParamDoc::new("vs", "m/s", "Stribeck velocity (Gaussian)"),
        ParamDoc::new(
            "sigma_v",
            "m/s",
            "speed threshold Σ; mode 1 -> 0 needs |v| <= sigma_v",
        ),
        ParamDoc::new(
            "p0",
            "N s/m",
            "mode-0 damping; pole p0/J (effectively infinite by default)",
        ),
    ];
}

#[cfg(test)]
mod tests;
