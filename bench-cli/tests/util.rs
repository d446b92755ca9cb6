//! Runs the `bench` binary.

use bench_daemon::config::{Loaded, OuterLoopChoice};
use bench_daemon::control::{Control, Devices, SimIo, Status, TruthLog};
use bench_daemon::session::{self, Finished, Watchers};
use experiments::Format;
use run_store::Store;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
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

/// A bench for runs of the simulated plant ([`bench_sim::Sim`], plain data) in simulated time,
/// through the daemon's own control loop ([`bench_daemon::control::tick`] over
/// [`SimIo`]), judge, recorder and analysis ([`bench_daemon::session`]): a run takes as long as
/// the CPU needs, with no lock and no sleep, so such tests run side by side.
pub struct SimBench {
    /// The bench configuration (`--sim`'s by default).
    pub loaded: Loaded,
    /// The plant's parameters.
    pub params: bench_sim::SimParams,
    /// Its true friction.
    pub truth: friction::registry::ModelSpec,
    /// Simulated time one drive or sensor transaction takes \[s\].
    pub transaction_s: f64,
}

impl Default for SimBench {
    /// `bench run --sim`'s bench: the shipped configuration and plant.
    fn default() -> SimBench {
        SimBench {
            loaded: Loaded::sim("127.0.0.1:0"),
            params: bench_sim::SimParams::default(),
            truth: bench_sim::default_truth(),
            transaction_s: bench_daemon::control::sim_io::TRANSACTION_S,
        }
    }
}

/// A run recorded by [`SimBench::run`].
pub struct SimRun {
    /// Its id in the store.
    pub id: i64,
    /// How it ended, with its analysis.
    pub finished: Finished,
    /// The plant's ground truth at each tick's drive transaction, one per sample.
    pub truth: Vec<bench_sim::Truth>,
}

impl SimBench {
    /// The bench of the analysis tests: torque mode only (the daemon's PI/PID close the
    /// velocity and position loops), no lockstep models, transactions that take no time (each
    /// sample is stamped at its tick).
    pub fn bare(truth: &friction::registry::ModelSpec) -> SimBench {
        let mut b = SimBench {
            truth: truth.clone(),
            transaction_s: 0.0,
            ..SimBench::default()
        };
        b.loaded.config.outer_loop = OuterLoopChoice::Daemon;
        b.loaded.config.lockstep.models.clear();
        b
    }

    /// Checks `spec` (JSON or TOML text) against the bench and runs it into `store`.
    pub async fn run(&self, store: &Store, spec: &str, format: Format) -> SimRun {
        let checked = session::check(spec, format, &self.loaded).expect("spec");
        let sim = bench_sim::Sim::new(self.params.clone(), &self.truth).expect("plant");
        let log = TruthLog::default();
        let io = SimIo::new(sim)
            .with_transaction_s(self.transaction_s)
            .with_truth_log(log.clone());
        let watchers = Watchers {
            control: std::sync::Arc::new(Control::new()),
            status: tokio::sync::watch::channel(Status::default()).0,
            live: None,
            created: None,
        };
        let devices = Devices::Simulated(Box::new(io));
        let finished = session::execute_on(store, &self.loaded, &checked, watchers, devices)
            .await
            .expect("run");
        SimRun {
            id: finished.run_id,
            finished,
            truth: log.take(),
        }
    }

    /// Runs `experiments/specs/<spec_file>`.
    pub async fn run_file(&self, store: &Store, spec_file: &str) -> SimRun {
        let text = std::fs::read_to_string(spec(spec_file)).unwrap();
        self.run(store, &text, Format::from_path(Path::new(spec_file)))
            .await
    }

    /// [`SimBench::run`] into the SQLite file `db` (created if needed); the run and its
    /// `status` checked to be `expect`.
    pub fn run_into(&self, db: &str, spec: &str, expect: &str) -> SimRun {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let store = Store::open(Path::new(db)).await.unwrap();
            let run = self.run(&store, spec, Format::Json).await;
            store.close().await;
            assert_eq!(
                run.finished.status.as_str(),
                expect,
                "{:?}",
                run.finished.report.outcome
            );
            run
        })
    }
}

/// Runs `experiments/specs/<spec_file>` on the [`SimBench::bare`] bench with true friction
/// `truth` into `store`; the run completed, with its analysis stored.
pub async fn record_sim_run(
    store: &Store,
    spec_file: &str,
    truth: &friction::registry::ModelSpec,
) -> SimRun {
    let run = SimBench::bare(truth).run_file(store, spec_file).await;
    assert_eq!(
        run.finished.status,
        run_store::RunStatus::Completed,
        "{spec_file}: {:?}",
        run.finished.report.outcome
    );
    run
}

/// A slot for a test that runs the real-time loop against the simulated bench (`bench run`,
/// `bench serve`, `bench perf loop`): each one runs a 10 kHz plant, a 1 kHz control loop and
/// its Modbus server, which is what a bench PC does. Hold the guard for the whole test.
///
/// Two such tests run at a time where this process may take SCHED_FIFO (root or
/// CAP_SYS_NICE, as in CI): the benches' threads then run at real-time priority and neither
/// waits on the other's, nor on the rest of the suite (on 2 cores the daemon's suite took
/// 121 s with two slots, 196 s with one, every test passing). Without that privilege the
/// benches run at normal priority, where two side by side starved each other's Modbus
/// replies: one at a time.
pub fn bench_slot() -> BenchSlot {
    let (taken, freed) = &SLOTS;
    let mut taken = taken.lock().unwrap_or_else(PoisonError::into_inner);
    while *taken >= slots() {
        taken = freed.wait(taken).unwrap_or_else(PoisonError::into_inner);
    }
    *taken += 1;
    BenchSlot(())
}

/// The slots taken, and the signal that one was given back.
static SLOTS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// How many real-time benches run at once: two when a thread may take SCHED_FIFO.
fn slots() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        // Tried on a thread of its own, which ends with the priority it took.
        let refused = std::thread::spawn(|| bench_daemon::control::realtime(1))
            .join()
            .expect("the priority probe");
        if refused.is_none() { 2 } else { 1 }
    })
}

/// A taken [`bench_slot`], given back when dropped.
pub struct BenchSlot(());

impl Drop for BenchSlot {
    fn drop(&mut self) {
        let (taken, freed) = &SLOTS;
        *taken.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
        freed.notify_one();
    }
}

pub fn spec(name: &str) -> String {
    format!("{}/../experiments/specs/{name}", env!("CARGO_MANIFEST_DIR"))
}

pub fn db_in(dir: &tempfile::TempDir) -> String {
    dir.path().join("runs.db").display().to_string()
}

/// `bench runs export ID --format csv`: the CSV text.
pub fn export_csv(db: &str, id: i64) -> String {
    let o = bench(&[
        "runs",
        "export",
        &id.to_string(),
        "--format",
        "csv",
        "--db",
        db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench"));
    cmd.args(args);
    spawn_command(cmd)
}

/// Starts `cmd` (a `bench` command that starts a run) and reads its first line, `run ID`.
pub fn spawn_command(mut cmd: Command) -> (Child, BufReader<std::process::ChildStdout>, i64) {
    let mut child = cmd
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
    let text = std::fs::read_to_string(format!(
        "{}/../bench-daemon/config/sim.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
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

/// A Modbus client of the emulated T7 of `ep` (what `bench sim --daq t7` printed), with the
/// runtime that drives it: an independent look at the DAQ the daemon under test uses.
pub fn t7_client(ep: &serde_json::Value) -> (tokio::runtime::Runtime, protocols::DaqClient) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let addr = ep["daq"]["modbus"].as_str().unwrap().parse().unwrap();
    let profile = std::sync::Arc::new(bench_sim::daq::shipped_t7().unwrap());
    let timeout = Duration::from_secs(5);
    let t7 = rt
        .block_on(protocols::DaqClient::connect(addr, profile, timeout))
        .unwrap();
    (rt, t7)
}
