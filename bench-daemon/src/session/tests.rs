use super::*;

#[test]
fn a_queued_run_may_move_ports_but_not_change_its_bench() {
    let loaded = Loaded::sim("127.0.0.1:1");
    let mut snapshot = serde_json::to_value(&loaded.config).unwrap();
    snapshot["source"] = "builtin:sim".into();
    snapshot["lockstep_resolved"] = serde_json::json!([]);
    assert_eq!(same_bench(&snapshot, &loaded), Ok(()));
    // The simulated bench listens on another port after a restart: the same bench.
    let moved = Loaded::sim("127.0.0.1:2");
    assert_eq!(same_bench(&snapshot, &moved), Ok(()));
    // Other limits or safety settings: refused, naming the sections.
    let mut changed = loaded.clone();
    changed.config.limits.torque_nm = 5.0;
    changed.config.safety.watchdog_s = 1.0;
    let err = same_bench(&snapshot, &changed).unwrap_err();
    assert!(err.contains("[limits], [safety] differ"), "{err}");
    // Lockstep models may change: the run steps those of its snapshot.
    let mut models = loaded.clone();
    models.config.lockstep.models = vec!["coulomb".into()];
    assert_eq!(same_bench(&snapshot, &models), Ok(()));
}

#[test]
fn a_drive_without_a_watchdog_is_refused_unless_waived() {
    let mut loaded = Loaded::sim("127.0.0.1:1");
    assert!(loaded.check_watchdog().is_ok());
    loaded.config.safety.watchdog_s = 0.0;
    let err = loaded.check_watchdog().unwrap_err().0;
    assert!(
        err.contains("watchdog_s = 0") && err.contains("allow_no_drive_watchdog"),
        "{err}"
    );
    loaded.config.safety.allow_no_drive_watchdog = true;
    assert!(loaded.check_watchdog().is_ok());
    assert!(matches!(
        loaded.watchdog_rule(),
        crate::config::WatchdogRule::Waived(w) if w.contains("WITHOUT a drive communication watchdog")
    ));
}
