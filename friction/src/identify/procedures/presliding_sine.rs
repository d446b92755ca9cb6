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
//! absorbs a slow drift, which LuGre shows under an oscillating force); `A = |(a, b)|`,
//! `theta0 = |(a', b')|`. `omega` is given or taken from the mean period of the upward zero
//! crossings of `u`. The standard error of `sigma0` follows from those of the amplitudes.
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[rad or m\], `u` \[N m or N\]: a sinusoidal
//! torque of constant amplitude below `f_c`, at `omega` well below `sqrt(sigma0/J)` (the static
//! assumption; S4's bench: `omega_n` = 321 rad/s), several periods long; the first period (or up
//! to `given.t_from`) is skipped as transient. The encoder must resolve `theta0` (S4: a
//! 1,024,000 count/rev encoder).

use super::{FitReport, Given, Procedure, Table, given_f64, given_positive, need_rows};
use crate::identify::FitError;
use crate::identify::lsq;
use serde_json::json;

/// `presliding_sine`: models with a bristle stiffness `sigma0`.
pub const PROCEDURE: Procedure = Procedure {
    name: "presliding_sine",
    models: &["lugre", "improved_lugre", "dahl", "elasto_plastic"],
    columns: &["t", "x", "u"],
    options: &["omega", "t_from", "offset"],
    known_params: false,
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

/// The fundamental at `omega` (with optional drift term): amplitude and its standard error,
/// phase, mean squared residual, and the constant term with its standard error.
struct Fundamental {
    amp: f64,
    se: f64,
    phase: f64,
    mse: f64,
    constant: (f64, Option<f64>),
}

fn amplitude(t: &[f64], y: &[f64], omega: f64, drift: bool) -> Result<Fundamental, FitError> {
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
    let amp = a.hypot(b);
    let se = if s.std_errors.len() >= 2 {
        ((a * s.std_errors[0]).powi(2) + (b * s.std_errors[1]).powi(2)).sqrt() / amp
    } else {
        f64::NAN
    };
    Ok(Fundamental {
        amp,
        se,
        phase: b.atan2(a),
        mse: s.rss / y.len() as f64,
        constant: (s.theta[2], s.std_errors.get(2).copied()),
    })
}

/// `sigma0 = A/theta0` from the `t, x, u` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let u = table.column("u", PROCEDURE.name)?;
    need_rows(t.len(), 10, "presliding_sine")?;
    let omega = match given_positive(given, "omega")? {
        Some(w) => w,
        None => frequency(t, u).ok_or_else(|| {
            FitError::Data("presliding_sine: u has fewer than two upward zero crossings".into())
        })?,
    };
    let t_from = given_f64(given, "t_from")?.unwrap_or(t[0] + 2.0 * std::f64::consts::PI / omega);
    let k0 = t.iter().position(|t| *t >= t_from).unwrap_or(t.len());
    let (t, x, u) = (&t[k0..], &x[k0..], &u[k0..]);
    need_rows(t.len(), 10, "presliding_sine (after the transient)")?;
    let fu = amplitude(t, u, omega, false)?;
    let fx = amplitude(t, x, omega, true)?;
    let (a, se_a, ph_u) = (fu.amp, fu.se, fu.phase);
    let (th, se_th, ph_x, mse) = (fx.amp, fx.se, fx.phase, fx.mse);
    if th.is_nan() || th <= 0.0 {
        return Err(FitError::Data(
            "presliding_sine: no displacement at the excitation frequency".into(),
        ));
    }
    let sigma0 = a / th;
    let se = sigma0 * ((se_a / a).powi(2) + (se_th / th).powi(2)).sqrt();
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
    match super::given_offset(given)? {
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
    report.mse = Some(mse);
    report.details = json!({
        "torque_amplitude": a, "displacement_amplitude": th, "omega": omega,
        "phase_lag_rad": ph_u - ph_x,
    });
    report
        .provenance
        .notes
        .push("static presliding assumption: omega << sqrt(sigma0/J); mse is of x".into());
    Ok(report)
}
