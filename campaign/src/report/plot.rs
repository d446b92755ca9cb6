//! The report's plots as inline SVG: round ticks (1, 2 or 5 times a power of ten) with an SI
//! prefix on the unit (a linear axis: one prefix for the axis, `friction [mN m]`; a log axis:
//! decades, each labelled with its own prefix, `10 mrad/s`), points left out of the fits drawn
//! hollow, and the measured range stated under the plot.

use std::fmt::Write;

/// One plotted series.
#[derive(Clone, Debug)]
pub struct Series<'a> {
    /// Legend text.
    pub label: String,
    /// Stroke and fill colour.
    pub colour: &'a str,
    /// Points (x, y) in the axes' SI units.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub mark: Mark,
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Filled dots (measured points used).
    Dot,
    /// Hollow circles (measured points left out of the fits).
    Hollow,
    /// A line (a fitted curve).
    Line,
}

/// An axis: its name, SI unit, and whether it is logarithmic.
#[derive(Clone, Copy, Debug)]
pub struct Axis<'a> {
    /// What is plotted (`|velocity|`).
    pub name: &'a str,
    /// Its SI unit (`rad/s`).
    pub unit: &'a str,
    /// Log scale.
    pub log: bool,
}

/// SI prefixes from 1e-9 to 1e9.
const PREFIXES: [(&str, i32); 7] = [
    ("n", -9),
    ("µ", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
];

/// The prefix for values of magnitude `x` (the largest whose scale does not exceed it).
pub fn prefix(x: f64) -> (&'static str, f64) {
    let e = if x > 0.0 && x.is_finite() {
        x.log10().floor() as i32
    } else {
        0
    };
    let (p, k) = PREFIXES
        .iter()
        .rev()
        .find(|(_, k)| *k <= e)
        .copied()
        .unwrap_or(PREFIXES[0]);
    (p, 10f64.powi(k))
}

/// Round ticks covering `[lo, hi]`: multiples of 1, 2 or 5 times a power of ten, about `n`.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).abs().max(f64::MIN_POSITIVE);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    (first..=last)
        .map(|i| {
            let t = i as f64 * step;
            // Rounded to the step's digits, so labels read 0.3, not 0.30000000000000004.
            let d = 10f64.powi((-step.log10().floor() as i32 + 1).max(0));
            (t * d).round() / d
        })
        .collect()
}

/// A tick's number divided by `scale`, with no trailing zeros.
pub fn label(x: f64, scale: f64) -> String {
    let v = x / scale;
    if v == 0.0 {
        return "0".into();
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.replace('-', "−")
}

/// A value with its unit and SI prefix (`2.5 mrad/s`).
pub fn with_unit(x: f64, unit: &str) -> String {
    let (p, k) = prefix(x.abs());
    format!("{} {p}{unit}", label(x, k))
}

/// The measured range of `points` (x and y), stated in words.
pub fn range_text(x: Axis, y: Axis, points: &[(f64, f64)]) -> String {
    let ok: Vec<&(f64, f64)> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    if ok.is_empty() {
        return "nothing measured".into();
    }
    let span = |f: &dyn Fn(&(f64, f64)) -> f64, unit: &str| {
        let lo = ok.iter().map(|p| f(p)).fold(f64::INFINITY, f64::min);
        let hi = ok.iter().map(|p| f(p)).fold(f64::NEG_INFINITY, f64::max);
        format!("{} to {}", with_unit(lo, unit), with_unit(hi, unit))
    };
    format!(
        "measured: {} {}, {} {} ({} points)",
        x.name,
        span(&|p| p.0, x.unit),
        y.name,
        span(&|p| p.1, y.unit),
        ok.len()
    )
}

const W: f64 = 720.0;
const H: f64 = 360.0;
const M: f64 = 60.0;

/// A plot of `series` with the measured range of `measured` stated under it.
pub fn svg(series: &[Series], x: Axis, y: Axis, measured: &[(f64, f64)]) -> String {
    let tx = |v: f64| if x.log { v.max(1e-300).log10() } else { v };
    let ok = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite() && (!x.log || p.0 > 0.0);
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(ok)
        .copied()
        .collect();
    if all.is_empty() {
        return "<p class=\"range\">no data</p>".into();
    }
    let fold = |f: fn(&(f64, f64)) -> f64| {
        all.iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |a, v| {
                (a.0.min(v), a.1.max(v))
            })
    };
    let (x0, x1) = fold(|p| p.0);
    let (y0, y1) = fold(|p| p.1);
    let (x0, x1, xt) = if x.log {
        let (a, b) = (
            x0.log10().floor(),
            x1.log10().ceil().max(x0.log10().floor() + 1.0),
        );
        let t: Vec<f64> = (a as i32..=b as i32).map(|e| 10f64.powi(e)).collect();
        (a, b, t)
    } else {
        let t = ticks(x0, if x1 > x0 { x1 } else { x0 + 1.0 }, 5);
        (t[0], t[t.len() - 1], t)
    };
    let yt = ticks(y0, if y1 > y0 { y1 } else { y0 + 1.0 }, 5);
    let (y0, y1) = (yt[0], yt[yt.len() - 1]);
    let sx = |v: f64| M + (tx(v) - x0) / (x1 - x0) * (W - 2.0 * M);
    let sy = |v: f64| H - M - (v - y0) / (y1 - y0) * (H - 2.0 * M);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-size=\"11\">\
         <rect x=\"{M}\" y=\"{M}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>",
        W - 2.0 * M,
        H - 2.0 * M
    );
    let (ypre, yk) = prefix(yt.iter().fold(0.0, |a: f64, t| a.max(t.abs())));
    let (xpre, xk) = prefix(xt.iter().fold(0.0, |a: f64, t| a.max(t.abs())));
    for t in &xt {
        let text = if x.log {
            with_unit(*t, x.unit)
        } else {
            label(*t, xk)
        };
        let _ = write!(
            s,
            "<text class=\"xtick\" x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{text}</text>",
            sx(*t),
            H - M + 15.0
        );
    }
    for t in &yt {
        let _ = write!(
            s,
            "<text class=\"ytick\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            M - 4.0,
            sy(*t) + 4.0,
            label(*t, yk)
        );
    }
    let xl = match x.log {
        true => format!("{} [{}] (log)", x.name, x.unit),
        false => format!("{} [{xpre}{}]", x.name, x.unit),
    };
    let yl = format!("{} [{ypre}{}]", y.name, y.unit);
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>",
        W / 2.0,
        H - 14.0,
        super::esc(&xl),
        H / 2.0,
        H / 2.0,
        super::esc(&yl)
    );
    for (i, se) in series.iter().enumerate() {
        draw(&mut s, se, &sx, &sy, ok);
        let hollow = if se.mark == Mark::Hollow {
            " (hollow)"
        } else {
            ""
        };
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}{hollow}</text>",
            W - M - 170.0,
            M + 14.0 * i as f64 + 10.0,
            se.colour,
            super::esc(&se.label)
        );
    }
    s.push_str("</svg>");
    let _ = write!(
        s,
        "<p class=\"range\">{}</p>",
        super::esc(&range_text(x, y, measured))
    );
    s
}

/// One series' marks.
fn draw(
    s: &mut String,
    se: &Series,
    sx: &dyn Fn(f64) -> f64,
    sy: &dyn Fn(f64) -> f64,
    ok: impl Fn(&&(f64, f64)) -> bool,
) {
    let c = se.colour;
    let pts = se.points.iter().filter(ok);
    match se.mark {
        Mark::Line => {
            let d: Vec<String> = pts
                .map(|p| format!("{:.1},{:.1}", sx(p.0), sy(p.1)))
                .collect();
            let _ = write!(
                s,
                "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\" points=\"{}\"/>",
                d.join(" ")
            );
        }
        Mark::Dot | Mark::Hollow => {
            let fill = if se.mark == Mark::Dot { c } else { "none" };
            for p in pts {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{fill}\" stroke=\"{c}\"/>",
                    sx(p.0),
                    sy(p.1)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        assert_eq!(ticks(0.899, 1.057, 5), [0.85, 0.9, 0.95, 1.0, 1.05, 1.1]);
        assert_eq!(ticks(0.0, 1e-4, 5), [0.0, 2e-5, 4e-5, 6e-5, 8e-5, 1e-4]);
        assert_eq!(label(2e-5, prefix(1e-4).1), "20");
        assert_eq!(prefix(1e-4).0, "µ");
        assert_eq!(with_unit(0.0025, "rad/s"), "2.5 mrad/s");
        assert_eq!(with_unit(1.5, "N m"), "1.5 N m");
    }
}
