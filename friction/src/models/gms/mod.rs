//! Generalized Maxwell-Slip (GMS) model (Lampaert, Al-Bender & Swevers 2003; Al-Bender,
//! Lampaert & Swevers 2005, IEEE TAC 50(11)); S3 §2.2 (text only), docs/src/models/gms.md.
//!
//! `N` massless elastoplastic (Maxwell-slip) elements are driven by the same displacement `x`.
//! Element `i` has stiffness `k_i` and force `F_i`; it is either stuck or slipping:
//!
//! $$\text{stick:}\ \dot F_i = k_i v,\qquad
//!   \text{slip:}\ \dot F_i = C\Big(\alpha_i \operatorname{sgn}(v) - \frac{F_i}{s(v)}\Big),\qquad
//!   s(v) = f_c + (f_s - f_c)\,e^{-|v/v_s|^\delta}$$
//!
//! $$F = \sum_{i=1}^N F_i + \sigma_1 \sum_{i\ \text{stuck}} \alpha_i \dot z_i + \sigma_2 v,
//!   \qquad \dot z_i = \dot F_i / k_i = v \ \text{while stuck}$$
//!
//! An element switches stick → slip when `|F_i|` reaches `alpha_i s(v)`, and slip → stick when the
//! motion reverses (`sgn v` changes or `v = 0`): "the element continues to move until v goes
//! through zero" (S3 §2.2). `k_i` \[N/m\] element stiffness, `alpha_i` \[-\] weights (`Σ alpha_i = 1`),
//! `fc`, `fs` \[N\] Coulomb and breakaway levels (convention A: `fs` is the breakaway force, as in
//! Al-Bender 2005), `vs` \[m/s\] Stribeck velocity, `delta` \[-\] Stribeck exponent, `c` \[N/s\]
//! attraction (shared by all elements, Al-Bender 2005 F-form), `sigma2` \[N s/m\] viscous,
//! `sigma1` \[N s/m\] micro-damping, distributed as `alpha_i sigma1` on element `i` (so that it is
//! `sigma1 v` when every element sticks, like LuGre's `sigma1` in presliding). It acts on stuck
//! elements only: in slip `zdot_i = alpha_i (ds/dt)/k_i` would feed the Stribeck slope back as
//! a negative mass `sigma1 Σ(alpha_i^2/k_i) s'(v)` (3.2 kg for the defaults near `v = vs`), which
//! made a 1 kg stick-slip benchmark spike to 11 N. `F` resists the motion (sign of `v` in
//! sliding). The steady state is the Stribeck curve `s(v) sgn v + sigma2 v`.
//!
//! Properties: a piecewise-linear (Iwan/Prandtl) virgin curve `Σ min(k_i |x|, alpha_i s) sgn x`,
//! Masing's rules (a reversal branch is the virgin curve scaled by 2), non-local memory
//! (minor loops close at their start point) and no drift under sub-breakaway oscillating
//! forces. The memoryless `|z_i| <= s_i(v)` test of some public code loses the "slip until
//! reversal" rule and is not used.
//!
//! Asymmetric friction: an optional `negative` set (as in LuGre) holds the parameters for
//! negative motion. A slipping element and the viscous term use the side of `sgn v`; a stuck
//! element breaks away at the level of the side it is loaded in (`sgn F_i`), so breakaway from
//! rest uses the level of the direction being pushed, and an element that unloads while the
//! body creeps back keeps its force (no jump to the other side's level). What is
//! per side and what is shared follows the model's structure: in GMS the velocity dependence
//! of friction lives in the sliding characteristic `s(v)` (the steady-state Stribeck curve,
//! which is identified per direction of motion like the static curves of S4), while the
//! elements describe the asperity contacts' presliding (rate-independent hysteresis), which
//! has no direction of motion of its own:
//!
//! - per side: the Stribeck curve `s(v)` (`fc`, `fs`, `vs`, `delta`), the attraction `c` of the
//!   slip phase and the viscous `sigma2` (all of them act only while sliding one way);
//! - shared: the elements' `k_i`, `alpha_i` and the micro-damping `sigma1` of stuck elements.
//!   A stuck element is an elastic spring with memory, and presliding motion reverses within
//!   it: a direction-dependent `k_i` would make a closed displacement cycle leave a residual
//!   force (no return-point memory, drift under oscillating loads), and `sigma1` damps that
//!   same presliding motion. The negative set must therefore repeat `k`, `alpha` and `sigma1`
//!   (the registry's overlay copies them from the positive set); validation rejects a
//!   differing value with the reason.
//!
//! Element `i` breaks away at `alpha_i s(v)` of the current side, so after a reversal it
//! carries its old force into the other side's limit (the projection brings it inside).
//! With a negative set equal to the positive one the model is bit-identical to the symmetric
//! one; the steady state for `v < 0` is the negative set's Stribeck curve.
//!
//! Numerics (docs/src/models/gms.md, docs/src/models/numerics.md#exact-and-implicit-state-updates): a stuck element takes the exact increment `k_i Δx` and is
//! projected onto `|F_i| <= alpha_i s(v_k)` (the C → ∞ Maxwell-slip operator, switching it to
//! slip); a slipping element relaxes by the frozen-v exact exponential with rate `C/s(v_k)`
//! towards `alpha_i s(v_k) sgn(v_k)`. Both are convex/projection updates, so
//! `|F_i| <= alpha_i fs` holds for every step size. `zdot_i = (F_{i,k+1} - F_{i,k})/(k_i h)`
//! (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 4)) for the elements stuck at the start of the step. The velocity-driven step uses
//! `Δx = v h` and the reversal test `sgn v_k != sgn v_{k-1}` or `v_k = 0`. Plant coupling
//! (`law`): stuck elements are implicit springs, `F_i + (k_i h + alpha_i sigma1) v_{k+1}`;
//! slipping elements contribute their frozen-`v_k` relaxed force; the plant solves the momentum
//! balance implicitly, so the stiff presliding mode (`sqrt(Σk/m)` = 316 rad/s on 1 kg) is stable
//! at 10 ms. `advance` commits `Δx = h v_{k+1}` and also counts a reversal the plant made within
//! the step (`sgn v_{k+1} != sgn v_k`). Stable and bounded at any step size.
//!
//! Defaults: no paper gives GMS values (S3 identified GMS but printed none), so the defaults are
//! a documented 4-element set on the Canudas 1995 scale (docs/src/models/lugre.md): `fc = 1`, `fs = 1.5`,
//! `vs = 1e-3`, `delta = 2`, `sigma2 = 0.4`, `k = [5e4, 2.5e4, 1.5e4, 1e4]` (Σ = 1e5 N/m, the
//! LuGre `sigma0`), `alpha = [0.1, 0.2, 0.3, 0.4]`, hence element break displacements
//! `alpha_i fs / k_i` = 3, 12, 30 and 60 µm (a visibly curved virgin curve, breakaway at 60 µm),
//! `c = 1e4` N/s (slip time constant `s/C` ≈ 0.1 ms), `sigma1 = sqrt(1e5)` ≈ 316.23 N s/m (the
//! Canudas `sigma1`: presliding damping ratio 0.5 on 1 kg; with `sigma1 = 0` the presliding mode
//! has `zeta = sigma2 / (2 sqrt(m Σk)) = 6e-4`, and a 1 kg stick-slip run at 0.1 ms keeps
//! vibrating after the pull stops).

mod params;
mod state;
mod step;
#[cfg(test)]
mod tests;

pub use params::{ALPHA_SUM_TOL, Params};
pub use state::State;
pub use step::step;
use step::{advance_elements, plant_side};

use crate::curve::{relax, sgn};
use crate::model::{Dynamics, ModelDef, ParamDoc};
use crate::{Input, StepLaw};

/// Marker type of the GMS model.
#[derive(Clone, Copy, Debug)]
pub struct Gms;

impl Dynamics for Gms {
    type Params = Params;
    type State = State;

    fn initial_state(p: &Params) -> State {
        State {
            f: vec![0.0; p.n()],
            slipping: vec![false; p.n()],
            dir: 0.0,
        }
    }

    fn step(p: &Params, s: &mut State, input: &Input, dt: f64) -> f64 {
        step(p, s, input, dt)
    }

    /// Stuck elements are implicit springs `F_i + k_i h v_{k+1}`; slipping ones contribute their
    /// frozen-`v_k` relaxed force. Elements stick when `v_k = 0` or `sgn v_k` changed.
    fn law(p: &Params, s: &State, input: &Input, dt: f64) -> StepLaw {
        let v = input.v;
        let d = sgn(v);
        let reversal = d != s.dir || d == 0.0;
        let q = plant_side(p, input);
        let lvl = q.level(v);
        let lambda_h = q.c * dt / lvl;
        let mut offset = 0.0;
        let mut damping = q.sigma2;
        for (((&f, &slip), &k), &a) in s.f.iter().zip(&s.slipping).zip(&p.k).zip(&p.alpha) {
            if slip && !reversal {
                offset += relax(f, a * lvl * d, lambda_h);
            } else {
                offset += f;
                damping += k * dt + a * p.sigma1;
            }
        }
        StepLaw::Smooth { offset, damping }
    }

    /// Commits the step over `Δx = h v_{k+1}`. A reversal is a change of `sgn` between the last
    /// step's motion and this one's (or this one at rest), as the law assumed for `v_k`, plus a
    /// reversal the plant made within the step (`sgn v_{k+1} != sgn v_k`).
    fn advance(p: &Params, s: &mut State, input: &Input, v_next: f64, _force: f64, dt: f64) {
        let v = input.v;
        let d = sgn(v);
        let d_next = sgn(v_next);
        let reversal = d != s.dir || d == 0.0 || d_next != d;
        s.dir = d_next;
        advance_elements(p, plant_side(p, input), s, v, v_next * dt, reversal, dt);
    }

    fn steady_state(p: &Params, v: f64) -> Option<f64> {
        Some(p.s(v) * sgn(v) + p.side(v).sigma2 * v)
    }

    fn state_names(p: &Params) -> Vec<String> {
        (1..=p.n()).map(|i| format!("F_{i}")).collect()
    }

    fn state_values(s: &State, out: &mut Vec<f64>) {
        out.extend_from_slice(&s.f);
    }
}

impl ModelDef for Gms {
    const ID: &'static str = "gms";
    const DESCRIPTION: &'static str = "Generalized Maxwell-Slip (Al-Bender et al. 2005): N elastoplastic \
         elements, hysteresis with non-local memory, no drift, Stribeck, frictional lag";
    const ASYMMETRIC: bool = true;
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc::new(
            "k",
            "N/m",
            "element stiffnesses k_i (one entry per element)",
        ),
        ParamDoc::new("alpha", "-", "element weights alpha_i >= 0, summing to 1"),
        ParamDoc::new("fc", "N", "Coulomb level"),
        ParamDoc::new("fs", "N", "breakaway level (fs >= fc)"),
        ParamDoc::new("vs", "m/s", "Stribeck velocity"),
        ParamDoc::new("delta", "-", "Stribeck exponent (2 = Gaussian)"),
        ParamDoc::new("c", "N/s", "attraction parameter C of the slip phase"),
        ParamDoc::new("sigma2", "N s/m", "viscous coefficient"),
        ParamDoc::new(
            "sigma1",
            "N s/m",
            "micro-damping, alpha_i*sigma1 on each stuck element (0 = none)",
        ),
    ];
}
