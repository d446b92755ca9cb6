//! `trend_out_of_limits` (issue 42): `bench serve` tells a webhook when a new point of a
//! watched trend falls outside its control limits, once, and never of a point that was in the
//! store before it started.

use crate::cli_trends::fill_on;
use crate::daemon::Daemon;
use crate::notify::{config_with, next, webhook};
use run_store::{NewRun, Store};
use serde_json::json;

/// A run of bench `sim` with a LuGre fit of `fs`, as `bench fit` stores it; its id.
fn fitted(store: &Store, rt: &tokio::runtime::Runtime, fs: f64) -> i64 {
    rt.block_on(async {
        let run = NewRun {
            kind: "constant_velocity_sweep".into(),
            name: format!("fs {fs}"),
            bench_config: json!({"bench_id": "sim"}),
            software_version: "test".into(),
            ..NewRun::default()
        };
        let id = store.create_run(&run).await.unwrap();
        let provenance = json!({"runs": [id], "fitted": {"fs": fs}, "std_errors": {"fs": 0.004}});
        let params = json!({"fs": fs, "fc": 1.0});
        store
            .add_parameter_set("fit", "lugre", &params, &provenance)
            .await
            .unwrap();
        id
    })
}

#[test]
fn a_new_fit_outside_its_limits_is_told_once_and_the_old_one_never() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    // Twelve nights of bench `sim`: fs 1.50/1.52, the twelfth 1.80 (outside, but old news).
    let old = fill_on(db.to_str().unwrap(), "sim");
    let (url, rx) = webhook(vec![]);
    let config = config_with(
        dir.path(),
        &format!(
            "[[notify]]\nurl = \"{url}\"\nevents = [\"trend_out_of_limits\"]\n\
             trends = [{{ param = \"fs\", model = \"lugre\" }}]\n"
        ),
    );
    let _daemon = Daemon::in_process(&["--sim", "--config", config.to_str().unwrap()], &db);

    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(Store::open(db.to_str().unwrap())).unwrap();
    let inside = fitted(&store, &rt, 1.51);
    let outside = fitted(&store, &rt, 2.0);

    let n = next(&rx);
    assert_eq!(n["event"], "trend_out_of_limits", "{n}");
    assert_eq!(
        n["run_id"], outside,
        "the first told is the new point, not run {}",
        old[11]
    );
    assert_eq!(n["bench_id"], "sim");
    let t = &n["trend"];
    assert_eq!(
        (&t["param"], &t["model"], &t["value"]),
        (&json!("fs"), &json!("lugre"), &json!(2.0))
    );
    // The baseline is the first ten nights: 1.51 ± 3 × 0.0105.
    let (lower, upper) = (t["lower"].as_f64().unwrap(), t["upper"].as_f64().unwrap());
    assert!(
        (1.47..1.49).contains(&lower) && (1.53..1.55).contains(&upper),
        "{t}"
    );
    assert!(
        n["text"].as_str().unwrap().contains("outside its limits"),
        "{n}"
    );
    // Told once: the next point outside is the next one fitted, not this one again.
    let again = fitted(&store, &rt, 0.5);
    let n = next(&rx);
    assert_eq!(
        n["run_id"], again,
        "{n} (run {inside} is inside its limits)"
    );
    rt.block_on(store.close());
}

#[test]
fn watched_trends_and_the_event_go_together() {
    let base = bench_daemon::config::SIM_TOML;
    for (extra, says) in [
        (
            "events = [\"trend_out_of_limits\"]",
            "trend_out_of_limits needs trends",
        ),
        (
            "events = [\"estop\"]\ntrends = [{ param = \"fs\" }]",
            "does not name trend_out_of_limits",
        ),
        (
            "events = [\"trend_out_of_limits\"]\ntrends = [{ param = \"fs\", band = 2.0 }]",
            "trends[0].band",
        ),
    ] {
        let text = format!("{base}\n[[notify]]\nurl = \"http://127.0.0.1:9/h\"\n{extra}\n");
        let e = bench_daemon::config::BenchConfig::parse(&text, "bench.toml").unwrap_err();
        assert!(e.to_string().contains(says), "{extra}: {e}");
        assert!(e.to_string().contains("[[notify]] #1"), "{e}");
    }
}
