//! LuGre presliding linear regression (Canudas & Lischinsky): S1 eqs. 8.51–8.52;
//! docs/src/identification.md#lugre_regression.
//!
//! Assumptions (S1, with the errata of docs/src/sources.md#errata): quasi-static motion (`dv/dt ≈ 0`, so the
//! friction equals the applied force, `F_f = u`), `|v| << v_s` (so `g(v) ≈ F_s`), and
//! `F_f ≈ sigma0 z + F_g` (`sigma1`, `F_v` neglected; `F_g` an offset, e.g. gravity). Then
//!
//! $$\frac{d}{dt}\frac{F_f - F_g}{\sigma_0} = v - \frac{|v|}{F_s}(F_f - F_g)\qquad (8.51)$$
//!
//! and one Euler step per sample is linear in `theta = (sigma0, sigma0/F_s, sigma0 F_g/F_s)`:
//!
//! $$\Delta F_{f,k} = [\,\Delta x_k,\ -|\Delta x_k| F_{f,k},\ |\Delta x_k|\,]\,\theta\qquad (8.52)$$
//!
//! solved by scaled linear least squares ([`lsq::solve`]), which gives standard errors;
//! `sigma0 = theta_1`, `F_s = theta_1/theta_2`, `F_g = theta_3/theta_2` (the error of `F_s` is
//! propagated without the covariance term).
//!
//! **Requirements on the data.** Columns `t` \[s\], `x` \[m or rad\], `u` \[N or N m\]: slow back-and-
//! forth presliding under an applied force below `F_s` (speeds far below `v_s`, negligible
//! inertia). The regression is sensitive to position noise, which biases `sigma0` (S1): use a
//! high-resolution position sensor.

use super::{FitReport, Given, Part, Procedure, Reads, Table, need_rows};
use super::typed::{OffsetOnly, typed};
use crate::identify::FitError;
use crate::identify::lsq;
use serde_json::json;

/// `lugre_regression`: LuGre-type models (`sigma0`, `fs`).
pub const PROCEDURE: Procedure = Procedure {
    name: "lugre_regression",
    models: &["lugre", "improved_lugre"],
    columns: &["t", "x", "u"],
    options: typed::<OffsetOnly>(),
    known_params: false,
    reads: Reads::TimeSeries(Some(&["presliding"])),
    part: Some(Part {
        name: "reversals",
        roles: &["reversals"],
    }),
    iterates: false,
    offset_refused: None,
    fit,
};

/// `(sigma0, fs)` by S1 eq. 8.52 from the `t, x, u` columns.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let offset = PROCEDURE.options_of::<OffsetOnly>(given)?.offset;
    let t = table.column("t", PROCEDURE.name)?;
    let x = table.column("x", PROCEDURE.name)?;
    let u = table.column("u", PROCEDURE.name)?;
    need_rows(t.len(), 5, "lugre_regression")?;
    // A known offset F_g leaves two unknowns: F_f - F_g is regressed directly.
    let known = matches!(offset, super::Offset::Known(_));
    let mut rows = Vec::with_capacity(t.len() - 1);
    let mut b = Vec::with_capacity(t.len() - 1);
    for k in 0..t.len() - 1 {
        let dx = x[k + 1] - x[k];
        let f = u[k] - offset.known();
        rows.push(if known {
            vec![dx, -dx.abs() * f]
        } else {
            vec![dx, -dx.abs() * f, dx.abs()]
        });
        b.push(u[k + 1] - u[k]);
    }
    let s = lsq::solve(&rows, &b, None)?;
    let [t1, t2] = [s.theta[0], s.theta[1]];
    let t3 = if known { 0.0 } else { s.theta[2] };
    if !(t1 > 0.0 && t2 > 0.0) {
        return Err(FitError::Data(format!(
            "lugre_regression: theta = ({t1:e}, {t2:e}, {t3:e}) gives no positive sigma0 and fs (not presliding data?)"
        )));
    }
    let fs = t1 / t2;
    let fg = t3 / t2;
    let se = |i: usize| s.std_errors.get(i).copied();
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "linear_least_squares",
        PROCEDURE.columns,
        rows.len(),
        given,
    );
    report.time_range(t);
    report.set("sigma0", t1, se(0));
    let se_fs = match (se(0), se(1)) {
        (Some(a), Some(b)) => Some(fs * ((a / t1).powi(2) + (b / t2).powi(2)).sqrt()),
        _ => None,
    };
    report.set("fs", fs, se_fs);
    match offset {
        super::Offset::Fit => {
            let se_fg = match (se(1), s.std_errors.get(2).copied()) {
                (Some(b), Some(c)) => Some(fg.abs() * ((c / t3).powi(2) + (b / t2).powi(2)).sqrt()),
                _ => None,
            };
            report.set("offset", fg, se_fg.filter(|x| x.is_finite()));
        }
        super::Offset::Known(c) => report.set("offset", c, None),
        super::Offset::None => {}
    }
    report.mse = Some(s.rss / rows.len() as f64);
    report.details = json!({"theta": [t1, t2, t3], "fg": fg});
    report
        .provenance
        .notes
        .push("mse is of the force increments (S1 8.52); fg is the offset F_g".into());
    Ok(report)
}
