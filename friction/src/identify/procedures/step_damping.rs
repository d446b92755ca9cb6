//! Micro-damping `sigma1` from the damping of the presliding step response: S4 §4.5 (eq. 23);
//! docs/src/identification.md#step_damping.
//!
//! A torque step `Δu` below `f_c` leaves the body in presliding, where (S4 eq. 23)
//! `J q'' + (sigma1 + f_v) q' + sigma0 q = Δu`: a second-order step response with
//!
//! $$\omega_n = \sqrt{\sigma_0/J},\qquad \zeta = \frac{\sigma_1 + f_v}{2\sqrt{J\sigma_0}}
//!   \quad\Rightarrow\quad \sigma_1 = 2\zeta\sqrt{J\sigma_0} - f_v$$
//!
//! The response `x(t) = x_0 + K [1 - h(omega_n, zeta; t - t_0)]` (under-, critically or
//! over-damped form) is fitted by bounded Levenberg–Marquardt for `(K, omega_n, zeta)`, started
//! from the logarithmic decrement of the first overshoot (or `zeta` = 1 without one). `t_0` is
//! the sample where `u` jumps most; `x_0` is the mean of `x` before it. `J` (S4: from the data
//! sheet), `sigma0` (from [`presliding_sine`](super::presliding_sine)) and `f_v` are taken from
//! `given` (`j`, `sigma0`, `fv` or the model's viscous name); without them `sigma0 = Δu/K` (the
//! static gain), `J = sigma0/omega_n^2` and `f_v = 0`, each noted. The standard error of `sigma1`
//! propagates that of `zeta` only.
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[rad or m\], `u` \[N m or N\]: the body at
//! rest, then one torque step well below `f_c` (small, so the bristle stays in its linear range),
//! recorded at a rate well above `omega_n` (S4: 321 rad/s) with an encoder resolving a small
//! fraction of `Δu/sigma0`, and long enough to settle.

use super::typed::{Positive, typed};
use super::{FitReport, Given, Part, Procedure, Reads, Table, mean, need_rows};
use crate::identify::lm::{LevenbergMarquardt, standard_errors};
use schemars::JsonSchema;
use serde::Deserialize;

/// What `step_damping` takes in `given`: known values, each taken from the step when absent.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepDampingOptions {
    /// Known bristle stiffness (absent: the static gain du/K)
    #[schemars(extend("x-unit" = "N/rad or N/m"))]
    pub sigma0: Option<Positive>,
    /// Known inertia (absent: sigma0/omega_n²)
    #[schemars(extend("x-unit" = "kg m² or kg"))]
    pub j: Option<Positive>,
    /// Known viscous coefficient (absent: 0)
    #[schemars(extend("x-unit" = "N s/rad or N s/m"))]
    pub fv: Option<f64>,
    /// Known viscous coefficient of lugre (absent: 0)
    #[schemars(extend("x-unit" = "N s/rad or N s/m"))]
    pub sigma2: Option<f64>,
}
use crate::identify::{Bounds, FitError, Residuals, Runner};
use serde_json::json;

/// `step_damping`: models with a micro-damping `sigma1`.
pub const PROCEDURE: Procedure = Procedure {
    name: "step_damping",
    models: &["lugre", "improved_lugre", "elasto_plastic"],
    columns: &["t", "x", "u"],
    options: typed::<StepDampingOptions>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["presliding"])),
    part: Some(Part {
        name: "step",
        roles: &["torque_step"],
    }),
    iterates: false,
    offset_refused: Some(
        "it uses only the size of the torque step, which a constant offset does not change",
    ),
    fit,
};

/// Unit step response `1 - h(tau)` of `1/(s^2/wn^2 + 2 z s/wn + 1)` at `tau >= 0`.
pub fn unit_step(wn: f64, z: f64, tau: f64) -> f64 {
    if tau <= 0.0 {
        return 0.0;
    }
    if (z - 1.0).abs() < 1e-6 {
        return 1.0 - (1.0 + wn * tau) * (-wn * tau).exp();
    }
    if z < 1.0 {
        let wd = wn * (1.0 - z * z).sqrt();
        1.0 - (-z * wn * tau).exp()
            * ((wd * tau).cos() + z / (1.0 - z * z).sqrt() * (wd * tau).sin())
    } else {
        let r = (z * z - 1.0).sqrt();
        let (s1, s2) = (-wn * (z - r), -wn * (z + r));
        1.0 - (s2 * (s1 * tau).exp() - s1 * (s2 * tau).exp()) / (s2 - s1)
    }
}

struct StepProblem<'a> {
    tau: &'a [f64],
    dx: &'a [f64],
}

impl Residuals for StepProblem<'_> {
    fn len(&self) -> usize {
        self.tau.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        for ((o, t), y) in out.iter_mut().zip(self.tau).zip(self.dx) {
            *o = p[0] * unit_step(p[1], p[2], *t) - y;
        }
        Ok(())
    }
}

/// `sigma1` from the step response in the `t, x, u` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts: StepDampingOptions = PROCEDURE.options_of(given)?;
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let u = table.column("u", PROCEDURE.name)?;
    need_rows(t.len(), 20, "step_damping")?;
    let k0 = (1..u.len())
        .max_by(|&a, &b| (u[a] - u[a - 1]).abs().total_cmp(&(u[b] - u[b - 1]).abs()))
        .unwrap_or(1);
    if k0 < 2 {
        return Err(FitError::Data(
            "step_damping: the torque step must come after some samples at rest".into(),
        ));
    }
    let du = mean(&u[k0..]) - mean(&u[..k0]);
    if du == 0.0 {
        return Err(FitError::Data("step_damping: u has no step".into()));
    }
    let x0 = mean(&x[k0.saturating_sub(50)..k0]);
    let tau: Vec<f64> = t[k0..].iter().map(|t1| t1 - t[k0]).collect();
    let dx: Vec<f64> = x[k0..].iter().map(|x| x - x0).collect();
    let n = dx.len();
    need_rows(n, 10, "step_damping (after the step)")?;
    // Initial guess: final value, first peak and its overshoot (log decrement).
    let k_final = mean(&dx[n - n / 5..]);
    let (ipk, pk) = dx.iter().enumerate().fold((0, 0.0f64), |b, (i, y)| {
        if y * k_final.signum() > b.1 {
            (i, y * k_final.signum())
        } else {
            b
        }
    });
    let over = pk / k_final.abs() - 1.0;
    let (wn0, z0) = if over > 1e-3 && ipk > 0 {
        let l = -over.ln();
        let z = l / (std::f64::consts::PI.powi(2) + l * l).sqrt();
        (std::f64::consts::PI / (tau[ipk] * (1.0 - z * z).sqrt()), z)
    } else {
        let t63 = dx
            .iter()
            .position(|y| y * k_final.signum() >= 0.63 * k_final.abs())
            .map_or(tau[n / 2], |i| tau[i]);
        (2.0 / t63.max(1e-12), 1.0)
    };
    let problem = StepProblem { tau: &tau, dx: &dx };
    let lm = LevenbergMarquardt::new().with_bounds(Bounds {
        lower: vec![f64::NEG_INFINITY, 1e-9, 1e-3],
        upper: vec![f64::INFINITY, f64::INFINITY, 20.0],
    });
    let r = Runner::new(&problem, lm)
        .max_iters(300)
        .run(vec![k_final, wn0, z0])?;
    let (gain, wn, zeta) = (r.params[0], r.params[1], r.params[2]);
    let se = standard_errors(&problem, &r.params, r.cost);
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "levenberg_marquardt",
        PROCEDURE.columns,
        n,
        given,
    );
    report.time_range(&t[k0..]);
    report.provenance.termination = Some(r.termination);
    let fv_name = if model == "improved_lugre" {
        "fv"
    } else {
        "sigma2"
    };
    let sigma0 = match opts.sigma0 {
        Some(Positive(s)) => s,
        None => {
            report
                .provenance
                .notes
                .push("sigma0 not given: taken as the static gain du/K".into());
            du / gain
        }
    };
    let j = match opts.j {
        Some(Positive(j)) => j,
        None => {
            report
                .provenance
                .notes
                .push("j not given: taken as sigma0/omega_n^2".into());
            sigma0 / (wn * wn)
        }
    };
    let own = if fv_name == "sigma2" { opts.sigma2 } else { opts.fv };
    let fv = match own.or(opts.fv) {
        Some(f) => f,
        None => {
            report
                .provenance
                .notes
                .push(format!("{fv_name} not given: taken as 0"));
            0.0
        }
    };
    let root = (j * sigma0).sqrt();
    let sigma1 = 2.0 * zeta * root - fv;
    report.set("sigma1", sigma1, se.as_ref().map(|s| 2.0 * root * s[2]));
    report.mse = Some(r.mse);
    report.details = json!({
        "zeta": zeta, "omega_n": wn, "gain": gain, "torque_step": du, "t_step": t[k0],
        "sigma0_used": sigma0, "j_used": j, "fv_used": fv,
        "sigma0_from_gain": du / gain, "j_from_omega_n": du / gain / (wn * wn),
        "std_errors": se.map(|s| json!({"gain": s[0], "omega_n": s[1], "zeta": s[2]})),
    });
    Ok(report)
}
