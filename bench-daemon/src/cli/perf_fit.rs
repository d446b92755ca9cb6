//! The LuGre output-error figure of `bench perf fit`: wall time of the fit (issue 5 speed
//! goal: 60 s of 1 kHz data in under 1 s).

use friction::identify::procedures::output_error::{self, Options, Segment, excitation_velocity};
use friction::registry::{ModelSpec, build_model};
use std::io::Write;

/// Simulates LuGre data (truth sigma0 4e4, sigma1 150, sigma2 0.8, fc 0.7, fs 1.1, vs 2.5e-3;
/// friction noise 0.01 N, velocity noise 1 µm/s) on the identification excitation, then fits
/// the six parameters from the Canudas 1995 defaults, with all cores and with one.
///
/// Returns `{samples, seconds, model, fits: [{threads, elapsed_s, iterations, evaluations,
/// ns_per_sample_evaluation, worst_relative_error, termination}]}`.
pub fn lugre_output_error(seconds: f64, threads: usize) -> anyhow::Result<serde_json::Value> {
    if !(seconds.is_finite() && (1.0..=3600.0).contains(&seconds)) {
        return Err(
            super::InputError(format!("--oe-seconds ({seconds}) must be in 1..=3600")).into(),
        );
    }
    let truth = serde_json::json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3});
    let mut m = build_model(&ModelSpec {
        model: "lugre".into(),
        params: truth.clone(),
    })?;
    let n = (seconds * 1000.0).round() as usize;
    let t: Vec<f64> = (0..n).map(|k| k as f64 * 1e-3).collect();
    let v: Vec<f64> = t.iter().map(|t| excitation_velocity(*t)).collect();
    let seg = Segment::simulate_velocity("perf", m.as_mut(), &t, &v, 0.01, 1e-6, 1);
    let names = ["sigma0", "sigma1", "sigma2", "fc", "fs", "vs"];
    let mut figures = Vec::new();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    for threads in [threads, 1] {
        let mut o = Options::new("lugre", &names);
        o.threads = threads;
        let r = output_error::fit(std::slice::from_ref(&seg), &o)?;
        let p = &r.provenance;
        let elapsed = r.details["elapsed_s"].as_f64().unwrap_or(f64::NAN);
        let evals = r.details["evaluations"].as_u64().unwrap_or(0);
        let worst = names
            .iter()
            .map(|n| {
                ((r.params[*n].as_f64().unwrap_or(f64::NAN) / truth[*n].as_f64().unwrap_or(1.0))
                    - 1.0)
                    .abs()
            })
            .fold(0.0, f64::max);
        figures.push(serde_json::json!({
            "threads": if threads == 0 { cores } else { threads }, "elapsed_s": elapsed, "iterations": r.details["iterations"],
            "evaluations": evals, "ns_per_sample_evaluation": elapsed * 1e9 / (evals as f64 * n as f64),
            "worst_relative_error": worst, "termination": p.termination,
        }));
    }
    Ok(serde_json::json!({"samples": n, "seconds": seconds, "model": "lugre", "fits": figures}))
}

/// Prints the figures of [`lugre_output_error`] as text.
pub fn print_text(w: &mut impl Write, doc: &serde_json::Value) -> std::io::Result<()> {
    writeln!(
        w,
        "LuGre output-error fit of 6 parameters on {} samples (1 kHz), goal < 1 s:",
        doc["samples"]
    )?;
    for f in doc["fits"].as_array().into_iter().flatten() {
        writeln!(
            w,
            "  {} thread(s): {:.3} s, {} iterations, {} evaluations ({:.1} ns per sample and evaluation), worst parameter error {:.2} %",
            f["threads"],
            f["elapsed_s"].as_f64().unwrap_or(f64::NAN),
            f["iterations"],
            f["evaluations"],
            f["ns_per_sample_evaluation"].as_f64().unwrap_or(f64::NAN),
            100.0 * f["worst_relative_error"].as_f64().unwrap_or(f64::NAN)
        )?;
    }
    Ok(())
}
