//! The run's own `[plant]` in a fit: the known load its bench.toml states
//! (docs/src/known-load.md).

use friction::identify::procedures::Given;
use run_store::Run;
use serde_json::Value;

/// Puts the run's `[plant] load` into `given.load` when the procedure takes a load (`idim_ls`;
/// `output_error` and `aep` in a torque replay) and `given` names none; the note says so.
pub fn load_from_run(run: &Run, procedure: &str, given: &mut Given) -> Option<String> {
    if given.contains_key("load") {
        return None;
    }
    let load = run.bench_config.get("plant")?.get("load")?;
    let torque = given.get("replay").and_then(Value::as_str) == Some("torque");
    let takes = match procedure {
        "idim_ls" => true,
        "output_error" | "aep" => torque,
        _ => false,
    };
    if !takes {
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

    #[test]
    fn the_runs_load_is_given_where_the_procedure_takes_one() {
        let arm = json!({"kind": "pendulum", "mass": 1.0, "length": 0.2});
        let run = run_with(json!({"plant": {"load": arm}}));
        let mut g = Given::new();
        let note = load_from_run(&run, "idim_ls", &mut g).unwrap();
        assert_eq!(g["load"], arm);
        assert!(note.contains("run 7's bench.toml"), "{note}");
        // A velocity replay takes no load; a torque replay does.
        let mut g = Given::new();
        assert!(load_from_run(&run, "output_error", &mut g).is_none());
        g.insert("replay".into(), json!("torque"));
        assert!(load_from_run(&run, "output_error", &mut g).is_some());
        // The user's own load wins; a bench without [plant] gives none.
        let mine = json!({"kind": "constant", "force": 2.0});
        let mut g = Given::new();
        g.insert("load".into(), mine.clone());
        assert!(load_from_run(&run, "idim_ls", &mut g).is_none());
        assert_eq!(g["load"], mine);
        let mut g = Given::new();
        assert!(load_from_run(&run_with(json!({})), "idim_ls", &mut g).is_none());
        assert!(g.is_empty());
    }
}
