//! CSV and JSON export of a whole run.

use crate::util::{Engine, new_run, temp_store};
use run_store::{Batch, ExportOptions, Finish, Format, Recorder, RecorderConfig, Sample};

async fn csv_and_json_exports_hold_every_sample_and_one_column_per_model(engine: Engine) {
    let (_dir, store) = temp_store(engine).await;
    let id = store
        .create_run(&new_run("prbs", &["lugre", "dahl"]))
        .await
        .unwrap();
    let recorder = Recorder::start(&store, id, RecorderConfig::default())
        .await
        .unwrap();
    let mut b = Batch::with_capacity(0, 3, 2);
    let s = |t: f64, x: f64, seg: u32| Sample {
        t,
        x,
        v: 0.25,
        u_cmd: -1.5,
        torque_motor: 0.1,
        torque_sensor: 0.2,
        segment: seg,
        flags: 4,
    };
    b.push(s(0.0, 1.0 / 3.0, 0), &[0.5, -0.5]);
    b.push(
        Sample {
            torque_sensor: f64::NAN,
            ..s(0.001, 2.0, 1)
        },
        &[0.75, f64::NAN],
    );
    b.push(s(0.002, 3.0, 1), &[1.0, 1e-9]);
    recorder.sender().try_send(b).unwrap();
    recorder.close(Finish::completed(None)).await.unwrap();

    let mut csv = Vec::new();
    assert_eq!(store.export(id, Format::Csv, &mut csv).await.unwrap(), 3);
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(
        csv,
        "idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags,lugre,dahl\n\
         0,0,0.3333333333333333,0.25,-1.5,0.1,0.2,0,4,0.5,-0.5\n\
         1,0.001,2,0.25,-1.5,0.1,,1,4,0.75,\n\
         2,0.002,3,0.25,-1.5,0.1,0.2,1,4,1,0.000000001\n"
    );

    let mut json = Vec::new();
    store.export(id, Format::Json, &mut json).await.unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(doc["run"]["id"], id);
    assert_eq!(doc["run"]["status"], "completed");
    assert_eq!(doc["run"]["models"], serde_json::json!(["lugre", "dahl"]));
    assert_eq!(
        doc["columns"],
        serde_json::json!([
            "idx",
            "t",
            "x",
            "v",
            "u_cmd",
            "torque_motor",
            "torque_sensor",
            "segment",
            "flags",
            "lugre",
            "dahl"
        ])
    );
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[0],
        serde_json::json!([0, 0.0, 1.0 / 3.0, 0.25, -1.5, 0.1, 0.2, 0, 4, 0.5, -0.5])
    );
    assert_eq!(rows[1][6], serde_json::Value::Null);
    assert_eq!(rows[1][10], serde_json::Value::Null);
    assert_eq!(rows[2][10], 1e-9);

    // A run without samples exports a header / an empty row list.
    let empty = store
        .create_run(&new_run("prbs", &["lugre"]))
        .await
        .unwrap();
    let mut csv = Vec::new();
    assert_eq!(store.export(empty, Format::Csv, &mut csv).await.unwrap(), 0);
    assert_eq!(
        String::from_utf8(csv).unwrap(),
        "idx,t,x,v,u_cmd,torque_motor,torque_sensor,segment,flags,lugre\n"
    );
    let mut json = Vec::new();
    store.export(empty, Format::Json, &mut json).await.unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(doc["rows"], serde_json::json!([]));
}

async fn a_units_export_adds_one_comment_line_and_leaves_the_rest_identical(engine: Engine) {
    let (_dir, store) = temp_store(engine).await;
    let id = store
        .create_run(&new_run("prbs", &["lugre", "gms:x_plant"]))
        .await
        .unwrap();
    let units = ExportOptions { units: true };
    let mut plain = Vec::new();
    store.export(id, Format::Csv, &mut plain).await.unwrap();
    let mut with = Vec::new();
    store
        .export_with(id, Format::Csv, units, &mut with)
        .await
        .unwrap();
    let line = "# units: 1,s,rad,rad/s,N m | rad/s | rad,N m,N m,1,1,N m,rad\n";
    assert_eq!(
        String::from_utf8(with).unwrap(),
        format!("{line}{}", String::from_utf8(plain).unwrap())
    );

    let mut json = Vec::new();
    store
        .export_with(id, Format::Json, units, &mut json)
        .await
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(doc["units"][1], "s");
    assert_eq!(doc["units"][10], "rad");
    assert_eq!(
        doc["units"].as_array().unwrap().len(),
        doc["columns"].as_array().unwrap().len()
    );
}

crate::on_both_engines!(
    csv_and_json_exports_hold_every_sample_and_one_column_per_model,
    a_units_export_adds_one_comment_line_and_leaves_the_rest_identical,
);
