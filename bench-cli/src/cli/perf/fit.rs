//! The fit figures of `bench perf fit` beyond the static curve: the LuGre output-error fit
//! with its sub-steps on 60 s of 1 kHz samples of a continuous plant (goal < 2 s), and
//! IDIM-LS on 25 000 samples of a simulated ball-screw axis (goal < 50 ms).

use friction::identify::procedures::output_error::{self, Options, Segment, excitation_velocity};
use friction::registry::{ModelSpec, build_model};
use std::io::Write;

/// Samples LuGre (truth sigma0 4e4, sigma1 150, sigma2 0.8, fc 0.7, fs 1.1, vs 2.5e-3)
/// integrated at 0.1 ms on the identification excitation at 1 kHz, with friction noise
/// 0.01 N, then fits the six parameters from the Canudas 1995 defaults (nested start,
/// sub-steps chosen from the data), with all cores and with one.
///
/// Returns `{samples, seconds, model, goal_s, fits: [{threads, elapsed_s, iterations,
/// evaluations, substeps, ns_per_sample_evaluation, worst_relative_error, termination}]}`.
pub fn lugre_output_error(seconds: f64, threads: usize) -> anyhow::Result<serde_json::Value> {
    if !(seconds.is_finite() && (1.0..=3600.0).contains(&seconds)) {
        return Err(super::super::InputError(format!(
            "--oe-seconds ({seconds}) must be in 1..=3600"
        ))
        .into());
    }
    let truth = serde_json::json!({"sigma0": 4e4, "sigma1": 150.0, "sigma2": 0.8, "fc": 0.7, "fs": 1.1, "vs": 2.5e-3});
    let mut m = build_model(&ModelSpec {
        model: "lugre".into(),
        params: truth.clone(),
    })?;
    let n = (seconds * 1000.0).round() as usize;
    let seg = Segment::sample_velocity_driven(
        "perf",
        m.as_mut(),
        excitation_velocity,
        1e-3,
        n,
        10,
        0.01,
        0.0,
        1,
    );
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
            "substeps": r.provenance.settings.get("substeps"),
            "evaluations": evals, "ns_per_sample_evaluation": elapsed * 1e9 / (evals as f64 * n as f64),
            "worst_relative_error": worst, "termination": p.termination,
        }));
    }
    Ok(
        serde_json::json!({"samples": n, "seconds": seconds, "model": "lugre", "goal_s": 2.0, "fits": figures}),
    )
}

/// Times `idim_ls` (`coulomb_viscous` with an offset) on `seconds` of a simulated EMPS-like
/// axis at 1 kHz, `runs` times. Returns `{samples, ms, ms_max, runs, goal_ms, params}`.
pub fn idim_ls(seconds: f64, runs: usize) -> anyhow::Result<serde_json::Value> {
    use friction::identify::procedures::synthetic::BallScrew;
    use friction::identify::procedures::{Given, run};
    let table = BallScrew {
        duration: seconds,
        ..BallScrew::default()
    }
    .simulate()?;
    let mut given = Given::new();
    given.insert("offset".into(), serde_json::json!(true));
    let (ms, last) = timed(runs, || run("idim_ls", "coulomb_viscous", &table, &given))?;
    Ok(serde_json::json!({
        "samples": table.len(), "ms": ms[ms.len() / 2], "ms_max": ms[ms.len() - 1], "runs": ms.len(),
        "goal_ms": 50.0, "params": last.params,
    }))
}

/// Times `idim_ls` per direction (`given.asymmetric`) on `seconds` of a simulated axis whose
/// friction differs by direction, and its held-out validation on a record of another
/// excitation of the same length. Returns `{samples, ms, ms_max, runs, goal_ms, validate_ms,
/// validation_pct (of the fit's time), goal_validation_pct, rel_error_pct, params}`.
pub fn idim_ls_per_direction(seconds: f64, runs: usize) -> anyhow::Result<serde_json::Value> {
    use friction::identify::procedures::synthetic::{BallScrew, Excitation};
    use friction::identify::procedures::validation::validate;
    use friction::identify::procedures::{Given, run};
    let axis = |excitation| BallScrew {
        duration: seconds,
        negative: Some((260.0, 16.0)),
        offset: 0.0,
        excitation,
        ..BallScrew::default()
    };
    let table = axis(Excitation::Moves).simulate()?;
    let held = axis(Excitation::Sines { pulse: 40.0 }).simulate()?;
    let given: Given =
        serde_json::from_value(serde_json::json!({"asymmetric": true, "force_held": true}))?;
    let (ms, fitted) = timed(runs, || run("idim_ls", "coulomb_viscous", &table, &given))?;
    let (vms, scored) = timed(runs, || validate(&fitted, &held, "sines"))?;
    let (fit, val) = (ms[ms.len() / 2], vms[vms.len() / 2]);
    Ok(serde_json::json!({
        "samples": table.len(), "ms": fit, "ms_max": ms[ms.len() - 1], "runs": ms.len(),
        "goal_ms": 50.0, "validate_ms": val, "validation_pct": 100.0 * val / fit,
        "goal_validation_pct": 20.0, "rel_error_pct": scored.rel_error_pct, "params": fitted.params,
    }))
}

/// Runs `f` `runs` times (at least once); the sorted wall times \[ms\] and the last result.
fn timed<T, E: std::error::Error + Send + Sync + 'static>(
    runs: usize,
    mut f: impl FnMut() -> Result<T, E>,
) -> anyhow::Result<(Vec<f64>, T)> {
    let mut ms = Vec::with_capacity(runs.max(1));
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t0 = std::time::Instant::now();
        let r = std::hint::black_box(f()?);
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        last = Some(r);
    }
    ms.sort_by(f64::total_cmp);
    let last = last.ok_or_else(|| anyhow::anyhow!("BUG: nothing timed"))?;
    Ok((ms, last))
}

/// Prints the figures of [`lugre_output_error`] as text.
pub fn print_text(w: &mut impl Write, doc: &serde_json::Value) -> std::io::Result<()> {
    writeln!(
        w,
        "LuGre output-error fit of 6 parameters on {} samples (1 kHz) of a continuous plant, sub-steps from the data, goal < 2 s:",
        doc["samples"]
    )?;
    for f in doc["fits"].as_array().into_iter().flatten() {
        writeln!(
            w,
            "  {} thread(s): {:.3} s, {} iterations, {} sub-steps, {} evaluations ({:.1} ns per sample and evaluation), worst parameter error {:.2} %",
            f["threads"],
            f["elapsed_s"].as_f64().unwrap_or(f64::NAN),
            f["iterations"],
            f["substeps"],
            f["evaluations"],
            f["ns_per_sample_evaluation"].as_f64().unwrap_or(f64::NAN),
            100.0 * f["worst_relative_error"].as_f64().unwrap_or(f64::NAN)
        )?;
    }
    Ok(())
}
