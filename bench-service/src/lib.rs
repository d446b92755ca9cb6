//! `bench serve`: the bench as a service. One process holds the control loop (one run at a
//! time, on its own thread), the scheduler task that owns the queue and the schedule, and the
//! axum HTTP server, which owns nothing mutable (mini-redis's shape).
//!
//! ```text
//!  TCP ── front thread (front.rs): POST /api/estop answered there, the rest handed on
//!  POST /api/estop ── Interlock (atomic latch + the running loop's Control, or its own
//!                    drive link) ── confirmed safe state, then Cmd::EStopLatched ──►
//!  http handlers ── Cmd + oneshot reply ──► scheduler task (scheduler/): owns the queue, the
//!       ▲                                   schedule, the e-stop latch; persists them; starts
//!       │ watch<QueueView>  ◄────────────── session::execute_run one run at a time
//!       │ watch<Status>     ◄── control loop (per run thread) ── broadcast<Frame> ──► SSE
//!       └ broadcast<Event> (run/queue changes) ◄── scheduler                  (live.rs)
//! ```
//!
//! SIGINT, SIGTERM or SIGHUP: the running run is aborted (the drive goes to its safe state and the
//! run is closed `aborted`), open live streams end, the store is closed.
//!
//! The HTTP side is cut by resource (`runs`, `queue`, `schedule`, `fits`, `params`, `bench`,
//! `estop`, `live`, `metrics`): each adds its own routes, documented by the types of their
//! handlers; they import only the modules below them (`state`, `error`, `hub`, `body`,
//! `extract`, the scheduler, ...), and `router` alone imports them all. A new endpoint is a
//! handler and a route in its resource's module; the OpenAPI document follows.

// Below: what every handler shares.
pub mod body;
pub mod error;
pub mod extract;
pub mod front;
pub mod guard;
pub mod heartbeat;
pub mod hub;
pub mod jobs;
pub mod metrics;
pub mod named;
pub mod notify;
pub mod openapi;
pub mod parquet;
pub mod pool;
pub mod scheduler;
pub mod schema;
pub mod state;
pub mod status;
pub mod stream;
pub mod web;
// One module per resource, each adding its own routes.
pub mod audit;
mod auto_resume;
pub mod bench;
pub mod campaigns;
pub mod curves;
pub mod estop;
pub mod fits;
pub mod lab_benches;
pub mod live;
pub mod live_events;
pub mod params;
pub mod procedures;
pub mod queue;
pub mod retention;
pub mod runs;
pub mod schedule;
pub mod sensors;
pub mod trends;
// The routes together.
pub mod router;

use bench_daemon::InputError;
use bench_daemon::bench_lock::BenchLock;
use bench_daemon::config::Loaded;
use bench_daemon::control::Interlock;
use bench_daemon::simulated::InProcessSim;
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
    /// The run database (`--db`; else bench.toml's `database`, else the default).
    pub db: Option<PathBuf>,
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
    config: &bench_daemon::config::BenchConfig,
) -> Result<Option<Arc<str>>, InputError> {
    let token = opts
        .token
        .clone()
        .or_else(|| config.token.clone().map(|t| (t, "token in bench.toml")));
    if let Some((t, source)) = &token {
        guard::check_token(t, source).map_err(InputError)?;
    }
    if !config.users.is_empty() {
        if let Some((_, source)) = token {
            return Err(InputError(format!(
                "{source}: bench.toml has [[users]], each with a token of their own: give no \
                 shared token"
            )));
        }
        return Ok(None);
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

/// `bench serve`: binds `--listen` and runs the service until Ctrl-C, SIGTERM or SIGHUP.
pub async fn serve(opts: Options) -> anyhow::Result<()> {
    let listener = std::net::TcpListener::bind(opts.listen)
        .map_err(|e| InputError(format!("--listen {}: {e}", opts.listen)))?;
    let stopping = match opts.lab {
        true => "shutting down",
        false => "shutting down (aborting the running run, if any)",
    };
    let stop = bench_daemon::signals::stop_signal();
    run(listener, opts, async move {
        let signal = stop.await;
        tracing::info!("{signal}: {stopping}");
    })
    .await
}

/// The service on `listener` until `shutdown` completes (a signal for `bench serve`, a test's
/// own trigger): the library's entry point, callable from a test on port 0. The guard's
/// loopback and host rules judge the listener's own address (`opts.listen` is replaced by it).
pub async fn run(
    listener: std::net::TcpListener,
    opts: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    run_until(listener, opts, Box::pin(shutdown)).await
}

/// The future that ends the service, boxed: `run`'s body is compiled once, here, rather than
/// in every caller's crate (a test crate builds it at its own optimisation level).
type Shutdown = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

async fn run_until(
    listener: std::net::TcpListener,
    mut opts: Options,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    opts.listen = listener.local_addr()?;
    // Check the configuration (and the token rule) before starting anything.
    let probe = if opts.lab {
        Loaded::lab()
    } else {
        Loaded::for_command(opts.config.as_deref(), opts.sim.then_some("127.0.0.1:0"))?
    };
    let token = token_of(&opts, &probe.config)?;
    bench_daemon::db::check_dir(
        &bench_daemon::db::for_bench(opts.db.as_deref(), &probe),
        opts.create,
    )?;
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
        users: (!probe.config.users.is_empty())
            .then(|| Arc::new(bench_daemon::users::Users::new(probe.config.users.clone()))),
    });
    let addr = listener.local_addr()?;

    let sim = if opts.sim {
        let priority = probe.config.realtime_priority.saturating_sub(1);
        let sim =
            InProcessSim::start(bench_daemon::simulated::sim_config(&probe), priority).await?;
        if let Some(note) = &sim.priority_note {
            tracing::info!("simulated bench at {note}");
        }
        Some(sim)
    } else {
        None
    };
    let tcp = sim.as_ref().map(|s| s.tcp().to_string());
    if opts.lab {
        return serve_lab(opts, probe, guard, listener, shutdown).await;
    }
    let loaded = Arc::new(Loaded::for_command(opts.config.as_deref(), tcp.as_deref())?);
    let _bench = BenchLock::acquire(&loaded, &bench_daemon::bench_lock::this_command())?;
    let db = bench_daemon::db::for_bench(opts.db.as_deref(), &loaded);
    // Its queue, settings and schedule are this bench's own, whoever else records here.
    let store = Store::open(&db).await?.for_bench(&loaded.config.bench_id);
    for id in store.interrupted_at_open() {
        tracing::warn!(
            "run {id} was running when the daemon stopped: marked interrupted; \
             the queue stays paused until an operator resumes it"
        );
    }
    campaigns::mark_interrupted(&store, &loaded.config.bench_id, opts.config.as_deref()).await?;
    let latched = store.queue_setting("estop").await?.as_deref() == Some("true");
    let paused_before = store.queue_setting("paused").await?.as_deref() == Some("true");
    let interlock = Arc::new(Interlock::new(loaded.clone(), latched));

    let hub = hub::Hub::new();
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let (cmd_tx, cmd_rx) = mpsc::channel(64);
    let pool = pool::Pool::default();
    let (scheduler, view) = scheduler::Scheduler::restore(
        store.clone(),
        loaded.clone(),
        hub.clone(),
        sim.is_some(),
        interlock.clone(),
        pool.clone(),
    )
    .await?;
    if loaded.config.queue.auto_resume && !store.interrupted_at_open().is_empty() {
        tokio::spawn(auto_resume::resume_interrupted(
            store.clone(),
            loaded.clone(),
            cmd_tx.clone(),
            store.interrupted_at_open().to_vec(),
            paused_before,
        ));
    }
    let state = state::AppState {
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
    // Subscribed before the scheduler runs: its first event is news already.
    let restored = (state.view.borrow().paused, state.view.borrow().estop);
    let c = &loaded.config;
    let (hub, shut) = (&state.hub, shutdown_rx.clone());
    let sensors = bench_daemon::calibration::sensors(c).into_iter();
    let sensors = (c.bench_id.as_str(), sensors.map(|s| s.name).collect());
    notify::start(&c.notify, sensors, hub, store.clone(), restored, shut).await;
    let view = Some(state.view.clone());
    retention::start(
        c.archive.as_ref(),
        &c.bench_id,
        store.clone(),
        view,
        shutdown_rx.clone(),
    );
    if let Some(lab) = &c.lab {
        let sources = heartbeat::Sources {
            bench_id: c.bench_id.clone(),
            view: state.view.clone(),
            hub: state.hub.clone(),
            interlock: state.interlock.clone(),
            store: store.clone(),
        };
        heartbeat::start(lab, sources, shutdown_rx.clone());
    }
    let starter = Arc::new(campaigns::Scheduled(state.clone()));
    let scheduler = scheduler.with_campaigns(starter);
    let scheduler = tokio::spawn(scheduler.run(cmd_rx, shutdown_rx.clone()));
    let estop = router::estop_router(state.clone());
    let app = router::router(state, opts.web.as_deref());
    // The front desk runs just below the simulated bench's priority (which is just below the
    // loop's): a flood of connections cannot take the loop's CPU.
    let front_priority = loaded.config.realtime_priority.saturating_sub(2);
    let listener = front::start(listener, estop, front_priority, shutdown_rx.clone())?;
    let banner = format!(
        "bench serve: http://{addr}/ (database {})",
        store.location()
    );
    serve_until_stopped(listener, app, banner, shutdown, (shutdown_tx, shutdown_rx)).await?;
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
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    let db = bench_daemon::db::for_bench(opts.db.as_deref(), &loaded);
    let store = bench_daemon::db::open_existing(&db).await?;
    let loaded = Arc::new(loaded);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    // Nobody receives commands: a mutating call never gets this far.
    let (cmd_tx, _) = mpsc::channel(1);
    let (_, view) = watch::channel(scheduler::QueueView::default());
    let state = state::AppState {
        store: store.clone(),
        loaded: loaded.clone(),
        cmd: cmd_tx,
        interlock: Arc::new(Interlock::new(loaded, false)),
        view,
        hub: hub::Hub::new(),
        guard,
        shutdown: shutdown_rx.clone(),
        db_path: db,
        pool: pool::Pool::default(),
        fits: Default::default(),
        lab: true,
    };
    let c = &state.loaded.config;
    retention::start(
        c.archive.as_ref(),
        &c.bench_id,
        store.clone(),
        None,
        shutdown_rx.clone(),
    );
    let estop = router::estop_router(state.clone());
    let app = router::router(state, opts.web.as_deref());
    let listener = front::start(listener, estop, 0, shutdown_rx.clone())?;
    let banner = format!(
        "bench serve: http://{addr}/ (lab view, read-only, database {})",
        store.location()
    );
    serve_until_stopped(listener, app, banner, shutdown, (shutdown_tx, shutdown_rx)).await?;
    store.close().await;
    Ok(())
}

/// Prints `banner` (the URL line clients wait for) and serves `app` until `shutdown` completes
/// or another reason sends `true` on the shutdown channel.
async fn serve_until_stopped(
    listener: front::Handoff,
    app: axum::Router,
    banner: String,
    shutdown: Shutdown,
    (shutdown_tx, shutdown_rx): (watch::Sender<bool>, watch::Receiver<bool>),
) -> anyhow::Result<()> {
    tokio::spawn(async move {
        shutdown.await;
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

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// The first path segments after each `prefix` in `text`: `super::a::x`, `super::{b, c::y}`.
    fn named_after(text: &str, prefix: &str) -> BTreeSet<String> {
        let ident = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let mut out = BTreeSet::new();
        for (at, _) in text.match_indices(prefix) {
            let rest = &text[at + prefix.len()..];
            match rest.strip_prefix('{') {
                Some(group) => {
                    let group = &group[..group.find('}').unwrap_or(group.len())];
                    out.extend(group.split(',').map(ident));
                }
                None => {
                    out.insert(ident(rest));
                }
            }
        }
        out
    }

    /// The modules of `dir` (a file or a directory each) and, for each, the siblings it names
    /// (`super::x` or `{crate_path}::x`).
    fn imports(dir: &Path, crate_path: &str) -> BTreeMap<String, BTreeSet<String>> {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let mut texts = BTreeMap::new();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if ["mod", "lib", "tests", "build"].contains(&name.as_str()) {
                continue;
            }
            let text = match path.is_dir() {
                // Below its mod.rs, `super::` is the directory itself: not a sibling of it.
                true => std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|e| match e.file_name() == "mod.rs" {
                        true => read(&e.path()),
                        false => read(&e.path()).replace("super::", "own::"),
                    })
                    .collect(),
                false => read(&path),
            };
            texts.insert(name, text);
        }
        let names: BTreeSet<String> = texts.keys().cloned().collect();
        texts
            .iter()
            .map(|(name, text)| {
                let mut named = named_after(text, "super::");
                named.extend(named_after(text, &format!("{crate_path}::")));
                named.retain(|n| n != name && names.contains(n));
                (name.clone(), named)
            })
            .collect()
    }

    /// Circles are the workspace's floors test's (`bench-cli/tests/floors.rs`); this one holds
    /// the service's own rule on top of it.
    #[test]
    fn no_resource_imports_another() {
        let serve = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let top = imports(&serve, "crate");
        // Resources import only downward: none names another but `router`, which names all.
        let resources = [
            "bench",
            "estop",
            "fits",
            "lab_benches",
            "live",
            "params",
            "procedures",
            "curves",
            "queue",
            "runs",
            "schedule",
            "sensors",
        ];
        for r in resources {
            let named: Vec<&String> = top[r]
                .iter()
                .filter(|m| resources.contains(&m.as_str()))
                .collect();
            assert!(named.is_empty(), "{r} imports the resource(s) {named:?}");
        }
        assert!(resources.iter().all(|r| top["router"].contains(*r)));
    }
}
