//! A run's own log (checks and read-backs) apart from its interruption log: appended to
//! separately, copied by a push, and split out of the interruption logs of older stores
//! (migration 0010) on both engines.

use crate::util::{Engine, new_run, older_store, sql_text, temp_store};
use run_store::{PushOptions, RunStatus, Store};

const WATCHDOG: &str = "drive communication watchdog 0.25 s (read back)";
const BREACH: &str = "limit breach: measured velocity 1.2 rad/s beyond the limit ±1 rad/s";
const SAFE: &str = "drive disabled, confirmed by its status 0x0233 812 µs after the stop decision";
const UNVERIFIED: &str =
    "ran with unverified drive profile signals (torque_command; allow_unverified = true)";

/// An aborted run whose interruption log mixes notes and interruptions, as older daemons wrote
/// it, and a completed one with the watchdog line only.
fn old_runs() -> Vec<String> {
    let entry = |t: &str, reason: &str| {
        format!(r#"{{"at": "2026-11-01T10:00:00Z", "t": {t}, "reason": "{reason}"}}"#)
    };
    let aborted = format!(
        "[{}, {}, {}, {}]",
        entry("null", "drive connect settings written and read back"),
        entry("null", WATCHDOG),
        entry("3.5", BREACH),
        entry("3.5", SAFE),
    );
    let completed = format!(
        "[{}, {}]",
        entry("null", WATCHDOG),
        entry("null", UNVERIFIED)
    );
    [("aborted", aborted), ("completed", completed)]
        .iter()
        .enumerate()
        .map(|(k, (status, log))| {
            format!(
                "INSERT INTO runs (uuid, kind, name, spec, status, software_version,
                     interruption_log)
                 VALUES ('00000000-0000-4000-8000-{k:012}', 'prbs', 'old', '{{}}', '{status}',
                     'old', {})",
                sql_text(log)
            )
        })
        .collect()
}

fn reasons(log: &[run_store::LogEntry]) -> Vec<&str> {
    log.iter().map(|e| e.reason.as_str()).collect()
}

async fn an_older_store_keeps_only_interruptions_in_the_interruption_log(engine: Engine) {
    let (place, _older) = older_store(engine, "0010", &old_runs()).await;
    let store = Store::open(&place.location).await.unwrap();
    let (aborted, completed) = (store.run(1).await.unwrap(), store.run(2).await.unwrap());
    assert_eq!(reasons(&aborted.interruption_log), [BREACH, SAFE]);
    assert_eq!(aborted.interruption_log[0].t, Some(3.5));
    assert_eq!(
        reasons(&aborted.run_log),
        ["drive connect settings written and read back", WATCHDOG],
        "in their order"
    );
    assert!(completed.interruption_log.is_empty(), "{completed:?}");
    assert_eq!(reasons(&completed.run_log), [WATCHDOG, UNVERIFIED]);
    store.close().await;
}

async fn notes_go_to_the_run_log_and_travel_with_a_push(engine: Engine) {
    let (_b, bench) = temp_store(Engine::Sqlite).await;
    let (_l, lab) = temp_store(engine).await;
    let id = bench.create_run(&new_run("prbs", &[])).await.unwrap();
    bench.append_note(id, None, WATCHDOG).await.unwrap();
    bench.append_log(id, Some(1.25), BREACH).await.unwrap();
    bench.append_note(id, Some(2.0), UNVERIFIED).await.unwrap();
    bench
        .finish_run(id, RunStatus::Completed, None)
        .await
        .unwrap();
    let run = bench.run(id).await.unwrap();
    assert_eq!(reasons(&run.run_log), [WATCHDOG, UNVERIFIED]);
    assert_eq!(run.run_log[1].t, Some(2.0));
    assert_eq!(reasons(&run.interruption_log), [BREACH]);
    let json = serde_json::to_value(&run).unwrap();
    assert_eq!(json["run_log"][0]["reason"], WATCHDOG, "{json}");
    assert!(matches!(
        bench.append_note(id + 1, None, "x").await,
        Err(run_store::Error::RunNotFound { .. })
    ));

    bench.push(&lab, &PushOptions::default()).await.unwrap();
    let there = lab.list_runs(&Default::default()).await.unwrap().runs[0].id;
    let copy = lab.run(there).await.unwrap();
    assert_eq!(copy.run_log, run.run_log);
    assert_eq!(copy.interruption_log, run.interruption_log);
}

crate::on_both_engines!(
    an_older_store_keeps_only_interruptions_in_the_interruption_log,
    notes_go_to_the_run_log_and_travel_with_a_push,
);
