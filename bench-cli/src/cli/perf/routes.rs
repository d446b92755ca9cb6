//! The latency of every REST route while the daemon is loaded, for `bench perf serve`: one
//! prober thread sends each route a request that exercises it, round after round, while a run
//! goes on the bench, SSE clients read the live stream, REST workers list runs and an export
//! worker downloads a whole run back to back. Per route: requests, statuses, p50, p99 and
//! max \[ms\]. The goal of the engine-room issue: p99 ≤ 200 ms and max ≤ 1 s on every mutating
//! route (no request waits on the bench).
//!
//! Every route of the daemon's OpenAPI document has a probe here or a reason it has none
//! ([`UNPROBED`]); a test holds the table to the document, so a new route is measured too.

use super::http::{request, request_raw};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Routes the prober leaves out, and why.
pub const UNPROBED: &[(&str, &str)] = &[
    (
        "POST /api/estop",
        "it ends the run that loads the daemon: `bench perf estop` measures it under load",
    ),
    (
        "GET /api/live",
        "a stream, not a request: the live clients of the load read it",
    ),
];

/// Mutating routes must answer within these (the goal).
pub const GOAL_P99_MS: f64 = 200.0;
/// The slowest answer a mutating route may give.
pub const GOAL_MAX_MS: f64 = 1000.0;

/// One route's answers.
#[derive(Debug, Default)]
struct Timings {
    ms: Vec<f64>,
    statuses: BTreeMap<u16, u64>,
}

/// What a round's probes refer to: the completed run the load was measured on.
#[derive(Clone, Debug)]
pub struct Fixtures {
    /// A completed run (the quiet run).
    pub run: i64,
}

/// The prober: started with [`start`], ended with [`Prober::finish`].
#[derive(Debug)]
pub struct Prober {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<BTreeMap<String, Timings>>,
}

/// Starts probing every route of `addr` until [`Prober::finish`].
pub fn start(addr: &str, fixtures: Fixtures) -> Prober {
    let stop = Arc::new(AtomicBool::new(false));
    let (addr, flag) = (addr.to_string(), stop.clone());
    let handle = std::thread::spawn(move || {
        let mut all: BTreeMap<String, Timings> = BTreeMap::new();
        while !flag.load(Ordering::Relaxed) {
            round(&addr, &fixtures, &mut all);
        }
        all
    });
    Prober { stop, handle }
}

impl Prober {
    /// Stops after the round in progress; the table as JSON: per route `n`, `statuses`,
    /// `p50_ms`, `p99_ms`, `max_ms`, `mutating`; and `goals`: the slowest mutating route's
    /// p99 and max and whether every mutating route met them.
    pub fn finish(self) -> Value {
        self.stop.store(true, Ordering::Relaxed);
        let all = self.handle.join().unwrap_or_default();
        table(&all)
    }
}

fn table(all: &BTreeMap<String, Timings>) -> Value {
    let mut routes = serde_json::Map::new();
    let (mut worst_p99, mut worst_max) = ((0.0, String::new()), (0.0, String::new()));
    for (route, t) in all {
        let mut ms = t.ms.clone();
        ms.sort_by(f64::total_cmp);
        let (p50, p99, max) = (quantile(&ms, 0.5), quantile(&ms, 0.99), quantile(&ms, 1.0));
        let mutating = !route.starts_with("GET ");
        if mutating && p99 > worst_p99.0 {
            worst_p99 = (p99, route.clone());
        }
        if mutating && max > worst_max.0 {
            worst_max = (max, route.clone());
        }
        routes.insert(
            route.clone(),
            json!({"n": ms.len(), "statuses": t.statuses, "p50_ms": p50, "p99_ms": p99,
                   "max_ms": max, "mutating": mutating}),
        );
    }
    json!({
        "routes": routes,
        "goals": {
            "p99_ms": GOAL_P99_MS, "max_ms": GOAL_MAX_MS,
            "worst_mutating_p99_ms": worst_p99.0, "worst_p99_route": worst_p99.1,
            "worst_mutating_max_ms": worst_max.0, "worst_max_route": worst_max.1,
            "met": worst_p99.0 <= GOAL_P99_MS && worst_max.0 <= GOAL_MAX_MS,
            "unprobed": UNPROBED.iter().map(|(route, why)| json!({"route": route, "why": why}))
                .collect::<Vec<_>>(),
        },
    })
}

/// The `q` quantile of sorted `ms` (nearest rank); 0 for none.
fn quantile(ms: &[f64], q: f64) -> f64 {
    if ms.is_empty() {
        return 0.0;
    }
    let k = ((q * ms.len() as f64).ceil() as usize).clamp(1, ms.len());
    ms[k - 1]
}

/// A tiny spec that waits in the queue behind the running run.
fn queued_spec() -> Value {
    json!({"kind": "prbs", "name": "perf probe", "params": {"periods": 1}})
}

/// One round: every probed route once, those that create something before those that use it.
fn round(addr: &str, f: &Fixtures, all: &mut BTreeMap<String, Timings>) {
    let mut call = |route: &str, path: &str, body: Option<&Value>| -> Value {
        let method = route.split(' ').next().unwrap_or("GET");
        let t0 = Instant::now();
        let answer = request(addr, method, path, body);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let t = all.entry(route.to_string()).or_default();
        t.ms.push(ms);
        let (status, json) = answer.unwrap_or((0, Value::Null));
        *t.statuses.entry(status).or_default() += 1;
        json
    };
    let run = f.run;
    for (route, path) in [
        ("GET /api/health", "/api/health".to_string()),
        ("GET /api/bench", "/api/bench".into()),
        ("GET /api/openapi.json", "/api/openapi.json".into()),
        ("GET /metrics", "/metrics".into()),
        ("GET /api/audit", "/api/audit?limit=50".into()),
        (
            "GET /api/experiments/kinds",
            "/api/experiments/kinds".into(),
        ),
        ("GET /api/models", "/api/models".into()),
        ("GET /api/runs", "/api/runs?limit=50".into()),
        ("GET /api/runs/{id}", format!("/api/runs/{run}")),
        (
            "GET /api/runs/{id}/results",
            format!("/api/runs/{run}/results"),
        ),
        (
            "GET /api/runs/{id}/samples",
            format!("/api/runs/{run}/samples?every=10"),
        ),
        (
            "GET /api/runs/{id}/export",
            format!("/api/runs/{run}/export?format=csv"),
        ),
        (
            "GET /api/runs/{id}/diff",
            format!("/api/runs/{run}/diff?with={run}"),
        ),
        ("GET /api/queue", "/api/queue".into()),
        ("GET /api/schedule", "/api/schedule".into()),
        ("GET /api/fits", "/api/fits".into()),
        ("GET /api/campaigns", "/api/campaigns".into()),
        ("GET /api/trends", "/api/trends?param=fc".into()),
        ("GET /api/procedures", "/api/procedures".into()),
        ("GET /api/lab/benches", "/api/lab/benches".into()),
        ("GET /api/sensors", "/api/sensors".into()),
        ("GET /api/campaigns/{id}", "/api/campaigns/1".into()),
        (
            "GET /api/campaigns/{id}/report",
            "/api/campaigns/1/report".into(),
        ),
    ] {
        call(route, &path, None);
    }
    call(
        "POST /api/experiments/check",
        "/api/experiments/check",
        Some(&queued_spec()),
    );
    for (route, end) in [
        ("POST /api/runs/{id}/abort", "abort"),
        ("POST /api/runs/{id}/stop", "stop"),
        ("DELETE /api/queue/{id}", ""),
    ] {
        let made = call("POST /api/runs", "/api/runs", Some(&queued_spec()));
        let Some(id) = made["id"].as_i64() else {
            continue;
        };
        call(
            "PATCH /api/runs/{id}",
            &format!("/api/runs/{id}"),
            Some(&json!({"add": ["probe"]})),
        );
        match end {
            "" => call(route, &format!("/api/queue/{id}"), None),
            end => call(route, &format!("/api/runs/{id}/{end}"), None),
        };
    }
    call(
        "POST /api/runs/{id}/resume",
        &format!("/api/runs/{run}/resume"),
        None,
    );
    call(
        "PUT /api/queue",
        "/api/queue",
        Some(&json!({"on_failure": "continue"})),
    );
    let entry = json!({"run_at": "2099-01-01T02:00:00Z", "batch": [queued_spec(), queued_spec()]});
    call(
        "POST /api/schedule/check",
        "/api/schedule/check",
        Some(&entry),
    );
    let made = call("POST /api/schedule", "/api/schedule", Some(&entry));
    if let Some(id) = made["id"].as_i64() {
        call(
            "DELETE /api/schedule/{id}",
            &format!("/api/schedule/{id}"),
            None,
        );
    }
    let fit = json!({"model": "coulomb_viscous", "procedure": "static_curve", "run": run});
    call("POST /api/fits", "/api/fits", Some(&fit));
    // A fit's request answers when it ends, so none is in progress here: measured answering
    // 404.
    call("DELETE /api/fits/{id}", "/api/fits/0", None);
    let sets = call("GET /api/parameter-sets", "/api/parameter-sets", None);
    if let Some(id) = sets[0]["id"].as_i64() {
        call(
            "GET /api/parameter-sets/{id}",
            &format!("/api/parameter-sets/{id}"),
            None,
        );
    }
    let curve = json!({"model": "stribeck_exp", "v": {"from": -2.0, "to": 2.0, "n": 400}});
    call("POST /api/curves", "/api/curves", Some(&curve));
    let comparison = json!({"estimate": [run], "validate": [run], "models": ["coulomb_viscous"]});
    call(
        "POST /api/comparisons",
        "/api/comparisons",
        Some(&comparison),
    );
    call(
        "POST /api/campaigns",
        "/api/campaigns",
        Some(&json!({"models": ["coulomb_viscous"]})),
    );
    call(
        "POST /api/campaigns/{id}/stop",
        "/api/campaigns/1/stop",
        None,
    );
    call("POST /api/estop/reset", "/api/estop/reset", None);
    call("POST /api/faults/reset", "/api/faults/reset", None);
    let t0 = Instant::now();
    let csv = b"t,x,u\n0,0,0\n0.001,0.0001,0.1\n0.002,0.0003,0.2\n0.003,0.0006,0.1\n";
    let answer = request_raw(
        addr,
        "POST",
        "/api/runs/import?file=probe.csv&name=probe",
        "text/csv",
        csv,
    );
    let t = all.entry("POST /api/runs/import".to_string()).or_default();
    t.ms.push(t0.elapsed().as_secs_f64() * 1e3);
    *t.statuses.entry(answer.map_or(0, |a| a.0)).or_default() += 1;
}

/// Downloads run `run` as Parquet back to back until `stop`: the export load.
pub fn export_load(addr: &str, run: i64, stop: &Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let (addr, stop) = (addr.to_string(), stop.clone());
    std::thread::spawn(move || {
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            let path = format!("/api/runs/{run}/export?format=parquet");
            if request_raw(&addr, "GET", &path, "application/json", b"").is_ok() {
                n += 1;
            } else {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route of the document is probed (its name in the round) or listed in
    /// [`UNPROBED`] with why: a new route cannot escape the benchmark.
    #[test]
    fn every_documented_route_is_probed_or_says_why_not() {
        let doc = bench_service::router::document();
        let source = include_str!("routes.rs");
        let mut missing = Vec::new();
        for (path, ops) in doc["paths"].as_object().unwrap() {
            for method in ops.as_object().unwrap().keys() {
                let route = format!("{} {path}", method.to_uppercase());
                let probed = source.contains(&format!("\"{route}\""));
                let excused = UNPROBED.iter().any(|(r, _)| *r == route);
                if !(probed || excused) {
                    missing.push(route);
                }
            }
        }
        assert_eq!(missing, Vec::<String>::new(), "routes without a probe");
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let ms: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(
            (quantile(&ms, 0.5), quantile(&ms, 0.99), quantile(&ms, 1.0)),
            (50.0, 99.0, 100.0)
        );
        assert_eq!(quantile(&[], 0.99), 0.0);
    }
}
