//! Calibration records: newest is current, every field checked by name; each run's zero and
//! the calibration it used, newest first per bench and sensor; the zero's drift; both pushed
//! to a lab's store with the runs.

use crate::on_both_engines;
use crate::util::{Engine, new_run, temp_store};
use chrono::NaiveDate;
use run_store::{
    Error, NewCalibration, PushOptions, RunSensor, RunStatus, RunZero, Store, zero_drift,
};

fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

fn cal(bench: &str, sensor: &str, certificate: &str, due: &str) -> NewCalibration {
    NewCalibration {
        bench_id: bench.into(),
        sensor: sensor.into(),
        sensitivity: 0.5,
        offset: 0.012,
        certificate: certificate.into(),
        calibrated: day("2026-01-10"),
        due: day(due),
        recorded_by: "ada".into(),
    }
}

async fn run_of(store: &Store, bench: &str) -> i64 {
    let mut run = new_run("prbs", &[]);
    run.bench_config = serde_json::json!({"bench_id": bench, "period_s": 0.001});
    store.create_run(&run).await.unwrap()
}

async fn the_newest_calibration_is_current(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let sensor = "daq.measured_torque";
    assert_eq!(store.current_calibration("b1", sensor).await.unwrap(), None);
    let first = store
        .add_calibration(&cal("b1", sensor, "C-1", "2027-01-10"))
        .await
        .unwrap();
    let second = store
        .add_calibration(&cal("b1", sensor, "C-2", "2027-06-10"))
        .await
        .unwrap();
    store
        .add_calibration(&cal("b2", sensor, "other bench", "2027-01-10"))
        .await
        .unwrap();
    let all = store.calibrations("b1", sensor).await.unwrap();
    assert_eq!(
        all.iter().map(|c| c.id).collect::<Vec<_>>(),
        [second, first]
    );
    let now = store
        .current_calibration("b1", sensor)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            now.certificate.as_str(),
            now.due.as_str(),
            now.calibrated.as_str()
        ),
        ("C-2", "2027-06-10", "2026-01-10")
    );
    assert_eq!((now.sensitivity, now.offset), (0.5, 0.012));
    assert_eq!(now.recorded_by, "ada");
    assert!(now.overdue_on(day("2027-06-11")) && !now.overdue_on(day("2027-06-10")));
    assert!(store.calibrations("b1", "sensor").await.unwrap().is_empty());
}

async fn bad_calibrations_are_refused_naming_the_field(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    type Spoil = fn(&mut NewCalibration);
    let cases: [(Spoil, &str); 5] = [
        (|c| c.sensitivity = 0.0, "sensitivity"),
        (|c| c.offset = f64::NAN, "offset"),
        (|c| c.certificate = " ".into(), "certificate"),
        (|c| c.recorded_by = String::new(), "recorded_by"),
        (|c| c.due = day("2026-01-10"), "due"),
    ];
    for (spoil, field) in cases {
        let mut c = cal("b1", "sensor", "C-1", "2027-01-10");
        spoil(&mut c);
        match store.add_calibration(&c).await {
            Err(Error::InvalidInput { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    assert!(store.calibrations("b1", "sensor").await.unwrap().is_empty());
}

async fn each_run_keeps_its_zero_and_calibration(engine: Engine) {
    let (_place, store) = temp_store(engine).await;
    let sensor = "daq.measured_torque";
    let c = store
        .add_calibration(&cal("b1", sensor, "C-1", "2027-01-10"))
        .await
        .unwrap();
    let r1 = run_of(&store, "b1").await;
    let r2 = run_of(&store, "b1").await;
    let other = run_of(&store, "b2").await;
    let used = RunSensor {
        sensor: sensor.into(),
        calibration_id: Some(c),
        ..RunSensor::default()
    };
    store.put_run_sensor(r1, &used).await.unwrap();
    store.set_run_zero(r1, sensor, 0.011).await.unwrap();
    // A run that has not measured its zero yet is no point of the drift.
    store.put_run_sensor(r2, &used).await.unwrap();
    assert_eq!(store.run_zeros("b1", sensor, 10).await.unwrap().len(), 1);
    store.set_run_zero(r2, sensor, 0.013).await.unwrap();
    store.set_run_zero(other, sensor, 9.0).await.unwrap();
    let none = RunSensor {
        sensor: "sensor".into(),
        overdue: true,
        note: Some("no calibration on record".into()),
        ..RunSensor::default()
    };
    store.put_run_sensor(r2, &none).await.unwrap();
    let r2_sensors = store.run_sensors(r2).await.unwrap();
    assert_eq!(r2_sensors.len(), 2);
    assert_eq!(
        r2_sensors[0],
        RunSensor {
            zero: Some(0.013),
            ..used
        }
    );
    assert_eq!(r2_sensors[1], none);
    let zeros = store.run_zeros("b1", sensor, 10).await.unwrap();
    let got: Vec<(i64, f64, Option<i64>)> = zeros
        .iter()
        .map(|z| (z.run_id, z.zero, z.calibration_id))
        .collect();
    assert_eq!(got, [(r2, 0.013, Some(c)), (r1, 0.011, Some(c))]);
    assert_eq!(store.run_zeros("b1", sensor, 1).await.unwrap().len(), 1);
    assert!(store.set_run_zero(r1, sensor, f64::INFINITY).await.is_err());
}

/// A bench's calibrations and its runs' sensor rows reach the lab with the runs, the ids
/// translated to the lab's; a second push copies nothing again.
async fn a_push_takes_the_calibrations_and_each_runs_zero(engine: Engine) {
    let (_b, bench) = temp_store(Engine::Sqlite).await;
    let (_l, lab) = temp_store(engine).await;
    let sensor = "daq.measured_torque";
    // The lab numbers its own: it already holds another bench's calibration.
    lab.add_calibration(&cal("b9", sensor, "C-9", "2027-01-10"))
        .await
        .unwrap();
    let c = bench
        .add_calibration(&cal("b1", sensor, "C-1", "2027-01-10"))
        .await
        .unwrap();
    let run = run_of(&bench, "b1").await;
    let used = RunSensor {
        sensor: sensor.into(),
        calibration_id: Some(c),
        overdue: true,
        note: Some("allowed overdue".into()),
        zero: None,
    };
    bench.put_run_sensor(run, &used).await.unwrap();
    bench.set_run_zero(run, sensor, 0.011).await.unwrap();
    bench
        .finish_run(run, RunStatus::Completed, None)
        .await
        .unwrap();

    let report = bench.push(&lab, &PushOptions::default()).await.unwrap();
    assert_eq!(
        (report.calibrations.pushed, report.run_sensors.pushed),
        (1, 1)
    );
    let there = report.pushed[0].target_id.unwrap();
    let theirs = lab.calibrations("b1", sensor).await.unwrap();
    let ours = bench.calibrations("b1", sensor).await.unwrap();
    assert_eq!(theirs.len(), 1);
    assert_ne!(theirs[0].id, c, "the lab's own id");
    assert_eq!(
        run_store::Calibration {
            id: c,
            ..theirs[0].clone()
        },
        ours[0]
    );
    assert_eq!(
        lab.run_sensors(there).await.unwrap(),
        [RunSensor {
            calibration_id: Some(theirs[0].id),
            zero: Some(0.011),
            ..used
        }]
    );
    let zeros = lab.run_zeros("b1", sensor, 10).await.unwrap();
    assert_eq!(
        zeros[0].at,
        bench.run_zeros("b1", sensor, 10).await.unwrap()[0].at
    );

    let again = bench.push(&lab, &PushOptions::default()).await.unwrap();
    assert_eq!(
        (again.calibrations.pushed, again.calibrations.skipped),
        (0, 1)
    );
    assert_eq!(
        (again.run_sensors.pushed, again.run_sensors.skipped),
        (0, 1)
    );
    assert_eq!(lab.calibrations("b1", sensor).await.unwrap().len(), 1);
}

on_both_engines!(
    the_newest_calibration_is_current,
    bad_calibrations_are_refused_naming_the_field,
    each_run_keeps_its_zero_and_calibration,
    a_push_takes_the_calibrations_and_each_runs_zero,
);

#[test]
fn the_drift_is_the_slope_per_day_and_the_spread() {
    let z = |run_id, zero, at: &str| RunZero {
        run_id,
        zero,
        calibration_id: None,
        at: at.into(),
    };
    // 10, 12, 13 mV on days 0, 2, 3: a least-squares slope of 1 mV a day; newest first.
    let zeros = [
        z(3, 0.013, "2026-03-04T00:00:00.000Z"),
        z(2, 0.012, "2026-03-03T00:00:00.000Z"),
        z(1, 0.010, "2026-03-01T00:00:00.000Z"),
    ];
    let d = zero_drift(&zeros);
    assert_eq!(d.runs, 3);
    let slope = d.slope_per_day.unwrap();
    assert!((slope - 0.001).abs() < 1e-12, "{slope}");
    assert!((d.spread.unwrap() - 0.003).abs() < 1e-12);
    let one = zero_drift(&zeros[..1]);
    assert_eq!((one.slope_per_day, one.spread), (None, Some(0.0)));
    assert_eq!(zero_drift(&[]).spread, None);
}
