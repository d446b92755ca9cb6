//! The fleet of a lab: each bench's heartbeat (one row per bench, upserted by its `bench
//! serve`) and when its runs were last pushed, read back as one row per bench known to the
//! store (`migrations/sqlite/0017_bench_heartbeats.sql`).
//!
//! Every time here is the store's own clock: a heartbeat is stamped by the database when it
//! arrives and its age measured against the database's now, so the benches' clocks never
//! decide whether a bench is stale.

use crate::backend::{Either, PoolRef, on};
use crate::{Error, RunStatus, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A bench is stale after this many heartbeat periods without one.
pub const STALE_PERIODS: f64 = 3.0;

/// What a bench is doing, as its heartbeat says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum BenchState {
    /// No run on the bench.
    Idle,
    /// A run is on the bench.
    Running {
        /// Its id in the bench's own store.
        run_id: i64,
        /// Its name.
        run_name: String,
        /// How far it is, 0..1 (run time over its estimated duration).
        progress: f64,
    },
    /// The run is paused on a `[[suspend]]` condition, the drive off.
    Suspended,
    /// The bench cannot run: the e-stop is latched or its devices stopped answering.
    Faulted {
        /// Why.
        reason: String,
    },
}

/// The name of a [`BenchState`] (`idle`, `running`, `suspended`, `faulted`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateName {
    /// See [`BenchState::Idle`].
    Idle,
    /// See [`BenchState::Running`].
    Running,
    /// See [`BenchState::Suspended`].
    Suspended,
    /// See [`BenchState::Faulted`].
    Faulted,
}

impl StateName {
    fn as_str(self) -> &'static str {
        match self {
            StateName::Idle => "idle",
            StateName::Running => "running",
            StateName::Suspended => "suspended",
            StateName::Faulted => "faulted",
        }
    }

    fn parse(text: &str) -> Option<StateName> {
        [
            StateName::Idle,
            StateName::Running,
            StateName::Suspended,
            StateName::Faulted,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

impl BenchState {
    /// Its name.
    pub fn name(&self) -> StateName {
        match self {
            BenchState::Idle => StateName::Idle,
            BenchState::Running { .. } => StateName::Running,
            BenchState::Suspended => StateName::Suspended,
            BenchState::Faulted { .. } => StateName::Faulted,
        }
    }
}

/// One heartbeat of one bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// The bench (its bench.toml `bench_id`).
    pub bench_id: String,
    /// What it is doing.
    pub state: BenchState,
    /// The stop reason of its last finished run.
    pub last_stop_reason: Option<String>,
    /// Its period \[s\]: the next one is due this much later.
    pub heartbeat_s: f64,
}

/// One bench as the lab knows it (`GET /api/lab/benches`): from its heartbeat, its pushed
/// runs, or both.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct FleetBench {
    /// The bench.
    pub bench_id: String,
    /// What its last heartbeat said (null: it never sent one, only pushed runs).
    pub state: Option<StateName>,
    /// The running run's id in the bench's own store.
    pub run_id: Option<i64>,
    /// The running run's name.
    pub run_name: Option<String>,
    /// The running run's progress, 0..1.
    pub progress: Option<f64>,
    /// Why it is faulted (state `faulted`).
    pub fault: Option<String>,
    /// The stop reason of its last finished run (its heartbeat's, else its last pushed run's).
    pub last_stop_reason: Option<String>,
    /// When its last heartbeat arrived (UTC, RFC 3339).
    pub last_heartbeat: Option<String>,
    /// Seconds since then, by the store's clock.
    pub heartbeat_age_s: Option<f64>,
    /// When `bench runs push` last brought its runs here.
    pub last_push: Option<String>,
    /// No heartbeat for `stale_after_s` (or none ever): what its row says may be out of date.
    pub stale: bool,
    /// 3 × its heartbeat period \[s\] (null without a heartbeat).
    pub stale_after_s: Option<f64>,
}

/// The stop reason of finished runs (after a `SELECT`; `AND` a bench and an order to be added).
const LAST_STOP: &str = "coalesce(r.status_reason, r.status) FROM runs r
     WHERE r.status NOT IN ('queued', 'running')";

/// The store's clock, in the stores' time format.
fn now_sql(pool: &PoolRef<'_>) -> &'static str {
    match pool {
        Either::Sqlite(_) => "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        Either::Postgres(_) => "fb_now()",
    }
}

type Row = (
    String,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<f64>,
    Option<String>,
    Option<String>,
    Option<f64>,
    Option<String>,
    Option<String>,
    String,
);

impl Store {
    /// Upserts `beat` as its bench's one heartbeat row, stamped with the store's clock.
    pub async fn put_heartbeat(&self, beat: &Heartbeat) -> Result<(), Error> {
        check_heartbeat(beat)?;
        let (run_id, run_name, progress, fault) = match &beat.state {
            BenchState::Running {
                run_id,
                run_name,
                progress,
            } => (
                Some(*run_id),
                Some(run_name.as_str()),
                Some(*progress),
                None,
            ),
            BenchState::Faulted { reason } => (None, None, None, Some(reason.as_str())),
            BenchState::Idle | BenchState::Suspended => (None, None, None, None),
        };
        let sql = format!(
            "INSERT INTO bench_heartbeats (bench_id, state, run_id, run_name, progress, fault,
                 last_stop_reason, heartbeat_s, at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, {now})
             ON CONFLICT (bench_id) DO UPDATE SET state = excluded.state,
                 run_id = excluded.run_id, run_name = excluded.run_name,
                 progress = excluded.progress, fault = excluded.fault,
                 last_stop_reason = excluded.last_stop_reason,
                 heartbeat_s = excluded.heartbeat_s, at = excluded.at",
            now = now_sql(&self.writer())
        );
        on!(self.writer(), |p, DB| {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(&beat.bench_id)
                .bind(beat.state.name().as_str())
                .bind(run_id)
                .bind(run_name)
                .bind(progress)
                .bind(fault)
                .bind(beat.last_stop_reason.as_deref())
                .bind(beat.heartbeat_s)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// Notes that `bench runs push` brought (or found) runs of `benches` here just now.
    pub(crate) async fn note_push(&self, benches: &[&str]) -> Result<(), Error> {
        let sql = format!(
            "INSERT INTO bench_pushes (bench_id, pushed_at) VALUES ($1, {now})
             ON CONFLICT (bench_id) DO UPDATE SET pushed_at = excluded.pushed_at",
            now = now_sql(&self.writer())
        );
        for bench in benches.iter().filter(|b| !b.is_empty()) {
            on!(self.writer(), |p, DB| {
                sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                    .bind(*bench)
                    .execute(p)
                    .await?;
            });
        }
        Ok(())
    }

    /// How `bench`'s last finished run here ended: its status and stop reason (the status
    /// itself when it has no reason: `completed`).
    pub async fn last_stop(&self, bench: &str) -> Result<Option<(RunStatus, String)>, Error> {
        let sql = format!(
            "SELECT r.status, {LAST_STOP} AND r.bench_id = $1
             ORDER BY r.created_at DESC LIMIT 1"
        );
        let row: Option<(String, String)> = on!(self.reader(), |p, DB| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(bench)
                .fetch_optional(p)
                .await?
        });
        Ok(row.and_then(|(status, reason)| Some((status.parse().ok()?, reason))))
    }

    /// Every bench the store knows (a heartbeat, pushed runs or both), by `bench_id`.
    pub async fn fleet(&self) -> Result<Vec<FleetBench>, Error> {
        let sql = format!(
            "WITH RECURSIVE run_benches(bench) AS (
                 -- The benches of the runs, one index seek each (a skip scan of
                 -- runs_by_bench): a DISTINCT reads every run's entry, 19 ms at 100 000 runs.
                 SELECT min(bench_id) FROM runs WHERE bench_id > ''
                 UNION ALL SELECT (SELECT min(r.bench_id) FROM runs r
                                   WHERE r.bench_id > run_benches.bench)
                 FROM run_benches WHERE run_benches.bench IS NOT NULL),
             benches AS (
                 SELECT bench_id FROM bench_heartbeats
                 UNION SELECT bench_id FROM bench_pushes
                 UNION SELECT bench FROM run_benches WHERE bench IS NOT NULL)
             SELECT b.bench_id, h.state, h.run_id, h.run_name, h.progress, h.fault,
                 coalesce(h.last_stop_reason, (SELECT {LAST_STOP} AND r.bench_id = b.bench_id
                     ORDER BY r.created_at DESC LIMIT 1)),
                 h.heartbeat_s, h.at, p.pushed_at, {now}
             FROM benches b
             LEFT JOIN bench_heartbeats h ON h.bench_id = b.bench_id
             LEFT JOIN bench_pushes p ON p.bench_id = b.bench_id
             ORDER BY b.bench_id",
            now = now_sql(&self.reader())
        );
        let rows: Vec<Row> = on!(self.reader(), |p, DB| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .fetch_all(p)
                .await?
        });
        Ok(rows.into_iter().map(fleet_bench).collect())
    }
}

fn check_heartbeat(beat: &Heartbeat) -> Result<(), Error> {
    let bad = |field: &'static str, value: String, rule: &str| Error::InvalidInput {
        field,
        value,
        rule: rule.into(),
    };
    if beat.bench_id.is_empty() {
        return Err(bad("bench_id", String::new(), "must not be empty"));
    }
    let h = beat.heartbeat_s;
    if !(h.is_finite() && h > 0.0) {
        return Err(bad("heartbeat_s", h.to_string(), "must be finite and > 0"));
    }
    if let BenchState::Running { progress, .. } = beat.state
        && !(0.0..=1.0).contains(&progress)
    {
        return Err(bad("progress", progress.to_string(), "must be in 0..1"));
    }
    Ok(())
}

fn fleet_bench(row: Row) -> FleetBench {
    let (bench_id, state, run_id, run_name, progress, fault, reason, period, at, pushed, now) = row;
    let age = at.as_deref().and_then(|at| seconds_between(at, &now));
    // Rounded to the microsecond: 3 × 0.2 is 0.6 to the reader, not 0.6000000000000001.
    let stale_after_s = period.map(|h| (STALE_PERIODS * h * 1e6).round() / 1e6);
    let stale = match (age, stale_after_s) {
        (Some(age), Some(limit)) => age > limit,
        _ => true,
    };
    FleetBench {
        bench_id,
        state: state.as_deref().and_then(StateName::parse),
        run_id,
        run_name,
        progress,
        fault,
        last_stop_reason: reason,
        last_heartbeat: at,
        heartbeat_age_s: age,
        last_push: pushed,
        stale,
        stale_after_s,
    }
}

/// `to - from` in seconds, both RFC 3339.
fn seconds_between(from: &str, to: &str) -> Option<f64> {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let (from, to) = (parse(from)?, parse(to)?);
    Some((to - from).num_milliseconds() as f64 / 1e3)
}
