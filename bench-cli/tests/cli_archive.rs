//! `bench archive` (issue 42): a recorded run's samples move to
//! `DIR/bench=ID/date=YYYY-MM-DD/run=N.parquet`; the run stays listed, `bench runs export`
//! reads it from the file, and DuckDB (an independent reader, `$FRICTIONBENCH_DUCKDB_PYTHON`)
//! reads the same rows and values from the directory. On SQLite, and on the lab's PostgreSQL
//! when the test cluster is configured.

use crate::lab::{fresh_database, json};
use crate::util::{bench, export_csv, stderr};
use run_store::{Batch, Finish, NewRun, Recorder, RecorderConfig, Sample, Store};
use serde_json::json;
use std::process::Command;

/// Samples of the recorded run.
const N: u64 = 5_000;

/// A run of `N` samples on bench `b7` with LuGre outputs; returns its id.
pub(crate) fn record(db: &str) -> i64 {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Store::open(db).await.unwrap();
        let run = NewRun {
            kind: "prbs".into(),
            name: "night".into(),
            bench_config: json!({"bench_id": "b7"}),
            software_version: "test".into(),
            models: vec!["lugre".into()],
            period_s: Some(1e-3),
            ..NewRun::default()
        };
        let id = store.create_run(&run).await.unwrap();
        let recorder = Recorder::start(&store, id, RecorderConfig::default())
            .await
            .unwrap();
        let mut b = Batch::with_capacity(0, N as usize, 1);
        for k in 0..N {
            let t = k as f64 * 1e-3;
            let s = Sample {
                t,
                x: (3.1 * t).sin() / 3.0,
                v: (3.1 * t).cos() * 1.0333,
                u_cmd: 0.7 + 1e-3 * k as f64,
                torque_motor: -0.123_456_789 * t,
                torque_sensor: if k % 101 == 7 {
                    f64::NAN
                } else {
                    1.0 / (t + 3.0)
                },
                segment: (k / 1000) as u32,
                flags: (k % 4) as u32,
            };
            b.push(s, &[0.25 * t]);
        }
        recorder.sender().send(b).await.unwrap();
        recorder.close(Finish::completed(None)).await.unwrap();
        store.close().await;
        id
    })
}

/// The rows of a CSV export or DuckDB's CSV, each field as a number (NaN for an empty field).
fn rows(csv: &str, columns: &[&str]) -> Vec<Vec<f64>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at: Vec<usize> = columns
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == c)
                .unwrap_or_else(|| panic!("{c} in {header:?}"))
        })
        .collect();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            at.iter()
                .map(|&k| f[k].parse().unwrap_or(f64::NAN))
                .collect()
        })
        .collect()
}

fn bits(rows: &[Vec<f64>]) -> Vec<Vec<u64>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
                .collect()
        })
        .collect()
}

/// DuckDB's reading of every file under `dir`, hive partitions included, as CSV.
fn duckdb(dir: &std::path::Path) -> Option<String> {
    let Some(python) = std::env::var_os("FRICTIONBENCH_DUCKDB_PYTHON") else {
        assert!(
            std::env::var_os("FRICTIONBENCH_REQUIRE_PG").is_none(),
            "FRICTIONBENCH_DUCKDB_PYTHON is not set (scripts/test.sh makes target/duckenv)"
        );
        eprintln!("skipped: FRICTIONBENCH_DUCKDB_PYTHON is not set");
        return None;
    };
    // The float32 columns widened to double (exactly) so that CSV text compares bit for bit.
    let script = "import duckdb, sys\n\
        f32 = ', '.join(f'{c}::DOUBLE AS {c}' for c in ['x', 'v', 'u_cmd', 'torque_motor', 'torque_sensor'])\n\
        q = f\"SELECT * REPLACE ({f32}) FROM read_parquet('{sys.argv[1]}/**/*.parquet', hive_partitioning = true) ORDER BY run_id, idx\"\n\
        duckdb.sql(q).write_csv('/dev/stdout')\n";
    let out = Command::new(python)
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

fn archive_is_read_by_duckdb_and_export_alike(db: &str) {
    let id = record(db);
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().to_str().unwrap();
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    let doc = json(&bench(&[
        "archive", "--before", &tomorrow, "--to", to, "--db", db, "--json",
    ]));
    assert_eq!(
        (doc["runs"].as_u64(), doc["rows"].as_u64()),
        (Some(1), Some(N)),
        "{doc}"
    );
    let bytes = doc["bytes"].as_u64().unwrap();
    assert_eq!(
        doc["bytes_per_value"].as_f64().unwrap(),
        bytes as f64 / (N * 8) as f64
    );
    let today = chrono::Utc::now().format("%Y-%m-%d");
    let file = dir
        .path()
        .join(format!("bench=b7/date={today}/run={id}.parquet"));
    assert_eq!(std::fs::metadata(&file).unwrap().len(), bytes);

    let listed = json(&bench(&["runs", "list", "--db", db, "--json"]));
    assert_eq!(listed["runs"][0]["id"], id, "the archived run stays listed");
    let export = export_csv(db, id);
    assert!(export.starts_with("idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags,lugre\n"));
    let cols = run_store::SAMPLE_COLUMNS;
    let exported = rows(&export, &cols);
    assert_eq!(exported.len() as u64, N);
    assert!(exported[7][6].is_nan(), "NaN stays NaN");
    assert_eq!(
        exported[9][2],
        ((3.1f64 * 9e-3).sin() / 3.0) as f32 as f64,
        "x at float32"
    );
    let lugre = rows(&export, &["lugre"]);
    assert!(lugre.iter().all(|r| r[0].is_nan()), "outputs were left out");

    let Some(duck) = duckdb(dir.path()) else {
        return;
    };
    assert!(
        duck.starts_with("run_id,idx,t,x,"),
        "{}",
        &duck[..80.min(duck.len())]
    );
    let hive = rows(&duck, &["run_id"]);
    assert!(hive.iter().all(|r| r[0] == id as f64));
    assert!(
        duck.lines()
            .nth(1)
            .unwrap()
            .ends_with(&format!(",b7,{today}")),
        "bench and date partitions"
    );
    assert_eq!(
        bits(&rows(&duck, &cols)),
        bits(&exported),
        "DuckDB reads what the export gives"
    );
}

#[test]
fn an_archived_run_reads_the_same_in_duckdb_and_in_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    archive_is_read_by_duckdb_and_export_alike(db.to_str().unwrap());
}

#[test]
fn an_archived_run_reads_the_same_in_duckdb_and_in_the_export_on_postgresql() {
    if let Some(url) = fresh_database() {
        archive_is_read_by_duckdb_and_export_alike(&url);
    }
}

#[test]
fn a_bad_date_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    record(db.to_str().unwrap());
    let out = bench(&[
        "archive",
        "--before",
        "2026-13-01",
        "--to",
        "x",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("before (2026-13-01) is not a date"),
        "{}",
        stderr(&out)
    );
}
