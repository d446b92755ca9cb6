//! The recorder: round trip through SQLite, range and decimation, channel back-pressure.

use crate::util::{Engine, batch, new_run, output, same, sample, temp_store};
use run_store::{
    Dropped, Event, Finish, Reason, ReasonCode, Recorder, RecorderConfig, RunStatus, SampleQuery,
    TimingStats,
};

async fn samples_written_through_the_recorder_come_back_identical_by_range_and_decimation(
    engine: Engine,
) {
    let (_dir, store) = temp_store(engine).await;
    let models = ["lugre", "gms"];
    let id = store
        .create_run(&new_run("torque_ramp", &models))
        .await
        .unwrap();
    // Small commits so the run spans many transactions.
    let config = RecorderConfig {
        max_pending_samples: 700,
        ..RecorderConfig::default()
    };
    let recorder = Recorder::start(&store, id, config).await.unwrap();
    assert_eq!(store.run(id).await.unwrap().status, RunStatus::Running);
    let tx = recorder.sender();
    let n = 10_000;
    for first in (0..5_000).step_by(100) {
        tx.send(batch(first, 100, models.len())).await.unwrap();
    }
    // One batch longer than a chunk.
    tx.send(batch(5_000, 5_000, models.len())).await.unwrap();
    let timing = TimingStats {
        period_error_p50_us: Some(3.5),
        period_error_p99_us: Some(21.0),
        period_error_max_us: Some(48.25),
        overruns: 2,
        period_error_p999_us: Some(30.5),
        tick_work_p50_us: Some(112.0),
    };
    tx.send(run_store::Batch {
        first_idx: n,
        events: vec![Event::Log {
            t: Some(9.999),
            reason: "limit warning".into(),
        }],
        ..Default::default()
    })
    .await
    .unwrap();
    let summary = recorder
        .close(Finish::completed(Some(timing)))
        .await
        .unwrap();
    assert_eq!(summary.samples, n);
    assert_eq!(summary.outputs, n * 2);
    assert!(summary.commits >= 7, "{summary:?}");

    let run = store.run(id).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.sample_count, n);
    assert_eq!(run.timing, timing);
    assert_eq!(run.dropped_batches, 0);
    assert!(run.started_at.is_some() && run.finished_at.is_some());
    assert_eq!(run.interruption_log.len(), 1);
    assert_eq!(run.interruption_log[0].reason, "limit warning");
    assert_eq!(run.interruption_log[0].t, Some(9.999));

    // Everything.
    let all = store.samples(id, &SampleQuery::default()).await.unwrap();
    assert_eq!(all.models, models);
    assert_eq!(all.samples.len(), n as usize);
    for (i, s) in all.samples.iter().enumerate() {
        let k = i as u64;
        assert_eq!(all.idx[i], k);
        assert!(same(s, &sample(k)), "sample {k}: {s:?} != {:?}", sample(k));
        assert_eq!(all.outputs_at(i), [output(k, 0), output(k, 1)]);
    }

    // A time range with decimation: indices that are multiples of 7 with 1.2 <= t <= 8.5.
    let q = SampleQuery {
        from_t: Some(1.2),
        to_t: Some(8.5),
        every: 7,
    };
    let part = store.samples(id, &q).await.unwrap();
    let want: Vec<u64> = (0..n)
        .filter(|&k| k % 7 == 0 && sample(k).t >= 1.2 && sample(k).t <= 8.5)
        .collect();
    assert_eq!(part.idx, want);
    for (i, &k) in part.idx.iter().enumerate() {
        assert!(same(&part.samples[i], &sample(k)));
        assert_eq!(part.outputs_at(i), [output(k, 0), output(k, 1)]);
    }
    // Bounds exactly on samples are inclusive; an empty range is empty.
    let edge = store
        .samples(
            id,
            &SampleQuery {
                from_t: Some(sample(10).t),
                to_t: Some(sample(12).t),
                every: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!(edge.idx, [10, 11, 12]);
    let none = store
        .samples(
            id,
            &SampleQuery {
                from_t: Some(100.0),
                to_t: None,
                every: 1,
            },
        )
        .await
        .unwrap();
    assert!(none.samples.is_empty());
    assert!(
        store
            .samples(
                id,
                &SampleQuery {
                    every: 0,
                    ..SampleQuery::default()
                }
            )
            .await
            .is_err()
    );
}

async fn try_send_on_a_full_channel_drops_and_counts_instead_of_blocking(engine: Engine) {
    let (_dir, store) = temp_store(engine).await;
    let id = store
        .create_run(&new_run("prbs", &["lugre"]))
        .await
        .unwrap();
    let config = RecorderConfig {
        channel_capacity: 2,
        ..RecorderConfig::default()
    };
    let recorder = Recorder::start(&store, id, config).await.unwrap();
    let tx = recorder.sender();
    // Current-thread runtime: the writer cannot run until this task awaits, so the channel
    // fills after two batches and the rest must be refused at once.
    tx.try_send(batch(0, 10, 1)).unwrap();
    tx.try_send(batch(10, 10, 1)).unwrap();
    assert_eq!(
        tx.try_send(batch(20, 10, 1)),
        Err(Dropped::Full { samples: 10 })
    );
    assert_eq!(
        tx.try_send(batch(30, 5, 1)),
        Err(Dropped::Full { samples: 5 })
    );
    assert_eq!(tx.dropped_batches(), 2);
    // A malformed batch is refused and counted too.
    let mut bad = batch(40, 3, 1);
    bad.outputs.pop();
    assert!(matches!(tx.try_send(bad), Err(Dropped::Malformed { .. })));
    // Once the writer drains, sending works again.
    assert_eq!(recorder.flush().await.unwrap(), 20);
    tx.try_send(batch(50, 10, 1)).unwrap();
    let summary = recorder.close(Finish::completed(None)).await.unwrap();
    assert_eq!(summary.samples, 30);
    assert_eq!(summary.dropped_batches, 3);
    assert_eq!(summary.dropped_samples, 18);
    let run = store.run(id).await.unwrap();
    assert_eq!(
        (run.dropped_batches, run.dropped_samples, run.sample_count),
        (3, 18, 30)
    );
    // The dropped indices are a gap; the later batch keeps its own indices.
    let set = store.samples(id, &SampleQuery::default()).await.unwrap();
    let want: Vec<u64> = (0..20).chain(50..60).collect();
    assert_eq!(set.idx, want);
}

async fn a_closed_recorder_sets_the_final_status_and_reason(engine: Engine) {
    let (_dir, store) = temp_store(engine).await;
    let id = store
        .create_run(&new_run("torque_ramp", &[]))
        .await
        .unwrap();
    let recorder = Recorder::start(&store, id, RecorderConfig::default())
        .await
        .unwrap();
    recorder.sender().try_send(batch(0, 50, 0)).unwrap();
    let fin = Finish {
        status: RunStatus::Aborted,
        reason: Some(Reason::new(
            ReasonCode::LimitBreach,
            "torque limit 2 N m exceeded (2.3)",
        )),
        timing: None,
    };
    recorder.close(fin).await.unwrap();
    let run = store.run(id).await.unwrap();
    assert_eq!(run.status, RunStatus::Aborted);
    assert_eq!(
        run.status_reason.as_deref(),
        Some("torque limit 2 N m exceeded (2.3)")
    );
    assert_eq!(run.reason_code, Some(ReasonCode::LimitBreach));
    assert_eq!(
        run.interruption_log.last().unwrap().reason,
        "torque limit 2 N m exceeded (2.3)"
    );
    assert_eq!(run.sample_count, 50);
    // A run already recorded cannot be recorded again.
    assert!(
        Recorder::start(&store, id, RecorderConfig::default())
            .await
            .is_err()
    );
}

async fn a_plain_thread_without_a_runtime_can_feed_the_recorder(engine: Engine) {
    // The control loop runs on its own OS thread, outside tokio.
    let (_dir, store) = temp_store(engine).await;
    let id = store
        .create_run(&new_run("prbs", &["lugre"]))
        .await
        .unwrap();
    let recorder = Recorder::start(&store, id, RecorderConfig::default())
        .await
        .unwrap();
    let tx = recorder.sender();
    let sent = std::thread::spawn(move || {
        (0..20)
            .filter(|&b| tx.try_send(batch(b * 50, 50, 1)).is_ok())
            .count() as u64
    })
    .join()
    .unwrap();
    let summary = recorder.close(Finish::completed(None)).await.unwrap();
    assert_eq!(summary.samples, sent * 50);
    assert_eq!(summary.dropped_batches, 20 - sent);
    assert_eq!(store.run(id).await.unwrap().sample_count, sent * 50);
}

crate::on_both_engines!(
    samples_written_through_the_recorder_come_back_identical_by_range_and_decimation,
    try_send_on_a_full_channel_drops_and_counts_instead_of_blocking,
    a_closed_recorder_sets_the_final_status_and_reason,
    a_plain_thread_without_a_runtime_can_feed_the_recorder,
);
