//! `bench simulate --model ID \[--params JSON|@file\] --scenario JSON|@file --dt S --duration S
//! \[--every N\] \[--format csv|json\]`.

use super::{InputError, json_arg};
use friction::registry::{self, ModelSpec};
use friction::scenario::{self, Scenario};
use std::io::Write;

/// Arguments of `bench simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Model id (see `bench models`).
    #[arg(long)]
    model: String,
    /// Parameters as JSON or @file; missing ones take the defaults.
    #[arg(long)]
    params: Option<String>,
    /// Scenario as JSON or @file, e.g. {"kind":"spring_pull","mass":1,"stiffness":2,"pull_velocity":0.1}.
    #[arg(long)]
    scenario: String,
    /// Fixed step \[s\].
    #[arg(long)]
    dt: f64,
    /// Simulated time \[s\].
    #[arg(long)]
    duration: f64,
    /// Print one row every N steps.
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
}

/// Output format of `bench simulate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Csv,
    Json,
}

/// Most steps one run may take (about 10 minutes of computing for the slowest model).
const MAX_STEPS: f64 = 2e9;

/// Runs the simulation and writes it to stdout.
pub fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    if !(args.dt.is_finite() && args.dt > 0.0) {
        return Err(InputError(format!("--dt ({}) must be > 0", args.dt)).into());
    }
    if !(args.duration.is_finite() && args.duration >= 0.0) {
        return Err(InputError(format!("--duration ({}) must be >= 0", args.duration)).into());
    }
    if args.duration / args.dt > MAX_STEPS {
        return Err(InputError(format!(
            "--duration/--dt ({:.3e} steps) must be <= {MAX_STEPS:e}",
            args.duration / args.dt
        ))
        .into());
    }
    if args.every == 0 {
        return Err(InputError("--every (0) must be >= 1".into()).into());
    }
    let params = match &args.params {
        Some(text) => json_arg("--params", text)?,
        None => serde_json::json!({}),
    };
    let mut model = registry::build_model(&ModelSpec {
        model: args.model.clone(),
        params,
    })
    .map_err(|e| InputError(e.to_string()))?;
    let scenario: Scenario = serde_json::from_value(json_arg("--scenario", &args.scenario)?)
        .map_err(|e| InputError(format!("--scenario: {e}")))?;
    scenario
        .validate()
        .map_err(|e| InputError(format!("--scenario: {e}")))?;

    let names = model.state_names();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut err: Option<std::io::Error> = None;
    match args.format {
        Format::Csv => {
            write!(out, "t,x,v,u,friction")?;
            for n in &names {
                write!(out, ",{n}")?;
            }
            writeln!(out)?;
            scenario::simulate(
                model.as_mut(),
                &scenario,
                args.dt,
                args.duration,
                args.every,
                |r| {
                    if err.is_some() {
                        return;
                    }
                    let mut line = || -> std::io::Result<()> {
                        for (i, v) in [r.t, r.x, r.v, r.u, r.friction]
                            .iter()
                            .chain(&r.states)
                            .enumerate()
                        {
                            if i > 0 {
                                out.write_all(b",")?;
                            }
                            write_num(&mut out, *v)?;
                        }
                        writeln!(out)
                    };
                    err = line().err();
                },
            );
        }
        Format::Json => {
            let mut cols: Vec<Vec<f64>> = vec![Vec::new(); 5 + names.len()];
            scenario::simulate(
                model.as_mut(),
                &scenario,
                args.dt,
                args.duration,
                args.every,
                |r| {
                    for (c, v) in cols
                        .iter_mut()
                        .zip([r.t, r.x, r.v, r.u, r.friction].iter().chain(&r.states))
                    {
                        c.push(*v);
                    }
                },
            );
            let mut data = serde_json::Map::new();
            let all: Vec<String> = ["t", "x", "v", "u", "friction"]
                .iter()
                .map(|s| s.to_string())
                .chain(names)
                .collect();
            for (n, c) in all.iter().zip(cols) {
                data.insert(n.clone(), serde_json::json!(c));
            }
            let doc = serde_json::json!({
                "model": args.model, "params": model.params_json(), "scenario": scenario_json(&scenario),
                "dt": args.dt, "every": args.every, "columns": all, "data": data,
            });
            serde_json::to_writer(&mut out, &doc)?;
            writeln!(out)?;
        }
    }
    if let Some(e) = err
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn scenario_json(s: &Scenario) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
}

/// Writes `x` in its shortest round-trip form, with an exponent when it is very small or large.
fn write_num(w: &mut impl Write, x: f64) -> std::io::Result<()> {
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e15).contains(&a) {
        write!(w, "{x:e}")
    } else {
        write!(w, "{x}")
    }
}
