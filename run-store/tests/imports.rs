//! What an import relies on: a deleted run takes its samples, outputs and results with it, and
//! an import whose process died is deleted (not kept as `interrupted`) at the next open.

use crate::util::{Engine, TempLocation, batch, new_run, temp_location, temp_store};
use run_store::{Error, IMPORTED_KIND, Location, Recorder, RecorderConfig, RunFilter, Store};
use std::time::Duration;

/// Rows of `table` belonging to run `id`, counted with a plain connection.
async fn rows(place: &TempLocation, table: &str, id: i64) -> i64 {
    use sqlx::Connection;
    let sql = format!("SELECT count(*) FROM {table} WHERE run_id = $1");
    match &place.location {
        Location::Sqlite(path) => {
            let url = format!("sqlite://{}", path.display());
            let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .fetch_one(&mut c)
                .await
                .unwrap()
        }
        Location::Postgres(url) => {
            let mut c = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .fetch_one(&mut c)
                .await
                .unwrap()
        }
    }
}

async fn a_deleted_run_takes_its_samples_outputs_and_results(engine: Engine) {
    let (place, store) = temp_store(engine).await;
    let keep = store
        .create_run(&new_run("prbs", &["lugre"]))
        .await
        .unwrap();
    let gone = store
        .create_run(&new_run("prbs", &["lugre"]))
        .await
        .unwrap();
    for id in [keep, gone] {
        let r = Recorder::start(&store, id, RecorderConfig::default())
            .await
            .unwrap();
        r.sender().send(batch(0, 5000, 1)).await.unwrap();
        r.close(run_store::Finish::completed(None)).await.unwrap();
        store
            .save_results(id, &serde_json::json!({"kind": "prbs"}))
            .await
            .unwrap();
    }
    assert_eq!(rows(&place, "samples", gone).await, 2);
    store.delete_run(gone).await.unwrap();
    for table in ["samples", "model_outputs", "results"] {
        assert_eq!(rows(&place, table, gone).await, 0, "{table}");
        assert!(
            rows(&place, table, keep).await > 0,
            "{table} of the other run"
        );
    }
    assert!(matches!(
        store.run(gone).await,
        Err(Error::RunNotFound { .. })
    ));
    assert!(matches!(
        store.delete_run(gone).await,
        Err(Error::RunNotFound { .. })
    ));
    assert_eq!(
        store.list_runs(&RunFilter::default()).await.unwrap().total,
        1
    );
}

crate::on_both_engines!(a_deleted_run_takes_its_samples_outputs_and_results);

/// An import killed after committing chunks: the next open for recording deletes it whole,
/// while a recorded run killed alike is kept as `interrupted`.
fn a_dead_import_is_deleted_at_the_next_open(engine: Engine) {
    let place = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(temp_location(engine));
    let (import, recorded) = {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let ids = rt.block_on(async {
            let store = Store::open(&place.location).await.unwrap();
            let mut ids = Vec::new();
            for kind in [IMPORTED_KIND, "prbs"] {
                let id = store.create_run(&new_run(kind, &[])).await.unwrap();
                let recorder = Recorder::start(&store, id, RecorderConfig::default())
                    .await
                    .unwrap();
                recorder.sender().send(batch(0, 6000, 0)).await.unwrap();
                assert_eq!(recorder.flush().await.unwrap(), 6000);
                std::mem::forget(recorder);
                ids.push(id);
            }
            std::mem::forget(store);
            ids
        });
        rt.shutdown_timeout(Duration::from_millis(0));
        (ids[0], ids[1])
    };
    if engine == Engine::Postgres {
        // The server ends the dead sessions (and their advisory locks) as it reads their EOF.
        std::thread::sleep(Duration::from_millis(500));
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        assert_eq!(
            rows(&place, "samples", import).await,
            2,
            "committed before the crash"
        );
        let store = Store::open(&place.location).await.unwrap();
        assert_eq!(store.interrupted_at_open(), [recorded]);
        assert!(matches!(
            store.run(import).await,
            Err(Error::RunNotFound { .. })
        ));
        assert_eq!(rows(&place, "samples", import).await, 0);
        assert_eq!(store.run(recorded).await.unwrap().sample_count, 6000);
    });
}

#[test]
fn a_dead_import_is_deleted_at_the_next_open_on_sqlite() {
    a_dead_import_is_deleted_at_the_next_open(Engine::Sqlite);
}

#[test]
fn a_dead_import_is_deleted_at_the_next_open_on_postgres() {
    if crate::util::postgres_available() {
        a_dead_import_is_deleted_at_the_next_open(Engine::Postgres);
    }
}
