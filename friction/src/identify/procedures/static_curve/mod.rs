//! Static friction-curve fits on steady-state sweep points: S4 §4.1 and §4.4 (eqs. 5 and 22),
//! S1 8.19–8.21, S3 §5.1.1 eqs. 16–22; docs/src/models/stribeck_exp.md, docs/src/models/tustin.md, docs/src/identification.md#static_curve.
//!
//! At constant velocity the friction equals the applied torque (S4 eq. 22), so sweep points
//! `(v, friction)` sample the steady-state curve
//!
//! $$F(v) = \operatorname{sgn}(v)\left[f_c + (f_s - f_c)\,\phi(v)\right] + f_v v$$
//!
//! with the shape `phi` of the model: generalised exponential `exp(-|v/v_s|^delta)` (Armstrong,
//! S4 eq. 5; `stribeck_exp`, `static_armstrong`, `karnopp`, `lugre`, `improved_armstrong`,
//! `improved_lugre`), Gaussian (delta = 2: `hybrid`, or any exponential model with
//! `given.delta = 2`), Tustin (delta = 1, S1 8.21: `tustin`), Lorentzian (Hess–Soom, S1 8.19:
//! `stribeck_lorentz`), or none (`coulomb_viscous`). The fit is bounded Levenberg–Marquardt
//! ([`LevenbergMarquardt`](crate::identify::lm::LevenbergMarquardt)) on the magnitudes, per direction: points with `v > 0` fit the
//! positive set, points with `v < 0` the `negative` set (S4 Table 1) when the model is
//! asymmetric; a symmetric model pools both directions.
//!
//! **Initial guesses from the data** (S4 §4.3): `fc`, `fv` from a straight line through the
//! fastest third of the points (intercept and slope), `fs` from the largest friction (less the
//! viscous part) among the slowest third, `vs` where the Stribeck excess has fallen to 1/e of
//! `fs - fc`; for a free exponent the fit starts from delta = 0.7, 1 and 2 and keeps the best.
//!
//! **Requirements on the data.** Columns `v` \[m/s\] and `friction` \[N\]: steady-state points (one
//! per constant-velocity run), at least one more per direction than the free parameters, with
//! speeds spanning the Stribeck region (several points below `vs`) and the viscous region (the
//! fastest third should be past the Stribeck dip, where the curve is a straight line). Points at
//! `v = 0` are ignored. Any parameter in `given` (by the model's name) is held fixed, as S4 §4.4
//! fixes `fs`, `fc`, `fv` before fitting the shape; `given.negative` (an object of the same
//! names) holds values of the negative direction only, over those of both (an asymmetric
//! bench's breakaway, measured per direction).
//!
//! **Offset** (`given.offset = true`): a constant `c` in the measured friction,
//! `F(v) + c`; on magnitudes `|F| + sgn(v) c`, so it needs points in both directions, which then
//! share one curve (a per-direction Coulomb level would absorb it). A known offset is
//! subtracted from the friction first.
//!
//! **Nested start.** A curve with a Stribeck term contains the straight line
//! (Coulomb + viscous: `fs = fc`), so it is also started from the line's least-squares optimum
//! with `fs = fc` (exactly the line) and from `fs` above it at several `vs`; the best optimum is
//! kept, so it is never worse than the line, and `details.nested` says whether the Stribeck
//! parameters are supported (docs/src/identification.md#nested-models). `given.nested = false` skips this.
//!
//! **Uncertainty.** Standard errors from the Jacobian and the residual variance (the points
//! are independent runs); `given.bootstrap = N` resamples the residuals instead (`seed`).

use super::shared::Bootstrap;
use super::typed::typed;
use super::{FitReport, Given, Offset, Procedure, Reads, Table, given_f64, num};
use schemars::JsonSchema;
use serde::Deserialize;
use crate::identify::FitError;

/// What `static_curve` takes in `given`, besides the model's parameters as known values.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct StaticCurveOptions {
    /// A constant in the measured force: true fits it (params.offset), a number is a known offset subtracted first
    #[serde(default)]
    pub offset: Offset,
    /// Bootstrap intervals.
    #[serde(flatten)]
    pub bootstrap: Bootstrap,
    /// Report the nested-model tests of the parameters
    #[serde(default = "yes")]
    pub nested: bool,
    /// The negative direction's known values (its own params.negative is fitted)
    pub negative: Option<Map<String, Value>>,
}

fn yes() -> bool {
    true
}
use direction::{Ask, fit_direction, split};
use report::{emit, finish};
use serde_json::{Map, Value};
use shape::{Layout, N, OFFSET, layout};

mod direction;
mod problem;
mod report;
mod shape;
#[cfg(test)]
mod tests;

/// `static_curve`: the models whose steady-state curve it fits.
pub const PROCEDURE: Procedure = Procedure {
    name: "static_curve",
    models: &[
        "stribeck_exp",
        "static_armstrong",
        "karnopp",
        "stribeck_lorentz",
        "tustin",
        "coulomb_viscous",
        "lugre",
        "gms",
        "hybrid",
        "improved_armstrong",
        "improved_lugre",
    ],
    columns: &["v", "friction"],
    options: typed::<StaticCurveOptions>(),
    known_params: true,
    reads: Reads::SweepPoints,
    part: None,
    iterates: false,
    offset_refused: None,
    fit,
};

/// Fits the steady-state curve of `model` to the `v, friction` points of `table`.
pub fn fit(model: &str, table: &Table, given: &Given) -> Result<FitReport, FitError> {
    let opts: StaticCurveOptions = PROCEDURE.options_of(given)?;
    let v = table.column("v", PROCEDURE.name)?;
    let f = table.column("friction", PROCEDURE.name)?;
    let lay = layout(model);
    let fixed = held(&lay, given, "")?;
    let fixed_neg = match &opts.negative {
        None => fixed,
        Some(neg) => {
            let mut f = held(&lay, neg, "negative.")?;
            for (f, both) in f.iter_mut().zip(fixed) {
                *f = f.or(both);
            }
            f
        }
    };
    let offset = opts.offset;
    let ask = Ask {
        lay: &lay,
        fixed: &fixed,
        offset: offset.fitted(),
        nested: opts.nested,
        bootstrap: opts.bootstrap.replicates(),
    };
    let asymmetric = crate::registry::entry(model)
        .map(|e| e.asymmetric)
        .unwrap_or(false);
    let (mut pos, mut neg) = split(v, f, offset.known());
    let mut report = FitReport::new(
        PROCEDURE.name,
        model,
        "levenberg_marquardt",
        PROCEDURE.columns,
        pos.0.len() + neg.0.len(),
        given,
    );
    let zeros = v.len() - pos.0.len() - neg.0.len();
    if zeros > 0 {
        report
            .provenance
            .notes
            .push(format!("{zeros} points at v = 0 (or non-finite) ignored"));
    }
    if offset.fitted() && (pos.0.is_empty() || neg.0.is_empty()) {
        return Err(FitError::Data(
            "static_curve: an offset needs points in both directions (on one side it is the Coulomb level)".into(),
        ));
    }
    if !asymmetric || offset.fitted() {
        for (a, b) in [
            (&mut pos.0, &mut neg.0),
            (&mut pos.1, &mut neg.1),
            (&mut pos.2, &mut neg.2),
        ] {
            a.append(b);
        }
        report.provenance.notes.push(if asymmetric {
            "with an offset both directions share one curve (magnitudes pooled): a per-direction level would absorb it".into()
        } else {
            "symmetric model: both directions pooled (magnitudes)".into()
        });
    }
    let mut out: [Map<String, Value>; 3] = Default::default();
    let mut fits = Vec::new();
    if !pos.0.is_empty() {
        let d = fit_direction(&pos.0, &pos.1, &pos.2, &ask, "positive-velocity points")?;
        emit(&d, &lay, &fixed, &mut out);
        fits.push(d);
    }
    if !neg.0.is_empty() {
        let ask = Ask {
            fixed: if asymmetric { &fixed_neg } else { &fixed },
            ..ask
        };
        let d = fit_direction(&neg.0, &neg.1, &neg.2, &ask, "negative-velocity points")?;
        let mut sub: [Map<String, Value>; 3] = Default::default();
        emit(&d, &lay, ask.fixed, &mut sub);
        if out[0].is_empty() {
            report
                .provenance
                .notes
                .push("only negative-velocity points: the fit is used for both directions".into());
            out = sub.clone();
        }
        for (o, s) in out.iter_mut().zip(sub) {
            if !s.is_empty() {
                o.insert("negative".into(), Value::Object(s));
            }
        }
        fits.push(d);
    }
    if fits.is_empty() {
        return Err(FitError::Data("static_curve: no point with v != 0".into()));
    }
    let [params, errors, ci] = out;
    report.params = params;
    report.std_errors = errors;
    report.ci95 = ci;
    match offset {
        super::Offset::Fit => {
            let d = &fits[0];
            let se = d.se.as_ref().map(|s| s[OFFSET]).filter(|x| x.is_finite());
            report.set("offset", d.p[OFFSET], se);
            if let Some(c) = &d.ci {
                report.ci95.insert(
                    "offset".into(),
                    serde_json::json!([num(c[OFFSET][0]), num(c[OFFSET][1])]),
                );
            }
        }
        super::Offset::Known(c) => {
            report.set("offset", c, None);
            report
                .provenance
                .notes
                .push(format!("known offset {c} subtracted from the friction"));
        }
        super::Offset::None => {}
    }
    finish(&mut report, &fits, &lay, &fixed, ask.bootstrap);
    let neg_held: Vec<&str> = (0..N)
        .filter(|i| fixed_neg[*i] != fixed[*i])
        .filter_map(|i| lay.names[i])
        .collect();
    if asymmetric && !neg_held.is_empty() {
        report.provenance.notes.push(format!(
            "held fixed for the negative direction (given.negative): {}",
            neg_held.join(", ")
        ));
    }
    Ok(report)
}

/// The values of `given` held fixed, by the layout's names; `prefix` names their field.
fn held(lay: &Layout, given: &Given, prefix: &str) -> Result<[Option<f64>; N], FitError> {
    let mut fixed = [None; N];
    for (i, name) in lay.names.iter().enumerate() {
        if let Some(n) = name {
            fixed[i] = given_f64(given, n).map_err(|e| match e {
                FitError::Config { field, value, rule } => FitError::Config {
                    field: field.replacen("given.", &format!("given.{prefix}"), 1),
                    value,
                    rule,
                },
                FitError::Setting { field, rule } => FitError::Setting {
                    field: field.replacen("given.", &format!("given.{prefix}"), 1),
                    rule,
                },
                e => e,
            })?;
        }
    }
    Ok(fixed)
}
