//! The summary rows of one run's analysis or one parameter set, derived from their stored JSON
//! (pure: no database). The analysis is read through small typed mirrors of the kinds' outputs
//! (`experiments` owns them; the store only needs these fields), so a kind without numbers to
//! trend, or a field a newer kind added, yields no rows rather than an error.

use serde::Deserialize;
use serde_json::{Map, Value};

/// Where a summary row's number comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A steady-state (Stribeck) point of a velocity sweep.
    SteadyState,
    /// A breakaway torque (staircase or torque ramp).
    Breakaway,
    /// A presliding stiffness.
    Stiffness,
    /// A fitted model parameter.
    Fit,
}

impl Source {
    /// The name stored in `run_summaries.source`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::SteadyState => "steady_state",
            Source::Breakaway => "breakaway",
            Source::Stiffness => "stiffness",
            Source::Fit => "fit",
        }
    }
}

/// One summary row before it is keyed to its run, set, bench and time.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row {
    pub(crate) source: Source,
    /// Model id of a fit, '' for a measurement.
    pub(crate) model: String,
    pub(crate) param: String,
    pub(crate) idx: i64,
    pub(crate) x: Option<f64>,
    pub(crate) value: f64,
    pub(crate) std_error: Option<f64>,
}

/// The analysis fields the summaries read, by kind (the stored `{"kind": ...}` tag).
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Analysis {
    ConstantVelocitySweep {
        #[serde(default)]
        positive: Vec<SteadyPoint>,
        #[serde(default)]
        negative: Vec<SteadyPoint>,
    },
    BreakawayStaircase {
        positive: Option<FsEstimate>,
        negative: Option<FsEstimate>,
        fs_nm: Option<f64>,
    },
    TorqueRamp {
        #[serde(default)]
        positive: Vec<RampRow>,
        #[serde(default)]
        negative: Vec<RampRow>,
    },
    Presliding {
        positive_stiffness_nm_rad: Option<f64>,
        negative_stiffness_nm_rad: Option<f64>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct SteadyPoint {
    velocity_rad_s: f64,
    mean_torque_nm: f64,
    std_torque_nm: f64,
    n: usize,
    /// Points the velocity loop did not hold are no steady state (fits leave them out too).
    #[serde(default)]
    stick_slip: bool,
}

#[derive(Deserialize)]
struct FsEstimate {
    fs_nm: f64,
    std_nm: f64,
    n: usize,
}

#[derive(Deserialize)]
struct RampRow {
    rate_nm_s: f64,
    breakaway_torque_nm: f64,
    std_torque_nm: f64,
    n: usize,
}

/// The standard error of a mean of `n` values with standard deviation `std` (none for n < 2:
/// one value says nothing about its spread).
fn std_error(std: f64, n: usize) -> Option<f64> {
    (n >= 2).then(|| std / (n as f64).sqrt())
}

/// The rows of a run's stored analysis. An analysis that is not JSON of a known shape gives
/// none: summaries never make storing results fail.
pub(crate) fn analysis_rows(analysis: &str) -> Vec<Row> {
    let Ok(analysis) = serde_json::from_str::<Analysis>(analysis) else {
        return Vec::new();
    };
    let mut rows = Rows::default();
    match analysis {
        Analysis::ConstantVelocitySweep { positive, negative } => {
            for p in positive.iter().chain(&negative).filter(|p| !p.stick_slip) {
                let se = std_error(p.std_torque_nm, p.n);
                rows.point(
                    Source::SteadyState,
                    "steady_state_torque_nm",
                    Some(p.velocity_rad_s),
                    p.mean_torque_nm,
                    se,
                );
            }
        }
        Analysis::BreakawayStaircase {
            positive,
            negative,
            fs_nm,
        } => {
            for (param, e) in [
                ("breakaway_pos_nm", &positive),
                ("breakaway_neg_nm", &negative),
            ] {
                if let Some(e) = e {
                    rows.point(
                        Source::Breakaway,
                        param,
                        None,
                        e.fs_nm,
                        std_error(e.std_nm, e.n),
                    );
                }
            }
            if let Some(fs) = fs_nm {
                let se = staircase_fs_error(positive.as_ref(), negative.as_ref());
                rows.point(Source::Breakaway, "fs_nm", None, fs, se);
            }
        }
        Analysis::TorqueRamp { positive, negative } => {
            for (param, side) in [
                ("breakaway_pos_nm", &positive),
                ("breakaway_neg_nm", &negative),
            ] {
                for r in side {
                    let se = std_error(r.std_torque_nm, r.n);
                    rows.point(
                        Source::Breakaway,
                        param,
                        Some(r.rate_nm_s),
                        r.breakaway_torque_nm,
                        se,
                    );
                }
            }
        }
        Analysis::Presliding {
            positive_stiffness_nm_rad,
            negative_stiffness_nm_rad,
        } => {
            for (param, k) in [
                ("stiffness_pos_nm_rad", positive_stiffness_nm_rad),
                ("stiffness_neg_nm_rad", negative_stiffness_nm_rad),
            ] {
                if let Some(k) = k {
                    rows.point(Source::Stiffness, param, None, k, None);
                }
            }
        }
        Analysis::Other => {}
    }
    rows.0
}

/// The standard error of the staircase's `fs_nm`: the mean of the two directions' magnitudes
/// (their errors halved in quadrature), or the one direction measured.
fn staircase_fs_error(pos: Option<&FsEstimate>, neg: Option<&FsEstimate>) -> Option<f64> {
    match (pos, neg) {
        (Some(p), Some(n)) => {
            let (a, b) = (std_error(p.std_nm, p.n)?, std_error(n.std_nm, n.n)?);
            Some(0.5 * (a * a + b * b).sqrt())
        }
        (Some(one), None) | (None, Some(one)) => std_error(one.std_nm, one.n),
        (None, None) => None,
    }
}

/// The provenance fields of a parameter set the summaries read.
#[derive(Deserialize, Default)]
struct Provenance {
    /// The parameters the fit estimated (absent for a set given by hand or replaced).
    fitted: Option<Map<String, Value>>,
    #[serde(default)]
    std_errors: Map<String, Value>,
}

/// The rows of a parameter set of `model`: every parameter the fit estimated with its standard
/// error (`negative.NAME` for an asymmetric model's negative side), or, for a set no fit
/// produced, its numeric parameters without one.
pub(crate) fn set_rows(model: &str, params: &str, provenance: &str) -> Vec<Row> {
    let provenance: Provenance = serde_json::from_str(provenance).unwrap_or_default();
    let values = match provenance.fitted {
        Some(fitted) => fitted,
        None => match serde_json::from_str::<Value>(params) {
            Ok(Value::Object(doc)) => doc,
            _ => return Vec::new(),
        },
    };
    let mut rows = Rows::default();
    for (name, value) in &values {
        match value {
            Value::Object(side) => {
                let errors = provenance.std_errors.get(name).and_then(Value::as_object);
                for (inner, v) in side {
                    let se = errors.and_then(|e| e.get(inner)).and_then(Value::as_f64);
                    rows.fit(model, &format!("{name}.{inner}"), v.as_f64(), se);
                }
            }
            v => {
                let se = provenance.std_errors.get(name).and_then(Value::as_f64);
                rows.fit(model, name, v.as_f64(), se);
            }
        }
    }
    rows.0
}

/// Rows being collected; numbers that are not finite are left out (no point to plot).
#[derive(Default)]
struct Rows(Vec<Row>);

impl Rows {
    fn point(&mut self, source: Source, param: &str, x: Option<f64>, value: f64, se: Option<f64>) {
        self.push(source, "", param, x, Some(value), se);
    }

    fn fit(&mut self, model: &str, param: &str, value: Option<f64>, se: Option<f64>) {
        self.push(Source::Fit, model, param, None, value, se);
    }

    fn push(
        &mut self,
        source: Source,
        model: &str,
        param: &str,
        x: Option<f64>,
        value: Option<f64>,
        se: Option<f64>,
    ) {
        let Some(value) = value.filter(|v| v.is_finite()) else {
            return;
        };
        let idx = self
            .0
            .iter()
            .filter(|r| r.param == param && r.model == model)
            .count() as i64;
        self.0.push(Row {
            source,
            model: model.to_string(),
            param: param.to_string(),
            idx,
            x: x.filter(|x| x.is_finite()),
            value,
            std_error: se.filter(|s| s.is_finite()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sweep_gives_its_held_points_with_standard_errors_of_their_means() {
        let point = |v: f64, f: f64, slip: bool| {
            json!({"setpoint_rad_s": v, "velocity_rad_s": v, "mean_torque_nm": f,
                   "std_torque_nm": 0.04, "n": 16, "stick_slip": slip})
        };
        let analysis = json!({"kind": "constant_velocity_sweep",
            "positive": [point(0.1, 1.2, false), point(0.01, 1.5, true)],
            "negative": [point(-0.1, -1.1, false)]});
        let rows = analysis_rows(&analysis.to_string());
        let got: Vec<_> = rows
            .iter()
            .map(|r| (r.idx, r.x, r.value, r.std_error))
            .collect();
        assert_eq!(
            got,
            [
                (0, Some(0.1), 1.2, Some(0.01)),
                (1, Some(-0.1), -1.1, Some(0.01))
            ]
        );
        assert!(
            rows.iter()
                .all(|r| r.source == Source::SteadyState && r.model.is_empty())
        );
    }

    #[test]
    fn a_staircase_gives_both_directions_and_fs_with_its_error() {
        let analysis = json!({"kind": "breakaway_staircase",
            "positive": {"fs_nm": 1.5, "std_nm": 0.2, "n": 4},
            "negative": {"fs_nm": -1.3, "std_nm": 0.2, "n": 4},
            "fs_nm": 1.4, "stairs": []});
        let rows = analysis_rows(&analysis.to_string());
        let fs = rows.iter().find(|r| r.param == "fs_nm").unwrap();
        assert_eq!(fs.value, 1.4);
        // Each direction's mean has 0.2/2 = 0.1; the mean of the two 0.1/sqrt(2).
        assert!((fs.std_error.unwrap() - 0.1 / 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(
            rows.iter()
                .filter(|r| r.source == Source::Breakaway)
                .count(),
            3
        );
    }

    #[test]
    fn a_ramp_row_per_rate_and_presliding_stiffness_per_direction() {
        let row = |r: f64| {
            json!({"rate_nm_s": r, "breakaway_torque_nm": 1.6, "std_torque_nm": 0.1,
                                  "motion_time_s": 1.0, "n": 1})
        };
        let ramp = json!({"kind": "torque_ramp", "positive": [row(0.5), row(1.0)],
                          "negative": [], "ramps": []});
        let rows = analysis_rows(&ramp.to_string());
        assert_eq!(
            rows.iter().map(|r| (r.idx, r.x)).collect::<Vec<_>>(),
            [(0, Some(0.5)), (1, Some(1.0))]
        );
        // One ramp per rate: no spread to tell the error from.
        assert!(rows.iter().all(|r| r.std_error.is_none()));
        let pre = json!({"kind": "presliding", "ramps": [], "positive_stiffness_nm_rad": 310.0,
                         "negative_stiffness_nm_rad": null, "reversals": null, "sine": null,
                         "step": null});
        let rows = analysis_rows(&pre.to_string());
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].param.as_str(), rows[0].value),
            ("stiffness_pos_nm_rad", 310.0)
        );
    }

    #[test]
    fn kinds_without_trend_numbers_and_broken_json_give_no_rows() {
        assert!(analysis_rows(&json!({"kind": "prbs", "x": 1}).to_string()).is_empty());
        assert!(analysis_rows("{not json").is_empty());
    }

    #[test]
    fn a_fit_gives_its_fitted_parameters_with_their_errors() {
        let params = json!({"fc": 1.0, "fs": 1.5, "vs": 0.01, "sigma0": 1e4});
        let provenance = json!({"runs": [3], "fitted": {"fc": 1.0, "fs": 1.5,
                                "negative": {"fc": 0.9}},
            "std_errors": {"fc": 0.01, "fs": 0.02, "negative": {"fc": 0.03}}});
        let rows = set_rows("lugre", &params.to_string(), &provenance.to_string());
        let got: Vec<_> = rows
            .iter()
            .map(|r| (r.param.as_str(), r.value, r.std_error))
            .collect();
        assert_eq!(
            got,
            [
                ("fc", 1.0, Some(0.01)),
                ("fs", 1.5, Some(0.02)),
                ("negative.fc", 0.9, Some(0.03))
            ]
        );
        assert!(
            rows.iter()
                .all(|r| r.model == "lugre" && r.source == Source::Fit)
        );
        // A set given by hand: its numbers, no standard errors.
        let rows = set_rows(
            "coulomb",
            &json!({"fc": 2.0, "name": "x"}).to_string(),
            "{}",
        );
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].value, rows[0].std_error), (2.0, None));
    }
}
