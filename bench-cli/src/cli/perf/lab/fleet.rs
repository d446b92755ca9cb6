//! The fleet part of `bench perf lab`: every bench of the generated lab sends a heartbeat
//! (most idle, some running, one faulted), then `GET /api/lab/benches`'s query
//! (`Store::fleet`) is timed over the whole store: `fleet_ms`, with the benches it listed.

use super::super::estop::percentiles;
use super::{BENCHES, bench_of};
use bench_daemon::db::store_error;
use run_store::{BenchState, Heartbeat, Store};
use serde_json::Value;
use std::time::Instant;

/// Writes a heartbeat for each bench, then times `n` fleet queries: the percentiles \[ms\] and
/// the benches the last one listed.
pub(super) async fn measure(store: &Store, n: usize) -> anyhow::Result<(Value, usize)> {
    for k in 0..BENCHES {
        let state = match k % 10 {
            0 => BenchState::Running {
                run_id: k as i64,
                run_name: format!("night sweep {k}"),
                progress: 0.5,
            },
            9 => BenchState::Faulted {
                reason: "e-stop latched".into(),
            },
            _ => BenchState::Idle,
        };
        let beat = Heartbeat {
            bench_id: bench_of(k),
            state,
            last_stop_reason: Some("completed".into()),
            heartbeat_s: 5.0,
        };
        store.put_heartbeat(&beat).await.map_err(store_error)?;
    }
    let (mut ms, mut listed) = (Vec::with_capacity(n), 0);
    for _ in 0..n {
        let t0 = Instant::now();
        listed = store.fleet().await.map_err(store_error)?.len();
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok((percentiles(&mut ms), listed))
}
