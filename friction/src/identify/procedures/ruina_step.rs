//! Ruina–Rice `A`, `B`, `L` from a velocity step: S1 eqs. 8.41–8.43 (model 8.38–8.40);
//! docs/src/models/ruina.md, docs/src/identification.md#ruina_step.
//!
//! From steady sliding `(v1, f1)` the speed steps to `v2` at `t0`. The friction jumps by
//! `A ln(v2/v1)` (the direct effect), then relaxes over the sliding length `L` to
//! `f2 = f1 + (A - B) ln(v2/v1)`:
//!
//! $$f(t) = f_1 + A\ln\frac{v_2}{v_1} + B\left(e^{-v_2 (t - t_0)/L} - 1\right)\ln\frac{v_2}{v_1}$$
//!
//! S1 reads `A = (f_max - f1)/ln(v2/v1)` and `B = A - (f2 - f1)/ln(v2/v1)` off the peak and the
//! new steady value, then fits `L`. Those readings start a bounded Levenberg–Marquardt fit of
//! `(A, B, L)` to every sample after the step, which gives standard errors and is not biased by
//! noise on the peak. `t0` is the sample of the largest velocity jump; `v1`, `f1` are the means
//! over the last fifth of the samples before it, `v2` the mean after it. The reference point of
//! the model is reported as `v0 = v1`, `f0 = f1`. Friction is divided by `given.fn_load` (the
//! normal load, default 1: the data are then friction coefficients), which is reported with the
//! parameters so that the set reproduces the data.
//!
//! **Requirements on the data.** Columns `t` \[s\], `v` \[m/s\], `friction` \[N\]: steady sliding at
//! `v1 > 0`, one velocity step to `v2 > 0` (same direction), and at least several `L/v2` of
//! sliding after it, sampled finely against `L/v2` (S1 Table 8.4, dry: 64.7 µm; at 10 mm/s
//! that is 6.5 ms). The steady-state curve should be measured first (S1).

use super::typed::{Positive, typed};
use super::{FitReport, Given, Procedure, Reads, Table, mean, need_rows};
use crate::identify::lm::{LevenbergMarquardt, standard_errors};
use crate::identify::{Bounds, FitError, Residuals, Runner};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// What `ruina_step` takes in `given`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuinaStepOptions {
    /// Normal load the friction is divided by (1: the friction itself)
    #[schemars(extend("x-unit" = "N", "default" = 1.0))]
    pub fn_load: Option<Positive>,
}

/// `ruina_step`: the Ruina–Rice model.
pub const PROCEDURE: Procedure = Procedure {
    name: "ruina_step",
    models: &["ruina"],
    columns: &["t", "v", "friction"],
    options: typed::<RuinaStepOptions>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["constant_velocity_sweep", "frictional_lag"])),
    part: None,
    iterates: false,
    offset_refused: Some(
        "friction is measured from its level before the velocity step, which absorbs any offset",
    ),
    fit,
};

struct StepProblem<'a> {
    tau: &'a [f64],
    f: &'a [f64],
    f1: f64,
    lr: f64,
    v2: f64,
}

impl Residuals for StepProblem<'_> {
    fn len(&self) -> usize {
        self.tau.len()
    }
    fn residuals(&self, p: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        for ((o, t), f) in out.iter_mut().zip(self.tau).zip(self.f) {
            *o =
                self.f1 + p[0] * self.lr + p[1] * self.lr * ((-self.v2 * t / p[2]).exp() - 1.0) - f;
        }
        Ok(())
    }
}

/// `(A, B, L)` from the velocity step in the `t, v, friction` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts: RuinaStepOptions = PROCEDURE.options_of(given)?;
    let t = table.column("t", PROCEDURE.name)?;
    let v = table.column("v", PROCEDURE.name)?;
    let fr = table.column("friction", PROCEDURE.name)?;
    need_rows(t.len(), 20, "ruina_step")?;
    let fn_load = opts.fn_load.map_or(1.0, |l| l.0);
    let k0 = (1..v.len())
        .max_by(|&a, &b| (v[a] - v[a - 1]).abs().total_cmp(&(v[b] - v[b - 1]).abs()))
        .unwrap_or(1);
    need_rows(k0, 5, "ruina_step (before the step)")?;
    need_rows(t.len() - k0, 10, "ruina_step (after the step)")?;
    let pre = k0 - k0 / 5;
    let v1 = mean(&v[pre..k0].iter().map(|x| x.abs()).collect::<Vec<_>>());
    let v2 = mean(&v[k0..].iter().map(|x| x.abs()).collect::<Vec<_>>());
    if !(v1 > 0.0 && v2 > 0.0) || v[pre] * v[k0] <= 0.0 {
        return Err(FitError::Data(
            "ruina_step: both speeds must be nonzero and of the same sign".into(),
        ));
    }
    let f: Vec<f64> = fr.iter().map(|x| x.abs() / fn_load).collect();
    let f1 = mean(&f[pre..k0]);
    let post = &f[k0..];
    let tau: Vec<f64> = t[k0..].iter().map(|x| x - t[k0]).collect();
    let n = post.len();
    let f2 = mean(&post[n - n / 5..]);
    let lr = (v2 / v1).ln();
    // S1 readings: the extreme after the step (towards the jump) and the new steady value.
    let fmax = if lr > 0.0 {
        post.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
    } else {
        post.iter().cloned().fold(f64::INFINITY, f64::min)
    };
    let a0 = (fmax - f1) / lr;
    let b0 = a0 - (f2 - f1) / lr;
    let target = f2 + (fmax - f2) / std::f64::consts::E;
    let i63 = post
        .iter()
        .position(|x| (x - target) * (fmax - f2).signum() <= 0.0)
        .unwrap_or(n / 2)
        .max(1);
    let l0 = v2 * tau[i63];
    let problem = StepProblem {
        tau: &tau,
        f: post,
        f1,
        lr,
        v2,
    };
    let lm = LevenbergMarquardt::new().with_bounds(Bounds {
        lower: vec![f64::NEG_INFINITY, f64::NEG_INFINITY, 1e-15],
        upper: vec![f64::INFINITY; 3],
    });
    let r = Runner::new(&problem, lm)
        .max_iters(300)
        .run(vec![a0, b0, l0])?;
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
    for (i, name) in ["a", "b", "l"].iter().enumerate() {
        report.set(name, r.params[i], se.as_ref().map(|s| s[i]));
    }
    report.set("v0", v1, None);
    report.set("f0", f1, None);
    report.set("fn_load", fn_load, None);
    report.mse = Some(r.mse);
    report.details = json!({
        "v1": v1, "v2": v2, "f1": f1, "f2": f2, "f_peak": fmax, "t_step": t[k0], "fn_load": fn_load,
        "s1_readings": {"a": a0, "b": b0, "l": l0},
    });
    if opts.fn_load.is_none() {
        report
            .provenance
            .notes
            .push("fn_load not given: friction taken as a coefficient (fn_load = 1)".into());
    }
    Ok(report)
}
