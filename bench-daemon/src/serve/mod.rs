//! `bench serve`: the bench as a service. One process holds the control loop (one run at a
//! time, on its own thread), the scheduler task that owns the queue and the schedule, and the
//! axum HTTP server, which owns nothing mutable (mini-redis's shape).
//!
//! ```text
//!  TCP ── front thread (front.rs): POST /api/estop answered there, the rest handed on
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
pub mod body;
pub mod estop;
pub mod fitting;
pub mod front;
pub mod guard;
pub mod live;
pub mod metrics;
pub mod openapi;
pub mod parquet;
pub mod pool;
pub mod queue;
pub mod stream;
pub mod web;

use crate::bench_lock::BenchLock;
use crate::cli::InputError;
use crate::cli::run::{db_path, load_config};
use crate::cli::runs::DbArgs;
use crate::config::Loaded;
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
    /// A read-only lab view: no bench, no queue, every mutating call 409.
    pub lab: bool,
    /// bench.toml.
    pub config: Option<PathBuf>,
    /// Listen address.
    pub listen: SocketAddr,
    /// The run database.
    pub db: DbArgs,
    /// Dashboard directory (`--web`); `None`: the dashboard embedded at build time.
    pub web: Option<PathBuf>,
    /// Token from --token or the environment, with where it came from.
    pub token: Option<(String, &'static str)>,
    /// GETs need the token too.
    pub token_for_reads: bool,
    /// Create a missing database directory.
    pub create: bool,
}

/// The token from the options or the configuration, checked (at least 16 characters, not
/// blank); required beyond loopback and with `--token-for-reads`.
fn token_of(
    opts: &Options,
    config: &crate::config::BenchConfig,
) -> Result<Option<Arc<str>>, InputError> {
    let token = opts
        .token
        .clone()
        .or_else(|| config.token.clone().map(|t| (t, "token in bench.toml")));
    if let Some((t, source)) = &token {
        guard::check_token(t, source).map_err(InputError)?;
    }
    if token.is_none() && !opts.listen.ip().is_loopback() {
        return Err(InputError(format!(
            "--listen {}: not a loopback address, so mutating calls need a bearer token: give \
             --token, $FRICTIONBENCH_TOKEN or token = \"...\" in bench.toml",
            opts.listen
        )));
    }
    if token.is_none() && opts.token_for_reads {
        return Err(InputError(
            "--token-for-reads needs a token: give --token, $FRICTIONBENCH_TOKEN or token = \
             \"...\" in bench.toml"
                .into(),
        ));
    }
    Ok(token.map(|(t, _)| Arc::from(t)))
}

/// Runs the service until Ctrl-C or SIGTERM.
pub async fn serve(opts: Options) -> anyhow::Result<()> {
    // Check the configuration (and the token rule) before starting anything.
    let probe = if opts.lab {
        Loaded::lab()
    } else {
        load_config(opts.config.as_deref(), opts.sim.then_some("127.0.0.1:0"))?
    };
    let token = token_of(&opts, &probe.config)?;
    crate::cli::run::check_db_dir(&db_path(&opts.db, &probe), opts.create)?;
    let guard = Arc::new(guard::Guard {
        token,
        token_for_reads: opts.token_for_reads,
        listen: opts.listen,
        allowed_hosts: probe
            .config
            .allowed_hosts
            .iter()
            .map(|h| h.trim().to_ascii_lowercase())
            .collect(),
    });
    let listener = std::net::TcpListener::bind(opts.listen)
        .map_err(|e| InputError(format!("--listen {}: {e}", opts.listen)))?;
    let addr = listener.local_addr()?;

    let sim = if opts.sim {
        let priority = probe.config.realtime_priority.saturating_sub(1);
        let sim = InProcessSim::start(bench_sim::SimConfig::default(), priority).await?;
        if let Some(note) = &sim.priority_note {
            tracing::info!("simulated bench at {note}");
        }
        Some(sim)
    } else {
        None
    };
    let tcp = sim.as_ref().map(|s| s.tcp().to_string());
    if opts.lab {
        return serve_lab(opts, probe, guard, listener).await;
    }
    let loaded = Arc::new(load_config(opts.config.as_deref(), tcp.as_deref())?);
    let _bench = BenchLock::acquire(&loaded, &crate::bench_lock::this_command())?;
    let db = db_path(&opts.db, &loaded);
    // Its queue, settings and schedule are this bench's own, whoever else records here.
    let store = Store::open(&db).await?.for_bench(&loaded.config.bench_id);
    for id in store.interrupted_at_open() {
        tracing::warn!(
            "run {id} was running when the daemon stopped: marked interrupted; \
             the queue stays paused until an operator resumes it"
        );
    }
    let latched = store.queue_setting("estop").await?.as_deref() == Some("true");
    let interlock = Arc::new(Interlock::new(loaded.clone(), latched));

    let hub = live::Hub::new();
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let (cmd_tx, cmd_rx) = mpsc::channel(64);
    let pool = pool::Pool::default();
    let (scheduler, view) = queue::Scheduler::restore(
        store.clone(),
        loaded.clone(),
        hub.clone(),
        sim.is_some(),
        interlock.clone(),
        pool.clone(),
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
        guard,
        shutdown: shutdown_rx.clone(),
        db_path: db.clone(),
        pool,
        fits: Default::default(),
        lab: false,
    };
    let estop = api::estop_router(state.clone());
    let app = api::router(state, opts.web.as_deref());
    // The front desk runs just below the simulated bench's priority (which is just below the
    // loop's): a flood of connections cannot take the loop's CPU.
    let front_priority = loaded.config.realtime_priority.saturating_sub(2);
    let listener = front::start(listener, estop, front_priority, shutdown_rx.clone())?;
    let banner = format!(
        "bench serve: http://{addr}/ (database {})",
        store.location()
    );
    let stopping = "shutting down (aborting the running run, if any)";
    serve_until_stopped(listener, app, banner, stopping, (shutdown_tx, shutdown_rx)).await?;
    let _ = scheduler.await;
    store.close().await;
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    Ok(())
}

/// `bench serve --lab`: the API and the dashboard over an existing store, read-only (the
/// guard layer answers 409 to every mutating call), with no bench, queue or scheduler.
async fn serve_lab(
    opts: Options,
    loaded: Loaded,
    guard: Arc<guard::Guard>,
    listener: std::net::TcpListener,
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    let db = db_path(&opts.db, &loaded);
    let store = crate::cli::runs::open(&opts.db).await?;
    let loaded = Arc::new(loaded);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    // Nobody receives commands: a mutating call never gets this far.
    let (cmd_tx, _) = mpsc::channel(1);
    let (_, view) = watch::channel(queue::QueueView::default());
    let state = api::AppState {
        store: store.clone(),
        loaded: loaded.clone(),
        cmd: cmd_tx,
        interlock: Arc::new(Interlock::new(loaded, false)),
        view,
        hub: live::Hub::new(),
        guard,
        shutdown: shutdown_rx.clone(),
        db_path: db,
        pool: pool::Pool::default(),
        fits: Default::default(),
        lab: true,
    };
    let estop = api::estop_router(state.clone());
    let app = api::router(state, opts.web.as_deref());
    let listener = front::start(listener, estop, 0, shutdown_rx.clone())?;
    let banner = format!(
        "bench serve: http://{addr}/ (lab view, read-only, database {})",
        store.location()
    );
    serve_until_stopped(
        listener,
        app,
        banner,
        "shutting down",
        (shutdown_tx, shutdown_rx),
    )
    .await?;
    store.close().await;
    Ok(())
}

/// Prints `banner` (the URL line clients wait for) and serves `app` until Ctrl-C, SIGTERM or
/// another reason sends `true` on the shutdown channel.
async fn serve_until_stopped(
    listener: front::Handoff,
    app: axum::Router,
    banner: String,
    stopping: &'static str,
    (shutdown_tx, shutdown_rx): (watch::Sender<bool>, watch::Receiver<bool>),
) -> anyhow::Result<()> {
    tokio::spawn(async move {
        let signal = crate::cli::stop_signal().await;
        tracing::info!("{signal}: {stopping}");
        let _ = shutdown_tx.send(true);
    });
    println!("{banner}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let mut until = shutdown_rx;
    let app = app.into_make_service_with_connect_info::<guard::ConnAddrs>();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = until.wait_for(|stop| *stop).await;
        })
        .await?;
    Ok(())
}
