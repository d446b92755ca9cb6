//! The model a fitted model contains, fitted first on the same data: its optimum is the start
//! of the bigger fit and the yardstick of its added parameters (`details.nested`); and the
//! multi-start screened from it.

use super::super::per_direction::{NEGATIVE, get, put};
use super::super::{Options, OutputError, Replay, Segment};
use super::fit;
use crate::identify::procedures::FitReport;
use crate::identify::procedures::nested::{contained, judge};
use crate::identify::{FitError, Residuals};
use serde_json::{Value, json};

/// The contained model's names and this model's, each also for the negative side.
fn both_sides(map: &[(&str, &str)]) -> Vec<(String, String)> {
    map.iter()
        .flat_map(|(c, m)| {
            [
                (c.to_string(), m.to_string()),
                (format!("{NEGATIVE}{c}"), format!("{NEGATIVE}{m}")),
            ]
        })
        .collect()
}

/// The contained model's output-error optimum as a start.
#[derive(Debug)]
pub(crate) struct ContainedStart {
    /// The contained model's id.
    model: &'static str,
    /// Its SSE and number of fitted parameters.
    sse: f64,
    k: usize,
    /// Start values of the model (its names), the plant mass and offset included.
    values: serde_json::Map<String, Value>,
    /// The free parameters the model adds.
    pub added: Vec<String>,
}

/// Fits the model `opts.model` contains on the same data (itself from the model it contains)
/// with the free parameters they share; `None` when it contains none or shares none.
pub(crate) fn contained_start(
    segs: &[Segment],
    opts: &Options,
) -> Result<Option<ContainedStart>, FitError> {
    let Some((inner, map)) = contained(&opts.model) else {
        return Ok(None);
    };
    let map = both_sides(map);
    let free: Vec<&str> = opts.free.iter().map(|f| f.name.as_str()).collect();
    let shared: Vec<&str> = map
        .iter()
        .filter(|(_, m)| free.contains(&m.as_str()))
        .map(|(c, _)| c.as_str())
        .collect();
    if shared.is_empty() {
        return Ok(None);
    }
    let given = opts.params.as_object().cloned().unwrap_or_default();
    let mut params = serde_json::Map::new();
    for (c, m) in &map {
        if let Some(v) = get(&given, m) {
            put(&mut params, c, v.clone());
        }
    }
    if let Some(v) = opts.params.get("offset") {
        params.insert("offset".into(), v.clone());
    }
    let mut o = Options::new(inner, &shared);
    o.free.extend(
        opts.free
            .iter()
            .filter(|f| f.name == "mass" || f.name == "offset")
            .cloned(),
    );
    o.params = Value::Object(params);
    o.replay = opts.replay;
    o.warmup_s = opts.warmup_s;
    o.max_iters = opts.max_iters;
    o.timeout = opts.timeout;
    o.threads = opts.threads;
    o.diff_step = opts.diff_step;
    o.substeps = opts.substeps;
    let r = fit(segs, &o)?;
    let mut values = serde_json::Map::new();
    for (c, m) in &map {
        if free.contains(&m.as_str())
            && let Some(v) = get(&r.params, c)
        {
            values.insert(m.clone(), v.clone());
        }
    }
    // A Stribeck model started from Coulomb + viscous: fs = fc is that model exactly (on
    // each side fitted).
    for side in ["", NEGATIVE] {
        let (fs, fc) = (format!("{side}fs"), format!("{side}fc"));
        if free.contains(&fs.as_str())
            && !map.iter().any(|(c, _)| *c == fs)
            && let Some(v) = values.get(&fc).or_else(|| get(&given, &fc)).cloned()
        {
            values.insert(fs, v);
        }
    }
    for extra in ["mass", "offset"] {
        if free.contains(&extra)
            && let Some(v) = r.params.get(extra)
        {
            values.insert(extra.into(), v.clone());
        }
    }
    let added = free
        .iter()
        .filter(|n| {
            let unmapped = !map.iter().any(|(_, m)| m == *n);
            let fs = n.trim_start_matches(NEGATIVE) == "fs" && !map.iter().any(|(c, _)| c == *n);
            unmapped || fs
        })
        .filter(|n| !["mass", "offset"].contains(n))
        .map(|n| n.to_string())
        .collect();
    let n = r.provenance.n_points as f64;
    Ok(Some(ContainedStart {
        model: inner,
        sse: r.mse.unwrap_or(f64::NAN) * n,
        k: o.free.len(),
        values,
        added,
    }))
}

impl ContainedStart {
    /// Puts the start values into `opts` (under `params`; the mass into the torque replay).
    pub(crate) fn apply(&self, opts: &mut Options) {
        let Value::Object(p) = &mut opts.params else {
            return;
        };
        for (k, v) in &self.values {
            if k == "mass" {
                if let (Replay::Torque { mass, .. }, Some(m)) = (&mut opts.replay, v.as_f64()) {
                    *mass = m;
                }
            } else {
                put(p, k, v.clone());
            }
        }
    }

    /// `details.nested` of the model's fit (`sse` with `k` free parameters).
    pub(crate) fn judge(&self, rep: &FitReport, sse: f64, k: usize) -> Value {
        let mut v = judge(rep, self.model, (self.sse, self.k), (sse, k), &[]);
        v["added"] = json!(self.added);
        v
    }
}

/// Largest number of screened starts.
const MAX_STARTS: usize = 64;

/// Start points for the multi-start: `q0` (the contained optimum), the `plain` start (the given
/// or default values) and a grid over the added parameters (a Stribeck level `fs` at 1–2 times `fc`, `vs` at quantiles of the recorded
/// speeds, any other parameter one value per decade of its search range or 0.3–3 times its
/// start), screened by their cost; the `keep` cheapest are returned, cheapest first.
pub(crate) fn screen(
    problem: &OutputError<'_>,
    q0: &[f64],
    plain: Option<Vec<f64>>,
    added: &[String],
    keep: usize,
) -> Result<Vec<Vec<f64>>, FitError> {
    let free = problem.free();
    let bounds = problem.bounds();
    let speeds = problem.speed_quantiles(&[0.02, 0.1, 0.3, 0.6]);
    let values = problem.values(q0);
    let mut axes: Vec<(usize, Vec<f64>)> = Vec::new();
    // A simpler optimum without a Stribeck effect (fs = fc) leaves vs undetermined: both are
    // searched again (on each side).
    let mut names: Vec<String> = added.to_vec();
    let at = |n: &str| free.iter().position(|f| f.name == n).map(|i| values[i]);
    for side in ["", NEGATIVE] {
        if let (Some(fc), Some(fs)) = (at(&format!("{side}fc")), at(&format!("{side}fs")))
            && fs <= fc * (1.0 + 1e-9)
        {
            for n in ["fs", "vs"].map(|n| format!("{side}{n}")) {
                if !names.contains(&n) && at(&n).is_some() {
                    names.push(n);
                }
            }
        }
    }
    for name in &names {
        let Some(i) = free.iter().position(|f| &f.name == name) else {
            continue;
        };
        let r = &free[i];
        // A side's Stribeck level is searched from that side's Coulomb level.
        let side = if name.starts_with(NEGATIVE) {
            NEGATIVE
        } else {
            ""
        };
        let fc = at(&format!("{side}fc"));
        let vals: Vec<f64> = match (name.trim_start_matches(NEGATIVE), fc) {
            ("fs", Some(fc)) => [1.0, 1.15, 1.4, 2.0].iter().map(|f| f * fc).collect(),
            ("vs", _) if !speeds.is_empty() => speeds.clone(),
            _ if bounds.lower[i].is_finite() && bounds.upper[i].is_finite() => {
                let (lo, hi) = (bounds.lower[i], bounds.upper[i]);
                let steps = ((hi - lo).round() as usize).clamp(2, 8);
                (0..=steps)
                    .map(|j| r.value_at(lo + (hi - lo) * j as f64 / steps as f64))
                    .collect()
            }
            _ => [0.3, 1.0, 3.0].iter().map(|f| f * values[i]).collect(),
        };
        axes.push((i, vals));
    }
    let mut points = vec![q0.to_vec()];
    points.extend(plain);
    let total: usize = axes.iter().map(|a| a.1.len()).product();
    let mut rng = crate::identify::rng::Rng::new(1);
    for idx in 0..total {
        if total > MAX_STARTS && rng.uniform() > MAX_STARTS as f64 / total as f64 {
            continue;
        }
        let mut q = q0.to_vec();
        let mut rest = idx;
        for (i, vals) in &axes {
            let v = vals[rest % vals.len()];
            rest /= vals.len();
            q[*i] = free[*i]
                .internal(v)
                .clamp(bounds.lower[*i], bounds.upper[*i]);
        }
        points.push(q);
    }
    let mut buf = vec![0.0; problem.len()];
    let mut costed: Vec<(f64, Vec<f64>)> = Vec::with_capacity(points.len());
    for q in points {
        problem.residuals(&q, &mut buf)?;
        let c: f64 = buf.iter().map(|r| r * r).sum();
        costed.push((if c.is_finite() { c } else { f64::INFINITY }, q));
    }
    costed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Vec<f64>> = Vec::new();
    for (c, q) in costed {
        if out.len() >= keep.max(1) || !c.is_finite() {
            break;
        }
        if !out.contains(&q) {
            out.push(q);
        }
    }
    if out.is_empty() {
        out.push(q0.to_vec());
    }
    Ok(out)
}
