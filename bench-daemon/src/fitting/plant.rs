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
