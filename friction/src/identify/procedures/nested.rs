//! Nested models: a model whose steady state contains a simpler one (Coulomb + viscous ⊂
//! Stribeck ⊂ LuGre, GMS) is fitted from the simpler model's optimum on the same data, so it is
//! never worse; whether the parameters it adds are supported by the data is judged by Schwarz's
//! criterion on the effective sample count (docs/src/identification.md#nested-models).

use super::{FitReport, num};
use serde_json::{Value, json};

/// `details.nested` of a fit with `(sse, k)` against the contained fit `(sse0, k0)` on the same
/// data: both MSEs and BICs, and `supported: false` when the added parameters do not lower
/// `n_eff ln(SSE) + k ln(n_eff)`, the BIC on the effective number of samples (a correlated
/// residual must not make a tiny improvement look significant).
pub(crate) fn judge(
    rep: &FitReport,
    contained: &str,
    (sse0, k0): (f64, usize),
    (sse, k): (f64, usize),
    added: &[&str],
) -> Value {
    let n = rep.provenance.n_points.max(1) as f64;
    let n_eff = rep.n_eff.unwrap_or(n).max(2.0);
    let bic = |s: f64, k: usize, n: f64| n * (s / n).ln() + k as f64 * n.ln();
    let dk = k.saturating_sub(k0) as f64;
    let delta_eff = n_eff * (sse / sse0).ln() + dk * n_eff.ln();
    json!({
        "contained": contained,
        "added": added,
        "mse_contained": num(sse0 / n),
        "mse": num(sse / n),
        "bic_contained": num(bic(sse0, k0, n)),
        "bic": num(bic(sse, k, n)),
        "n_eff": num(n_eff),
        "delta_bic_eff": num(delta_eff),
        "supported": delta_eff < 0.0,
    })
}

/// The verdict's reason when `details.nested` says the added parameters are not supported.
pub(crate) fn reason(details: &Value) -> Option<String> {
    let n = details.get("nested")?;
    if n["supported"].as_bool() != Some(false) {
        return None;
    }
    let added: Vec<&str> = n["added"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let (m0, m) = (n["mse_contained"].as_f64()?, n["mse"].as_f64()?);
    let gain = if m < m0 {
        format!("lower the MSE by {:.2} % only", 100.0 * (1.0 - m / m0))
    } else {
        "do not lower the MSE".to_string()
    };
    Some(format!(
        "the added parameters ({}) are not supported by the data: they {gain} ({m:e} against {m0:e} for {}), less than Schwarz's criterion asks on {:.0} effective samples; use the simpler model",
        added.join(", "),
        n["contained"].as_str().unwrap_or("the contained model"),
        n["n_eff"].as_f64().unwrap_or(f64::NAN)
    ))
}

/// The simpler model `model` contains and how its parameters map onto the model's:
/// `(contained id, [(name in the contained model, name in the model)])`.
pub(crate) fn contained(
    model: &str,
) -> Option<(&'static str, &'static [(&'static str, &'static str)])> {
    const CV: &[(&str, &str)] = &[("fc", "fc"), ("fv", "fv")];
    const STRIBECK: &[(&str, &str)] = &[
        ("fc", "fc"),
        ("fs", "fs"),
        ("vs", "vs"),
        ("delta", "delta"),
        ("fv", "sigma2"),
    ];
    match model {
        "stribeck_exp" | "stribeck_lorentz" | "tustin" => Some(("coulomb_viscous", CV)),
        "lugre" | "gms" => Some(("stribeck_exp", STRIBECK)),
        _ => None,
    }
}

/// The models `model` contains, nearest first (LuGre: Stribeck, then Coulomb + viscous).
pub(crate) fn chain(model: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut m = model;
    while let Some((inner, _)) = contained(m) {
        out.push(inner);
        m = inner;
    }
    out
}

/// The damping parameters of a dynamic model that a contained static model has no
/// counterpart of: set to 0 they leave the presliding spring alone, so that in a replay by the
/// measured velocity the model follows the static curve it contains with a smooth transition.
pub(crate) fn damping(model: &str) -> &'static [&'static str] {
    match model {
        "lugre" | "gms" => &["sigma1"],
        _ => &[],
    }
}

/// `params` of `model` with the parameters of the contained model `inner` (`inner_params`, one
/// set or per direction) put in their place, so that its steady state is exactly `inner`'s: a
/// Stribeck level taken from a model without one is `fs = fc` (no hump). The parameters the
/// contained model has no counterpart of (presliding, damping) stay as they are. `None` when
/// `model` does not contain `inner`.
pub(crate) fn embed(
    model: &str,
    params: &Value,
    inner: &str,
    inner_params: &Value,
) -> Option<Value> {
    let (next, map) = contained(model)?;
    let from = if next == inner {
        inner_params.clone()
    } else {
        embed(next, &json!({}), inner, inner_params)?
    };
    let mut out = params.as_object().cloned().unwrap_or_default();
    let has_fs = map.iter().any(|(c, _)| *c == "fs");
    let put = |set: &mut serde_json::Map<String, Value>, src: &Value| {
        for (c, m) in map {
            if let Some(v) = src.get(*c) {
                set.insert((*m).into(), v.clone());
            }
        }
        if !has_fs && let Some(fc) = set.get("fc").cloned() {
            set.insert("fs".into(), fc);
        }
    };
    put(&mut out, &from);
    let neg_src = from.get("negative").unwrap_or(&from);
    if let Some(Value::Object(neg)) = out.get_mut("negative") {
        put(neg, neg_src);
    } else if from.get("negative").is_some() {
        let mut neg = serde_json::Map::new();
        put(&mut neg, neg_src);
        out.insert("negative".into(), Value::Object(neg));
    }
    if let Some(o) = from.get("offset") {
        out.insert("offset".into(), o.clone());
    }
    Some(Value::Object(out))
}
