//! Opening: migrations on a fresh file; runs left `running` become `interrupted` with their
//! committed samples intact.

use crate::util::{Engine, batch, new_run, same, sample, temp_location, temp_store};
use run_store::{INTERRUPTED_REASON, Recorder, RecorderConfig, RunStatus, SampleQuery, Store};
use std::time::Duration;

/// The tables of a store, on either engine.
const TABLES: [&str; 20] = [
    "audit_log",
    "bench_heartbeats",
    "bench_pushes",
    "bench_settings",
    "campaign_runs",
    "campaigns",
    "comparison_runs",
    "comparisons",
    "model_outputs",
    "parameter_sets",
    "queue_items",
    "results",
    "run_archives",
    "run_sensors",
    "run_summaries",
    "run_tags",
    "runs",
    "samples",
    "schedules",
    "sensor_calibrations",
];

#[tokio::test]
async fn migrations_apply_on_a_fresh_file_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new-dir").join("fresh.db");
    assert!(Store::open_existing(&path).await.is_err(), "no file yet");
    let store = Store::open(&path).await.unwrap();
    assert!(path.is_file());
    assert!(store.interrupted_at_open().is_empty());
    store.close().await;

    // Inspect the file with a plain connection.
    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let mut tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'
         ORDER BY name",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    tables.sort();
    assert_eq!(tables, TABLES);
    let applied: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(
        applied,
        [
            (1, true),
            (2, true),
            (3, true),
            (4, true),
            (5, true),
            (6, true),
            (8, true),
            (9, true),
            (10, true),
            (11, true),
            (12, true),
            (13, true),
            (14, true),
            (15, true),
            (16, true),
            (17, true),
            (18, true)
        ]
    );
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    conn.close().await.unwrap();

    // Opening again applies nothing new and keeps the data.
    let store = Store::open(&path).await.unwrap();
    let id = store.create_run(&new_run("prbs", &[])).await.unwrap();
    store.close().await;
    let store = Store::open_existing(&path).await.unwrap();
    assert_eq!(store.run(id).await.unwrap().kind, "prbs");
}

async fn a_recorder_dropped_without_close_leaves_an_interrupted_run_with_its_samples(
    engine: Engine,
) {
    let (_dir, store) = temp_store(engine).await;
    let id = store
        .create_run(&new_run("presliding", &["lugre"]))
        .await
        .unwrap();
    let recorder = Recorder::start(&store, id, RecorderConfig::default())
        .await
        .unwrap();
    let tx = recorder.sender();
    tx.try_send(batch(0, 300, 1)).unwrap();
    drop(tx);
    drop(recorder);
    // The writer task notices the closed channel, commits and marks the run.
    let mut status = RunStatus::Running;
    for _ in 0..500 {
        status = store.run(id).await.unwrap().status;
        if status != RunStatus::Running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, RunStatus::Interrupted);
    let set = store.samples(id, &SampleQuery::default()).await.unwrap();
    assert_eq!(set.samples.len(), 300);
}

fn a_crashed_writer_leaves_a_run_that_the_next_open_marks_interrupted_with_committed_samples(
    engine: Engine,
) {
    let place = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(temp_location(engine));
    let path = &place.location;
    // First "daemon": its own runtime, killed (dropped) mid-run after two committed batches and
    // with more batches in flight.
    let (id, committed) = {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let out = rt.block_on(async {
            let store = Store::open(path).await.unwrap();
            let id = store
                .create_run(&new_run("torque_ramp", &["lugre", "dahl"]))
                .await
                .unwrap();
            let recorder = Recorder::start(&store, id, RecorderConfig::default())
                .await
                .unwrap();
            let tx = recorder.sender();
            tx.try_send(batch(0, 400, 2)).unwrap();
            recorder.flush().await.unwrap();
            tx.try_send(batch(400, 400, 2)).unwrap();
            let committed = recorder.flush().await.unwrap();
            // In flight at the crash: may or may not be committed.
            tx.try_send(batch(800, 400, 2)).unwrap();
            std::mem::forget(recorder);
            std::mem::forget(store);
            (id, committed)
        });
        // Tasks are cancelled where they stand; nothing runs its closing code.
        rt.shutdown_timeout(Duration::from_millis(0));
        out
    };
    assert_eq!(committed, 800);
    if engine == Engine::Postgres {
        // The server ends the dead sessions (and their advisory locks) as it reads their EOF.
        std::thread::sleep(Duration::from_millis(500));
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Store::open(path).await.unwrap();
        assert_eq!(store.interrupted_at_open(), [id]);
        let run = store.run(id).await.unwrap();
        assert_eq!(run.status, RunStatus::Interrupted);
        assert_eq!(run.status_reason.as_deref(), Some(INTERRUPTED_REASON));
        assert_eq!(
            run.interruption_log.last().unwrap().reason,
            INTERRUPTED_REASON
        );
        assert!(run.finished_at.is_some());
        assert!(run.sample_count >= committed);
        let set = store.samples(id, &SampleQuery::default()).await.unwrap();
        assert_eq!(set.samples.len() as u64, run.sample_count);
        for (i, s) in set.samples.iter().enumerate() {
            assert_eq!(set.idx[i], i as u64);
            assert!(same(s, &sample(i as u64)));
        }
        // A second open finds nothing left running.
        store.close().await;
        let store = Store::open(path).await.unwrap();
        assert!(store.interrupted_at_open().is_empty());
    });
}

#[test]
fn a_crashed_writer_leaves_a_run_that_the_next_open_marks_interrupted_with_committed_samples_on_sqlite()
 {
    a_crashed_writer_leaves_a_run_that_the_next_open_marks_interrupted_with_committed_samples(
        Engine::Sqlite,
    );
}

#[test]
fn a_crashed_writer_leaves_a_run_that_the_next_open_marks_interrupted_with_committed_samples_on_postgres()
 {
    if crate::util::postgres_available() {
        a_crashed_writer_leaves_a_run_that_the_next_open_marks_interrupted_with_committed_samples(
            Engine::Postgres,
        );
    }
}

#[tokio::test]
async fn migrations_apply_on_a_fresh_postgres_database() {
    if !crate::util::postgres_available() {
        return;
    }
    let place = temp_location(Engine::Postgres).await;
    let store = Store::open(&place.location).await.unwrap();
    assert!(store.interrupted_at_open().is_empty());
    let id = store.create_run(&new_run("prbs", &[])).await.unwrap();
    store.close().await;
    let run_store::Location::Postgres(url) = &place.location else {
        unreachable!()
    };
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let mut tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = 'public' AND table_name NOT LIKE '\\_%' ORDER BY table_name",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    tables.sort();
    assert_eq!(tables, TABLES);
    let applied: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(
        applied,
        [
            (1, true),
            (8, true),
            (9, true),
            (10, true),
            (11, true),
            (12, true),
            (13, true),
            (14, true),
            (15, true),
            (16, true),
            (17, true),
            (18, true)
        ]
    );
    conn.close().await.unwrap();
    // Opening again applies nothing new and keeps the data.
    let store = Store::open_existing(&place.location).await.unwrap();
    assert_eq!(store.run(id).await.unwrap().kind, "prbs");
}

crate::on_both_engines!(
    a_recorder_dropped_without_close_leaves_an_interrupted_run_with_its_samples,
);
