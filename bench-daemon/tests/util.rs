//! Runs the `bench` binary.

use std::process::{Command, Output};

/// Runs `bench` with `args`; returns its output.
pub fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(args)
        .output()
        .expect("run bench")
}

/// Stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs the spec `experiments/specs/<spec_file>` on the simulated plant ([`bench_sim::Sim`],
/// plain data, torque mode, true friction `truth`) the daemon's way: a [`Sequencer`] and an
/// [`OuterLoop`] at the plan's period, sensor and motor torque as the devices report them.
/// Records the run into `store` with its analysis results; returns its id and the sim.
pub async fn record_sim_run(
    store: &run_store::Store,
    spec_file: &str,
    truth: &friction::registry::ModelSpec,
) -> (i64, bench_sim::Sim) {
    use bench_sim::{Action, Mode, Sim, SimParams};
    use experiments::{BenchLimits, Flags, LoopGains, Measurement, OuterLoop, Sequencer, Spec};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/specs");
    let spec = Spec::from_json(&std::fs::read_to_string(dir.join(spec_file)).unwrap()).unwrap();
    let limits = BenchLimits::sim_default();
    let plan = spec.plan(&limits).unwrap();
    let mut sim = Sim::new(SimParams::default(), truth).unwrap();
    sim.apply(Action::SetMode(Mode::Torque));
    sim.apply(Action::Enable);
    let (mut seq, mut outer) = (Sequencer::new(), OuterLoop::new(LoopGains::default()));
    let mut samples = Vec::new();
    loop {
        let fb = sim.feedback();
        let m = Measurement {
            t: samples.len() as f64 * limits.period_s,
            x: fb.position_rad,
            v: fb.velocity_rad_s,
        };
        let Some(tick) = seq.tick(&plan, &m) else {
            break;
        };
        let u = outer.torque(&tick, &m, limits.period_s, limits.torque_nm);
        let flags = if tick.started {
            Flags::SEGMENT_START
        } else {
            Flags::default()
        };
        samples.push(experiments::Sample {
            t: m.t,
            x: m.x,
            v: m.v,
            u_cmd: u,
            torque_motor: fb.motor_torque_nm,
            torque_sensor: fb.sensor_torque_nm,
            segment: tick.segment as u32,
            flags,
        });
        sim.apply(Action::Torque(u));
        sim.advance(limits.period_s);
    }
    let results = spec.kind.analyse(&plan, &samples).unwrap();
    let run = run_store::NewRun {
        kind: spec.kind.name().into(),
        name: spec.name.clone(),
        spec: spec.to_value(),
        bench_config: serde_json::json!({ "limits": limits }),
        software_version: "test".into(),
        period_s: Some(limits.period_s),
        ..run_store::NewRun::default()
    };
    let id = store.create_run(&run).await.unwrap();
    let cfg = run_store::RecorderConfig::default();
    let recorder = run_store::Recorder::start(store, id, cfg).await.unwrap();
    for (k, chunk) in samples.chunks(1000).enumerate() {
        let mut batch = run_store::Batch::with_capacity(k as u64 * 1000, chunk.len(), 0);
        for s in chunk {
            let stored = run_store::Sample {
                t: s.t,
                x: s.x,
                v: s.v,
                u_cmd: s.u_cmd,
                torque_motor: s.torque_motor,
                torque_sensor: s.torque_sensor,
                segment: s.segment,
                flags: s.flags.0,
            };
            batch.push(stored, &[]);
        }
        recorder.sender().send(batch).await.unwrap();
    }
    recorder
        .close(run_store::Finish::completed(None))
        .await
        .unwrap();
    let results = serde_json::to_value(&results).unwrap();
    store.save_results(id, &results).await.unwrap();
    (id, sim)
}

/// Serialises the tests that run the real-time loop against the simulated bench (`bench run`,
/// `bench serve`, `bench perf loop`): each one runs a 10 kHz plant, a 1 kHz control loop and
/// its Modbus server, which is what a bench PC does, one bench at a time. Two of them side
/// by side on a 2-core CI machine starve each other's Modbus replies. Hold the guard for the
/// whole test.
pub fn one_bench_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SLOT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SLOT.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
