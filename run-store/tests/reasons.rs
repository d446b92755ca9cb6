//! Stop reasons: stored as a code beside the text, copied by a push, and migrated into codes
//! from the texts of stores made before codes existed (migration 0008) on both engines.

use crate::util::{Engine, new_run, older_store, sql_text, temp_store};
use run_store::{Reason, ReasonCode, RunStatus, Store};

/// Texts older daemons stored, and the code each must read as after the upgrade.
const OLD_REASONS: [(&str, &str); 12] = [
    (
        "limit breach: measured velocity 1.2000 rad/s beyond the limit ±1 rad/s (+10 % margin)",
        "limit_breach",
    ),
    ("e-stop: operator", "estop"),
    ("SIGINT", "daemon_signal"),
    ("abort requested", "operator_abort"),
    ("drive fault (code 0x2310)", "drive_fault"),
    (
        "the drive has a latched fault (code 0x8130): an operator clears it",
        "drive_fault",
    ),
    ("comms fault: torque sensor: timeout", "comms_fault"),
    (
        "torque sensor stall: no new sample for 51 ms",
        "sensor_stall",
    ),
    ("panic in the control loop: boom", "panic"),
    (
        "the daemon stopped while the run was running; samples up to the last commit are kept",
        "interrupted",
    ),
    (
        "could not start: the bench configuration changed",
        "not_started",
    ),
    ("something a newer daemon said", "other"),
];

/// One failed run per old reason text, in order, as an older daemon stored it.
fn old_runs() -> Vec<String> {
    OLD_REASONS
        .iter()
        .enumerate()
        .map(|(k, (text, _))| {
            format!(
                "INSERT INTO runs (uuid, kind, name, spec, status, status_reason, software_version)
                 VALUES ('00000000-0000-4000-8000-{k:012}', 'prbs', 'old', '{{}}', 'failed', {},
                 'old')",
                sql_text(text)
            )
        })
        .collect()
}

async fn an_older_store_is_migrated_with_each_text_mapped_to_its_code(engine: Engine) {
    let (place, _older) = older_store(engine, "0008", &old_runs()).await;
    let store = Store::open(&place.location).await.unwrap();
    let page = store
        .list_runs(&run_store::RunFilter::default())
        .await
        .unwrap();
    let mut ids: Vec<i64> = page.runs.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    assert_eq!(ids.len(), OLD_REASONS.len());
    for (id, (text, code)) in ids.into_iter().zip(OLD_REASONS) {
        let run = store.run(id).await.unwrap();
        assert_eq!(run.status_reason.as_deref(), Some(text), "the text is kept");
        assert_eq!(run.reason_code.map(|c| c.as_str()), Some(code), "{text}");
    }
    store.close().await;
}

async fn a_reason_is_stored_with_its_code_and_pushed_with_it(engine: Engine) {
    let (_b, bench) = temp_store(Engine::Sqlite).await;
    let (_l, lab) = temp_store(engine).await;
    let id = bench.create_run(&new_run("prbs", &[])).await.unwrap();
    let reason = Reason::new(ReasonCode::DriveFault, "drive fault (code 0x2310)");
    bench
        .finish_run(id, RunStatus::Failed, Some(&reason))
        .await
        .unwrap();
    let run = bench.run(id).await.unwrap();
    assert_eq!(
        (run.status_reason.as_deref(), run.reason_code),
        (
            Some("drive fault (code 0x2310)"),
            Some(ReasonCode::DriveFault)
        )
    );
    let json = serde_json::to_value(&run).unwrap();
    assert_eq!(json["reason_code"], "drive_fault", "{json}");
    let done = bench.create_run(&new_run("prbs", &[])).await.unwrap();
    bench
        .finish_run(done, RunStatus::Completed, None)
        .await
        .unwrap();
    assert_eq!(bench.run(done).await.unwrap().reason_code, None);

    let report = bench
        .push(&lab, &run_store::PushOptions::default())
        .await
        .unwrap();
    let there = report.pushed[0].target_id.unwrap();
    assert_eq!(
        lab.run(there).await.unwrap().reason_code,
        Some(ReasonCode::DriveFault)
    );
}

crate::on_both_engines!(
    an_older_store_is_migrated_with_each_text_mapped_to_its_code,
    a_reason_is_stored_with_its_code_and_pushed_with_it,
);
