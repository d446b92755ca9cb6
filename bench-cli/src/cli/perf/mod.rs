//! `bench perf ...`: benchmarks that print figures (never timed assertions in tests).

pub mod audit;
pub mod characterise;
pub mod control_loop;
pub mod estop;
pub mod fit;
pub mod floor;
pub mod http;
pub mod import;
pub mod lab;
pub mod modbus;
pub mod routes;
pub mod serve;
pub mod storage;

use friction::registry::MODELS;
use friction::{FrictionModel, Input, ModelBank, ModelOutput};
use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

/// `bench perf` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum PerfCommand {
    /// ns per step of each friction model, all models per sample, and one hour of 1 kHz replay.
    Models(PerfModelsArgs),
    /// Samples per second into SQLite through the run recorder (goal >= 1 M/s).
    Storage(self::storage::PerfStorageArgs),
    /// `bench runs import` of a generated CSV recording (default 100 MB): MB/s (goal >= 50)
    /// and peak memory above idle (goal <= 64 MB).
    Import(self::import::PerfImportArgs),
    /// Read+write cycles per second against the simulated bench (TCP, or RTU vs its line limit).
    Modbus(self::modbus::PerfModbusArgs),
    /// ms per static-curve fit (S4 Table 1 curve, 40 points per direction, both directions),
    /// IDIM-LS on 25 000 samples (goal < 50 ms) and the LuGre output-error fit with sub-steps
    /// on 60 s of 1 kHz data (goal < 2 s).
    Fit(PerfFitArgs),
    /// Control-loop timing over Modbus with every model in lockstep, recorded to SQLite.
    Loop(self::control_loop::PerfLoopArgs),
    /// E-stop request to confirmed-disabled drive through `bench serve --sim`, quiet and under
    /// load (live clients, a large sweep being expanded).
    Estop(self::estop::PerfEstopArgs),
    /// A 1 kHz run's loop timing on a quiet daemon and under 100 live clients plus REST load;
    /// the REST requests per second answered meanwhile.
    Serve(self::serve::PerfServeArgs),
    /// A characterisation campaign on the simulated bench in simulated time: wall seconds of
    /// its fits and comparison, and of its report (goal: < 10 s together).
    Characterise(self::characterise::PerfCharacteriseArgs),
    /// The audit append a mutating request awaits, beside the tag edit it accompanies, and
    /// `bench runs list --tag` over 100 000 runs, beside the plain list (goals: p99 <= 1 ms;
    /// <= 50 ms).
    Audit(self::audit::PerfAuditArgs),
    /// A lab's questions over 100 000 runs on 50 benches: one bench's trend over 90 days and
    /// the drift of the runs tagged good (goals: <= 50 ms; <= 100 ms).
    Lab(self::lab::PerfLabArgs),
}

/// Arguments of `bench perf fit`.
#[derive(Debug, clap::Args)]
pub struct PerfFitArgs {
    /// Print JSON: `static_curve_ms` (median), `static_curve_ms_max`, `runs`, `idim_ls`,
    /// `idim_ls_per_direction`, `lugre_output_error`.
    #[arg(long)]
    json: bool,
    /// Number of fits timed.
    #[arg(long, default_value_t = 50)]
    runs: usize,
    /// Seconds of 1 kHz data for the LuGre output-error fit (JSON key `lugre_output_error`).
    #[arg(long, default_value_t = 60.0)]
    oe_seconds: f64,
    /// Threads for the output-error Jacobian (0 = all cores); it is also timed on one thread.
    #[arg(long, default_value_t = 0)]
    oe_threads: usize,
}

/// Arguments of `bench perf models`.
#[derive(Debug, clap::Args)]
pub struct PerfModelsArgs {
    /// Print JSON: `per_model_ns`, `all_models_ns_per_sample`, `replay_1h_1khz_s`.
    #[arg(long)]
    json: bool,
    /// Samples per model for the per-model figure.
    #[arg(long, default_value_t = 200_000)]
    samples: usize,
}

/// Runs a `bench perf` subcommand.
pub fn run(cmd: &PerfCommand) -> anyhow::Result<()> {
    match cmd {
        PerfCommand::Models(args) => models(args),
        PerfCommand::Modbus(args) => self::modbus::run(args),
        PerfCommand::Storage(args) => self::storage::run(args),
        PerfCommand::Import(args) => self::import::run(args),
        PerfCommand::Fit(args) => fit(args),
        PerfCommand::Loop(args) => self::control_loop::run(args),
        PerfCommand::Estop(args) => self::estop::run(args),
        PerfCommand::Serve(args) => self::serve::run(args),
        PerfCommand::Characterise(args) => self::characterise::run(args),
        PerfCommand::Audit(args) => self::audit::run(args),
        PerfCommand::Lab(args) => self::lab::run(args),
    }
}

const RATE_HZ: f64 = 1000.0;

/// One 2 s period of a representative bench trajectory at 1 kHz: two velocity tones with zero
/// crossings, presliding reversals and gross sliding, and a driving torque with its rate.
fn trajectory() -> Vec<Input> {
    let h = 1.0 / RATE_HZ;
    let n = (2.0 * RATE_HZ) as usize;
    let w1 = std::f64::consts::TAU * 0.5;
    let w2 = std::f64::consts::TAU * 7.0;
    (0..n)
        .map(|k| {
            let t = k as f64 * h;
            Input {
                t,
                x: -0.05 / w1 * (w1 * t).cos() - 0.004 / w2 * (w2 * t).cos(),
                v: 0.05 * (w1 * t).sin() + 0.004 * (w2 * t).sin(),
                u: 1.2 * (w1 * t + 0.3).sin(),
                du_dt: 1.2 * w1 * (w1 * t + 0.3).cos(),
            }
        })
        .collect()
}

fn build_all() -> anyhow::Result<Vec<Box<dyn FrictionModel>>> {
    MODELS
        .iter()
        .map(|e| e.build(serde_json::json!({})).map_err(anyhow::Error::from))
        .collect()
}

/// Steps `samples` samples through `step`, cycling the trajectory; returns elapsed seconds.
fn replay(traj: &[Input], samples: usize, mut step: impl FnMut(&Input)) -> f64 {
    let period = traj.len() as f64 / RATE_HZ;
    let t0 = Instant::now();
    let mut done = 0;
    let mut lap = 0.0;
    while done < samples {
        for inp in traj.iter().take(samples - done) {
            let mut i = *inp;
            i.t += lap;
            step(black_box(&i));
        }
        done += traj.len().min(samples - done);
        lap += period;
    }
    t0.elapsed().as_secs_f64()
}

fn models(args: &PerfModelsArgs) -> anyhow::Result<()> {
    let traj = trajectory();
    let h = 1.0 / RATE_HZ;
    let samples = args.samples.max(1);
    let mut per_model = serde_json::Map::new();
    for mut m in build_all()? {
        // Warm up once, then measure.
        replay(&traj, traj.len(), |i| {
            black_box(m.step(i, h));
        });
        let s = replay(&traj, samples, |i| {
            black_box(m.step(i, h));
        });
        per_model.insert(
            m.id().to_string(),
            serde_json::json!(s * 1e9 / samples as f64),
        );
    }
    let mut bank = ModelBank::new(build_all()?);
    let mut out = vec![ModelOutput::default(); bank.len()];
    let s = replay(&traj, samples, |i| bank.step(i, h, &mut out));
    let all_ns = s * 1e9 / samples as f64;
    bank.reset();
    let hour = (3600.0 * RATE_HZ) as usize;
    let replay_s = replay(&traj, hour, |i| bank.step(i, h, &mut out));
    black_box(&out);

    let mut w = std::io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({
            "per_model_ns": per_model, "all_models_ns_per_sample": all_ns, "replay_1h_1khz_s": replay_s,
            "models": bank.len(), "samples": samples,
        });
        serde_json::to_writer_pretty(&mut w, &doc)?;
        writeln!(w)?;
    } else {
        writeln!(
            w,
            "ns per step (default parameters, 1 kHz bench trajectory, {samples} samples):"
        )?;
        for (id, ns) in &per_model {
            writeln!(w, "  {id:<24} {:>8.1}", ns.as_f64().unwrap_or(f64::NAN))?;
        }
        writeln!(
            w,
            "all {} models, per sample: {all_ns:.1} ns (budget 2000 ns)",
            bank.len()
        )?;
        writeln!(
            w,
            "one hour of 1 kHz samples through all models: {replay_s:.2} s (budget 5 s)"
        )?;
    }
    Ok(())
}

/// Times `static_curve` on S4 Table 1 sweep points (Armstrong curve, 40 log-spaced speeds per
/// direction from 2 mrad/s to 3 rad/s, deterministic 0.02 N m scatter), model `stribeck_exp`.
fn fit(args: &PerfFitArgs) -> anyhow::Result<()> {
    use friction::identify::procedures::{Given, Table, run};
    let sets = [
        (1.0, [8.955, 5.234, 17.617, 0.145, 1.032]),
        (-1.0, [10.01, 5.335, 23.813, 0.078, 1.286]),
    ];
    let (mut v, mut f) = (Vec::new(), Vec::new());
    for (dir, p) in sets {
        for i in 0..40 {
            let s = 2e-3 * (3.0f64 / 2e-3).powf(f64::from(i) / 39.0);
            let scatter = 0.02 * (f64::from(i) * 2.399).sin();
            v.push(dir * s);
            f.push(
                dir * (p[0] + (p[2] - p[0]) * (-(s / p[3]).powf(p[4])).exp() + p[1] * s + scatter),
            );
        }
    }
    let table = Table::new(vec![("v".into(), v), ("friction".into(), f)])?;
    let mut ms = Vec::with_capacity(args.runs.max(1));
    for _ in 0..args.runs.max(1) {
        let t0 = Instant::now();
        black_box(run(
            "static_curve",
            "stribeck_exp",
            black_box(&table),
            &Given::new(),
        )?);
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    let (median, max) = (ms[ms.len() / 2], ms[ms.len() - 1]);
    let idim = self::fit::idim_ls(25.0, args.runs)?;
    let per_direction = self::fit::idim_ls_per_direction(25.0, args.runs)?;
    let oe = self::fit::lugre_output_error(args.oe_seconds, args.oe_threads)?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({"static_curve_ms": median, "static_curve_ms_max": max, "runs": ms.len(), "idim_ls": idim, "idim_ls_per_direction": per_direction, "lugre_output_error": oe})
        );
    } else {
        println!(
            "static_curve (stribeck_exp, 80 points, both directions): median {median:.3} ms, max {max:.3} ms over {} fits",
            ms.len()
        );
        println!(
            "idim_ls (coulomb_viscous with offset, {} samples): median {:.3} ms, max {:.3} ms over {} fits (goal < 50 ms)",
            idim["samples"],
            idim["ms"].as_f64().unwrap_or(f64::NAN),
            idim["ms_max"].as_f64().unwrap_or(f64::NAN),
            idim["runs"]
        );
        let d = &per_direction;
        let f = |k: &str| d[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "idim_ls per direction ({} samples): median {:.3} ms, max {:.3} ms (goal < 50 ms); held-out validation {:.3} ms, {:.1} % of the fit (goal < 20 %)",
            d["samples"],
            f("ms"),
            f("ms_max"),
            f("validate_ms"),
            f("validation_pct")
        );
        self::fit::print_text(&mut std::io::stdout().lock(), &oe)?;
    }
    Ok(())
}
