//! Specker, Buchholz, Dietmayer: smooth static friction map followed by a linear
//! parameter-varying first-order lag (S0 eqs. 1–19; docs/src/models/specker.md, docs/src/reproduction.md#check-9).
//!
//! Static map (S0 eqs. 1, 4, 8–11), odd and C∞:
//!
//! $$\tilde F_\Sigma(v) = d\,v + \hat F_c \tanh\frac{v}{v_t} +
//!   \hat F_\Delta\,\frac{v}{v_{sp}}\,e^{-\left(\frac{v}{\sqrt2\,v_{sp}}\right)^2 + \frac12},\qquad
//!   \hat F_\Delta = \hat F_s - \hat F_c \tanh\frac{v_{sp}}{v_t} - d\,v_{sp}$$
//!
//! so that `F~Σ(vsp) = fs` exactly. Velocity-dependent lag (S0 eqs. 16–17):
//!
//! $$\dot F_{fr} = \frac{a(v)}{T_1}\left(\tilde F_\Sigma(v) - F_{fr}\right),\qquad
//!   a(v) = 1 - e^{-(v/v_0)^2}$$
//!
//! At `v = 0`, `a = 0` and the filter holds its last value (memory, S0 eq. 19); for `|v| ≫ v0`
//! it is a plain lag of time constant `T1` (S0 eq. 18). The steady state at constant `v ≠ 0` is
//! `F~Σ(v)`; `F_fr` starts at 0 and stays there until motion occurs.
//!
//! Symbols: `d` \[N s/m\] viscous coefficient, `fc` = F^_c \[N\] Coulomb peak, `fs` = F^_s \[N\]
//! Stribeck peak (convention A: the peak of `F~Σ`, reached at `v = vsp`), `vt` \[m/s\] tanh
//! transition velocity, `vsp` \[m/s\] Stribeck peak velocity (not the Gaussian `v_s`; S0 eq. 13:
//! `v_s ≈ 2 vsp ≈ 4 vt`), `v0` \[m/s\] filter edge velocity, `t1` = T_1 \[s\] minimal time constant.
//! Sign convention: `F_fr` resists motion and has the sign of `v` in steady sliding.
//! Defaults: S0 Tables 1–2 for `T_s = 0.1 ms`; the 10 ms set scales `vt, vsp, v0, t1` by 100.
//!
//! Numerics. The filter is linear in `F_fr` with `v` frozen over a step (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 1)):
//! the default [`Integrator::Exact`] update
//! `F_{k+1} = F~Σ(v_k) + (F_k - F~Σ(v_k)) exp(-a(v_k) h / T1)` is a convex combination, so
//! `F_fr` stays between its start value and the range of `F~Σ` at every `h`, and `v = 0` holds
//! exactly. [`Integrator::Rk4`] replaces the exponential by the RK4 amplification polynomial, for
//! comparison with S0's fixed-step RK4 runs; its stability limit `a h / T1 <= 2.785` (
//! docs/src/models/numerics.md#stability-limits) is not a property of the model, so beyond it the step falls back to the exact update.
//!
//! Output: both `step` and the plant coupling return `F_{k+1}`, the filter output at the end of
//! the step, computed from `F_k` and the velocity of sample k. This is the force that acts over
//! step k in the implicit plant step (`m (v_{k+1} - v_k)/h = u - F_{k+1}`), so the lockstep and
//! the plant-coupled paths give the same value: `step` equals `law(..).force_at(v_k)`.
//!
//! Plant coupling: `F~Σ` is linearised in `v_{k+1}` around `v_k` with the slope
//! `max(F~Σ'(v_k), 0)`, i.e. `F_{k+1} = e F_k + (1 - e)(F~Σ(v_k) + s (v_{k+1} - v_k))`,
//! `e = exp(-a(v_k) h / T1)`: the damping `(1 - e) s` is never negative and the steep slope at
//! rest (`d + fc/vt + e^{1/2} F^_Δ/vsp`, 2.7e4 N s/m for the defaults) is implicit; only the
//! falling Stribeck branch stays explicit. `a(v_k)` is frozen at `v_k`. Tested stable and
//! bounded at 0.1, 1 and 10 ms with both parameter sets.
//!
//! S0's stick-slip benchmark (docs/src/reproduction.md#check-9) through [`crate::scenario::simulate`]: at
//! 0.1 ms the first slip is at 1.4222 s, the period 1.104 s and the peak 1.4075 N, as with S0's
//! coupled RK4 (1.4222 s, 1.105 s, 1.4075 N). At 10 ms the implicit plant step damps more than
//! RK4: with `vt = 0.005`, 1.52 s and 1.13 s (RK4 at 10 ms: 1.52 s, 1.18 s; converged ODE:
//! 1.509 s, 1.196 s); with the printed `vt = 0.05` one slip at 1.51 s, then steady sliding,
//! which is also what the converged ODE does (RK4's sustained 1.17 s cycle at 10 ms is a
//! step-size artefact).

use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};

/// Real-axis stability limit of classical RK4, `h lambda <= 2.785` (docs/src/models/numerics.md#stability-limits).
const RK4_LIMIT: f64 = 2.785;

/// How the filter ODE (S0 eq. 17) is integrated over one step with `v` frozen at `v_k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrator {
    /// Exact exponential (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 1)); stable and monotone at every step.
    #[default]
    Exact,
    /// Classical RK4 (S0 §3 integrates with fixed-step RK4); exact update where `a h/T1 > 2.785`.
    Rk4,
}

/// Specker parameters. Defaults: S0 Tables 1–2, `T_s = 0.1 ms` column (docs/src/models/specker.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Viscous coefficient `d` \[N s/m\]; default 0.1 (S0 eq. 1, Table 1).
    pub d: f64,
    /// Coulomb peak `F^_c` \[N\]; default 1 (S0 eq. 4, Table 1).
    pub fc: f64,
    /// Stribeck peak `F^_s` \[N\], the value of `F~Σ(vsp)` (convention A); default 1.4 (S0 eq. 9).
    pub fs: f64,
    /// Tanh transition velocity `v_t` \[m/s\]; default 5e-5 (S0 eq. 4, Table 2).
    pub vt: f64,
    /// Stribeck peak velocity `v_sp` \[m/s\]; default 1e-4 (S0 eq. 8, Table 2).
    pub vsp: f64,
    /// Filter edge velocity `v_0` \[m/s\]; default 1e-4 (S0 eq. 16, Table 2).
    pub v0: f64,
    /// Minimal filter time constant `T_1` \[s\]; default 3e-4 (S0 eq. 17, Table 2).
    pub t1: f64,
    /// Filter integration: `exact` (default) or `rk4` (paper reproduction).
    #[serde(default)]
    pub integrator: Integrator,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            d: 0.1,
            fc: 1.0,
            fs: 1.4,
            vt: 5e-5,
            vsp: 1e-4,
            v0: 1e-4,
            t1: 3e-4,
            integrator: Integrator::Exact,
        }
    }
}

impl Params {
    /// Additional Stribeck amplitude `F^_Δ = F^_s - F^_c tanh(v_sp/v_t) - d v_sp` \[N\] (S0 eq. 9).
    #[inline]
    pub fn f_delta(&self) -> f64 {
        self.fs - self.fc * (self.vsp / self.vt).tanh() - self.d * self.vsp
    }

    /// Static map `F~Σ(v) = d v + F^_c tanh(v/v_t) + F^_Δ g~(v)` \[N\] (S0 eq. 11).
    #[inline]
    pub fn f_sigma(&self, v: f64) -> f64 {
        let r = v / self.vsp;
        let g = r * (0.5 - 0.5 * r * r).exp(); // S0 eq. 8
        self.d * v + self.fc * (v / self.vt).tanh() + self.f_delta() * g
    }

    /// Slope `dF~Σ/dv` \[N s/m\]; at `v = 0` it is `d + fc/vt + e^{1/2} F^_Δ/vsp` (docs/src/models/specker.md).
    #[inline]
    pub fn f_sigma_slope(&self, v: f64) -> f64 {
        let th = (v / self.vt).tanh();
        let r = v / self.vsp;
        let dg = (0.5 - 0.5 * r * r).exp() * (1.0 - r * r) / self.vsp;
        self.d + self.fc * (1.0 - th * th) / self.vt + self.f_delta() * dg
    }

    /// Adaption factor `a(v) = 1 - exp(-(v/v_0)^2)` \[-\] (S0 eq. 16), exact for small `v`.
    #[inline]
    pub fn a(&self, v: f64) -> f64 {
        let r = v / self.v0;
        -(-r * r).exp_m1()
    }

    /// Weight `e` of the old force over one step at velocity `v`:
    /// `F_{k+1} = F~Σ(v) + (F_k - F~Σ(v)) e`.
    #[inline]
    pub fn retention(&self, v: f64, dt: f64) -> f64 {
        let z = self.a(v) * dt / self.t1;
        match self.integrator {
            Integrator::Rk4 if z <= RK4_LIMIT => {
                1.0 - z * (1.0 - z * (0.5 - z * (1.0 / 6.0 - z / 24.0)))
            }
            _ => (-z).exp(),
        }
    }

    /// `h / T_1`, the largest filter stiffness times the step (1/3 for both S0 Table 2 rows).
    pub fn step_ratio(&self, dt: f64) -> f64 {
        dt / self.t1
    }
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::non_negative("d", self.d)?;
        check::non_negative("fc", self.fc)?;
        check::finite("fs", self.fs)?;
        check::at_least("fs", self.fs, "fc", self.fc)?;
        check::positive("vt", self.vt)?;
        check::positive("vsp", self.vsp)?;
        check::positive("v0", self.v0)?;
        check::positive("t1", self.t1)?;
        let floor = self.fs - self.f_delta();
        if self.f_delta() < 0.0 {
            return Err(ParamError::new(
                "fs",
                self.fs,
                format!("must be >= fc tanh(vsp/vt) + d vsp ({floor}) (S0 eq. 9)"),
            ));
        }
        Ok(())
    }
}

/// Specker state: the filter output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Friction force `F_fr` \[N\]; 0 at start (S0 Fig. 7).
    pub f_fr: f64,
}

/// Marker type of the Specker model.
#[derive(Clone, Copy, Debug)]
pub struct Specker;

/// The velocity-driven step: returns `F_{k+1}` from `F_k` and `v_k` (see the module doc).
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    s.f_fr = p.f_sigma(v) + (s.f_fr - p.f_sigma(v)) * p.retention(v, dt);
    s.f_fr
}

impl Dynamics for Specker {
    type Params = Params;
    type State = State;

    fn initial_state(_: &Params) -> State {
        State::default()
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// `F_{k+1} = e F_k + (1 - e)(F~Σ(v_k) + max(F~Σ'(v_k), 0)(v_{k+1} - v_k))`.
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let v = input.v;
        let e = p.retention(v, dt);
        let slope = p.f_sigma_slope(v).max(0.0);
        StepLaw::Smooth {
            offset: e * s.f_fr + (1.0 - e) * (p.f_sigma(v) - slope * v),
            damping: (1.0 - e) * slope,
        }
    }

    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        // Recomputed from the law rather than trusting `force`, so the state follows the
        // equations even if the plant contained a corrupt step.
        s.f_fr = Self::law(p, s, input, dt).force_at(v_next, input.u);
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.f_sigma(v))
    }

    fn state_names(_: &Params) -> Vec<String> {
        vec!["f_fr".into()]
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.push(s.f_fr);
    }
}

impl ModelDef for Specker {
    const ID: &'static str = "specker";
    const DESCRIPTION: &'static str = "Specker et al.: smooth Stribeck map with a velocity-dependent first-order lag (memory at rest)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("d", "N s/m", "viscous coefficient"),
        ParamDoc::new("fc", "N", "Coulomb peak F^_c (tanh-regularised)"),
        ParamDoc::new("fs", "N", "Stribeck peak F^_s = F~Σ(vsp) (fs >= fc)"),
        ParamDoc::new("vt", "m/s", "tanh transition velocity of the Coulomb term"),
        ParamDoc::new("vsp", "m/s", "Stribeck peak velocity"),
        ParamDoc::new(
            "v0",
            "m/s",
            "filter edge velocity, a(v) = 1 - exp(-(v/v0)^2)",
        ),
        ParamDoc::new("t1", "s", "minimal filter time constant T1"),
        ParamDoc::new(
            "integrator",
            "-",
            "filter update: exact (default) or rk4 (paper reproduction)",
        ),
    ];
}

#[cfg(test)]
mod tests;
