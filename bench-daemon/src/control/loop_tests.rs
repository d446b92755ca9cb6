//! The whole loop (begin, ticks, finish) on the simulated plant in simulated time: how each
//! way of ending a run ends it, with no devices, no clock and no sleep.

use super::*;
use crate::config::Loaded;
use experiments::Spec;
use std::sync::Arc;

/// A short sweep: 0.5 rad/s then 1 rad/s, positive only, 0.3 s settle + 0.2 s measure each.
fn sweep() -> experiments::Plan {
    let spec = Spec::from_value(serde_json::json!({
        "kind": "constant_velocity_sweep",
        "params": {"velocities": [0.5, 1.0], "directions": "positive",
                   "settle_s": 0.3, "measure_s": 0.2, "repeats": 1}
    }))
    .unwrap();
    spec.plan(&experiments::BenchLimits::sim_default()).unwrap()
}

pub(super) fn setup(loaded: Loaded, plan: experiments::Plan, control: Arc<Control>) -> LoopSetup {
    let sim =
        bench_sim::Sim::new(bench_sim::SimParams::default(), &bench_sim::default_truth()).unwrap();
    LoopSetup {
        loaded,
        devices: Devices::Simulated(Box::new(SimIo::new(sim))),
        plan,
        skip: Vec::new(),
        models: Vec::new(),
        compensators: Vec::new(),
        recorder: None,
        control,
        status: tokio::sync::watch::channel(Status::default()).0,
        live: None,
    }
}

fn sim() -> Loaded {
    Loaded::sim("127.0.0.1:0")
}

#[test]
fn a_plan_runs_to_its_end_in_simulated_time_and_the_drive_ends_disabled() {
    let plan = sweep();
    let ticks = (plan.estimate_duration() / plan.period_s()).round() as u64;
    let s = setup(sim(), plan, Arc::new(Control::new()));
    let status = s.status.subscribe();
    let report = run(s);
    assert_eq!(report.outcome, Outcome::Completed);
    assert!(
        report.ticks.abs_diff(ticks) <= 2,
        "{} vs {ticks}",
        report.ticks
    );
    assert!(
        (report.elapsed_s - 1.0).abs() < 0.01,
        "{}",
        report.elapsed_s
    );
    assert!(report.safe_state_s.is_some(), "{:?}", report.log);
    let last = status.borrow().clone();
    // One sample a period; the last tick found the plan done.
    assert_eq!((last.phase, last.samples + 1), ("done", report.ticks));
    // The velocity segments ran in the simulated drive's own velocity mode.
    assert_eq!(last.command, "velocity");
    assert!((last.sample.v - 1.0).abs() < 0.1, "{:?}", last.sample);
}

#[test]
fn an_abort_stops_at_the_next_tick_with_its_typed_reason() {
    let control = Arc::new(Control::new());
    control.abort(StopReason::OperatorAbort("abort requested".into()));
    let report = run(setup(sim(), sweep(), control));
    assert_eq!(
        report.outcome,
        Outcome::Stopped(StopReason::OperatorAbort("abort requested".into()))
    );
    assert_eq!(report.ticks, 1);
    assert_eq!(report.log[0].1, "abort requested");
    assert!(
        report
            .log
            .iter()
            .any(|(_, l)| l.starts_with("drive disabled"))
    );
}

#[test]
fn a_stop_request_ends_the_run_with_its_segment() {
    let control = Arc::new(Control::new());
    control.stop(StopReason::OperatorStop("stop requested".into()));
    let plan = sweep();
    let first = plan.segments[0].expected_s;
    let report = run(setup(sim(), plan, control));
    assert_eq!(report.outcome.status(), run_store::RunStatus::Aborted);
    let ran = report.ticks as f64 * 1e-3;
    assert!(
        (ran - first).abs() < 0.005,
        "{ran} s vs the segment's {first} s"
    );
}

#[test]
fn a_measured_value_beyond_its_limit_stops_the_run_on_its_breach() {
    // A ramp whose motion stop never fires on a bench limited to 1 rad/s: after breakaway the
    // rotor accelerates until the measured velocity passes the limit and its 10 % margin.
    let spec = Spec::from_value(serde_json::json!({
        "kind": "torque_ramp",
        "params": {"rates_nm_s": [1.0], "directions": "positive", "repeats": 1,
                   "motion_counts": 1_000_000}
    }))
    .unwrap();
    let mut limits = experiments::BenchLimits::sim_default();
    limits.velocity_rad_s = 1.0;
    let report = run(setup(
        sim(),
        spec.plan(&limits).unwrap(),
        Arc::new(Control::new()),
    ));
    let Outcome::Stopped(StopReason::LimitBreach(b)) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!((b.quantity, b.limit), ("velocity", 1.0));
    assert!(b.value > 1.1, "{b:?}");
    assert_eq!(report.outcome.status(), run_store::RunStatus::Aborted);
    assert!(report.safe_state_s.is_some(), "{:?}", report.log);
}

#[test]
fn models_that_do_not_build_fail_the_run_before_the_drive_moves() {
    let mut s = setup(sim(), sweep(), Arc::new(Control::new()));
    s.models = vec![friction::registry::ModelSpec {
        model: "no_such_model".into(),
        params: serde_json::json!({}),
    }];
    let report = run(s);
    let reason = report.outcome.reason().unwrap();
    assert_eq!(reason.code(), run_store::ReasonCode::SetupFailed);
    assert!(
        reason.to_string().starts_with("lockstep models: "),
        "{reason}"
    );
    assert_eq!(report.ticks, 0);
}

/// The simulated bench, counting the transactions the tick asks for by name.
struct Counting {
    io: SimIo,
    exchanges: u64,
    command_and_reads: u64,
    sensor_reads: u64,
}

impl BenchIo for Counting {
    fn clock_s(&self) -> f64 {
        self.io.clock_s()
    }
    fn has_mode(&self, mode: protocols::Mode) -> bool {
        self.io.has_mode(mode)
    }
    async fn read_feedback(&mut self) -> Result<protocols::DriveFeedback, protocols::Error> {
        self.io.read_feedback().await
    }
    async fn command_in(&mut self, mode: protocols::Mode, v: f64) -> Result<(), protocols::Error> {
        self.io.command_in(mode, v).await
    }
    async fn set_mode(&mut self, mode: protocols::Mode) -> Result<(), protocols::Error> {
        self.io.set_mode(mode).await
    }
    async fn enable(&mut self) -> Result<(), protocols::Error> {
        self.io.enable().await
    }
    async fn disable(&mut self) -> Result<(), protocols::Error> {
        self.io.disable().await
    }
    async fn command_and_read(
        &mut self,
        value: f64,
    ) -> Result<protocols::DriveFeedback, protocols::Error> {
        self.command_and_reads += 1;
        self.io.command_and_read(value).await
    }
    async fn read_sensor(&mut self) -> Option<Result<protocols::TorqueReading, protocols::Error>> {
        self.sensor_reads += 1;
        self.io.read_sensor().await
    }
    /// The bench's own exchange (a real bench's: the sensor beside the drive), not the
    /// default that calls this wrapper's two methods.
    async fn exchange(&mut self, value: f64) -> io::Exchanged {
        self.exchanges += 1;
        self.io.exchange(value).await
    }
    async fn read_signal(
        &mut self,
        device: crate::config::SignalDevice,
        name: &str,
    ) -> Result<f64, protocols::Error> {
        self.io.read_signal(device, name).await
    }
    async fn link_stats(&self) -> (protocols::LinkStats, protocols::LinkStats) {
        self.io.link_stats().await
    }
}

/// What `docs/src/real-bench.md` ("Drive and sensor at once") describes: each tick's drive
/// transaction and sensor read go through [`BenchIo::exchange`], the one method a bench with
/// the sensor on a link of its own answers concurrently. A tick that read the drive and then
/// the sensor itself would never use it.
#[test]
fn every_tick_reads_drive_and_sensor_through_the_benchs_exchange() {
    let s = setup(sim(), sweep(), Arc::new(Control::new()));
    let sim =
        bench_sim::Sim::new(bench_sim::SimParams::default(), &bench_sim::default_truth()).unwrap();
    let mut io = Counting {
        io: SimIo::new(sim),
        exchanges: 0,
        command_and_reads: 0,
        sensor_reads: 0,
    };
    const TICKS: u64 = 200;
    realtime::loop_runtime().block_on(async {
        let mut state = lifecycle::begin(&s, &mut io, true).await.unwrap();
        let (start, ts) = (io.clock_s(), state.period_s());
        state.t0 = start;
        for k in 0..TICKS {
            io.io.advance_to(start + k as f64 * ts);
            assert_eq!(tick::tick(&mut state, &mut io, k as f64 * ts).await, None);
        }
    });
    assert_eq!(
        (io.exchanges, io.command_and_reads, io.sensor_reads),
        (TICKS, 0, 0)
    );
}
