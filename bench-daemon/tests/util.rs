//! Runs the `bench` binary.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

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

pub fn spec(name: &str) -> String {
    format!("{}/../experiments/specs/{name}", env!("CARGO_MANIFEST_DIR"))
}

pub fn db_in(dir: &tempfile::TempDir) -> String {
    dir.path().join("runs.db").display().to_string()
}

/// `bench runs show ID --json`.
pub fn show(db: &str, id: i64) -> serde_json::Value {
    let o = bench(&["runs", "show", &id.to_string(), "--db", db, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("runs show --json")
}

/// A standalone `bench sim` with its fault console.
pub struct SimProcess {
    child: Child,
    /// Its Modbus TCP address.
    pub tcp: String,
    /// Its pty path when started with `--rtu`.
    pub rtu: Option<String>,
    console: std::process::ChildStdin,
    replies: BufReader<std::process::ChildStdout>,
}

impl SimProcess {
    pub fn start() -> SimProcess {
        SimProcess::start_with(&[])
    }

    /// `bench sim --tcp 127.0.0.1:0` plus `extra` arguments (e.g. `--rtu`).
    pub fn start_with(extra: &[&str]) -> SimProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bench"))
            .args(["sim", "--tcp", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run bench sim");
        let mut replies = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        replies.read_line(&mut line).unwrap();
        let ep: serde_json::Value = serde_json::from_str(&line).unwrap();
        SimProcess {
            tcp: ep["tcp"].as_str().unwrap().to_string(),
            rtu: ep["rtu"].as_str().map(str::to_string),
            console: child.stdin.take().unwrap(),
            replies,
            child,
        }
    }

    pub fn fault(&mut self, json: &str) {
        writeln!(self.console, "{json}").unwrap();
        let mut line = String::new();
        self.replies.read_line(&mut line).unwrap();
        assert!(!line.contains("error"), "{line}");
    }

    /// The drive's signals read by `bench probe` over Modbus TCP.
    pub fn probe(&self) -> serde_json::Value {
        let profile = format!("{}/../profiles/sim-drive.toml", env!("CARGO_MANIFEST_DIR"));
        let o = bench(&["probe", "--profile", &profile, "--tcp", &self.tcp]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap()
    }

    /// The drive's statusword.
    pub fn statusword(&self) -> u64 {
        let v = self.probe();
        v.pointer("/signals/statusword/raw")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or_else(|| panic!("no statusword in {v}"))
    }
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls the database until run `id` has committed at least `n` samples.
pub fn wait_for_samples(db: &str, id: i64, n: i64) -> i64 {
    let t0 = Instant::now();
    loop {
        if Path::new(db).exists() {
            let o = bench(&["runs", "show", &id.to_string(), "--db", db, "--json"]);
            if o.status.success() {
                let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
                let c = v["sample_count"].as_i64().unwrap_or(0);
                if c >= n {
                    return c;
                }
                assert!(
                    v["status"] == "running" || v["status"] == "queued",
                    "run {id} ended ({}: {}) with {c} samples before reaching {n}",
                    v["status"],
                    v["status_reason"]
                );
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "run {id} never reached {n} samples"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Spawns `bench run`, returns the child and the run id it prints first.
pub fn spawn_run(args: &[&str]) -> (Child, BufReader<std::process::ChildStdout>, i64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bench run");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let id = line
        .trim()
        .strip_prefix("run ")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("first line should be `run ID`: {line:?}"));
    (child, out, id)
}

pub fn config_for(dir: &Path, tcp: &str) -> PathBuf {
    let text = std::fs::read_to_string(format!("{}/config/sim.toml", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .replace("127.0.0.1:5020", tcp);
    let path = dir.join("bench.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `bench fit --model MODEL --procedure PROCEDURE --run RUN --db DB [--given GIVEN] --json`:
/// the report, after asserting the fit succeeded.
pub fn fit_run(
    db: &str,
    model: &str,
    procedure: &str,
    run: i64,
    given: Option<&str>,
) -> serde_json::Value {
    let run = run.to_string();
    let mut args = vec![
        "fit",
        "--model",
        model,
        "--procedure",
        procedure,
        "--run",
        &run,
        "--db",
        db,
        "--json",
    ];
    if let Some(g) = given {
        args.extend(["--given", g]);
    }
    let o = bench(&args);
    assert!(o.status.success(), "{model} {procedure}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The simulator's true friction model.
pub fn truth_model() -> Box<dyn friction::FrictionModel> {
    friction::registry::build_model(&bench_sim::default_truth()).unwrap()
}
