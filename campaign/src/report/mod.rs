//! The campaign report: one self-contained HTML file (inline CSS and SVG, no script, nothing
//! fetched), the plain-language answer at the top, then the Stribeck curve with the measured
//! points and every fitted curve, breakaway against torque rate, the presliding loops, the
//! comparison and compensation rankings, every parameter with its unit, standard error and
//! verdict, and the bench's configuration and software version.

mod params;
mod plot;

use crate::Step;
use crate::record::{Record, StepRecord};
use bench_daemon::config::Geometry;
use friction::registry;
use plot::{Axis, Mark, Series, svg};
use serde_json::Value;
use std::fmt::Write;

/// What the report shows besides the campaign record (read by the caller from the store).
#[derive(Debug, Default)]
pub struct Extra {
    /// The comparison table.
    pub comparison: Value,
    /// Each model's final stored parameter set.
    pub params: Vec<(String, Value)>,
    /// Presliding loops: (position \[rad\], friction \[N m\]) of the presliding run, decimated.
    pub presliding: Vec<(f64, f64)>,
}

/// Colours of the series (one per model, then measured points).
const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

/// The whole page.
pub fn html(c: &Record, x: &Extra, g: Geometry) -> String {
    let (f, p) = (g.force(), g.position());
    let v = format!("{p}/s");
    let mut h = String::new();
    let title = format!("frictionbench characterisation campaign {}", c.id);
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>{CSS}</style></head><body><h1>{title}</h1>"
    );
    headline(&mut h, c);
    if let Some(r) = &c.reason {
        let _ = write!(h, "<p class=\"warn\">{}</p>", esc(r));
    }
    ranking(&mut h, c, f);
    compensation(&mut h, c);
    h.push_str("<h2>Stribeck curve</h2>");
    h.push_str(&stribeck_svg(c, x, f, &v));
    h.push_str("<h2>Breakaway against torque rate</h2>");
    h.push_str(&breakaway_svg(c, f));
    h.push_str("<h2>Presliding loops</h2>");
    let (xa, ya) = (
        Axis {
            name: "position",
            unit: p,
            log: false,
        },
        Axis {
            name: "friction",
            unit: f,
            log: false,
        },
    );
    let loops = Series {
        label: "presliding run".into(),
        colour: COLOURS[0],
        points: x.presliding.clone(),
        mark: Mark::Dot,
    };
    h.push_str(&svg(&[loops], xa, ya, &x.presliding));
    params::parameters(&mut h, c, g);
    steps(&mut h, c);
    let _ = write!(
        h,
        "<h2>Bench configuration</h2><pre>{}</pre><h2>Request</h2><pre>{}</pre></body></html>",
        esc(&pretty(&c.bench)),
        esc(&pretty(
            &serde_json::to_value(&c.request).unwrap_or_default()
        ))
    );
    h
}

/// The answer in its box, with its caveats; red when no model describes the bench.
fn headline(h: &mut String, c: &Record) {
    let a = c.answer.judged.as_ref();
    let text = a.map_or("The campaign has not finished.", |a| a.text.as_str());
    let class = if a.is_some_and(|a| a.adequate == Some(false)) {
        "answer inadequate"
    } else {
        "answer"
    };
    let _ = write!(
        h,
        "<div class=\"{class}\" id=\"answer\"><p>{}</p>",
        esc(text)
    );
    let caveats: &[String] = a.map_or(&[], |a| &a.caveats);
    if !caveats.is_empty() {
        h.push_str("<ul class=\"caveats\">");
        for k in caveats {
            let _ = write!(h, "<li>{}</li>", esc(k));
        }
        h.push_str("</ul>");
    }
    let _ = write!(
        h,
        "</div><p class=\"meta\">status {} · created {} · bench time {:.0} s · frictionbench {}</p>",
        c.status,
        esc(&c.created_at),
        c.bench_time(),
        esc(&c.software_version)
    );
}

/// The unit of a squared quantity: each factor squared (`N m` → `N² m²`).
pub fn squared(unit: &str) -> String {
    unit.split(' ')
        .map(|u| format!("{u}²"))
        .collect::<Vec<_>>()
        .join(" ")
}

const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}\
.answer{font-size:1.3rem;font-weight:600;background:#eef6ee;border-left:6px solid #2ca02c;padding:.8rem}\
.inadequate{background:#fdecea;border-left-color:#d62728}.caveats{font-size:1rem;font-weight:400}.range{color:#555;font-size:.85rem}\
.warn{background:#fdecea;border-left:6px solid #d62728;padding:.6rem}.meta{color:#666}\
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}pre{background:#f8f8f8;padding:.5rem;overflow:auto;font-size:.8rem}\
svg{background:#fff;border:1px solid #ddd}";

fn ranking(h: &mut String, c: &Record, f: &str) {
    let f2 = squared(f);
    let _ = write!(
        h,
        "<h2>Models ranked on the validation run</h2><table id=\"ranking\"><tr><th>rank</th><th>model</th>\
         <th>validation RMS [{f}]</th><th>validation MSE [{f2}]</th><th>note</th></tr>"
    );
    let a = c.answer.judged.as_ref();
    for r in a.map_or(&[][..], |a| &a.ranking) {
        let note: Vec<&str> = [&r.note, &r.tie, &r.error]
            .into_iter()
            .filter_map(|n| n.as_deref())
            .collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r.rank_text(),
            esc(&r.model),
            number(r.validation_rms),
            number(r.validation_mse),
            esc(&note.join("; "))
        );
    }
    let mut extra = |name: &str, mse: f64| {
        let _ = write!(
            h,
            "<tr><td>–</td><td>{name}</td><td>{:.4}</td><td>{mse:.3e}</td><td></td></tr>",
            mse.sqrt()
        );
    };
    if let Some(t) = a.and_then(|a| a.floor_mse) {
        extra("the floor: repeatability + encoder resolution", t);
    }
    if let Some(p) = a.and_then(|a| a.floor_parts.as_ref()) {
        extra(
            "the bench's repeatability (validation profile run twice)",
            p.repeat_mse,
        );
        if let Some(r) = p.resolution_mse {
            let model = p.model.as_deref().unwrap_or("the best model");
            extra(
                &format!(
                    "the encoder's resolution ({} on dithered angles)",
                    esc(model)
                ),
                r,
            );
        }
    }
    if let Some(t) = c.answer.truth_validation_mse.flatten() {
        extra("true model (simulated bench)", t);
    }
    h.push_str("</table>");
}

fn compensation(h: &mut String, c: &Record) {
    h.push_str("<h2>Compensation trial</h2><table id=\"compensation\"><tr><th>rank</th><th>compensator</th><th>RMS tracking error [mrad]</th><th>max [mrad]</th><th>improvement vs none [%]</th><th>unstable</th></tr>");
    let trials = c
        .answer
        .judged
        .as_ref()
        .map_or(&[][..], |a| &a.compensation);
    for r in trials {
        let mrad = |x: f64| format!("{:.3}", 1e3 * x);
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r.rank,
            esc(&r.name),
            mrad(r.rms_error),
            mrad(r.max_error),
            r.improvement_pct.map_or("–".into(), |x| format!("{x:+.1}")),
            r.unstable
        );
    }
    h.push_str("</table>");
}

fn steps(h: &mut String, c: &Record) {
    h.push_str("<h2>Steps</h2><table id=\"steps\"><tr><th>step</th><th>status</th><th>run</th><th>bench time [s]</th><th>spec</th></tr>");
    for s in c.steps.iter().chain(c.answer.trial()) {
        let params = s.spec.get("params").unwrap_or(&Value::Null);
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            s.name,
            s.status,
            s.run_id,
            number(Some(s.bench_time_s)),
            esc(&params.to_string())
        );
    }
    h.push_str("</table>");
}

/// Measured Stribeck points (|v|, |torque|) per direction of the sweep step: the held points
/// (`slipped` false) or those left out of the fits for stick-slip (`slipped` true).
fn sweep_points(c: &Record, positive: bool, slipped: bool) -> Vec<(f64, f64)> {
    let sweep = c.step(Step::Sweep).and_then(StepRecord::stribeck_points);
    sweep
        .map(|s| if positive { &s.positive } else { &s.negative })
        .into_iter()
        .flatten()
        .filter(|p| p.stick_slip == slipped)
        .map(|p| (p.velocity_rad_s.abs(), p.mean_torque_nm.abs()))
        .filter(|p| p.0 > 0.0)
        .collect()
}

/// A fitted set's steady-state friction magnitude over `speeds` \[N m\], from the model's own
/// law (the friction crate's registry, as `POST /api/curves` draws it for the dashboard), not a
/// copy of it: on the negative side (`negative`, the set's overrides apply) at `-speed`. Points
/// where the model defines none are left out; a set that does not build draws nothing.
pub fn steady_state_curve(
    model: &str,
    params: &Value,
    speeds: &[f64],
    negative: bool,
) -> Vec<(f64, f64)> {
    let spec = registry::ModelSpec {
        model: model.into(),
        params: params.clone(),
    };
    let Ok(m) = registry::split_offset(&spec).and_then(|(s, _)| registry::build_model(&s)) else {
        return Vec::new();
    };
    let sign = if negative { -1.0 } else { 1.0 };
    speeds
        .iter()
        .filter_map(|&s| Some((s, m.steady_state(sign * s)?.abs())))
        .filter(|p| p.1.is_finite())
        .collect()
}

fn stribeck_svg(c: &Record, x: &Extra, f: &str, v: &str) -> String {
    let dot = |label: &str, colour, points, mark| Series {
        label: label.into(),
        colour,
        points,
        mark,
    };
    let mut series = vec![
        dot(
            "measured +",
            COLOURS[4],
            sweep_points(c, true, false),
            Mark::Dot,
        ),
        dot(
            "measured −",
            COLOURS[5],
            sweep_points(c, false, false),
            Mark::Dot,
        ),
    ];
    let slipped: Vec<(f64, f64)> = [true, false]
        .into_iter()
        .flat_map(|d| sweep_points(c, d, true))
        .collect();
    if !slipped.is_empty() {
        series.push(dot(
            "stick-slip, left out",
            COLOURS[5],
            slipped,
            Mark::Hollow,
        ));
    }
    let measured: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.clone()).collect();
    let speeds = measured.iter().map(|p| p.0);
    let lo = speeds.clone().fold(f64::INFINITY, f64::min).max(1e-4);
    let hi = speeds.fold(0.0, f64::max).max(lo * 10.0);
    let grid: Vec<f64> = (0..=120)
        .map(|i| lo * (hi / lo).powf(f64::from(i) / 120.0))
        .collect();
    for (i, (m, p)) in x.params.iter().enumerate() {
        let curve = |neg: bool| steady_state_curve(m, p, &grid, neg);
        series.push(dot(
            &format!("{m} +"),
            COLOURS[i % 4],
            curve(false),
            Mark::Line,
        ));
        if p["negative"].is_object() {
            series.push(dot(
                &format!("{m} −"),
                COLOURS[i % 4],
                curve(true),
                Mark::Line,
            ));
        }
    }
    let xa = Axis {
        name: "|velocity|",
        unit: v,
        log: true,
    };
    let ya = Axis {
        name: "|friction|",
        unit: f,
        log: false,
    };
    svg(&series, xa, ya, &measured)
}

fn breakaway_svg(c: &Record, f: &str) -> String {
    let table = c.step(Step::Breakaway).and_then(StepRecord::breakaway);
    let rows = |d: &str| -> Vec<(f64, f64)> {
        table
            .map(|t| {
                if d == "positive" {
                    &t.positive
                } else {
                    &t.negative
                }
            })
            .into_iter()
            .flatten()
            .map(|r| (r.rate_nm_s.abs(), r.breakaway_torque_nm.abs()))
            .collect()
    };
    let series = [("positive", 0), ("negative", 1)].map(|(d, i)| Series {
        label: d.into(),
        colour: COLOURS[i],
        points: rows(d),
        mark: Mark::Dot,
    });
    let measured: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.clone()).collect();
    let rate = format!("{f}/s");
    let xa = Axis {
        name: "torque rate",
        unit: &rate,
        log: false,
    };
    let ya = Axis {
        name: "breakaway",
        unit: f,
        log: false,
    };
    svg(&series, xa, ya, &measured)
}

/// JSON shown as it is stored (keys sorted).
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A number for a table (`–` when absent or not a number).
pub(super) fn num(v: &Value) -> String {
    number(v.as_f64())
}

/// A number for a table (`–` when absent).
pub(super) fn number(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| {
        if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e5) {
            format!("{x:.4e}")
        } else {
            format!("{x:.4}")
        }
    })
}

/// HTML-escapes text.
pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests;
