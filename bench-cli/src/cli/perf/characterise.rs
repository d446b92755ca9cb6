//! `bench perf characterise [--truth ID --truth-params JSON] [--config bench.toml]
//! [--sim-params JSON] [--models IDS] [--json]`: a
//! campaign on the simulated bench in simulated time, into a temporary database; prints the
//! wall time of its runs, of its fits and comparison, and of its report (goal: fits,
//! comparison and report < 10 s after the last run).

use bench_daemon::InputError;
use bench_daemon::config::Loaded;
use campaign::{BenchHandle, DEFAULT_MODELS, Request};
use run_store::Store;
use serde_json::json;
use std::time::Instant;

/// Arguments of `bench perf characterise`.
#[derive(Debug, clap::Args)]
pub struct PerfCharacteriseArgs {
    /// True friction model id (default: the simulator's asymmetric GMS).
    #[arg(long, value_name = "ID")]
    truth: Option<String>,
    /// Its parameters (JSON inline or @file).
    #[arg(long, value_name = "JSON|@FILE", requires = "truth")]
    truth_params: Option<String>,
    /// The bench's configuration (its limits and gains; default: the shipped simulated one).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// The simulated plant's parameters (the keys of `bench sim --params`), JSON or @file.
    #[arg(long, value_name = "JSON|@FILE")]
    sim_params: Option<String>,
    /// Models to fit and compare (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_MODELS.map(String::from))]
    models: Vec<String>,
    /// Print JSON: `runs_s`, `fits_and_comparison_s`, `report_s`, `after_last_run_s`,
    /// `goal_s`, `bench_time_s`.
    #[arg(long)]
    json: bool,
}

/// Runs the benchmark.
pub fn run(args: &PerfCharacteriseArgs) -> anyhow::Result<()> {
    let truth = super::super::characterise::truth_spec(
        args.truth.as_deref(),
        args.truth_params.as_deref(),
    )?;
    let loaded = Loaded::for_command(args.config.as_deref(), Some("127.0.0.1:0"))?;
    let request = Request {
        models: args.models.clone(),
        budget_min: 60.0,
        truth: Some(truth),
        sim_params: super::super::characterise::sim_params(args.sim_params.as_deref(), &loaded)?,
    };
    request.check().map_err(InputError::from)?;
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("perf.db");
    super::super::block_on(async move {
        let store = Store::open(&db).await?;
        let id = store
            .create_campaign(
                &serde_json::to_value(&request)?,
                &json!({}),
                env!("CARGO_PKG_VERSION"),
            )
            .await?;
        let g = loaded.config.geometry;
        let bench = BenchHandle::new(loaded, request.plant());
        let t0 = Instant::now();
        let c = campaign::run(&store, &bench, id, db.clone()).await?;
        let total = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let html = campaign::report_html(&store, id, g).await?;
        let report_s = t1.elapsed().as_secs_f64();
        store.close().await;
        let fits = c.answer.fits_and_comparison_s.flatten().unwrap_or(f64::NAN);
        let judged = c.answer.judged.as_ref();
        let bench_time_s = judged.map(|a| a.bench_time_s);
        let out = json!({
            "runs_s": total - fits,
            "fits_and_comparison_s": fits,
            "report_s": report_s,
            "report_bytes": html.len(),
            "after_last_run_s": fits + report_s,
            "goal_s": 10.0,
            "bench_time_s": bench_time_s,
            "best_model": judged.and_then(|a| a.best_model.as_deref()),
        });
        if args.json {
            println!("{out}");
        } else {
            println!(
                "campaign in simulated time: runs {:.1} s wall ({:.0} s of bench time); fits and comparison {fits:.2} s; report {report_s:.3} s; after the last run {:.2} s (goal < 10 s)",
                total - fits,
                bench_time_s.unwrap_or(f64::NAN),
                fits + report_s
            );
        }
        Ok(())
    })
}
