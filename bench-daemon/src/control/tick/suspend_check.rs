//! The tick's check at a segment's start: whether a `[[suspend]]` condition holds, so the run
//! pauses before the segment (the pause itself is the shell's, `control::pause`).

use super::LoopState;
use crate::config::SuspendRule;
use crate::control::io::BenchIo;
use crate::control::suspend::Decision;

/// Reads every condition (`None` where a read failed: not clear).
pub(in crate::control) async fn readings(
    rules: &[SuspendRule],
    io: &mut impl BenchIo,
) -> Vec<Option<f64>> {
    let mut values = Vec::with_capacity(rules.len());
    for r in rules {
        let (device, name) = r.target();
        values.push(io.read_signal(device, name).await.ok());
    }
    values
}

fn shown(value: Option<f64>) -> String {
    value.map_or_else(|| "unreadable".into(), |v| format!("{v:.1}"))
}

/// Whether `segment` depends on the one before it (a settle before its measurement, a slide or
/// a dwell before its breakaway ramp): no pause comes between them, the run pauses before the
/// pair.
fn prepared_by_previous(state: &LoopState<'_>, segment: usize) -> bool {
    use experiments::Role;
    segment > 0
        && matches!(
            state.plan.segments[segment - 1].tag.role,
            Role::Settle | Role::Slide | Role::Dwell
        )
}

/// At the start of `segment` (run time `now`): whether a condition holds, so the run pauses
/// before it; the pause's first log line is written here.
pub(super) async fn suspend_before(
    state: &mut LoopState<'_>,
    io: &mut impl BenchIo,
    segment: usize,
    now: f64,
) -> bool {
    if state.rules.is_empty() || prepared_by_previous(state, segment) {
        return false;
    }
    let values = readings(state.rules, io).await;
    let Decision::Pause { rule, value } =
        state.suspenders.decide(state.rules, &values, io.clock_s())
    else {
        return false;
    };
    let r = &state.rules[rule];
    state.log.push((
        Some(now),
        format!(
            "suspended before '{}': {} read {}; the drive goes to its safe state until the \
             conditions read clear for {} s (at most {} s)",
            state.plan.segments[segment].label,
            r.describe(),
            shown(value),
            state.rules.iter().map(|r| r.hold_s).fold(0.0, f64::max),
            r.suspended_timeout_s
        ),
    ));
    true
}
