//! `bench characterise (--sim | --config bench.toml) [--models IDS] [--budget-min M] [--db PATH]
//! [--create] [--out DIR] [--json] [--resume ID]`: a characterisation campaign from an unknown
//! bench to its friction model, its compensation and a report (see [`mod@campaign`]).
//!
//! Prints `campaign ID` as soon as the campaign exists, a line per step on stderr, then the
//! answer. Exit codes: 0 completed, 2 bad input (nothing created, nothing moved), 3 a step was
//! aborted (the bench in its safe state; `--resume ID` continues), 1 a step failed.

use super::db::DbArgs;
use super::{InputError, json_arg};
use bench_daemon::bench_lock::BenchLock;
use campaign::{BenchHandle, DEFAULT_MODELS, Request};

/// Bench time budget of a campaign when `--budget-min` is not given \[min\].
pub const DEFAULT_BUDGET_MIN: f64 = 20.0;
use bench_daemon::config::Loaded;
use bench_daemon::control::StopReason;
use friction::registry::ModelSpec;
use run_store::{CampaignStatus, Store};
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `bench characterise`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("bench").required(true).multiple(true).args(["sim", "config"])))]
pub struct CharacteriseArgs {
    /// The simulated bench, its plant stepped in simulated time in this process (as
    /// `bench run --sim --virtual-time`): a 20-minute campaign in seconds of CPU. With
    /// --config: that file's limits and gains.
    #[arg(long)]
    sim: bool,
    /// Bench configuration file (bench.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// With --sim: the true friction model id (default: the simulator's asymmetric GMS).
    #[arg(long, value_name = "ID", requires = "sim")]
    truth: Option<String>,
    /// With --truth: its parameters (JSON inline or @file; unset ones take the defaults).
    #[arg(long, value_name = "JSON|@FILE", requires = "truth")]
    truth_params: Option<String>,
    /// With --sim: the simulated plant's parameters (inertia, encoder, the drive's own gains,
    /// noise, ...; the keys of `bench sim --params`), JSON inline or @file. Its
    /// `encoder_counts_per_rev` must be the bench's `[limits]` one (give --config).
    #[arg(long, value_name = "JSON|@FILE", requires = "sim")]
    sim_params: Option<String>,
    /// Models to fit and compare (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_MODELS.map(String::from))]
    models: Vec<String>,
    /// Bench time budget in minutes (default 20): a step whose plan would exceed what is left is
    /// not started. With --resume: replaces the campaign's budget.
    #[arg(long)]
    budget_min: Option<f64>,
    #[command(flatten)]
    db: DbArgs,
    /// Create the database's directory if it does not exist.
    #[arg(long)]
    create: bool,
    /// Write the report into this directory (campaign-ID.html), made if missing.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the campaign record as JSON on stdout (after the `campaign ID` line).
    #[arg(long)]
    json: bool,
    /// Continue campaign ID from its first step not completed (after the operator's action).
    #[arg(long, value_name = "ID")]
    resume: Option<i64>,
}

/// The simulated bench's true friction from `--truth ID` and `--truth-params JSON|@file`
/// (default: the simulator's own, `bench_sim::default_truth`), checked by building it.
pub fn truth_spec(id: Option<&str>, params: Option<&str>) -> anyhow::Result<ModelSpec> {
    let t = match id {
        None => bench_sim::default_truth(),
        Some(id) => ModelSpec {
            model: id.to_string(),
            params: match params {
                Some(p) => json_arg("--truth-params", p)?,
                None => serde_json::json!({}),
            },
        },
    };
    friction::registry::build_model(&t).map_err(|e| InputError(format!("--truth: {e}")))?;
    Ok(t)
}

fn truth(args: &CharacteriseArgs) -> anyhow::Result<Option<ModelSpec>> {
    match args.sim {
        true => truth_spec(args.truth.as_deref(), args.truth_params.as_deref()).map(Some),
        false => Ok(None),
    }
}

/// The simulated plant's parameters from `--sim-params` (`None` without it: the defaults),
/// checked against the bench it runs under: the daemon reads positions in the `[limits]`
/// encoder's counts, and the lockstep models simulate torque segments with
/// `[lockstep] plant_inertia_kg_m2`, so both must be the plant's.
pub fn sim_params(
    text: Option<&str>,
    loaded: &Loaded,
) -> anyhow::Result<Option<bench_sim::SimParams>> {
    let Some(text) = text else { return Ok(None) };
    let p = super::sim::sim_params("--sim-params", Some(text))?;
    check_plant(&p, loaded)?;
    Ok(Some(p))
}

/// Refuses a plant whose encoder or inertia is not the bench's (see [`sim_params`]); also
/// run on a resumed campaign's stored plant, which `--config` must match again.
fn check_plant(p: &bench_sim::SimParams, loaded: &Loaded) -> Result<(), InputError> {
    let c = &loaded.config;
    let refuse = |key: &str, plant: f64, bench: &str, value: f64| {
        InputError(format!(
            "--sim-params: {key} ({plant}) is not the bench's {bench} ({value}): give a --config whose {bench} is the plant's"
        ))
    };
    let (plant, bench) = (p.encoder_counts_per_rev, c.limits.encoder_counts_per_rev);
    if plant != bench {
        let key = "encoder_counts_per_rev";
        let e = refuse(
            key,
            plant.into(),
            "[limits] encoder_counts_per_rev",
            bench.into(),
        );
        return Err(e);
    }
    if let Some(j) = c.lockstep.plant_inertia_kg_m2
        && (p.inertia_kg_m2 - j).abs() > 1e-9 * j
    {
        return Err(refuse(
            "inertia_kg_m2",
            p.inertia_kg_m2,
            "[lockstep] plant_inertia_kg_m2",
            j,
        ));
    }
    Ok(())
}

/// Runs the campaign.
pub fn run(args: &CharacteriseArgs) -> anyhow::Result<()> {
    let loaded = Loaded::for_command(args.config.as_deref(), args.sim.then_some("127.0.0.1:0"))?;
    loaded.check_watchdog()?;
    let request = Request {
        models: args.models.clone(),
        budget_min: args.budget_min.unwrap_or(DEFAULT_BUDGET_MIN),
        truth: truth(args)?,
        sim_params: sim_params(args.sim_params.as_deref(), &loaded)?,
    };
    request.check().map_err(InputError::from)?;
    let db = bench_daemon::db::for_bench(args.db.db.as_deref(), &loaded);
    bench_daemon::db::check_dir(&db, args.create)?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError(format!("--out: cannot create {}: {e}", dir.display())))?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(campaign(args, loaded, request, db))
}

async fn campaign(
    args: &CharacteriseArgs,
    loaded: Loaded,
    request: Request,
    db: PathBuf,
) -> anyhow::Result<()> {
    let store = match args.resume {
        Some(_) => bench_daemon::db::open_existing(&db).await?,
        None => Store::open(&db).await?,
    };
    let (id, request) = match args.resume {
        Some(id) => {
            let c = store.campaign(id).await.map_err(|_| {
                InputError(format!(
                    "--resume: campaign {id} not found in {}",
                    db.display()
                ))
            })?;
            if c.status == CampaignStatus::Completed {
                return Err(InputError(format!("--resume: campaign {id} is completed")).into());
            }
            let mut stored: Request = serde_json::from_value(c.request)?;
            if let Some(b) = args.budget_min {
                stored.budget_min = b;
                store
                    .set_campaign_request(id, &serde_json::to_value(&stored)?)
                    .await?;
            }
            if stored.truth.is_some() != args.sim {
                return Err(InputError(format!(
                    "--resume: campaign {id} ran on {}; give {}",
                    if args.sim {
                        "a real bench"
                    } else {
                        "the simulated bench"
                    },
                    if args.sim {
                        "--config, not --sim"
                    } else {
                        "--sim"
                    }
                ))
                .into());
            }
            if let Some(p) = &stored.sim_params {
                check_plant(p, &loaded)
                    .map_err(|e| InputError(format!("--resume: campaign {id}'s {}", e.0)))?;
            }
            (id, stored)
        }
        None => {
            let bench = serde_json::to_value(&loaded.config)?;
            let req = serde_json::to_value(&request)?;
            let id = store
                .create_campaign(&req, &bench, env!("CARGO_PKG_VERSION"))
                .await?;
            (id, request)
        }
    };
    println!("campaign {id}");
    let _lock = match request.truth {
        Some(_) => None,
        None => Some(BenchLock::acquire(
            &loaded,
            &bench_daemon::bench_lock::this_command(),
        )?),
    };
    let sim = request.plant();
    let geometry = loaded.config.geometry;
    let bench = Arc::new(BenchHandle::new(loaded, sim));
    let ctrl_c = {
        let bench = bench.clone();
        let stop = bench_daemon::signals::stop_signal();
        tokio::spawn(async move {
            let signal = stop.await;
            bench.abort(StopReason::DaemonSignal(signal));
        })
    };
    let started = std::time::Instant::now();
    let done = campaign::run(&store, &bench, id, db.clone()).await;
    ctrl_c.abort();
    let report = campaign::report_html(&store, id, geometry).await;
    store.close().await;
    if let (Some(dir), Ok(html)) = (&args.out, &report) {
        let path = dir.join(format!("campaign-{id}.html"));
        std::fs::write(&path, html)?;
        eprintln!("bench: report {}", path.display());
    }
    let c = done?;
    report?;
    eprintln!(
        "campaign {id}: {} in {:.0} s of bench time ({:.1} s wall)",
        c.status,
        campaign::bench_time(&c),
        started.elapsed().as_secs_f64()
    );
    if args.json {
        println!("{}", serde_json::to_string(&c.stored()?)?);
    } else {
        let text = c.answer.judged.as_ref().map_or("", |a| a.text.as_str());
        println!("{text}");
    }
    Ok(())
}
