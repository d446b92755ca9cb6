//! Friction that differs by direction (`given.asymmetric = true`): the positive side's values
//! under `params`, the negative side's under `params.negative` (same names), and the test
//! whether the two sides differ beyond their standard errors (docs/src/identification.md#direction-dependent-friction).
//!
//! The standard error of a difference is not `sqrt(se⁺² + se⁻²)`: both sides are fitted on the
//! same record together with the inertia (and the other side's parameters), so their estimates
//! are correlated. [`stats::difference_std_errors`] fits the difference itself.

use crate::identify::stats;
use nalgebra::DMatrix;
use serde::Serialize;

/// One parameter fitted per direction, compared.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SideDifference {
    /// The parameter's name (`fc`, `fv`, ...).
    pub name: String,
    /// Its value for positive motion (`params.NAME`).
    pub positive: f64,
    /// Its value for negative motion (`params.negative.NAME`).
    pub negative: f64,
    /// `positive - negative`.
    pub difference: f64,
    /// Standard error of the difference (serial correlation and the covariance of the sides
    /// accounted for; null when not finite).
    #[schemars(with = "Option<f64>")]
    pub std_error: f64,
    /// `|difference| / std_error` (null when not finite).
    #[schemars(with = "Option<f64>")]
    pub z: f64,
    /// `z` above the two-sided 95 % quantile of Student's `t` on the effective samples.
    pub differ: bool,
}

/// Whether the directions differ, parameter by parameter (`directions` of a report).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "FitDirections")]
pub struct Directions {
    /// Each parameter fitted on both sides.
    pub parameters: Vec<SideDifference>,
    /// True when any parameter differs beyond its standard error.
    pub differ: bool,
    /// The sentence the verdict carries.
    pub summary: String,
}

/// A parameter fitted on both sides: its name, its column for each side in `jac` and its two
/// values.
pub(crate) struct Pair<'a> {
    /// The parameter's name.
    pub name: &'a str,
    /// Columns of the positive and the negative side in the Jacobian.
    pub columns: (usize, usize),
    /// Values `(positive, negative)`.
    pub values: (f64, f64),
}

/// Compares the sides of `pairs` on the fit's Jacobian `jac` and residuals `resid`; `dof` is
/// the effective samples less the parameters. `None` when the Jacobian gives no standard
/// errors.
pub(crate) fn compare(
    jac: &DMatrix<f64>,
    resid: &[f64],
    pairs: &[Pair<'_>],
    dof: f64,
) -> Option<Directions> {
    let cols: Vec<(usize, usize)> = pairs.iter().map(|p| p.columns).collect();
    let se = stats::difference_std_errors(jac, resid, &cols)?;
    let q = stats::t975(dof);
    let parameters: Vec<SideDifference> = pairs
        .iter()
        .zip(se)
        .map(|(p, se)| {
            let difference = p.values.0 - p.values.1;
            let z = difference.abs() / se;
            SideDifference {
                name: p.name.to_string(),
                positive: p.values.0,
                negative: p.values.1,
                difference,
                std_error: se,
                z,
                differ: z > q,
            }
        })
        .collect();
    let differ = parameters.iter().any(|p| p.differ);
    let summary = summary(&parameters);
    Some(Directions {
        parameters,
        differ,
        summary,
    })
}

/// "the directions differ in fv (…); the data cannot tell them apart in fc (…)".
fn summary(params: &[SideDifference]) -> String {
    let list = |differ: bool| -> Vec<String> {
        params
            .iter()
            .filter(|p| p.differ == differ)
            .map(|p| {
                format!(
                    "{} ({:.4e} against negative {:.4e}: {:+.3e} ± {:.2e}, {:.1} standard errors)",
                    p.name, p.positive, p.negative, p.difference, p.std_error, p.z
                )
            })
            .collect()
    };
    let (yes, no) = (list(true), list(false));
    let mut parts = Vec::new();
    if !yes.is_empty() {
        parts.push(format!(
            "the directions differ beyond their standard errors in {}",
            yes.join(", ")
        ));
    }
    if !no.is_empty() {
        parts.push(format!(
            "the data cannot tell the directions apart in {}",
            no.join(", ")
        ));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `y = a x⁺ + b x⁻ + noise`: equal sides are not told apart, unequal ones are.
    fn case(a: f64, b: f64) -> Directions {
        let mut rng = crate::identify::rng::Rng::new(3);
        let n = 400;
        let x: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).sin()).collect();
        let jac = DMatrix::from_fn(n, 2, |k, j| match j {
            0 => x[k].max(0.0),
            _ => x[k].min(0.0),
        });
        let resid: Vec<f64> = (0..n).map(|_| 0.01 * rng.normal()).collect();
        let pairs = [Pair {
            name: "fv",
            columns: (0, 1),
            values: (a, b),
        }];
        compare(&jac, &resid, &pairs, n as f64 - 2.0).unwrap()
    }

    #[test]
    fn a_difference_is_judged_against_its_standard_error() {
        let same = case(1.0, 1.0);
        assert!(!same.differ, "{}", same.summary);
        assert!(same.summary.contains("cannot tell"), "{}", same.summary);
        let apart = case(1.0, 0.9);
        assert!(apart.differ, "{}", apart.summary);
        assert!(apart.parameters[0].z > 10.0);
        assert!(apart.summary.starts_with("the directions differ"));
    }

    #[test]
    fn the_difference_error_counts_the_covariance() {
        // Columns that share most of their rows: the difference is far better determined
        // (or worse) than sqrt(se_a² + se_b²) says; the reparametrised fit gives it exactly.
        let n = 300;
        let jac = DMatrix::from_fn(n, 2, |k, j| {
            let x = (k as f64 * 0.11).cos();
            if j == 0 {
                x
            } else {
                x + 0.1 * (k as f64 * 0.7).sin()
            }
        });
        let mut rng = crate::identify::rng::Rng::new(5);
        let resid: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let se = stats::difference_std_errors(&jac, &resid, &[(0, 1)]).unwrap()[0];
        let each = stats::least_squares(&jac, &resid, true).unwrap().std_errors;
        let naive = (each[0].powi(2) + each[1].powi(2)).sqrt();
        assert!((se - naive).abs() > 0.05 * naive, "{se} {naive}");
    }
}
