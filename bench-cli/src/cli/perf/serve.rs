//! `bench perf serve [--seconds S] [--live-clients N] [--rest-workers W] [--json]`: what heavy
//! clients cost the control loop, against a `bench serve --sim` child. The same 1 kHz run twice:
//! once on a quiet daemon, once while `--live-clients` SSE clients read the live stream and
//! `--rest-workers` threads request `GET /api/runs` back to back. Reports each run's loop
//! timing (overruns, period-error p99 and max) and dropped batches, and the REST requests per
//! second the daemon answered meanwhile. With `--floor`, cyclictest first measures the
//! machine's own wake-up floor at the runs' rate and the daemon's priority, with the daemon and
//! its simulated bench up, and each run is set beside it ([`super::floor`]). During the
//! loaded run an export worker downloads the quiet run as Parquet back to back and a prober
//! times a request to every REST route ([`super::routes`]): JSON `routes` and
//! `route_goals`.

use super::floor::{FloorRun, Histogram, measure, side_by_side};
use super::http::{live_clients, request, start_daemon};
use super::routes;
use run_store::TimingStats;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Arguments of `bench perf serve`.
#[derive(Debug, clap::Args)]
pub struct PerfServeArgs {
    /// Seconds of constant-velocity motion per run (at 1 kHz).
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// SSE clients on /api/live during the loaded run.
    #[arg(long, default_value_t = 100)]
    live_clients: usize,
    /// Threads requesting `GET /api/runs` back to back during the loaded run.
    #[arg(long, default_value_t = 4)]
    rest_workers: usize,
    /// Measure the machine's floor first: cyclictest (Debian's rt-tests) at 1 kHz and the
    /// daemon's priority for as long as a run; JSON `floor`, and in `quiet` and `loaded` the
    /// run's `loop` row, `late_ratio` and `budget_us`.
    #[arg(long)]
    floor: bool,
    /// Print JSON: `quiet` and `loaded` runs (`overruns`, `period_error_p99_us`,
    /// `period_error_max_us`, `dropped_batches`, `samples`), `rest_requests_per_s`,
    /// `rest_errors`, `overrun_ratio`, `exports`; `routes` (per route under load: `n`,
    /// `statuses`, `p50_ms`, `p99_ms`, `max_ms`, `mutating`) and `route_goals` (with the
    /// routes not probed and why, `unprobed`).
    #[arg(long)]
    json: bool,
}

/// The run's settling before its measurement \[s\].
const SETTLE_S: f64 = 0.5;

/// The run: one velocity, both settle and measure at 1 kHz.
fn spec(seconds: f64) -> Value {
    json!({"kind": "constant_velocity_sweep", "name": "perf serve", "params": {
        "velocities": [0.5], "directions": "positive", "settle_s": SETTLE_S,
        "measure_s": seconds, "repeats": 1}})
}

/// Runs `spec` now and waits for it to end; returns its stored record.
fn run_once(addr: &str, spec: &Value) -> anyhow::Result<Value> {
    wait_for_end(addr, start_now(addr, spec)?)
}

/// Starts `spec` now; its run id.
fn start_now(addr: &str, spec: &Value) -> anyhow::Result<i64> {
    let (code, r) = request(addr, "POST", "/api/runs?start=now", Some(spec))?;
    r["id"]
        .as_i64()
        .filter(|_| code < 300)
        .ok_or_else(|| anyhow::anyhow!("the run was refused ({code}): {r}"))
}

/// Waits for run `id` to end; its stored record.
fn wait_for_end(addr: &str, id: i64) -> anyhow::Result<Value> {
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let (_, run) = request(addr, "GET", &format!("/api/runs/{id}"), None)?;
        if !["queued", "running"].contains(&run["status"].as_str().unwrap_or("")) {
            return Ok(run);
        }
    }
}

/// The loop figures of a stored run.
fn figures(run: &Value) -> Value {
    json!({
        "status": run["status"],
        "samples": run["sample_count"],
        "overruns": run["timing"]["overruns"],
        "period_error_p99_us": run["timing"]["period_error_p99_us"],
        "period_error_max_us": run["timing"]["period_error_max_us"],
        "dropped_batches": run["dropped_batches"],
        "timing": run["timing"],
    })
}

/// REST load: `workers` threads requesting `GET /api/runs` until `stop`; counts answers.
fn rest_load(
    addr: &str,
    workers: usize,
    stop: &Arc<AtomicBool>,
) -> (
    Vec<std::thread::JoinHandle<()>>,
    Arc<AtomicU64>,
    Arc<AtomicU64>,
) {
    let (ok, bad) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let handles = (0..workers)
        .map(|_| {
            let (addr, stop, ok, bad) = (addr.to_string(), stop.clone(), ok.clone(), bad.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match request(&addr, "GET", "/api/runs?limit=50", None) {
                        Ok((200, _)) => ok.fetch_add(1, Ordering::Relaxed),
                        _ => bad.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    (handles, ok, bad)
}

/// The runs' control rate \[Hz\] (the simulated bench's period).
const RATE_HZ: f64 = 1000.0;

/// cyclictest as a run of `seconds` will run: the daemon's priority, its memory locked when
/// real-time scheduling is asked for.
fn floor(seconds: f64) -> anyhow::Result<Histogram> {
    let exe = super::floor::find()?;
    let priority = bench_daemon::config::Loaded::sim("127.0.0.1:0")
        .config
        .realtime_priority;
    let run = FloorRun {
        rate_hz: RATE_HZ,
        seconds,
        priority,
        mlock: priority > 0,
        cpu: None,
    };
    let (histogram, note) = measure(&exe, run)?;
    if let Some(note) = note {
        eprintln!("bench perf serve: {note}");
    }
    Ok(histogram)
}

/// A stored run's figures, set beside the floor: its row, `late_ratio` and `budget_us` added;
/// the floor's row (at this run's budget) and the table returned.
fn beside_floor(run: &mut Value, floor: &Histogram) -> anyhow::Result<(Value, String)> {
    let stats: TimingStats = serde_json::from_value(run["timing"].clone())?;
    let ticks = run["samples"].as_u64().unwrap_or(0);
    let (mut rows, table) = side_by_side(floor, &stats, ticks, RATE_HZ);
    let floor_row = rows["floor"].take();
    let row = run.as_object_mut().expect("an object");
    row.extend(rows.as_object().expect("an object").clone());
    row.remove("floor");
    Ok((floor_row, table))
}

/// Runs the benchmark.
pub fn run(args: &PerfServeArgs) -> anyhow::Result<()> {
    let daemon = start_daemon()?;
    let addr = daemon.addr.clone();
    let spec = spec(args.seconds);
    let floor = args
        .floor
        .then(|| floor(SETTLE_S + args.seconds))
        .transpose()?;
    let quiet = run_once(&addr, &spec)?;
    eprintln!("bench perf serve: quiet run {}", figures(&quiet));

    let quiet_id = quiet["id"]
        .as_i64()
        .ok_or_else(|| anyhow::anyhow!("the quiet run has no id: {quiet}"))?;

    live_clients(&addr, args.live_clients)?;
    let stop = Arc::new(AtomicBool::new(false));
    let (workers, ok, bad) = rest_load(&addr, args.rest_workers, &stop);
    let exports = routes::export_load(&addr, quiet_id, &stop);
    let t0 = Instant::now();
    // The prober starts once the bench is busy: nothing it sends may start a run or campaign.
    let loaded_id = start_now(&addr, &spec)?;
    let prober = routes::start(&addr, routes::Fixtures { run: quiet_id });
    let loaded = wait_for_end(&addr, loaded_id)?;
    let took = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let routes = prober.finish();
    for w in workers {
        let _ = w.join();
    }
    let exported = exports.join().unwrap_or(0);
    let overruns = |r: &Value| r["timing"]["overruns"].as_f64().unwrap_or(f64::NAN);
    let (mut quiet_row, mut loaded_row) = (figures(&quiet), figures(&loaded));
    let mut out = json!({
        "seconds": args.seconds,
        "live_clients": args.live_clients,
        "rest_workers": args.rest_workers,
        "rest_requests_per_s": ok.load(Ordering::Relaxed) as f64 / took,
        "rest_errors": bad.load(Ordering::Relaxed),
        "overrun_ratio": overruns(&loaded) / overruns(&quiet).max(1.0),
        "exports": exported,
        "routes": routes["routes"],
        "route_goals": routes["goals"],
    });
    let mut tables = Vec::new();
    if let Some(floor) = &floor {
        let (floor_row, table) = beside_floor(&mut quiet_row, floor)?;
        tables.push(format!("quiet run\n{table}"));
        let (_, table) = beside_floor(&mut loaded_row, floor)?;
        tables.push(format!("under load\n{table}"));
        out["floor"] = floor_row;
    }
    for row in [&mut quiet_row, &mut loaded_row] {
        row.as_object_mut().expect("an object").remove("timing");
    }
    (out["quiet"], out["loaded"]) = (quiet_row, loaded_row);
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
        for table in tables {
            println!("{table}");
        }
    }
    Ok(())
}
