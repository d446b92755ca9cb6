//! Nnaji, Holderbaum & Becerra (2022) "novel" friction model: S3 §2.3, eqs. 3, 7 (reconstructed),
//! 8, 9, 10 (reconstructed), 11; docs/src/models/nnaji.md (identification docs/src/identification.md#nnaji, checks docs/src/reproduction.md (checks #5–#7)).
//!
//! A sine-shaped presliding hysteresis with branch memory, a LuGre-like micro-damping and a
//! lagged Stribeck level:
//!
//! $$F_f = F_{hyst}(z) + \sigma \dot z + f_v v \quad (9),\qquad
//!   F_{hyst}(z) = f_r + |f_t - f_r| \sin\!\Big(\operatorname{clamp}\Big(\frac{\pi}{2}
//!   \frac{z - z_r}{|z_t - z_r|}, \frac{\pi}{2}\Big)\Big) \quad (7, 8)$$
//!
//! $$\dot z = \frac{1}{\sigma}\Big(\operatorname{clamp}\big(F_{hyst}(z) + \sigma v, \gamma\big) -
//!   F_{hyst}(z)\Big) \quad (11),\qquad
//!   \dot\gamma = \frac{g(v) - \gamma}{\tau} \quad (10),\qquad
//!   g(v) = f_c + (f_s - f_c)\,e^{-(v/v_s)^2} \quad (3)$$
//!
//! so that `F_f = clamp(F_hyst(z) + sigma v, gamma) + fv v` \[D\]. Pre-slide (`|F_hyst + sigma v|
//! < gamma`): `zdot = v`, `F_f = F_hyst + (sigma + fv) v`; gross slide: `sigma zdot = ±gamma -
//! F_hyst` (eq. 34), `F_f = ±gamma + fv v`. The steady state is the Stribeck curve
//! `g(v) sgn v + fv v` (eqs. 14/15); the presliding stiffness from rest is `pi fs / (2 zb)`
//! (eq. 29), 2356 N/m for Table 2.
//!
//! Symbols: `z` \[m\] bristle (presliding) displacement, `gamma` \[N\] lagged Stribeck level, `fs`,
//! `fc` \[N\] breakaway and Coulomb levels (convention A: S3 calls `fs` the stiction force),
//! `vs` \[m/s\] Stribeck velocity, `zb` \[m\] breakaway displacement, `sigma` \[N s/m\]
//! micro-damping, `tau` \[s\] frictional-lag time constant, `fv` \[N s/m\] viscous coefficient. `F_f`
//! resists the motion (sign of `v` in sliding).
//!
//! Branch memory [R, docs/src/models/nnaji.md]: `(z_r, f_r)` is the point where the current branch began and
//! `d = ±1` its direction. When `sgn v` reverses, a new branch starts at `z_r ← z`,
//! `f_r ← F_hyst(z)`. The first branch from the unstressed state (`z_r = f_r = 0`) has
//! `|z_t - z_r| = zb`, `|f_t - f_r| = fs` (either direction). Later branches follow
//! [`BranchRule`]: `symmetric` (default, the printed rule `z_t = 2 Z_b - z_r`, `f_t = 2 F_s - f_r`
//! written for direction `d`: `z_t = 2 d zb - z_r`, `f_t = 2 d fs - f_r`) or `masing`
//! (`|z_t - z_r| = 2 zb`, `|f_t - f_r| = 2 fs`). The sine argument is `z - z_r` (eqs. 26, 28 and
//! the thesis wording), and it is clamped to `[-pi/2, pi/2]` (required guard \[D\]: beyond the
//! target `F_hyst` holds at the crest instead of falling, which would let `z` run away).
//!
//! Numerics (docs/src/models/nnaji.md, docs/src/models/numerics.md#exact-and-implicit-state-updates): `gamma` by the frozen-v exact exponential; `z` in pre-slide by
//! `z += Δx` (exact, drift-free); in gross slide by the linearly implicit update
//! `z += h (±gamma - F_hyst)/(sigma + h k_h)` with `k_h = dF_hyst/dz >= 0`, which never
//! overshoots the fixed point on the rising (concave) part of a branch. The regime is decided
//! once per step from `(z_k, v_k, gamma_k)`. The velocity-driven step returns
//! `clamp(F_hyst(z_{k+1}) + sigma v_k, gamma_k) + fv v_k` in pre-slide and `±gamma_k + fv v_k` in
//! gross slide. Plant coupling: pre-slide `F = F_hyst(z_k) + (sigma + fv + k_h h) v_{k+1}` (with
//! `k_h` on the branch the motion will follow: `sgn v_k`, or `sgn(u_k - F_hyst)` from rest),
//! gross slide `F = ±gamma_k + fv v_{k+1}`; `advance` starts a new branch when
//! `sgn v_{k+1}` reverses the current one and moves `z` by `h v_{k+1}` in pre-slide.
//! Every update is stable at any step; the stiffness is `1/tau` (gamma) and `k_h/sigma` (z),
//! 7.5 1/s for Table 2. With `sigma` as large as Table 2's, a 1 kg body needs no set-valued
//! stick law: stick-slip at 10 ms shows no chatter and no drift after the pull stops.
//!
//! Memory: only the current branch start is stored (one level, not a stack of reversal points).
//! Under a periodic sub-breakaway force the `masing` loops close after the first cycle; the
//! `symmetric` rule's up and down branches have different scales, so the loop shakes down to a
//! closed one (the per-cycle shift roughly halves each cycle for the defaults) rather than
//! closing at once.
//!
//! Defaults: S3 Table 2 (`fs = 1.5`, `fc = 1.0`, `vs = 0.001`, `zb = 0.001`,
//! `sigma = sqrt(1e5)`, `tau = 0.002`); `fv` is not in Table 2 and defaults to 0.4, the Canudas
//! 1995 `sigma2` that Table 2 otherwise follows.

use crate::curve::{relax, sat, sgn, stribeck_level};
use crate::error::check;
use crate::model::{Dynamics, ModelDef, ParamDoc, Validate};
use crate::{Input, ParamError, StepLaw};
use serde::{Deserialize, Serialize};
use std::f64::consts::FRAC_PI_2;

/// Targets of a non-virgin hysteresis branch (docs/src/models/nnaji.md, reconstruction \[R\]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchRule {
    /// `z_t = 2 d zb - z_r`, `f_t = 2 d fs - f_r` (S3's printed rule for direction `d`).
    #[default]
    Symmetric,
    /// `|z_t - z_r| = 2 zb`, `|f_t - f_r| = 2 fs`: classical Masing hysteresis.
    Masing,
}

/// Nnaji model parameters. Defaults: S3 Table 2, with `fv = 0.4` (not in Table 2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Breakaway (stiction) level \[N\] (convention A); default 1.5 (Table 2).
    pub fs: f64,
    /// Coulomb level \[N\]; default 1.0 (Table 2).
    pub fc: f64,
    /// Stribeck velocity \[m/s\]; default 0.001 (Table 2).
    pub vs: f64,
    /// Breakaway displacement `Z_b` \[m\]; default 0.001 (Table 2).
    pub zb: f64,
    /// Micro-damping \[N s/m\]; default sqrt(1e5) ≈ 316.23 (Table 2).
    pub sigma: f64,
    /// Frictional-lag time constant \[s\]; default 0.002 (Table 2); 0 = no lag.
    pub tau: f64,
    /// Viscous coefficient \[N s/m\]; default 0.4 (not in Table 2; Canudas 1995 `sigma2`).
    pub fv: f64,
    /// Targets of non-virgin branches; default `symmetric`.
    #[serde(default)]
    pub branch_rule: BranchRule,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            fs: 1.5,
            fc: 1.0,
            vs: 0.001,
            zb: 0.001,
            sigma: 1e5f64.sqrt(),
            tau: 0.002,
            fv: 0.4,
            branch_rule: BranchRule::Symmetric,
        }
    }
}

impl Params {
    /// Stribeck level `g(v) = fc + (fs - fc) exp(-(v/vs)^2)` (S3 eq. 3).
    #[inline]
    pub fn g(&self, v: f64) -> f64 {
        stribeck_level(v, self.fc, self.fs, self.vs, 2.0)
    }

    /// Presliding stiffness from rest, `pi fs / (2 zb)` (S3 eq. 29).
    pub fn presliding_stiffness(&self) -> f64 {
        std::f64::consts::PI * self.fs / (2.0 * self.zb)
    }

    /// Branch scales `(|z_t - z_r|, |f_t - f_r|)` for a branch starting at `(z_r, f_r)` in
    /// direction `d` (docs/src/models/nnaji.md branch targets).
    pub fn branch_scales(&self, z_r: f64, f_r: f64, d: f64) -> (f64, f64) {
        let (dz, df) = if z_r == 0.0 && f_r == 0.0 {
            (self.zb, self.fs)
        } else {
            match self.branch_rule {
                BranchRule::Symmetric => (
                    2.0 * (d * self.zb - z_r).abs(),
                    2.0 * (d * self.fs - f_r).abs(),
                ),
                BranchRule::Masing => (2.0 * self.zb, 2.0 * self.fs),
            }
        };
        // A branch starting exactly at its own target would be infinitely stiff.
        (dz.max(1e-9 * self.zb), df)
    }
}

/// `sigma` from an assumed damping ratio of the linearised presliding plant (S3 eqs. 29–33,
/// docs/src/identification.md#nnaji): `G(s) = 1/(J s^2 + (sigma + fv) s + pi fs/(2 zb))`, so
/// `sigma = 2 zeta sqrt(J pi fs / (2 zb)) - fv`.
///
/// S3 uses `zeta = 0.7` (a design choice) and, with `fs = 0.0994`, `zb = 0.0060`,
/// `fv = 0.0403` (text value), `J = 6.528e-5`, gets 0.0174 (we get 0.017403). With Table 3's
/// `fv = 0.0603` the formula gives a negative value (-0.0026): S3 is inconsistent there
/// (docs/src/reproduction.md#check-5, docs/src/sources.md#errata). The result is not clamped; check its sign.
pub fn sigma_from_damping(j: f64, fs: f64, zb: f64, fv: f64, zeta: f64) -> f64 {
    2.0 * zeta * (j * std::f64::consts::PI * fs / (2.0 * zb)).sqrt() - fv
}

impl Validate for Params {
    fn validate(&self) -> Result<(), ParamError> {
        check::positive("fc", self.fc)?;
        check::finite("fs", self.fs)?;
        check::at_least("fs", self.fs, "fc", self.fc)?;
        check::positive("vs", self.vs)?;
        check::positive("zb", self.zb)?;
        check::positive("sigma", self.sigma)?;
        check::non_negative("tau", self.tau)?;
        check::non_negative("fv", self.fv)
    }
}

/// Nnaji model state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Bristle displacement `z` \[m\].
    pub z: f64,
    /// Lagged Stribeck level `gamma` \[N\].
    pub gamma: f64,
    /// Displacement where the current branch began, `z_r` \[m\].
    pub z_r: f64,
    /// `F_hyst` where the current branch began, `f_r` \[N\].
    pub f_r: f64,
    /// Direction of the current branch (±1; 0 before the first motion).
    pub dir: f64,
}

/// Marker type of the Nnaji model.
#[derive(Clone, Copy, Debug)]
pub struct Nnaji;

/// One hysteresis branch: start point and scales.
#[derive(Clone, Copy, Debug)]
struct Branch {
    z_r: f64,
    f_r: f64,
    dz: f64,
    df: f64,
}

impl Branch {
    fn new(p: &Params, z_r: f64, f_r: f64, d: f64) -> Branch {
        let (dz, df) = p.branch_scales(z_r, f_r, d);
        Branch { z_r, f_r, dz, df }
    }

    fn current(p: &Params, s: &State) -> Branch {
        Branch::new(p, s.z_r, s.f_r, s.dir)
    }

    /// The branch after motion in direction `d` (a new one on reversal).
    fn after(p: &Params, s: &State, d: f64) -> (Branch, bool) {
        let b = Branch::current(p, s);
        if d == 0.0 || d == s.dir || s.dir == 0.0 {
            (b, false)
        } else {
            (Branch::new(p, s.z, b.force(s.z), d), true)
        }
    }

    /// Sine argument, clamped (required guard).
    #[inline]
    fn arg(&self, z: f64) -> f64 {
        (FRAC_PI_2 * (z - self.z_r) / self.dz).clamp(-FRAC_PI_2, FRAC_PI_2)
    }

    /// `F_hyst(z)` (eqs. 7, 8).
    #[inline]
    fn force(&self, z: f64) -> f64 {
        self.f_r + self.df * self.arg(z).sin()
    }

    /// `k_h = dF_hyst/dz >= 0` (0 beyond the crest).
    #[inline]
    fn stiffness(&self, z: f64) -> f64 {
        let a = self.arg(z);
        if a.abs() < FRAC_PI_2 {
            FRAC_PI_2 * self.df / self.dz * a.cos()
        } else {
            0.0
        }
    }
}

/// Brings a corrupt state back into range (NaN → rest values; `gamma` into `[fc, fs]`).
fn sanitize(p: &Params, s: &mut State) {
    if !(s.z.is_finite() && s.z_r.is_finite() && s.f_r.is_finite()) {
        *s = Nnaji::initial_state(p);
    }
    s.gamma = if s.gamma.is_nan() {
        p.fs
    } else {
        s.gamma.clamp(p.fc, p.fs)
    };
}

/// Starts a new branch if the motion `d` reverses the current one (or sets the direction of the
/// first, virgin, branch). Returns the branch to use.
fn start_branch(p: &Params, s: &mut State, d: f64) -> Branch {
    let (b, new) = Branch::after(p, s, d);
    if new {
        s.z_r = b.z_r;
        s.f_r = b.f_r;
    }
    if d != 0.0 {
        s.dir = d;
    }
    b
}

/// The velocity-driven step: regime from `(z_k, v_k, gamma_k)`, `Δx = v h`.
pub fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
    let v = input.v;
    sanitize(p, s);
    let b = start_branch(p, s, sgn(v));
    let fh = b.force(s.z);
    let w = fh + p.sigma * v;
    let gamma = s.gamma;
    let f = if w.abs() < gamma {
        s.z += v * dt;
        sat(b.force(s.z) + p.sigma * v, gamma) + p.fv * v
    } else {
        let d = sgn(w);
        s.z += dt * (d * gamma - fh) / (p.sigma + dt * b.stiffness(s.z));
        d * gamma + p.fv * v
    };
    s.gamma = relax(gamma, p.g(v), dt / p.tau);
    f
}

impl Dynamics for Nnaji {
    type Params = Params;
    type State = State;

    fn initial_state(p: &Params) -> State {
        State {
            gamma: p.fs,
            ..State::default()
        }
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Pre-slide: `F_hyst(z_k) + (sigma + fv + k_h h) v_{k+1}`, with `k_h` on the branch the
    /// motion will follow (direction `sgn v_k`, or `sgn(u_k - F_hyst)` from rest); gross slide:
    /// `±gamma_k + fv v_{k+1}`.
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let mut s = *s;
        sanitize(p, &mut s);
        let v = input.v;
        let fh = Branch::current(p, &s).force(s.z);
        let w = fh + p.sigma * v;
        if w.abs() < s.gamma {
            let d = if v != 0.0 { sgn(v) } else { sgn(input.u - fh) };
            let (b, _) = Branch::after(p, &s, d);
            StepLaw::Smooth {
                offset: fh,
                damping: p.sigma + p.fv + b.stiffness(s.z) * dt,
            }
        } else {
            StepLaw::Smooth {
                offset: sgn(w) * s.gamma,
                damping: p.fv,
            }
        }
    }

    /// Commits the step: the regime as in the law, the branch from the direction of the motion
    /// over the step (`sgn v_{k+1}`), `Δx = h v_{k+1}` in pre-slide.
    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        sanitize(p, s);
        let v = input.v;
        let fh = Branch::current(p, s).force(s.z);
        let w = fh + p.sigma * v;
        let gamma = s.gamma;
        let b = start_branch(p, s, sgn(v_next));
        if w.abs() < gamma {
            s.z += v_next * dt;
        } else {
            s.z += dt * (sgn(w) * gamma - fh) / (p.sigma + dt * b.stiffness(s.z));
        }
        s.gamma = relax(gamma, p.g(v), dt / p.tau);
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.g(v) * sgn(v) + p.fv * v)
    }

    fn state_names(_: &Params) -> Vec<String> {
        ["z", "gamma", "z_r", "f_r", "dir"]
            .map(String::from)
            .to_vec()
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.extend_from_slice(&[s.z, s.gamma, s.z_r, s.f_r, s.dir]);
    }
}

impl ModelDef for Nnaji {
    const ID: &'static str = "nnaji";
    const DESCRIPTION: &'static str = "Nnaji et al. 2022: sine presliding hysteresis with branch \
         memory, micro-damping, lagged Stribeck level";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new("fs", "N", "breakaway (stiction) level (fs >= fc)"),
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new("vs", "m/s", "Stribeck velocity (Gaussian shape)"),
        ParamDoc::new("zb", "m", "breakaway displacement Z_b"),
        ParamDoc::new("sigma", "N s/m", "micro-damping"),
        ParamDoc::new(
            "tau",
            "s",
            "frictional-lag time constant of gamma (0 = none)",
        ),
        ParamDoc::new("fv", "N s/m", "viscous coefficient (not in S3 Table 2)"),
        ParamDoc::new(
            "branch_rule",
            "-",
            "non-virgin branch targets: \"symmetric\" (default) or \"masing\"",
        ),
    ];
}

#[cfg(test)]
mod tests;
