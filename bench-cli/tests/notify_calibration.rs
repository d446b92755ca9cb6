//! `calibration_due` (issue 42): `bench serve` tells a webhook once when a torque sensor's
//! calibration comes within `calibration_due_days` of its due date; a restart does not tell
//! it again, and a newer calibration is told when its own time comes.

use crate::daemon::Daemon;
use crate::notify::{config_with, next, webhook};
use chrono::{Days, NaiveDate};
use run_store::{NewCalibration, Store};

/// Records a calibration of bench `sim`'s Modbus sensor due `due_in` days from today.
fn calibrated(store: &Store, rt: &tokio::runtime::Runtime, due_in: u64, cert: &str) -> i64 {
    let today: NaiveDate = chrono::Utc::now().date_naive();
    let c = NewCalibration {
        bench_id: "sim".into(),
        sensor: "sensor".into(),
        sensitivity: 1.0,
        offset: 0.0,
        certificate: cert.into(),
        calibrated: today - Days::new(300),
        due: today + Days::new(due_in),
        recorded_by: "ada".into(),
    };
    rt.block_on(store.add_calibration(&c)).unwrap()
}

#[test]
fn a_calibration_coming_due_is_told_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open(db.to_str().unwrap())).unwrap();
    let first = calibrated(&store, &rt, 10, "C-1");
    let (url, rx) = webhook(vec![]);
    let config = config_with(
        dir.path(),
        &format!(
            "[[notify]]\nurl = \"{url}\"\nevents = [\"calibration_due\"]\n\
             calibration_due_days = 30\n"
        ),
    );
    let args = ["--sim", "--config", config.to_str().unwrap()];
    {
        let _daemon = Daemon::in_process(&args, &db);
        let n = next(&rx);
        assert_eq!(n["event"], "calibration_due", "{n}");
        assert_eq!(n["bench_id"], "sim", "{n}");
        let c = &n["calibration"];
        assert_eq!(
            (&c["sensor"], &c["calibration_id"], &c["due_in_days"]),
            (&"sensor".into(), &first.into(), &10.into()),
            "{n}"
        );
        let text = n["text"].as_str().unwrap();
        assert!(
            text.contains("sensor sensor (certificate C-1) is due"),
            "{text}"
        );
    }
    // Restarted: the first is not told again; the next told is a newer calibration coming due.
    let _daemon = Daemon::in_process(&args, &db);
    let second = calibrated(&store, &rt, 3, "C-2");
    let n = next(&rx);
    assert_eq!(n["calibration"]["calibration_id"], second, "{n}");
    rt.block_on(store.close());
}

#[test]
fn the_days_go_with_the_event() {
    let base = bench_daemon::config::SIM_TOML;
    for (extra, says) in [
        (
            "events = [\"estop\"]\ncalibration_due_days = 10",
            "does not name calibration_due",
        ),
        (
            "events = [\"calibration_due\"]\ncalibration_due_days = 0",
            "calibration_due_days = 0 must be within 1..=365",
        ),
    ] {
        let text = format!("{base}\n[[notify]]\nurl = \"http://127.0.0.1:9/h\"\n{extra}\n");
        let e = bench_daemon::config::BenchConfig::parse(&text, "bench.toml").unwrap_err();
        assert!(e.to_string().contains(says), "{extra}: {e}");
        assert!(e.to_string().contains("[[notify]] #1"), "{e}");
    }
}
