//! `bench trends --param NAME [--model ID] [--bench ID] [--since DATE] [--until DATE]
//! [--db PATH|URL] [--json]`: one parameter over the runs of a lab (docs/src/trends.md), one
//! point per fitted run in time order with its standard error, run and tags, each bench's
//! control limits from a baseline and the points outside them flagged. `GET /api/trends`
//! takes the same filters ([`TrendFilter`], the service's).

use super::db::{DbArgs, open, runtime};
use bench_daemon::db::store_error;
use bench_service::trends::TrendFilter;
use run_store::{Band, Trend};
use std::io::Write;

/// Arguments of `bench trends`.
#[derive(Debug, clap::Args)]
pub struct TrendsArgs {
    #[command(flatten)]
    filter: TrendFilter,
    #[command(flatten)]
    db: DbArgs,
    /// Print JSON: `param`, `model`, `bench`, `since`, `until`, `points` (each `run_id`,
    /// `bench_id`, `at`, `source`, `model`, `idx`, `x`, `value`, `std_error`,
    /// `parameter_set_id`, `tags`, `outside`), `series` (each `bench_id`, `model`, `idx`,
    /// `points`, `limits`), `outside`.
    #[arg(long)]
    json: bool,
}

/// Runs `bench trends`.
pub fn run(args: &TrendsArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let store = open(&args.db).await?;
        let trend = store
            .trend(&args.filter.query())
            .await
            .map_err(store_error)?;
        let mut w = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut w, &trend)?;
            writeln!(w)?;
            return Ok(());
        }
        print(&mut w, &trend)?;
        Ok(())
    })
}

/// The points as a table, then each series' limits.
fn print(w: &mut impl Write, t: &Trend) -> std::io::Result<()> {
    if t.points.is_empty() {
        return writeln!(
            w,
            "no runs have a value of '{}' (with these filters)",
            t.param
        );
    }
    writeln!(
        w,
        "{:<24} {:>7} {:<12} {:<10} {:>14} {:>11}  flag  tags",
        "at", "run", "bench", "model", t.param, "std_error"
    )?;
    for p in &t.points {
        let se = p.std_error.map_or("-".to_string(), |s| format!("{s:.4e}"));
        let flag = match p.outside {
            Some(true) => "OUT ",
            Some(false) => "ok  ",
            None => "-   ",
        };
        let model = if p.model.is_empty() {
            p.source.as_str()
        } else {
            p.model.as_str()
        };
        writeln!(
            w,
            "{:<24} {:>7} {:<12} {:<10} {:>14.6e} {:>11}  {flag}  {}",
            p.at,
            p.run_id,
            p.bench_id,
            model,
            p.value,
            se,
            p.tags.join(",")
        )?;
    }
    for s in &t.series {
        let l = &s.limits;
        let limits = match (l.lower, l.upper) {
            (Some(lo), Some(hi)) => format!("[{lo:.6e}, {hi:.6e}]"),
            _ => "none".to_string(),
        };
        let method = match l.band {
            Band::Sigma3 => "mean ± 3σ".to_string(),
            Band::Relative { fraction } => format!("mean ± {}%", fraction * 100.0),
        };
        let note = l
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let (name, at) = match (s.model.as_str(), s.idx) {
            ("", 0) => (t.param.as_str(), String::new()),
            ("", k) => (t.param.as_str(), format!(" point {k}")),
            (model, _) => (model, String::new()),
        };
        writeln!(
            w,
            "bench {} {name}{at}: {} points, limits {limits} ({method} of {} baseline points){note}",
            s.bench_id, s.points, l.baseline_points
        )?;
    }
    writeln!(
        w,
        "{} of {} points outside their limits",
        t.outside,
        t.points.len()
    )
}
