//! `bench runs resume`: a run cut short is continued from its last completed segment, and the
//! chain reads as one run (one Stribeck table, each point from the run that measured it whole).

use crate::util::{SimBench, bench, db_in, show, stderr, stdout};
use bench_daemon::control::{Control, Devices, SimIo, Status};
use bench_daemon::resume;
use bench_daemon::session::{self, Checked, Finished, Watchers};
use experiments::Format;
use run_store::{SampleQuery, Store};
use serde_json::Value;

use std::sync::Arc;

/// A short Stribeck sweep: 12 segments of 0.3 s.
const SWEEP: &str = r#"{"kind": "constant_velocity_sweep", "name": "resumed sweep",
    "params": {"velocities": [0.5, 1.0, 1.5], "directions": "both",
               "settle_s": 0.3, "measure_s": 0.3, "repeats": 1}}"#;

/// Runs `checked` on the simulated plant in simulated time; its drive trips at `trip_at` \[s\]
/// of plant time (None: the run goes to its end).
async fn run_sim(store: &Store, b: &SimBench, checked: &Checked, trip_at: Option<f64>) -> Finished {
    let id = session::create(store, &b.loaded, checked).await.unwrap();
    let watchers = Watchers {
        control: Arc::new(Control::new()),
        status: tokio::sync::watch::channel(Status::default()).0,
        live: None,
        created: None,
    };
    let sim = bench_sim::Sim::new(b.params.clone(), &b.truth).unwrap();
    let io = SimIo::new(sim);
    let io = match trip_at {
        Some(t) => io.with_trip_at(t),
        None => io,
    };
    session::execute_run_on(
        store,
        &b.loaded,
        checked,
        id,
        watchers,
        Devices::Simulated(Box::new(io)),
    )
    .await
    .unwrap()
}

/// `(setpoint, mean torque)` of each Stribeck point of an analysis.
fn points(results: &Value) -> Vec<(f64, f64)> {
    ["positive", "negative"]
        .iter()
        .flat_map(|side| results[side].as_array().unwrap().clone())
        .map(|p| {
            (
                p["setpoint_rad_s"].as_f64().unwrap(),
                p["mean_torque_nm"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Each point of `got` within 0.5 % of the same setpoint's in `want`; as many points.
fn same_table(got: &[(f64, f64)], want: &[(f64, f64)]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for ((v, t), (v0, t0)) in got.iter().zip(want) {
        assert_eq!(v, v0);
        assert!(
            (t - t0).abs() <= 0.005 * t0.abs(),
            "v = {v}: {t} N m resumed, {t0} N m uninterrupted"
        );
    }
}

/// How many times each plan segment starts in a chain's samples as the analysis reads them.
async fn starts_per_segment(store: &Store, id: i64, n: usize) -> Vec<usize> {
    let set = resume::chain_samples(store, id, &SampleQuery::default())
        .await
        .unwrap();
    let mut starts = vec![0; n];
    let mut last = None;
    for s in &set.samples {
        if last != Some(s.segment) {
            starts[s.segment as usize] += 1;
            last = Some(s.segment);
        }
    }
    starts
}

/// In how many runs of the chain from `root` each trial of `plan` (a measuring segment with
/// the settling segments that lead into it, [`experiments::Plan::trial_start`]) was measured
/// whole, read from each run's own stored samples (not through the chain reader, which keeps
/// each segment from one run by construction). A segment is whole in a run that holds its
/// samples and then moved on to another segment, or completed with it; a trial, when all its
/// segments are. A continuation runs a settling segment again before the measurement it
/// leads into: that is not a trial measured twice.
async fn whole_per_trial(store: &Store, root: i64, plan: &experiments::Plan) -> Vec<usize> {
    let n = plan.segments.len();
    let trials: Vec<usize> = (0..n).map(|s| plan.trial_start(s)).collect();
    let mut whole_trials = vec![0; n];
    for id in store.chain(root).await.unwrap() {
        let run = store.run(id).await.unwrap();
        let set = store.samples(id, &SampleQuery::default()).await.unwrap();
        let mut order: Vec<u32> = Vec::new();
        for s in &set.samples {
            if order.last() != Some(&s.segment) {
                order.push(s.segment);
            }
        }
        let ended = match run.status.as_str() {
            "completed" => order.len(),
            _ => order.len().saturating_sub(1),
        };
        let whole: Vec<usize> = order[..ended].iter().map(|&s| s as usize).collect();
        for trial in trials
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
        {
            let all = (0..n)
                .filter(|&s| trials[s] == trial)
                .all(|s| whole.contains(&s));
            if all {
                whole_trials[trial] += 1;
            }
        }
    }
    trials
        .iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|&t| whole_trials[t])
        .collect()
}

#[test]
fn a_sweep_resumed_twice_gives_one_table_with_each_point_measured_whole() {
    let b = SimBench::default();
    let checked = session::check(SWEEP, Format::Json, &b.loaded).unwrap();
    let n = checked.plan.segments.len();
    let dir = tempfile::tempdir().unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let whole = run_sim(&store, &b, &checked, None).await;
        let want = points(whole.results.as_ref().unwrap());

        let first = run_sim(&store, &b, &checked, Some(1.05)).await;
        assert_eq!(first.status.as_str(), "failed");
        let c1 = resume::continuation(&store, &b.loaded, first.run_id)
            .await
            .unwrap();
        let done1 = c1.resume.clone().unwrap().done;
        assert!(!done1.is_empty() && done1.len() < n, "{done1:?}");
        let second = run_sim(&store, &b, &c1, Some(1.35)).await;
        assert_eq!(second.status.as_str(), "failed");
        let c2 = resume::continuation(&store, &b.loaded, second.run_id)
            .await
            .unwrap();
        let done2 = c2.resume.clone().unwrap().done;
        assert!(done2.len() > done1.len(), "{done1:?} then {done2:?}");
        // The first run is continued already: resuming it again is refused, naming the next.
        let again = resume::continuation(&store, &b.loaded, first.run_id).await;
        assert!(
            again
                .unwrap_err()
                .to_string()
                .contains(&format!("already continued by run {}", second.run_id))
        );
        let third = run_sim(&store, &b, &c2, None).await;
        assert_eq!(third.status.as_str(), "completed");
        same_table(&points(third.results.as_ref().unwrap()), &want);
        assert_eq!(
            store.chain(first.run_id).await.unwrap(),
            vec![first.run_id, second.run_id, third.run_id]
        );
        assert_eq!(
            store.run(third.run_id).await.unwrap().continues,
            Some(second.run_id)
        );
        // Every segment once, from one run, whichever run of the chain is read.
        for id in [first.run_id, third.run_id] {
            assert_eq!(starts_per_segment(&store, id, n).await, vec![1; n]);
        }
        // And in the runs themselves: no continuation measured again what was whole before.
        let trials = whole_per_trial(&store, first.run_id, &checked.plan).await;
        assert_eq!(trials, vec![1; trials.len()]);
        // A completed run has nothing to resume.
        let done = resume::continuation(&store, &b.loaded, third.run_id).await;
        assert!(done.unwrap_err().to_string().contains("it is completed"));
        store.close().await;
    });
}

#[test]
fn resuming_a_completed_or_missing_run_is_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let spec = dir.path().join("sweep.json");
    std::fs::write(&spec, SWEEP).unwrap();
    let o = bench(&[
        "run",
        spec.to_str().unwrap(),
        "--sim",
        "--virtual-time",
        "--db",
        &db,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = stdout(&o).lines().next().unwrap()[4..].to_string();
    let again = bench(&[
        "runs",
        "resume",
        &id,
        "--sim",
        "--virtual-time",
        "--db",
        &db,
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("only an interrupted, failed or aborted run can be resumed"),
        "{}",
        stderr(&again)
    );
    let missing = bench(&["runs", "resume", "999", "--sim", "--db", &db]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("run 999 not found"),
        "{}",
        stderr(&missing)
    );
}

/// The sweep of the SIGKILL test: 10 trials (settle + measure) of 0.4 s on the simulated bench
/// in simulated time (`--virtual-time`): the kills strike at a sample count, and the plant sees
/// the same commands at the same plant times however loaded the machine is (on the real-time
/// bench a loaded machine shortens a settling segment by the ticks it delays).
const SWEEP_KILLED: &str = r#"{"kind": "constant_velocity_sweep", "name": "killed sweep",
    "params": {"velocities": [0.5, 0.8, 1.0, 1.5, 2.0], "directions": "both",
               "settle_s": 0.2, "measure_s": 0.2, "repeats": 1}}"#;

/// A small seeded generator (xorshift64*): the kill points are random but the same each run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Starts `bench ARGS` (a run or a resume) that sends itself SIGKILL when its loop has taken
/// `kill_at` samples (the daemon's test-only hook: the kill lands at the same point of the run
/// however loaded the machine is), and waits for it. The run's id, and whether it was killed
/// (false: it completed first).
fn run_killed_at(args: &[String], kill_at: u64) -> (i64, bool) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_bench"));
    cmd.args(args)
        .env("FRICTIONBENCH_TEST_SIGKILL_AT_SAMPLE", kill_at.to_string());
    let (mut child, _out, id) = crate::util::spawn_command(cmd);
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(9) => (id, true),
        _ => {
            assert!(status.success(), "run {id} ended with {status}");
            (id, false)
        }
    }
}

#[test]
fn a_sweep_killed_20_times_with_sigkill_and_resumed_gives_the_uninterrupted_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let spec = dir.path().join("sweep.json");
    std::fs::write(&spec, SWEEP_KILLED).unwrap();
    let spec = spec.to_str().unwrap();
    let json = |o: &std::process::Output| -> Value {
        serde_json::from_str(stdout(o).lines().last().unwrap_or("null")).unwrap()
    };
    let whole = bench(&[
        "run",
        spec,
        "--sim",
        "--virtual-time",
        "--db",
        &db,
        "--json",
    ]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let want = points(&json(&whole)["results"]);

    let mut rng = Rng(0x5eed_2026);
    let mut args: Vec<String> = ["run", spec, "--sim", "--virtual-time", "--db", &db]
        .map(String::from)
        .to_vec();
    let mut kills = Vec::new();
    let first = loop {
        let n = 60 + rng.below(470);
        let kill_at = if kills.len() == 20 { u64::MAX } else { n };
        let (id, killed) = run_killed_at(&args, kill_at);
        if !killed {
            break id;
        }
        let dead = show(&db, id);
        assert_eq!(dead["status"], "interrupted", "{dead}");
        kills.push((id, n, dead["sample_count"].as_i64().unwrap()));
        args = [
            "runs",
            "resume",
            &id.to_string(),
            "--sim",
            "--virtual-time",
            "--db",
            &db,
        ]
        .map(String::from)
        .to_vec();
    };
    assert_eq!(
        kills.len(),
        20,
        "the sweep completed after {} kills",
        kills.len()
    );
    for (id, n, committed) in &kills {
        eprintln!("killed run {id} after {n} samples ({committed} committed)");
    }
    let last = show(&db, first);
    assert_eq!(last["status"], "completed", "{last}");
    assert_eq!(
        last["chain"].as_array().unwrap().len(),
        21,
        "{}",
        last["chain"]
    );
    same_table(&points(&last["results"]), &want);
    let root = kills[0].0;
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Store::open_existing(std::path::Path::new(&db))
            .await
            .unwrap();
        let plan = experiments::Spec::parse(SWEEP_KILLED, Format::Json)
            .unwrap()
            .plan(&experiments::BenchLimits::sim_default())
            .unwrap();
        let n = plan.segments.len();
        // 0 segments missing, 0 measured twice.
        assert_eq!(starts_per_segment(&store, root, n).await, vec![1; n]);
        let trials = whole_per_trial(&store, root, &plan).await;
        assert_eq!(trials, vec![1; trials.len()]);
        store.close().await;
    });
}
