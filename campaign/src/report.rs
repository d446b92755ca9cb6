//! The campaign report: one self-contained HTML file (inline CSS and SVG, no script, nothing
//! fetched), the plain-language answer at the top, then the Stribeck curve with the measured
//! points and every fitted curve, breakaway against torque rate, the presliding loops, the
//! comparison and compensation rankings, every parameter with its unit, standard error and
//! verdict, and the bench's configuration and software version.

use bench_daemon::config::Geometry;
use friction::units::param_unit;
use run_store::Campaign;
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
pub fn html(c: &Campaign, x: &Extra, g: Geometry) -> String {
    let (f, p) = (g.force(), g.position());
    let v = format!("{p}/s");
    let mut h = String::new();
    let title = format!("frictionbench characterisation campaign {}", c.id);
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>{CSS}</style></head><body><h1>{title}</h1>"
    );
    let answer = c.answer["text"]
        .as_str()
        .unwrap_or("The campaign has not finished.");
    let _ = write!(
        h,
        "<p class=\"answer\" id=\"answer\">{}</p><p class=\"meta\">status {} · created {} · \
         bench time {:.0} s · frictionbench {}</p>",
        esc(answer),
        c.status,
        esc(&c.created_at),
        super::bench_time(c),
        esc(&c.software_version)
    );
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
    h.push_str(&svg(
        &[(
            "presliding run".into(),
            COLOURS[0],
            x.presliding.clone(),
            true,
        )],
        &format!("position [{p}]"),
        &format!("friction [{f}]"),
        false,
    ));
    parameters(&mut h, c, g);
    steps(&mut h, c);
    let _ = write!(
        h,
        "<h2>Bench configuration</h2><pre>{}</pre><h2>Request</h2><pre>{}</pre></body></html>",
        esc(&serde_json::to_string_pretty(&c.bench).unwrap_or_default()),
        esc(&serde_json::to_string_pretty(&c.request).unwrap_or_default())
    );
    h
}

const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}\
.answer{font-size:1.3rem;font-weight:600;background:#eef6ee;border-left:6px solid #2ca02c;padding:.8rem}\
.warn{background:#fdecea;border-left:6px solid #d62728;padding:.6rem}.meta{color:#666}\
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}pre{background:#f8f8f8;padding:.5rem;overflow:auto;font-size:.8rem}\
svg{background:#fff;border:1px solid #ddd}";

fn ranking(h: &mut String, c: &Campaign, f: &str) {
    h.push_str("<h2>Models ranked on the validation run</h2><table id=\"ranking\"><tr><th>rank</th><th>model</th>");
    let _ = write!(
        h,
        "<th>validation RMS [{f}]</th><th>validation MSE [{f}²]</th><th>note</th></tr>"
    );
    for r in c.answer["ranking"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r["rank"],
            esc(r["model"].as_str().unwrap_or("")),
            num(&r["validation_rms"]),
            num(&r["validation_mse"]),
            esc(r["note"].as_str().unwrap_or(""))
        );
    }
    if let Some(t) = c.answer["truth_validation_mse"].as_f64() {
        let _ = write!(
            h,
            "<tr><td>–</td><td>true model (simulated bench)</td><td>{:.4}</td><td>{t:.3e}</td><td></td></tr>",
            t.sqrt()
        );
    }
    h.push_str("</table>");
}

fn compensation(h: &mut String, c: &Campaign) {
    h.push_str("<h2>Compensation trial</h2><table id=\"compensation\"><tr><th>rank</th><th>compensator</th><th>RMS tracking error [mrad]</th><th>max [mrad]</th><th>improvement vs none [%]</th><th>unstable</th></tr>");
    for r in c.answer["compensation"].as_array().into_iter().flatten() {
        let mrad = |k: &str| {
            r[k].as_f64()
                .map_or("–".into(), |x| format!("{:.3}", 1e3 * x))
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r["rank"],
            esc(r["name"].as_str().unwrap_or("")),
            mrad("rms_error"),
            mrad("max_error"),
            r["improvement_pct"]
                .as_f64()
                .map_or("–".into(), |x| format!("{x:+.1}")),
            r["unstable"]
        );
    }
    h.push_str("</table>");
}

fn parameters(h: &mut String, c: &Campaign, g: Geometry) {
    h.push_str("<h2>Parameters</h2>");
    for fit in &c.fits {
        let model = fit["model"].as_str().unwrap_or("");
        let _ = write!(
            h,
            "<h3>{} · {} on run {}</h3>",
            esc(model),
            esc(fit["procedure"].as_str().unwrap_or("")),
            fit["run_id"]
        );
        if let Some(e) = fit["error"].as_str() {
            let _ = write!(h, "<p class=\"warn\">{}</p>", esc(e));
            continue;
        }
        let r = &fit["report"];
        let v = &r["verdict"];
        if let Some(note) = fit["note"].as_str()
            && !v["reasons"]
                .as_array()
                .is_some_and(|rs| rs.iter().any(|x| x == note))
        {
            let _ = write!(h, "<p class=\"warn\">{}</p>", esc(note));
        }
        let _ = write!(
            h,
            "<p>verdict <b>{}</b>{}</p><table><tr><th>parameter</th><th>value</th><th>standard error</th><th>95 % interval</th><th>unit</th></tr>",
            esc(v["status"].as_str().unwrap_or("?")),
            v["reasons"]
                .as_array()
                .map(|rs| rs
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|s| format!(": {}", esc(s)))
                    .collect::<String>())
                .unwrap_or_default()
        );
        for (k, val) in r["params"].as_object().into_iter().flatten() {
            let ci = &r["ci95"][k];
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(k),
                num(val),
                num(&r["std_errors"][k]),
                if ci.is_array() {
                    format!("[{}, {}]", num(&ci[0]), num(&ci[1]))
                } else {
                    "–".into()
                },
                esc(&param_unit(model, k, g).unwrap_or_default())
            );
        }
        h.push_str("</table>");
    }
}

fn steps(h: &mut String, c: &Campaign) {
    h.push_str("<h2>Steps</h2><table id=\"steps\"><tr><th>step</th><th>status</th><th>run</th><th>bench time [s]</th><th>spec</th></tr>");
    for s in c
        .steps
        .iter()
        .chain(std::iter::once(&c.answer["trial"]).filter(|t| t.is_object()))
    {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            esc(s["name"].as_str().unwrap_or("")),
            esc(s["status"].as_str().unwrap_or("")),
            s["run_id"],
            num(&s["bench_time_s"]),
            esc(&s["spec"]["params"].to_string())
        );
    }
    h.push_str("</table>");
}

/// Measured Stribeck points (|v|, |torque|) per direction of the sweep step (held points only).
fn sweep_points(c: &Campaign, dir: &str) -> Vec<(f64, f64)> {
    super::step(c, "sweep")
        .and_then(|s| s["results"][dir].as_array())
        .into_iter()
        .flatten()
        .filter(|p| p["stick_slip"] != Value::Bool(true))
        .filter_map(|p| {
            Some((
                p["velocity_rad_s"].as_f64()?.abs(),
                p["mean_torque_nm"].as_f64()?.abs(),
            ))
        })
        .filter(|p| p.0 > 0.0)
        .collect()
}

/// The steady-state level of a fitted set at speed `v` \[N m\] (positive side, or the
/// `negative` set's overrides).
pub fn steady_state(params: &Value, v: f64, negative: bool) -> Option<f64> {
    let get = |k: &str| {
        negative
            .then(|| params["negative"][k].as_f64())
            .flatten()
            .or_else(|| params[k].as_f64())
    };
    let fc = get("fc")?;
    let fs = get("fs").unwrap_or(fc);
    let fv = get("fv").or_else(|| get("sigma2")).unwrap_or(0.0);
    let level = match (get("vs"), get("delta")) {
        (Some(vs), d) if vs > 0.0 => {
            friction::curve::stribeck_level(v, fc, fs, vs, d.unwrap_or(2.0))
        }
        _ => fc,
    };
    Some(level + fv * v)
}

fn stribeck_svg(c: &Campaign, x: &Extra, f: &str, v: &str) -> String {
    let pos = sweep_points(c, "positive");
    let neg = sweep_points(c, "negative");
    let all: Vec<f64> = pos.iter().chain(&neg).map(|p| p.0).collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min).max(1e-4);
    let hi = all.iter().copied().fold(0.0, f64::max).max(lo * 10.0);
    let grid: Vec<f64> = (0..=120)
        .map(|i| lo * (hi / lo).powf(f64::from(i) / 120.0))
        .collect();
    let mut series = vec![
        ("measured +".to_string(), COLOURS[4], pos, true),
        ("measured −".to_string(), COLOURS[5], neg, true),
    ];
    for (i, (m, p)) in x.params.iter().enumerate() {
        let curve = |neg: bool| {
            grid.iter()
                .filter_map(|&s| Some((s, steady_state(p, s, neg)?)))
                .collect::<Vec<_>>()
        };
        series.push((format!("{m} +"), COLOURS[i % 4], curve(false), false));
        if p["negative"].is_object() {
            series.push((format!("{m} −"), COLOURS[i % 4], curve(true), false));
        }
    }
    svg(
        &series,
        &format!("|velocity| [{v}] (log)"),
        &format!("|friction| [{f}]"),
        true,
    )
}

fn breakaway_svg(c: &Campaign, f: &str) -> String {
    let rows = |d: &str| -> Vec<(f64, f64)> {
        super::step(c, "breakaway")
            .and_then(|s| s["results"][d].as_array())
            .into_iter()
            .flatten()
            .filter_map(|r| {
                Some((
                    r["rate_nm_s"].as_f64()?.abs(),
                    r["breakaway_torque_nm"].as_f64()?.abs(),
                ))
            })
            .collect()
    };
    svg(
        &[
            ("positive".into(), COLOURS[0], rows("positive"), true),
            ("negative".into(), COLOURS[1], rows("negative"), true),
        ],
        &format!("torque rate [{f}/s]"),
        &format!("breakaway [{f}]"),
        false,
    )
}

/// One plotted series: label, colour, points, drawn as dots (else a line).
type Series<'a> = (String, &'a str, Vec<(f64, f64)>, bool);

/// A line/point plot as inline SVG.
fn svg(series: &[Series], xl: &str, yl: &str, logx: bool) -> String {
    let (w, hgt, m) = (720.0, 360.0, 55.0);
    let tx = |x: f64| if logx { x.max(1e-12).log10() } else { x };
    let pts = series
        .iter()
        .flat_map(|s| s.2.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for p in pts {
        x0 = x0.min(tx(p.0));
        x1 = x1.max(tx(p.0));
        y0 = y0.min(p.1);
        y1 = y1.max(p.1);
    }
    if !(x0.is_finite() && y0.is_finite()) {
        return "<p>no data</p>".into();
    }
    if x1 - x0 < 1e-12 {
        x1 = x0 + 1.0;
    }
    if y1 - y0 < 1e-12 {
        y1 = y0 + 1.0;
    }
    let pad = 0.05 * (y1 - y0);
    let (y0, y1) = (y0 - pad, y1 + pad);
    let sx = |x: f64| m + (tx(x) - x0) / (x1 - x0) * (w - 2.0 * m);
    let sy = |y: f64| hgt - m - (y - y0) / (y1 - y0) * (hgt - 2.0 * m);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\" font-size=\"11\">"
    );
    let _ = write!(
        s,
        "<rect x=\"{m}\" y=\"{m}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>",
        w - 2.0 * m,
        hgt - 2.0 * m
    );
    for i in 0..=4 {
        let fx = x0 + (x1 - x0) * f64::from(i) / 4.0;
        let fy = y0 + (y1 - y0) * f64::from(i) / 4.0;
        let xv = if logx { 10f64.powf(fx) } else { fx };
        let px = m + (w - 2.0 * m) * f64::from(i) / 4.0;
        let _ = write!(
            s,
            "<text x=\"{px}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            hgt - m + 15.0,
            short(xv)
        );
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            m - 4.0,
            sy(fy) + 4.0,
            short(fy)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        w / 2.0,
        hgt - 12.0,
        esc(xl)
    );
    let _ = write!(
        s,
        "<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>",
        hgt / 2.0,
        hgt / 2.0,
        esc(yl)
    );
    for (i, (label, colour, points, dots)) in series.iter().enumerate() {
        let ok = points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite() && (!logx || p.0 > 0.0));
        if *dots {
            for p in ok {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{colour}\"/>",
                    sx(p.0),
                    sy(p.1)
                );
            }
        } else {
            let d: Vec<String> = ok
                .map(|p| format!("{:.1},{:.1}", sx(p.0), sy(p.1)))
                .collect();
            let _ = write!(
                s,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>",
                d.join(" ")
            );
        }
        let ly = m + 14.0 * i as f64 + 10.0;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{ly}\" fill=\"{colour}\">{}</text>",
            w - m - 120.0,
            esc(label)
        );
    }
    s.push_str("</svg>");
    s
}

fn short(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-2 || x.abs() >= 1e4) {
        format!("{x:.1e}")
    } else {
        format!("{x:.3}")
    }
}

fn num(v: &Value) -> String {
    v.as_f64().map_or("–".into(), |x| {
        if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e5) {
            format!("{x:.4e}")
        } else {
            format!("{x:.4}")
        }
    })
}

/// HTML-escapes text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
