//! How `bench fit` prints a report as text: values with their units, standard errors and 95 %
//! intervals, the goodness of fit, the quality figures and the verdict.

use bench_daemon::config::Geometry;
use friction::identify::procedures::FitReport;
use friction::identify::procedures::quality::Status;
use serde_json::Value;

/// Prints the report (and the saved parameter set, if any).
pub(super) fn print(
    json: bool,
    config: Option<&std::path::Path>,
    report: &FitReport,
    saved: Option<(i64, &str)>,
) -> anyhow::Result<()> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &bench_daemon::fitting::fit::report_json(report, saved)
                    .map_err(bench_daemon::fitting::FitError::into_cli)?
            )?
        );
        return Ok(());
    }
    let geometry = bench_daemon::config::geometry_of(config)?;
    let p = &report.provenance;
    println!(
        "model {}  procedure {}  method {}  (units: {} bench)",
        p.model,
        p.procedure,
        p.method,
        geometry.name()
    );
    let units = Units {
        model: &p.model,
        geometry,
    };
    print_params(&units, "", &report.params, &report.std_errors);
    print_intervals(&units, "", &report.ci95);
    if let Some(mse) = report.mse {
        println!("mse {mse:e} {}", residual_unit(report, geometry));
    }
    if let (Some(r2), Some(aic), Some(bic)) = (report.r2, report.aic, report.bic) {
        println!("R² {r2:.6}  AIC {aic:.6e}  BIC {bic:.6e}");
    }
    if let Some(n) = report.n_eff {
        println!("effective samples {n:.0} of {}", p.n_points);
    }
    let range = p
        .time_range_s
        .map(|[a, b]| format!(", t {a}..{b} s"))
        .unwrap_or_default();
    println!(
        "data: {} points, columns {}{range}",
        p.n_points,
        p.columns.join(",")
    );
    print_quality(report);
    for n in &p.notes {
        println!("note: {n}");
    }
    if let Some((id, name)) = saved {
        println!("saved parameter set {id} '{name}'");
    }
    Ok(())
}

/// How the printed parameters get their units.
struct Units<'a> {
    model: &'a str,
    geometry: Geometry,
}

impl Units<'_> {
    fn of(&self, name: &str) -> String {
        friction::units::param_unit(self.model, name, self.geometry)
            .filter(|u| u != "-")
            .map(|u| format!(" {u}"))
            .unwrap_or_default()
    }
}

/// The unit of the MSE: the squared residual (position in a torque replay, else friction).
fn residual_unit(report: &FitReport, g: Geometry) -> String {
    let position = report
        .details
        .pointer("/settings/replay/kind")
        .and_then(Value::as_str)
        == Some("torque");
    format!("({})^2", if position { g.position() } else { g.force() })
}

/// Termination, parameters at a bound, relative errors, condition and the verdict.
fn print_quality(report: &FitReport) {
    if let Some(t) = report.termination {
        let t = serde_json::to_value(t).unwrap_or_default();
        println!("termination: {}", t.as_str().unwrap_or_default());
    }
    if !report.at_bound.is_empty() {
        println!("at bound: {}", report.at_bound.join(", "));
    }
    if let Some(c) = report.condition {
        println!("condition (scaled JᵀJ): {c:.3e}");
    }
    let v = &report.verdict;
    match v.status {
        Status::Ok => println!("verdict: ok"),
        Status::Warning => {
            println!("verdict: WARNING");
            for r in &v.reasons {
                println!("  - {r}");
            }
        }
    }
    if let Some(d) = &v.directions {
        println!("directions: {d}");
    }
    for h in &report.validation {
        let r2 = h.r2.map_or("-".to_string(), |r2| format!("{r2:.6}"));
        println!(
            "held out {}: relative error {:.3} %, rms {:e}, R² {r2}, {} samples ({})",
            h.record, h.rel_error_pct, h.rms, h.n, h.compared
        );
    }
}

/// `name in [low, high] unit (95 %)` per interval, recursing into the negative set.
fn print_intervals(units: &Units<'_>, prefix: &str, ci: &serde_json::Map<String, Value>) {
    for (name, v) in ci {
        match v {
            Value::Object(sub) => print_intervals(units, &format!("{prefix}{name}."), sub),
            Value::Array(a) if a.len() == 2 => {
                let (lo, hi) = (a[0].as_f64(), a[1].as_f64());
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    println!(
                        "{prefix}{name} in [{lo:e}, {hi:e}]{} (95 %)",
                        units.of(name)
                    );
                }
            }
            _ => {}
        }
    }
}

fn print_params(
    units: &Units<'_>,
    prefix: &str,
    params: &serde_json::Map<String, serde_json::Value>,
    errors: &serde_json::Map<String, serde_json::Value>,
) {
    for (name, value) in params {
        match value {
            serde_json::Value::Object(sub) => {
                let empty = serde_json::Map::new();
                let sub_err = errors
                    .get(name)
                    .and_then(|e| e.as_object())
                    .unwrap_or(&empty);
                print_params(units, &format!("{prefix}{name}."), sub, sub_err);
            }
            v => {
                let unit = units.of(name);
                match (errors.get(name).and_then(|e| e.as_f64()), v.as_f64()) {
                    (Some(se), Some(x)) if x != 0.0 => println!(
                        "{prefix}{name} = {v}{unit}  ± {se:e}{unit} ({:.2} %)",
                        100.0 * se / x.abs()
                    ),
                    (Some(se), _) => println!("{prefix}{name} = {v}{unit}  ± {se:e}{unit}"),
                    (None, _) => println!("{prefix}{name} = {v}{unit}"),
                }
            }
        }
    }
}
