//! The tick path allocates nothing once a run is under way: an allocation is a trip into the
//! allocator's locks and, now and then, the kernel, at the moment the loop should be writing
//! its next command. Counted on the loop's thread with every model in lockstep, the recorder
//! writing to SQLite and a live client subscribed, as in a run of `bench serve`.

use super::sim_shell::SimRun;
use super::*;
use crate::config::Loaded;
use crate::session;
use run_store::{Recorder, RecorderConfig, Store};
use std::sync::Arc;

/// Ticks before counting starts: the first batches, the channels' first blocks and the
/// first live frames are allocated once per run.
const WARM_UP: u64 = 1500;

/// A sweep of four 1.5 s segments at 1 kHz (6000 ticks), all 25 models in lockstep.
fn all_models_sweep() -> (Loaded, session::Checked) {
    let mut loaded = Loaded::sim("127.0.0.1:0");
    loaded.config.lockstep.models = vec!["all".into()];
    let spec = experiments::Spec::from_value(serde_json::json!({
        "kind": "constant_velocity_sweep",
        "params": {"velocities": [0.5, 1.0], "directions": "both",
                   "settle_s": 1.0, "measure_s": 0.5, "repeats": 1}
    }))
    .unwrap();
    let checked = session::check_spec(spec, &loaded).unwrap();
    (loaded, checked)
}

#[test]
fn a_steady_tick_allocates_nothing_with_every_model_the_recorder_and_a_live_client() {
    let writer = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (loaded, checked) = all_models_sweep();
    let (store, recorder, models) = writer.block_on(async {
        let store = Store::open(dir.path().join("runs.db")).await.unwrap();
        let id = session::create(&store, &loaded, &checked).await.unwrap();
        let run = store.run(id).await.unwrap();
        let models = serde_json::from_value(run.bench_config["lockstep_resolved"].clone());
        let recorder = Recorder::start(&store, id, RecorderConfig::default()).await;
        (store, recorder.unwrap(), models.unwrap())
    });
    let (live, mut client) = tokio::sync::broadcast::channel(64);
    let sim = || {
        let truth = bench_sim::default_truth();
        bench_sim::Sim::new(bench_sim::SimParams::default(), &truth).unwrap()
    };
    let setup = LoopSetup {
        loaded,
        devices: Devices::Simulated(Box::new(SimIo::new(sim()))),
        plan: checked.plan.clone(),
        skip: Vec::new(),
        models,
        compensators: Vec::new(),
        recorder: Some(recorder.sender()),
        control: Arc::new(Control::new()),
        status: tokio::sync::watch::channel(Status::default()).0,
        live: Some((live, 20)),
    };
    let mut io = SimIo::new(sim());
    let rt = realtime::loop_runtime();
    let mut run = rt.block_on(SimRun::begin(&setup, &mut io)).unwrap();
    let (mut k, mut counted, mut allocating) = (0u64, 0u64, Vec::new());
    let outcome = loop {
        let mut end = None;
        let info = allocation_counter::measure(|| end = rt.block_on(run.step(&mut io)));
        if k >= WARM_UP && end.is_none() {
            counted += 1;
            if info.count_total > 0 {
                allocating.push((k, info.count_total, info.bytes_total));
            }
        }
        // The client reads what it is sent (its copies are its own allocations).
        while client.try_recv().is_ok() {}
        // The writer commits every 100 ms, 100 ticks at 1 kHz in real time; in simulated time
        // the loop would outrun it, so the test commits at that pace.
        if k % 100 == 99 {
            writer.block_on(recorder.flush()).unwrap();
        }
        if let Some(end) = end {
            break end;
        }
        k += 1;
    };
    let report = rt.block_on(run.finish(&setup, &mut io, outcome));
    assert_eq!(report.outcome, Outcome::Completed, "{:?}", report.log);
    assert!(counted > 4000, "{counted} ticks counted");
    assert!(
        allocating.is_empty(),
        "{} of {counted} steady ticks allocated (tick, allocations, bytes): {:?}",
        allocating.len(),
        &allocating[..allocating.len().min(20)]
    );
    writer.block_on(async {
        let finish = run_store::Finish::completed(Some(report.stats));
        recorder.close(finish).await.unwrap();
        store.close().await;
    });
}
