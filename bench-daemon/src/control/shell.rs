//! The real-time shell: the loop's thread at real-time priority with the CPUs kept out of deep
//! idle, the bench connected over Modbus, and [`tick`] called at absolute deadlines on the
//! wall clock; a tick that overruns skips the periods it missed. Everything a tick does is in
//! [`super::tick`]; this file only keeps time.

use super::connect::{ModbusIo, connect, connect_drive};
use super::cpus::Pinned;
use super::io::BenchIo;
use super::lifecycle::{Log, after_panic, begin, failed_early, finish, panic_message};
use super::pause::pause;
use super::realtime::{Locked, NoDeepIdle, loop_runtime as runtime, realtime};
use super::setup::{Devices, LoopReport, LoopSetup};
use super::sim_shell;
use super::tick::tick;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

/// Runs the loop on the calling thread (give it a thread of its own); returns when the run
/// is over and the drive is in its safe state (or could not be reached).
///
/// A panic anywhere in the loop (a model step, the sequencer) is caught here: the safe-state
/// sequence then runs on a fresh link and the run fails with the panic's message.
pub fn run(mut setup: LoopSetup) -> LoopReport {
    if let Devices::Simulated(io) = std::mem::take(&mut setup.devices) {
        return sim_shell::run(&setup, *io);
    }
    let wanted = setup.loaded.config.realtime_priority;
    let mut notes: Vec<String> = realtime(wanted).into_iter().collect();
    // Real-time scheduling asked for: keep the CPUs awake for the run's deadlines too.
    let idle = (wanted > 0).then(NoDeepIdle::request);
    if let Some(Err(note)) = &idle {
        notes.push(note.clone());
    }
    let locked = (wanted > 0).then(Locked::request);
    if let Some(Err(note)) = &locked {
        notes.push(note.clone());
    }
    let pinned = setup.loaded.config.loop_cpu.map(Pinned::apply);
    match &pinned {
        Some(Ok(p)) => notes.push(format!(
            "loop_cpu: the loop and the process's other real-time threads on CPU {}, the rest off it",
            p.cpu()
        )),
        Some(Err(note)) => notes.push(note.clone()),
        None => {}
    }
    let caught =
        std::panic::catch_unwind(AssertUnwindSafe(|| runtime().block_on(run_modbus(&setup))));
    let mut report = match caught {
        Ok(report) => report,
        Err(panic) => runtime().block_on(async {
            let mut io = connect_drive(&setup.loaded).await.map(ModbusIo::drive_only);
            after_panic(
                &setup,
                panic_message(&*panic),
                io.as_mut().map_err(|e| e.clone()),
            )
            .await
        }),
    };
    drop((idle, locked, pinned));
    report.notes.extend(notes.into_iter().map(|n| (None, n)));
    report
}

async fn run_modbus(setup: &LoopSetup) -> LoopReport {
    setup.status.send_modify(|s| {
        s.phase = "connecting";
        s.segments = setup.plan.segments.len();
    });
    let mut notes = Vec::new();
    let mut io = match connect(&setup.loaded, &mut notes).await {
        Ok(io) => io,
        Err(e) => return with_notes(failed_early(e, None), notes),
    };
    let mut state = match begin(setup, &mut io, false).await {
        Ok(state) => state,
        Err(report) => return with_notes(report, notes),
    };
    let ts = state.period_s();
    io.set_retries(0).await;
    let start = grid_start(ts);
    state.t0 = io.clock_s();
    let mut k: u64 = 0;
    let outcome = loop {
        let deadline_k = start + Duration::from_secs_f64(k as f64 * ts);
        setup.control.sleep_until(deadline_k);
        let woke = Instant::now();
        state
            .stats
            .record(woke.saturating_duration_since(deadline_k).as_secs_f64() * 1e6);
        if let Some(end) = tick(&mut state, &mut io, k as f64 * ts).await {
            break end;
        }
        if state.pause_at.is_some() {
            let mut wait = |_: &mut ModbusIo, s: f64| {
                setup
                    .control
                    .sleep_until(Instant::now() + Duration::from_secs_f64(s));
            };
            if let Err(stop) = pause(setup, &mut state, &mut io, &mut wait).await {
                break stop.into();
            }
            // The next tick at the first deadline after the pause.
            k = ((Instant::now() - start).as_secs_f64() / ts).floor() as u64 + 1;
            continue;
        }
        // Next deadline; a tick that ran into the next period skips the periods it missed.
        k += 1;
        let now = Instant::now();
        state
            .work
            .record(now.saturating_duration_since(woke).as_secs_f64() * 1e6);
        let next = start + Duration::from_secs_f64(k as f64 * ts);
        state.overran = now > next;
        if state.overran {
            state.stats.overruns += 1;
            k = ((now - start).as_secs_f64() / ts).floor() as u64 + 1;
        }
    };
    let elapsed_s = start.elapsed().as_secs_f64();
    let mut report = finish(setup, state, &mut io, outcome, k as f64 * ts, elapsed_s).await;
    report.zeros = std::mem::take(&mut io.zeros);
    report.daq_stream = io.daq_counts();
    if let Some(said) = io.stop_daq().await {
        report.notes.push((None, said));
    }
    with_notes(report, notes)
}

/// The first deadline: half a period (at most a quarter of a millisecond) after a whole
/// millisecond, so that the kernel's tick and the in-process simulated bench's physics
/// wake-ups, both on whole or half milliseconds, fall mid-period and never in the spin just
/// before a deadline ([`protocols::timing::after_whole_ms`]).
fn grid_start(period_s: f64) -> Instant {
    protocols::timing::after_whole_ms(Duration::from_secs_f64(period_s.min(5e-4) / 2.0))
}

/// `report` with what connecting checked and read back (the run log) in front.
fn with_notes(mut report: LoopReport, mut notes: Log) -> LoopReport {
    notes.append(&mut report.notes);
    report.notes = notes;
    report
}
