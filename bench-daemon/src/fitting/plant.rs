//! The run's own `[plant]` in a fit: the known load its bench.toml states
//! (docs/src/known-load.md).

use friction::identify::procedures::{Given, Procedure};
use run_store::Run;
use serde_json::Value;

/// Puts the run's `[plant] load` into `given.load` when the procedure takes a load (its
/// options declare `load`; one that also takes `replay` only in a torque replay, as
/// `output_error` and `aep`) and `given` names none; the note says so.
pub fn load_from_run(run: &Run, procedure: &Procedure, given: &mut Given) -> Option<String> {
    if given.contains_key("load") || !procedure.takes("load") {
        return None;
    }
    let load = run.bench_config.get("plant")?.get("load")?;
    let torque = given.get("replay").and_then(Value::as_str) == Some("torque");
    if procedure.takes("replay") && !torque {
        return None;
    }
    given.insert("load".into(), load.clone());
    Some(format!(
        "given.load = {load}: the [plant] load of run {}'s bench.toml",
        run.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run_with(bench_config: Value) -> Run {
        serde_json::from_value(json!({
            "id": 7, "kind": "prbs", "name": "p", "status": "completed",
            "created_at": "2026-01-01T00:00:00Z", "spec": {}, "bench_config": bench_config,
            "device_profiles": {}, "software_version": "0", "models": [],
            "timing": run_store::TimingStats::default(), "dropped_batches": 0, "dropped_samples": 0, "sample_count": 0,
            "interruption_log": [], "results": null,
        }))
        .unwrap()
    }

    fn registered(name: &str) -> &'static Procedure {
        friction::identify::procedures::procedure(name).unwrap()
    }

    #[test]
    fn the_runs_load_is_given_where_the_procedure_takes_one() {
        let (idim, oe) = (registered("idim_ls"), registered("output_error"));
        let arm = json!({"kind": "pendulum", "mass": 1.0, "length": 0.2});
        let run = run_with(json!({"plant": {"load": arm}}));
        let mut g = Given::new();
        let note = load_from_run(&run, idim, &mut g).unwrap();
        assert_eq!(g["load"], arm);
        assert!(note.contains("run 7's bench.toml"), "{note}");
        // A velocity replay takes no load; a torque replay does.
        let mut g = Given::new();
        assert!(load_from_run(&run, oe, &mut g).is_none());
        g.insert("replay".into(), json!("torque"));
        assert!(load_from_run(&run, oe, &mut g).is_some());
        // The user's own load wins; a bench without [plant] gives none.
        let mine = json!({"kind": "constant", "force": 2.0});
        let mut g = Given::new();
        g.insert("load".into(), mine.clone());
        assert!(load_from_run(&run, idim, &mut g).is_none());
        assert_eq!(g["load"], mine);
        let mut g = Given::new();
        assert!(load_from_run(&run_with(json!({})), idim, &mut g).is_none());
        assert!(g.is_empty());
        // Every procedure whose options declare a load takes the run's (power_rls as well);
        // one without a load option takes none.
        let mut g = Given::new();
        assert!(load_from_run(&run, registered("power_rls"), &mut g).is_some());
        let mut g = Given::new();
        assert!(load_from_run(&run, registered("static_curve"), &mut g).is_none());
        assert!(g.is_empty());
    }
}
