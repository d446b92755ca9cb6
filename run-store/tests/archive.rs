//! The archive (`Store::archive`): a run's samples leave the database for a Parquet file, are
//! checked before they are deleted, and every read of them (samples, pages, exports) goes to
//! the file, with the measured channels at float32 precision.

use crate::on_both_engines;
use crate::util::{Engine, batch, new_run, temp_store};
use run_store::{
    ArchiveOptions, Finish, Format, NewRun, Recorder, RecorderConfig, Sample, SampleQuery, Store,
};

/// Samples of the recorded runs.
const N: u64 = 10_000;

/// A run of `N` samples with outputs of `models`, recorded and closed; on bench `b-1`.
async fn recorded(store: &Store, models: &[&str]) -> i64 {
    let run = NewRun {
        bench_config: serde_json::json!({"bench_id": "b-1"}),
        ..new_run("prbs", models)
    };
    let id = store.create_run(&run).await.unwrap();
    let recorder = Recorder::start(store, id, RecorderConfig::default())
        .await
        .unwrap();
    for first in (0..N).step_by(2_500) {
        recorder
            .sender()
            .send(batch(first, 2_500, models.len()))
            .await
            .unwrap();
    }
    recorder.close(Finish::completed(None)).await.unwrap();
    id
}

/// `s` as the archive keeps it: `t` exact, the channels rounded to float32.
fn as_archived(s: &Sample) -> Sample {
    let f = |v: f64| v as f32 as f64;
    Sample {
        x: f(s.x),
        v: f(s.v),
        u_cmd: f(s.u_cmd),
        torque_motor: f(s.torque_motor),
        torque_sensor: f(s.torque_sensor),
        ..*s
    }
}

fn bits(s: &Sample) -> [u64; 8] {
    let c = [s.t, s.x, s.v, s.u_cmd, s.torque_motor, s.torque_sensor];
    [
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        c[5],
        s.segment as f64,
        s.flags as f64,
    ]
    .map(f64::to_bits)
}

fn tomorrow() -> String {
    (chrono::Utc::now() + chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string()
}

async fn a_run_moves_to_its_partition_and_reads_back_from_the_file(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let id = recorded(&store, &["lugre", "dahl"]).await;
    let queued = store.create_run(&new_run("prbs", &[])).await.unwrap();
    let before = store.samples(id, &SampleQuery::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opts = |before: String| ArchiveOptions {
        before,
        to: dir.path().to_path_buf(),
        with_models: false,
    };

    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).format("%Y-%m-%d");
    let none = store.archive(&opts(yesterday.to_string())).await.unwrap();
    assert_eq!((none.runs, none.rows), (0, 0), "the run started today");

    let report = store.archive(&opts(tomorrow())).await.unwrap();
    assert_eq!(
        (report.runs, report.rows),
        (1, N),
        "the queued run {queued} has no samples"
    );
    let today = chrono::Utc::now().format("%Y-%m-%d");
    let path = dir
        .path()
        .join(format!("bench=b-1/date={today}/run={id}.parquet"));
    assert_eq!(report.files[0].path, path);
    let bytes = std::fs::metadata(&path).unwrap().len();
    assert_eq!(report.bytes, bytes);
    assert_eq!(
        report.values,
        N * 8,
        "eight sample fields a row, no model columns"
    );
    assert!(report.bytes_per_value > 0.0 && report.bytes_per_value < 8.0);
    let archive = store
        .archive_of(id)
        .await
        .unwrap()
        .expect("recorded per run");
    assert_eq!(archive.path, path.to_string_lossy());
    assert_eq!(
        (archive.rows, archive.last_idx),
        (N as i64, Some(N as i64 - 1))
    );
    assert_eq!(archive.checksum, report.files[0].checksum);

    let after = store.samples(id, &SampleQuery::default()).await.unwrap();
    assert_eq!(after.idx, before.idx);
    assert_eq!(
        after.models,
        ["lugre", "dahl"],
        "the run's models keep their columns"
    );
    assert!(
        after.outputs.iter().all(|o| o.is_nan()),
        "model outputs were left out"
    );
    for (a, b) in after.samples.iter().zip(&before.samples) {
        assert_eq!(bits(a), bits(&as_archived(b)), "{b:?}");
    }
    assert_ne!(
        after.samples[7].x, before.samples[7].x,
        "x is stored as float32"
    );

    // A time range and a decimation read from the file as from the database.
    let q = SampleQuery {
        from_t: Some(2.0),
        to_t: Some(3.5),
        every: 10,
    };
    let part = store.samples(id, &q).await.unwrap();
    let want: Vec<u64> = (2_000..=3_500).step_by(10).collect();
    assert_eq!(part.idx, want);

    // The export pages through the file: every row once, in order.
    let mut csv = Vec::new();
    assert_eq!(store.export(id, Format::Csv, &mut csv).await.unwrap(), N);
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count() as u64, N + 1);
    assert!(
        csv.lines()
            .nth(N as usize)
            .unwrap()
            .starts_with(&format!("{},", N - 1))
    );

    let again = store.archive(&opts(tomorrow())).await.unwrap();
    assert_eq!(again.runs, 0, "an archived run is not archived twice");
    let listed = store
        .list_runs(&run_store::RunFilter::default())
        .await
        .unwrap();
    assert!(
        listed.runs.iter().any(|r| r.id == id),
        "the archived run stays listed"
    );
}

async fn with_models_the_outputs_are_kept_at_float32(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let id = recorded(&store, &["lugre"]).await;
    let before = store.samples(id, &SampleQuery::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opts = ArchiveOptions {
        before: tomorrow(),
        to: dir.path().into(),
        with_models: true,
    };
    let report = store.archive(&opts).await.unwrap();
    assert_eq!(report.values, N * 9);
    let after = store.samples(id, &SampleQuery::default()).await.unwrap();
    let rounded: Vec<f64> = before.outputs.iter().map(|&o| o as f32 as f64).collect();
    assert_eq!(after.outputs, rounded);
}

async fn a_file_in_the_way_stops_the_archive_and_nothing_is_deleted(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let id = recorded(&store, &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let today = chrono::Utc::now().format("%Y-%m-%d");
    let there = dir.path().join(format!("bench=b-1/date={today}"));
    std::fs::create_dir_all(&there).unwrap();
    std::fs::write(there.join(format!("run={id}.parquet")), b"someone else's").unwrap();
    let opts = ArchiveOptions {
        before: tomorrow(),
        to: dir.path().into(),
        with_models: false,
    };
    let err = store.archive(&opts).await.unwrap_err().to_string();
    assert!(
        err.contains("already exists") && err.contains(&format!("run {id}")),
        "{err}"
    );
    assert!(store.archive_of(id).await.unwrap().is_none());
    let kept = store.samples(id, &SampleQuery::default()).await.unwrap();
    assert_eq!(
        kept.samples.len() as u64,
        N,
        "the samples stay in the database"
    );
    let bad = ArchiveOptions {
        before: "last week".into(),
        ..opts
    };
    let err = store.archive(&bad).await.unwrap_err().to_string();
    assert!(err.starts_with("before (last week)"), "{err}");
}

on_both_engines!(
    a_run_moves_to_its_partition_and_reads_back_from_the_file,
    with_models_the_outputs_are_kept_at_float32,
    a_file_in_the_way_stops_the_archive_and_nothing_is_deleted,
);
