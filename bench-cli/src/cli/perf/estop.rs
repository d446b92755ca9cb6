//! `bench perf estop [--count N] [--live-clients N] [--sweep-values N] [--json]`: the time from
//! `POST /api/estop` to its answer, which comes once the drive has read back disabled, against
//! a `bench serve --sim` child (the simulated bench behind real Modbus TCP).
//!
//! Two phases: e-stops of a running run (a loop at 1 kHz) on a quiet daemon, then the same
//! while `--live-clients` SSE clients are connected and the scheduler expands a sweep of
//! `--sweep-values` values. Each e-stop of a loop is followed by one with no loop running (the
//! interlock then opens the drive link itself). A phase-two e-stop finds a loop when the daemon
//! could start one within 5 s, else none; both cases are reported.

use super::http::{live_clients, request, start_daemon};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Arguments of `bench perf estop` (the e-stops are sent from a thread at real-time priority
/// when the process may have it; `client` in the output says which).
#[derive(Debug, clap::Args)]
pub struct PerfEstopArgs {
    /// E-stops per phase.
    #[arg(long, default_value_t = 100)]
    count: usize,
    /// SSE clients on /api/live during the loaded phase.
    #[arg(long, default_value_t = 100)]
    live_clients: usize,
    /// Values of the sweep the scheduler expands during the loaded phase.
    #[arg(long, default_value_t = 100_000)]
    sweep_values: usize,
    /// Print JSON: per phase and case (`with_loop`, `without_loop`): `n`, `confirmed`,
    /// `request_us` and `server_us` (`p50`, `p99`, `max`).
    #[arg(long)]
    json: bool,
}

/// Starts the full sweep at top priority; waits (at most 5 s) until its loop runs.
fn start_run(addr: &str, spec: &Value) -> anyhow::Result<bool> {
    request(addr, "POST", "/api/estop/reset", None)?;
    request(addr, "PUT", "/api/queue", Some(&json!({"paused": false})))?;
    let (code, r) = request(addr, "POST", "/api/runs?priority=1000", Some(spec))?;
    let Some(id) = r["id"].as_i64().filter(|_| code < 300) else {
        return Ok(false);
    };
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        let (_, run) = request(addr, "GET", &format!("/api/runs/{id}"), None)?;
        if run["status"] == "running" && run["sample_count"].as_u64().unwrap_or(0) > 0 {
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(false)
}

/// Request-to-answer and server-side times of one e-stop phase, by case.
#[derive(Default)]
struct Phase {
    with_loop: (Vec<f64>, Vec<f64>, usize),
    without_loop: (Vec<f64>, Vec<f64>, usize),
}

pub(super) fn percentiles(v: &mut [f64]) -> Value {
    if v.is_empty() {
        return Value::Null;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    json!({"p50": at(0.5), "p99": at(0.99), "max": v[v.len() - 1]})
}

impl Phase {
    fn json(&mut self) -> Value {
        let case = |c: &mut (Vec<f64>, Vec<f64>, usize)| {
            json!({"n": c.0.len(), "confirmed": c.2,
                   "request_us": percentiles(&mut c.0), "server_us": percentiles(&mut c.1)})
        };
        json!({"with_loop": case(&mut self.with_loop), "without_loop": case(&mut self.without_loop)})
    }
}

fn phase(addr: &str, spec: &Value, count: usize) -> anyhow::Result<Phase> {
    let mut p = Phase::default();
    // Once the daemon could not start a run in time (its scheduler is busy), the rest of the
    // phase measures e-stops without a loop rather than waiting on it again.
    let mut try_loops = true;
    for _ in 0..count {
        let looped = try_loops && start_run(addr, spec).unwrap_or(false);
        try_loops = looped;
        let case = if looped {
            &mut p.with_loop
        } else {
            &mut p.without_loop
        };
        estop(addr, case)?;
        if looped && bench_free(addr)? {
            estop(addr, &mut p.without_loop)?;
        }
    }
    Ok(p)
}

/// Waits (at most 5 s) until the aborted run has left the bench: the next e-stop finds no loop.
fn bench_free(addr: &str) -> anyhow::Result<bool> {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        if request(addr, "GET", "/api/bench", None)?.1["busy"] == false {
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(false)
}

/// A phase run from a thread of its own at [`CLIENT_PRIORITY`] (the daemon and the reader
/// threads, started elsewhere, keep normal scheduling); also says what priority it got.
fn client_phase(addr: &str, spec: &Value, count: usize) -> anyhow::Result<(Phase, String)> {
    let (addr, spec) = (addr.to_string(), spec.clone());
    std::thread::spawn(move || {
        let client = bench_daemon::control::realtime(CLIENT_PRIORITY)
            .unwrap_or_else(|| format!("SCHED_FIFO {CLIENT_PRIORITY}"));
        phase(&addr, &spec, count).map(|p| (p, client))
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the e-stop client thread panicked"))?
}

/// One timed e-stop, added to `case`.
fn estop(addr: &str, case: &mut (Vec<f64>, Vec<f64>, usize)) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let (_, e) = request(
        addr,
        "POST",
        "/api/estop",
        Some(&json!({"reason": "bench perf estop"})),
    )?;
    case.0.push(t0.elapsed().as_secs_f64() * 1e6);
    case.1
        .push(e["safe_state"]["after_us"].as_f64().unwrap_or(f64::NAN));
    case.2 += usize::from(e["safe_state"]["confirmed"] == true);
    Ok(())
}

/// Schedules `values` sweep values now, in sweeps of 1000 (the per-sweep cap) of the quick
/// sweep's velocity, until `done`; returns the HTTP status of each sweep posted.
fn post_sweeps(addr: &str, values: usize, done: &AtomicBool) -> Vec<u16> {
    let quick: Value = serde_json::from_str(include_str!(
        "../../../../experiments/specs/constant_velocity_sweep.json"
    ))
    .expect("BUG: the shipped quick sweep is JSON");
    (0..values)
        .collect::<Vec<_>>()
        .chunks(1000)
        .take_while(|_| !done.load(Ordering::Relaxed))
        .map(|chunk| {
            let list: Vec<Value> = chunk
                .iter()
                .map(|k| json!([0.01 + 1e-6 * *k as f64]))
                .collect();
            let body =
                json!({"sweep": {"spec": quick, "param": "params.velocities", "values": list}});
            request(addr, "POST", "/api/schedule", Some(&body)).map_or(0, |(code, _)| code)
        })
        .collect()
}

/// Priority of the thread that sends the e-stops: the operator's side is not what is measured,
/// so it is not left to wait behind the benchmark's own hundred reader threads.
const CLIENT_PRIORITY: u8 = 47;

/// Runs the benchmark.
pub fn run(args: &PerfEstopArgs) -> anyhow::Result<()> {
    let daemon = start_daemon()?;
    let addr = daemon.addr.clone();
    let spec: Value = serde_json::from_str(include_str!(
        "../../../../experiments/specs/constant_velocity_sweep-full.json"
    ))?;
    let (mut quiet, client) = client_phase(&addr, &spec, args.count)?;
    eprintln!("bench perf estop: quiet phase {}", quiet.json());
    live_clients(&addr, args.live_clients)?;
    let done = Arc::new(AtomicBool::new(false));
    let sweeps = std::thread::spawn({
        let (addr, done) = (addr.clone(), done.clone());
        let values = args.sweep_values;
        move || post_sweeps(&addr, values, &done)
    });
    std::thread::sleep(Duration::from_millis(200));
    let (mut loaded, _) = client_phase(&addr, &spec, args.count)?;
    done.store(true, Ordering::Relaxed);
    let sweep_status = sweeps.join().unwrap_or_default();
    let out = json!({
        "count": args.count,
        "client": client,
        "quiet": quiet.json(),
        "loaded": loaded.json(),
        "live_clients": args.live_clients,
        "sweep_values": args.sweep_values,
        "sweeps_posted": sweep_status.len(),
        "sweep_http_status": sweep_status,
    });
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}
