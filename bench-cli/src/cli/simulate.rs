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
    let spec = ModelSpec {
        model: args.model.clone(),
        params,
    };
    let mut model = registry::build_model(&spec).map_err(|e| InputError(e.to_string()))?;
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
            err = each_row(model.as_mut(), &scenario, args, |r| {
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
            })
            .err();
        }
        Format::Json => {
            // A column at a time, each from a fresh run of the (deterministic) model: the
            // output is never held whole, however many steps.
            let all: Vec<String> = ["t", "x", "v", "u", "friction"]
                .iter()
                .map(|s| s.to_string())
                .chain(names)
                .collect();
            write!(out, "{{\"model\":")?;
            serde_json::to_writer(&mut out, &args.model)?;
            write!(out, ",\"params\":")?;
            serde_json::to_writer(&mut out, &model.params_json())?;
            write!(out, ",\"scenario\":")?;
            serde_json::to_writer(&mut out, &scenario_json(&scenario))?;
            write!(
                out,
                ",\"dt\":{},\"every\":{},\"columns\":",
                args.dt, args.every
            )?;
            serde_json::to_writer(&mut out, &all)?;
            write!(out, ",\"data\":{{")?;
            for (c, name) in all.iter().enumerate() {
                if c > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut out, name)?;
                out.write_all(b":[")?;
                let mut fresh =
                    registry::build_model(&spec).map_err(|e| InputError(e.to_string()))?;
                let mut first = true;
                err = each_row(fresh.as_mut(), &scenario, args, |r| {
                    let v = [r.t, r.x, r.v, r.u, r.friction]
                        .get(c)
                        .copied()
                        .unwrap_or_else(|| r.states[c - 5]);
                    if !first {
                        out.write_all(b",")?;
                    }
                    first = false;
                    serde_json::to_writer(&mut out, &json_num(v)).map_err(std::io::Error::from)
                })
                .err();
                if err.is_some() {
                    break;
                }
                out.write_all(b"]")?;
            }
            writeln!(out, "}}}}")?;
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

/// Steps `model` through `scenario`, handing every kept row to `row`; the first write error
/// stops the writing (the model runs on) and is returned.
fn each_row(
    model: &mut dyn friction::FrictionModel,
    scenario: &Scenario,
    args: &SimulateArgs,
    mut row: impl FnMut(&scenario::Row) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut err = None;
    scenario::simulate(model, scenario, args.dt, args.duration, args.every, |r| {
        if err.is_none() {
            err = row(r).err();
        }
    });
    err.map_or(Ok(()), Err)
}

fn json_num(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
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
