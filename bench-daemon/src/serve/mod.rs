//! `bench serve`: the bench as a service. One process holds the control loop (one run at a
//! time, on its own thread), the scheduler task that owns the queue and the schedule, and the
//! axum HTTP server, which owns nothing mutable (mini-redis's shape).
//!
//! ```text
//!  POST /api/estop ── Interlock (atomic latch + the running loop's Control, or its own
//!                    drive link) ── confirmed safe state, then Cmd::EStopLatched ──►
//!  http handlers ── Cmd + oneshot reply ──► scheduler task (queue.rs): owns the queue, the
//!       ▲                                   schedule, the e-stop latch; persists them; starts
//!       │ watch<QueueView>  ◄────────────── session::execute_run one run at a time
//!       │ watch<Status>     ◄── control loop (per run thread) ── broadcast<Frame> ──► SSE
//!       └ broadcast<Event> (run/queue changes) ◄── scheduler                  (live.rs)
//! ```
//!
//! SIGINT, SIGTERM or SIGHUP: the running run is aborted (the drive goes to its safe state and the
//! run is closed `aborted`), open live streams end, the store is closed.

pub mod api;
pub mod live;
pub mod openapi;
pub mod parquet;
pub mod queue;
pub mod web;

use crate::bench_lock::BenchLock;
use crate::cli::InputError;
use crate::cli::run::{db_path, load_config};
use crate::cli::runs::DbArgs;
use crate::control::Interlock;
use crate::simulated::InProcessSim;
use run_store::Store;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// What `bench serve` was asked for.
#[derive(Debug)]
pub struct Options {
    /// Start the simulated bench in-process.
    pub sim: bool,
    /// bench.toml.
    pub config: Option<PathBuf>,
    /// Listen address.
    pub listen: SocketAddr,
    /// The run database.
    pub db: DbArgs,
    /// Dashboard directory (`--web`); `None`: the dashboard embedded at build time.
    pub web: Option<PathBuf>,
    /// Token from --token or the environment.
    pub token: Option<String>,
}

/// Runs the service until Ctrl-C or SIGTERM.
pub async fn serve(opts: Options) -> anyhow::Result<()> {
    // Check the configuration (and the token rule) before starting anything.
    let probe = load_config(opts.config.as_deref(), opts.sim.then_some("127.0.0.1:0"))?;
    let token = opts.token.clone().or_else(|| probe.config.token.clone());
    let auth = !opts.listen.ip().is_loopback();
    if auth && token.is_none() {
        return Err(InputError(format!(
            "--listen {}: not a loopback address, so mutating calls need a bearer token: give \
             --token, $FRICTIONBENCH_TOKEN or token = \"...\" in bench.toml",
            opts.listen
        ))
        .into());
    }
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .map_err(|e| InputError(format!("--listen {}: {e}", opts.listen)))?;
    let addr = listener.local_addr()?;

    let sim = if opts.sim {
        let priority = probe.config.realtime_priority.saturating_sub(1);
        let sim = InProcessSim::start(bench_sim::SimConfig::default(), priority).await?;
        if let Some(note) = &sim.priority_note {
            eprintln!("bench serve: simulated bench at {note}");
        }
        Some(sim)
    } else {
        None
    };
    let tcp = sim.as_ref().map(|s| s.tcp().to_string());
    let loaded = Arc::new(load_config(opts.config.as_deref(), tcp.as_deref())?);
    let _bench = BenchLock::acquire(&loaded, &crate::bench_lock::this_command())?;
    let db = db_path(&opts.db, &loaded);
    let store = Store::open(&db).await?;
    for id in store.interrupted_at_open() {
        eprintln!(
            "bench serve: run {id} was running when the daemon stopped: marked interrupted; \
             the queue stays paused until an operator resumes it"
        );
    }
    let latched = store.queue_setting("estop").await?.as_deref() == Some("true");
    let interlock = Arc::new(Interlock::new(loaded.clone(), latched));

    let hub = live::Hub::new();
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let (cmd_tx, cmd_rx) = mpsc::channel(64);
    let (scheduler, view) = queue::Scheduler::restore(
        store.clone(),
        loaded.clone(),
        hub.clone(),
        sim.is_some(),
        interlock.clone(),
    )
    .await?;
    let scheduler = tokio::spawn(scheduler.run(cmd_rx, shutdown_rx.clone()));
    let state = api::AppState {
        store: store.clone(),
        loaded: loaded.clone(),
        cmd: cmd_tx,
        interlock,
        view,
        hub,
        token: if auth { token.map(Arc::from) } else { None },
        shutdown: shutdown_rx.clone(),
        db_path: db.clone(),
    };
    let app = api::router(state, opts.web.as_deref());

    tokio::spawn(async move {
        let signal = crate::cli::stop_signal().await;
        eprintln!("bench serve: {signal}: shutting down (aborting the running run, if any)");
        let _ = shutdown_tx.send(true);
    });
    println!("bench serve: http://{addr}/ (database {})", db.display());
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let mut until = shutdown_rx.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = until.wait_for(|stop| *stop).await;
        })
        .await?;
    let _ = scheduler.await;
    store.close().await;
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    Ok(())
}
