//! Test helpers: a temp store on either engine, a run, and deterministic samples.

use run_store::{Batch, Location, NewRun, Sample, Store};
use tempfile::TempDir;

/// The engine a test runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A SQLite file in a temp dir.
    Sqlite,
    /// A fresh database in the PostgreSQL cluster of `$FRICTIONBENCH_TEST_PG`
    /// (`scripts/pg-cluster.sh`; `scripts/test.sh` starts one).
    Postgres,
}

/// Runs each named `async fn(Engine)` as two tests, `NAME::sqlite` and `NAME::postgres`, on a
/// current-thread runtime (the recorder's writer runs only when the test awaits).
/// Without `$FRICTIONBENCH_TEST_PG` the PostgreSQL half says so and passes, unless
/// `$FRICTIONBENCH_REQUIRE_PG` is set (as `scripts/test.sh` does).
#[macro_export]
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => { $(
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name($crate::util::Engine::Sqlite).await
            }
            #[tokio::test]
            async fn postgres() {
                if $crate::util::postgres_available() {
                    super::$name($crate::util::Engine::Postgres).await
                }
            }
        }
    )* };
}

/// Whether the PostgreSQL cluster is configured (panics if it must be and is not).
pub fn postgres_available() -> bool {
    if std::env::var_os("FRICTIONBENCH_TEST_PG").is_some() {
        return true;
    }
    assert!(
        std::env::var_os("FRICTIONBENCH_REQUIRE_PG").is_none(),
        "FRICTIONBENCH_TEST_PG is not set (scripts/pg-cluster.sh start DIR prints it)"
    );
    eprintln!("skipped: FRICTIONBENCH_TEST_PG is not set (scripts/pg-cluster.sh)");
    false
}

/// Where a temp store lives; the SQLite temp dir is removed on drop (each PostgreSQL database
/// goes with the throwaway cluster).
#[derive(Debug)]
pub struct TempLocation {
    _dir: Option<TempDir>,
    pub location: Location,
}

/// A fresh, empty location on `engine`.
pub async fn temp_location(engine: Engine) -> TempLocation {
    match engine {
        Engine::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let location = Location::Sqlite(dir.path().join("runs.db"));
            TempLocation {
                _dir: Some(dir),
                location,
            }
        }
        Engine::Postgres => TempLocation {
            _dir: None,
            location: Location::Postgres(fresh_pg_database().await),
        },
    }
}

/// A store as an older daemon left it: the migrations before `before` (a file name prefix such
/// as "0008") from a copy of the migrations directory, then `statements` (plain SQL, no
/// parameters) run on it. The temp dir holds the copy while the location lives.
pub async fn older_store(
    engine: Engine,
    before: &str,
    statements: &[String],
) -> (TempLocation, TempDir) {
    let place = temp_location(engine).await;
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(match engine {
        Engine::Sqlite => "../migrations/sqlite",
        Engine::Postgres => "../migrations/postgres",
    });
    let older = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.as_str() < before {
            std::fs::copy(&path, older.path().join(&name)).unwrap();
        }
    }
    let migrator = sqlx::migrate::Migrator::new(older.path()).await.unwrap();
    macro_rules! apply {
        ($pool:expr) => {{
            let pool = $pool;
            migrator.run(&pool).await.unwrap();
            for sql in statements {
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
                    .execute(&pool)
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            pool.close().await;
        }};
    }
    match &place.location {
        Location::Sqlite(path) => {
            let url = format!("sqlite://{}?mode=rwc", path.display());
            apply!(sqlx::SqlitePool::connect(&url).await.unwrap())
        }
        Location::Postgres(url) => apply!(sqlx::PgPool::connect(url).await.unwrap()),
    }
    (place, older)
}

/// `text` as an SQL string literal.
pub fn sql_text(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Creates a new database in the test cluster; returns its URL.
pub async fn fresh_pg_database() -> String {
    use sqlx::Connection;
    let admin = std::env::var("FRICTIONBENCH_TEST_PG").expect("FRICTIONBENCH_TEST_PG");
    let name = format!("t_{}", uuid_simple());
    let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    with_database(&admin, &name)
}

/// `admin` with its database name replaced by `name`.
pub fn with_database(admin: &str, name: &str) -> String {
    let (base, query) = admin.split_once('?').unwrap_or((admin, ""));
    let (server, _) = base.rsplit_once('/').expect("URL with a database");
    if query.is_empty() {
        format!("{server}/{name}")
    } else {
        format!("{server}/{name}?{query}")
    }
}

fn uuid_simple() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}_{nanos}_{n}", std::process::id())
}

/// A fresh store on `engine` (kept alive by the returned [`TempLocation`]).
pub async fn temp_store(engine: Engine) -> (TempLocation, Store) {
    let place = temp_location(engine).await;
    let store = Store::open(&place.location).await.unwrap();
    (place, store)
}

/// A run description with the given kind and lockstep models.
pub fn new_run(kind: &str, models: &[&str]) -> NewRun {
    NewRun {
        kind: kind.into(),
        name: format!("{kind} test"),
        spec: serde_json::json!({"kind": kind, "name": "t", "params": {"rate": 0.5}}),
        bench_config: serde_json::json!({"period_s": 0.001, "limits": {"torque": 2.0}}),
        device_profiles: serde_json::json!({"drive": "sim-drive"}),
        software_version: "0.1.0-test".into(),
        notes: Some("note".into()),
        models: models.iter().map(|m| m.to_string()).collect(),
        period_s: Some(0.001),
    }
}
/// Sample `k` of a 1 kHz run: every channel distinct and not round in binary.
pub fn sample(k: u64) -> Sample {
    let t = k as f64 * 1e-3;
    Sample {
        t,
        x: if k == 3 {
            -0.0
        } else {
            (0.7 * t).sin() * 1e-3 + 1.0 / 3.0
        },
        v: (0.7 * t).cos() * 0.7e-3,
        u_cmd: 0.1 * k as f64 + 0.123_456_789,
        torque_motor: -(k as f64) / 7.0,
        torque_sensor: if k % 97 == 5 {
            f64::NAN
        } else {
            k as f64 * 1e-9 - 2.5
        },
        segment: (k / 1000) as u32,
        flags: (k % 3) as u32,
    }
}

/// Output of model `m` at sample `k`.
pub fn output(k: u64, m: usize) -> f64 {
    (k as f64 + 1.0) * 0.01 * (m as f64 + 1.0) + 1e-12
}

/// Samples `first..first + n` with `models` outputs each.
pub fn batch(first: u64, n: u64, models: usize) -> Batch {
    let mut b = Batch::with_capacity(first, n as usize, models);
    for k in first..first + n {
        let outs: Vec<f64> = (0..models).map(|m| output(k, m)).collect();
        b.push(sample(k), &outs);
    }
    b
}

/// Bit-for-bit equality of every channel (NaN and -0.0 included).
pub fn same(a: &Sample, b: &Sample) -> bool {
    let ch =
        |s: &Sample| [s.t, s.x, s.v, s.u_cmd, s.torque_motor, s.torque_sensor].map(f64::to_bits);
    ch(a) == ch(b) && a.segment == b.segment && a.flags == b.flags
}
