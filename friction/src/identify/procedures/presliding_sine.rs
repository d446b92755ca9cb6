//! Bristle stiffness `sigma0` from a sinusoidal sub-Coulomb torque: S4 §4.5 eqs. 23–25;
//! docs/src/identification.md#presliding_sine.
//!
//! Under `tau = A sin(omega t)` with `A < f_c` (S4 recommends `A < f_c/2`) the body stays in
//! presliding, where the linearised LuGre model is `q(s)/tau(s) = 1/(J s^2 + (sigma1 + f_v) s +
//! sigma0)` (S4 eq. 23). Well below `omega_n = sqrt(sigma0/J)` the response is static, so the
//! steady-state microdisplacement amplitude is `theta0 = A/sigma0` and
//!
//! $$\sigma_0 = A/\theta_0 \qquad\text{(S4 eq. 25)}$$
//!
//! The amplitudes are the fundamental components at `omega` by linear least squares
//! ([`lsq::solve`]): `u ≈ a sin + b cos + c` and `x ≈ a' sin + b' cos + c' + d t` (the `d t` term
//! absorbs a slow drift, which LuGre shows under an oscillating force). Their ratio is the
//! complex stiffness `K = U/X = sigma0 - J omega^2 + i omega (sigma1 + f_v)` of eq. 23. Eq. 25
//! reads its magnitude, which the damping raises (by 7 % when `sigma1 omega` is 0.38 `sigma0`,
//! as on a flywheel bench at 2 Hz), so `sigma0` is taken from the in-phase part instead:
//! `Re K + J omega^2` (`J` from `given.j`, else 0).
//!
//! **The bristle loop.** Eq. 23 linearises LuGre's bristle law
//! `dz/dt = v - sigma0 |v| z / g(v)`. Quasi-statically (no inertia within the loop, `g ≈ f_s`
//! at presliding speeds) the force is `F = F_z + tau dF_z/dt` with `F_z = sigma0 z` and
//! `tau = sigma1/sigma0`: the bristles see `F` through a first-order lag, and their loop under
//! a force of amplitude `a g` is softer than `sigma0` by a complex factor `kappa(a)` that
//! depends on `a` alone ([`bristle_loop`]: in-phase 0.996 at `a` = 0.1, 0.928 at 0.4). So
//! `K + J omega^2 = sigma0 (1 + i omega tau) kappa(a_z)`, `a_z` the amplitude behind the lag,
//! which `bristle_fit` solves for `sigma0` and `tau` given the level `given.fs` (`f_s` for
//! LuGre; `bench fit` and the campaign take it from the model's newest static fit). Without
//! it, `sigma0 = Re K + J omega^2` and the note says the loop is not corrected.
//!
//! **Standard error.** The amplitudes' statistical errors, a tenth of the loop's correction
//! (what the quasi-static loop leaves out), and the encoder's count: the fitted sine quantised
//! at 16 sub-count offsets, the RMS change of its amplitude (a sine of a few counts has a
//! biased fundamental). Over 100 simulated LuGre data sets (`friction/tests/coverage.rs`) the
//! 95 % interval holds the truth in 88–99 % of them.
//!
//! `omega` is given or taken from the mean period of the upward zero crossings of `u`.
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[rad or m\], `u` \[N m or N\]: a sinusoidal
//! torque of constant amplitude below `f_c`, at `omega` well below `sqrt(sigma0/J)` (the static
//! assumption; S4's bench: `omega_n` = 321 rad/s), several periods long; the first period (or up
//! to `given.t_from`) is skipped as transient. The encoder must resolve `theta0` (S4: a
//! 1,024,000 count/rev encoder).

use super::typed::{Positive, typed};
use super::{FitReport, Given, Offset, Part, Procedure, Reads, Table, need_rows};
use schemars::JsonSchema;
use serde::Deserialize;

/// What `presliding_sine` takes in `given`.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreslidingSineOptions {
    /// Excitation frequency (absent: from the torque's zero crossings)
    #[schemars(extend("x-unit" = "rad/s"))]
    pub omega: Option<Positive>,
    /// Start of the analysed part (absent: one period after the start)
    #[schemars(extend("x-unit" = "s"))]
    pub t_from: Option<f64>,
    /// A constant in the measured force: true fits it (params.offset, the constant term of the torque's fit), a number is a known offset
    #[serde(default)]
    pub offset: Offset,
    /// Breakaway level: amplitudes below it fit the bristle loop
    #[schemars(extend("x-unit" = "N or N m"))]
    pub fs: Option<Positive>,
    /// Known inertia (absent: the inertia term is left out of sigma0)
    #[schemars(extend("x-unit" = "kg m² or kg"))]
    pub j: Option<Positive>,
}
use crate::identify::FitError;
use crate::identify::lsq;
use serde_json::json;

/// `presliding_sine`: models with a bristle stiffness `sigma0`.
pub const PROCEDURE: Procedure = Procedure {
    name: "presliding_sine",
    models: &["lugre", "improved_lugre", "dahl", "elasto_plastic"],
    columns: &["t", "x", "u"],
    options: typed::<PreslidingSineOptions>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["presliding"])),
    part: Some(Part {
        name: "sine",
        roles: &["torque_sine"],
    }),
    iterates: false,
    offset_refused: None,
    fit,
};

/// Angular frequency [rad/s] of `u` from the mean period of its upward zero crossings.
pub fn frequency(t: &[f64], u: &[f64]) -> Option<f64> {
    let m = super::mean(u);
    let ups: Vec<f64> = (1..u.len())
        .filter(|&k| u[k - 1] - m < 0.0 && u[k] - m >= 0.0)
        .map(|k| {
            let (a, b) = (u[k - 1] - m, u[k] - m);
            t[k - 1] + (t[k] - t[k - 1]) * (-a / (b - a))
        })
        .collect();
    (ups.len() >= 2).then(|| {
        2.0 * std::f64::consts::PI * (ups.len() - 1) as f64 / (ups[ups.len() - 1] - ups[0])
    })
}

/// The fundamental at `omega` (with optional drift term): its phasor `a + i b` of
/// `a sin + b cos` and the standard error of its magnitude, the mean squared residual, and
/// the constant term with its standard error.
struct Fundamental {
    phasor: (f64, f64),
    se: f64,
    mse: f64,
    constant: (f64, Option<f64>),
}

impl Fundamental {
    fn amp(&self) -> f64 {
        self.phasor.0.hypot(self.phasor.1)
    }
}

fn fundamental(t: &[f64], y: &[f64], omega: f64, drift: bool) -> Result<Fundamental, FitError> {
    let rows: Vec<Vec<f64>> = t
        .iter()
        .map(|t| {
            let mut r = vec![(omega * t).sin(), (omega * t).cos(), 1.0];
            if drift {
                r.push(*t);
            }
            r
        })
        .collect();
    let s = lsq::solve(&rows, y, None)?;
    let (a, b) = (s.theta[0], s.theta[1]);
    let se = if s.std_errors.len() >= 2 {
        ((a * s.std_errors[0]).powi(2) + (b * s.std_errors[1]).powi(2)).sqrt() / a.hypot(b)
    } else {
        f64::NAN
    };
    Ok(Fundamental {
        phasor: (a, b),
        se,
        mse: s.rss / y.len() as f64,
        constant: (s.theta[2], s.std_errors.get(2).copied()),
    })
}

/// The complex stiffness of LuGre's quasi-static bristle loop relative to `sigma0`
/// (`(in-phase, quadrature)`, the quadrature positive for a lagging displacement), under a
/// force `a g sin(theta)` on the bristles (`0 <= a < 1`). With `F = sigma0 z` the law
/// `dz/dx = 1 - sigma0 z sgn(v)/g` integrates in closed form: rising,
/// `x = x_min + (g/sigma0) ln((1 + a)/(1 - F/g))`, and falling by symmetry. The fundamental of
/// that `x` (midpoint quadrature over one period) gives `A/X`.
pub fn bristle_loop(a: f64) -> (f64, f64) {
    if a <= 0.0 {
        return (1.0, 0.0);
    }
    const N: usize = 4096;
    let span = ((1.0 + a) / (1.0 - a)).ln();
    let (mut s, mut c) = (0.0, 0.0);
    for k in 0..N {
        let th = std::f64::consts::TAU * (k as f64 + 0.5) / N as f64;
        let f = a * th.sin();
        // Rising for cos(theta) > 0: from the minimum at theta = -pi/2.
        let x = if th.cos() > 0.0 {
            ((1.0 + a) / (1.0 - f)).ln()
        } else {
            span - ((1.0 + a) / (1.0 + f)).ln()
        };
        s += x * th.sin();
        c += x * th.cos();
    }
    let (xa, xb) = (2.0 * s / N as f64, 2.0 * c / N as f64);
    let d = xa * xa + xb * xb;
    (a * xa / d, -a * xb / d)
}

/// `sigma0` and the bristle time constant `tau = sigma1/sigma0` from the friction's complex
/// stiffness `k` at `omega` under a torque amplitude `amp`, on LuGre's quasi-static loop with
/// level `g`. With `F_z = sigma0 z` LuGre's force is `F = F_z + tau dF_z/dt` (the `sigma2 v`
/// term left out), a first-order lag, so the bristle loop sees `F` filtered by
/// `1/(1 + i omega tau)` and `k = sigma0 (1 + i omega tau) kappa(a_z)`, with
/// `a_z = amp / (g sqrt(1 + (omega tau)^2))`. `omega tau` is found by fixed-point iteration
/// (`a_z` depends on it only weakly), then `sigma0` from the in-phase part.
fn bristle_fit(k: (f64, f64), omega: f64, amp: f64, g: f64) -> (f64, f64, (f64, f64)) {
    let rho = k.1 / k.0;
    let mut wt = rho.max(0.0);
    let mut kappa = (1.0, 0.0);
    for _ in 0..50 {
        let a_z = (amp / (g * (1.0 + wt * wt).sqrt())).min(0.999);
        kappa = bristle_loop(a_z);
        let next = ((rho * kappa.0 - kappa.1) / (kappa.0 + rho * kappa.1)).max(0.0);
        let done = (next - wt).abs() < 1e-12;
        wt = next;
        if done {
            break;
        }
    }
    let sigma0 = k.0 / (kappa.0 - wt * kappa.1);
    (sigma0, wt / omega, kappa)
}

/// `sigma0 = A/theta0` from the `t, x, u` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts: PreslidingSineOptions = PROCEDURE.options_of(given)?;
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let u = table.column("u", PROCEDURE.name)?;
    need_rows(t.len(), 10, "presliding_sine")?;
    let omega = match opts.omega {
        Some(Positive(w)) => w,
        None => frequency(t, u).ok_or_else(|| {
            FitError::Data("presliding_sine: u has fewer than two upward zero crossings".into())
        })?,
    };
    let t_from = opts.t_from.unwrap_or(t[0] + 2.0 * std::f64::consts::PI / omega);
    let k0 = t.iter().position(|t| *t >= t_from).unwrap_or(t.len());
    let (t, x, u) = (&t[k0..], &x[k0..], &u[k0..]);
    need_rows(t.len(), 10, "presliding_sine (after the transient)")?;
    let fu = fundamental(t, u, omega, false)?;
    let fx = fundamental(t, x, omega, true)?;
    let (a, th) = (fu.amp(), fx.amp());
    if th.is_nan() || th <= 0.0 {
        return Err(FitError::Data(
            "presliding_sine: no displacement at the excitation frequency".into(),
        ));
    }
    let count = resolution(x);
    if !count.is_finite() {
        return Err(FitError::Data(format!(
            "presliding_sine: the position did not move by one count during the sine (torque \
             amplitude {a:.4}): sigma0 is above the amplitude over the encoder's count; a finer \
             encoder or a larger amplitude can tell it"
        )));
    }
    let stiffness = complex_stiffness(fu.phasor, fx.phasor);
    let j = opts.j.map(|j| j.0);
    // The friction's stiffness: the plant's inertia term added back.
    let friction = (stiffness.0 + j.unwrap_or(0.0) * omega * omega, stiffness.1);
    let level = opts.fs.map(|l| l.0);
    let lugre_loop = LUGRE_LOOP.contains(&model);
    let (sigma0, tau, kappa) = match level {
        Some(g) if a < g && lugre_loop => bristle_fit(friction, omega, a, g),
        Some(g) if a < g => (friction.0, f64::NAN, (1.0, 0.0)),
        Some(g) => {
            return Err(FitError::Data(format!(
                "presliding_sine: the torque amplitude {a:.4} is not below fs {g:.4}: the data are not presliding"
            )));
        }
        None => (friction.0, f64::NAN, (1.0, 0.0)),
    };
    if sigma0.is_nan() || sigma0 <= 0.0 {
        return Err(FitError::Data(
            "presliding_sine: the displacement is not in phase with the torque (no stiffness)"
                .into(),
        ));
    }
    // Relative errors of the amplitudes; for small errors the phase's (rad) is the same.
    let statistical = ((fu.se / a).powi(2) + (fx.se / th).powi(2)).sqrt();
    let loop_term = LOOP_SHARE * (sigma0 - friction.0) / sigma0;
    let quantised = quantisation_error(t, omega, fx.phasor, count);
    let se = sigma0 * statistical.hypot(loop_term).hypot(quantised.0);
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "linear_least_squares",
        PROCEDURE.columns,
        t.len(),
        given,
    );
    report.time_range(t);
    report.set("sigma0", sigma0, Some(se).filter(|s| s.is_finite()));
    if tau.is_finite() {
        // omega tau = tan of the loss angle the loop does not explain: its error follows the
        // phase's, (1 + rho^2) per radian.
        let (wt, rho) = (omega * tau, friction.1 / friction.0);
        let se_phase = statistical.hypot(quantised.1);
        let se_wt = ((1.0 + rho * rho) * se_phase).hypot(TAU_LOOP_SHARE * (rho - wt));
        let sigma1 = tau * sigma0;
        let se1 = sigma1 * (se / sigma0).hypot(se_wt / wt);
        report.set("sigma1", sigma1, Some(se1).filter(|s| s.is_finite()));
    }
    match opts.offset {
        super::Offset::Fit => {
            let (c, se_c) = fu.constant;
            report.set("offset", c, se_c.filter(|s| s.is_finite()));
            report.provenance.notes.push(
                "offset: the constant term of the torque's fit (it does not enter sigma0)".into(),
            );
        }
        super::Offset::Known(c) => {
            report.set("offset", c, None);
            report
                .provenance
                .notes
                .push("known offset: sigma0 uses amplitudes only, which it does not change".into());
        }
        super::Offset::None => {}
    }
    report.mse = Some(fx.mse);
    report.details = json!({
        "torque_amplitude": a, "displacement_amplitude": th, "omega": omega,
        "phase_lag_rad": stiffness.1.atan2(stiffness.0),
        "storage_stiffness": stiffness.0, "loss_stiffness": stiffness.1,
        "bristle_loop_factor": kappa.0, "bristle_time_constant_s": tau,
        "position_resolution": count,
    });
    let notes = &mut report.provenance.notes;
    notes.push("static presliding assumption: omega << sqrt(sigma0/J); mse is of x".into());
    if j.is_none() {
        notes.push("no given.j: the inertia term J omega^2 is left out of sigma0".into());
    }
    notes.push(match level {
        Some(_) if !lugre_loop => {
            format!("{model}: the bristle-loop correction is LuGre's; not applied")
        }
        Some(g) => format!(
            "bristle loop: torque amplitude {:.3} of fs, in-phase stiffness {:.4} sigma0 (corrected)",
            a / g,
            kappa.0
        ),
        None => "no given.fs: the bristle loop's softening is not corrected".into(),
    });
    Ok(report)
}

/// The share of the loop's correction of the loss angle (`rho - omega tau`) counted as the
/// uncertainty of `omega tau`.
const TAU_LOOP_SHARE: f64 = 0.03;

/// Models whose bristles follow LuGre's law `dz/dt = v - sigma0 |v| z / g(v)` at presliding
/// speeds: the loop correction (and `sigma1` from the sine) applies to them.
const LUGRE_LOOP: &[&str] = &["lugre", "improved_lugre"];

/// The share of the loop's correction (`sigma0 - Re K`) counted as its uncertainty: what the
/// quasi-static loop leaves out (the inertia within the loop, `g` away from `f_s`, `sigma2`).
const LOOP_SHARE: f64 = 0.1;

/// The position's resolution: the smallest step between consecutive samples (an encoder's
/// count; tiny for a continuous signal; infinite when it never moved).
fn resolution(x: &[f64]) -> f64 {
    x.windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min)
}

/// The errors that a position resolution `q` makes in the sine `phasor` at `omega` sampled at
/// `t`, `(relative amplitude, phase in rad)`: the sine quantised at 16 sub-count offsets (where
/// the count boundaries fall is unknown), the RMS over them of its fundamental's changes.
/// A sine of many counts averages its quantisation out; one of a few counts does not.
fn quantisation_error(t: &[f64], omega: f64, phasor: (f64, f64), q: f64) -> (f64, f64) {
    const OFFSETS: usize = 16;
    let amp = phasor.0.hypot(phasor.1);
    if !(q.is_finite() && amp > 0.0) {
        return (0.0, 0.0);
    }
    // The sampled sine and its basis, once for all offsets.
    let basis: Vec<(f64, f64, f64)> = t
        .iter()
        .map(|t| {
            let (sn, cs) = (omega * t).sin_cos();
            (sn, cs, phasor.0 * sn + phasor.1 * cs)
        })
        .collect();
    let samples = t.len() as f64;
    let (mut sum_sq, mut turn_sq) = (0.0, 0.0);
    for j in 0..OFFSETS {
        let off = (j as f64 + 0.5) / OFFSETS as f64 * q;
        let (mut ps, mut pc) = (0.0, 0.0);
        for &(sn, cs, y) in &basis {
            let e = ((y + off) / q).round() * q - off - y;
            ps += e * sn;
            pc += e * cs;
        }
        let (ea, eb) = (2.0 * ps / samples, 2.0 * pc / samples);
        let changed = (phasor.0 + ea).hypot(phasor.1 + eb);
        sum_sq += ((changed - amp) / amp).powi(2);
        let turned = (phasor.1 + eb).atan2(phasor.0 + ea) - phasor.1.atan2(phasor.0);
        turn_sq += turned.powi(2);
    }
    let n = OFFSETS as f64;
    ((sum_sq / n).sqrt(), (turn_sq / n).sqrt())
}

/// `U/X` of two phasors `(a, b)` of `a sin + b cos`: `(Re, Im)`; a positive imaginary part is
/// the displacement lagging the torque.
fn complex_stiffness(u: (f64, f64), x: (f64, f64)) -> (f64, f64) {
    let d = x.0 * x.0 + x.1 * x.1;
    ((u.0 * x.0 + u.1 * x.1) / d, (u.1 * x.0 - u.0 * x.1) / d)
}
