//! The report's parameter tables: every fitted parameter of both directions (`fc⁺`, `fc⁻`
//! where the fit has a `negative` set; a parameter without one is shared), its value, standard
//! error, 95 % interval and unit, and a held (given) value said to be held.

use super::{esc, num};
use crate::record::{FitReport, Record};
use bench_daemon::config::Geometry;
use friction::units::param_unit;
use serde_json::{Map, Value};
use std::fmt::Write;

/// The tables of every fit of the campaign.
pub fn parameters(h: &mut String, c: &Record, g: Geometry) {
    h.push_str("<h2>Parameters</h2>");
    for fit in &c.fits {
        let model = fit.model.as_str();
        let _ = write!(
            h,
            "<h3>{} · {} on run {}</h3>",
            esc(model),
            esc(&fit.procedure),
            fit.run_id
        );
        if let Some(e) = &fit.error {
            let _ = write!(h, "<p class=\"warn\">{}</p>", esc(e));
            continue;
        }
        let reasons = fit.reasons();
        if let Some(note) = &fit.note
            && !reasons.contains(note)
        {
            let _ = write!(h, "<p class=\"warn\">{}</p>", esc(note));
        }
        let status = fit.report.as_ref().and_then(|r| r.verdict.as_ref());
        let reasons: String = reasons.iter().map(|s| format!(": {}", esc(s))).collect();
        let _ = write!(
            h,
            "<p>verdict <b>{}</b>{reasons}</p><table class=\"params\"><tr><th>parameter</th><th>value</th><th>standard error</th><th>95 % interval</th><th>unit</th></tr>",
            esc(status.map_or("?", |v| v.status.as_str())),
        );
        let Some(report) = &fit.report else {
            h.push_str("</table>");
            continue;
        };
        for row in rows(report) {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&row.label),
                value(row.value),
                row.std_error,
                row.interval,
                esc(&param_unit(model, &row.name, g).unwrap_or_default())
            );
        }
        h.push_str("</table>");
    }
}

/// One table row.
struct Row<'a> {
    name: String,
    label: String,
    value: &'a Value,
    std_error: String,
    interval: String,
}

/// The rows of a fit report: each top-level parameter, split into `⁺` and `⁻` where the
/// `negative` set has it, then the negative set's own.
fn rows(r: &FitReport) -> Vec<Row<'_>> {
    let params = Some(&r.params);
    let neg = side(params, Side::Negative);
    let given = r
        .provenance
        .as_ref()
        .and_then(|p| p.get("given"))
        .and_then(Value::as_object);
    let mut out = Vec::new();
    let row = |k: &str, label: String, s: Side| {
        let (v, se, ci) = (
            at(params, s, k),
            at(r.std_errors.as_ref(), s, k),
            at(r.ci95.as_ref(), s, k),
        );
        let held = side(given, s).is_some_and(|g| g.contains_key(k));
        Row {
            name: k.to_string(),
            label,
            value: v,
            std_error: match (se.is_number() || se.is_array(), held) {
                (true, _) => value(se),
                (false, true) => "held (given)".into(),
                (false, false) => "not determined".into(),
            },
            interval: match ci.is_array() {
                true => format!("[{}, {}]", num(end(ci, 0)), num(end(ci, 1))),
                false => "–".into(),
            },
        }
    };
    for k in r.params.keys() {
        if k == "negative" {
            continue;
        }
        if neg.is_some_and(|n| n.contains_key(k)) {
            out.push(row(k.as_str(), format!("{k}⁺"), Side::Top));
            out.push(row(k.as_str(), format!("{k}⁻"), Side::Negative));
        } else {
            out.push(row(k.as_str(), k.clone(), Side::Top));
        }
    }
    for k in neg.into_iter().flat_map(|n| n.keys()) {
        if !r.params.contains_key(k) {
            out.push(row(k.as_str(), format!("{k}⁻"), Side::Negative));
        }
    }
    out
}

/// The set of one direction of a map by parameter name (the `negative` object inside it).
fn side(m: Option<&Map<String, Value>>, s: Side) -> Option<&Map<String, Value>> {
    match s {
        Side::Top => m,
        Side::Negative => m?.get("negative")?.as_object(),
    }
}

/// What an absent key reads as.
static NULL: Value = Value::Null;

/// Element `i` of an interval (`null` when absent).
fn end(ci: &Value, i: usize) -> &Value {
    ci.get(i).unwrap_or(&NULL)
}

/// Parameter `k` of one direction (`null` when absent).
fn at<'a>(m: Option<&'a Map<String, Value>>, s: Side, k: &str) -> &'a Value {
    side(m, s).and_then(|m| m.get(k)).unwrap_or(&NULL)
}

#[derive(Clone, Copy)]
enum Side {
    Top,
    Negative,
}

/// A value: a number, or a list of numbers (GMS elements).
fn value(v: &Value) -> String {
    match v.as_array() {
        Some(a) => a.iter().map(num).collect::<Vec<_>>().join(", "),
        None => num(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_directions_get_a_row_with_their_standard_error_and_interval() {
        let r = json!({
            "params": {"fc": 1.0, "fv": 0.05, "negative": {"fc": 0.9, "fs": 1.3}},
            "std_errors": {"fc": 0.01, "negative": {"fc": 0.02}},
            "ci95": {"fc": [0.98, 1.02], "negative": {"fc": [0.86, 0.94]}},
            "provenance": {"given": {"negative": {"fs": 1.3}}}
        });
        let r: FitReport = serde_json::from_value(r).unwrap();
        let got: Vec<(String, String, String, String)> = rows(&r)
            .into_iter()
            .map(|r| (r.label, value(r.value), r.std_error, r.interval))
            .collect();
        let row = |l: &str, v: &str, se: &str, ci: &str| {
            (l.to_string(), v.to_string(), se.to_string(), ci.to_string())
        };
        assert_eq!(
            got,
            [
                row("fc⁺", "1.0000", "0.0100", "[0.9800, 1.0200]"),
                row("fc⁻", "0.9000", "0.0200", "[0.8600, 0.9400]"),
                row("fv", "0.0500", "not determined", "–"),
                row("fs⁻", "1.3000", "held (given)", "–"),
            ]
        );
    }
}
